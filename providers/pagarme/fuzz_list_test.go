package pagarme

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/rest"
)

// FuzzListPage checks the charge-list decoder: it fails only with
// KindInvalid; each charge it maps is the observation FetchStatus makes of
// the same object, in order; and a next page follows this one.
func FuzzListPage(f *testing.F) {
	for _, s := range []string{
		// Pagar.me's docs envelope around its module tests' charge (see TestListPagePublishedExample).
		`{ "data": [ { "id": "ch_bVrP01wUjDfy951k", "code": "000000050-15", "amount": 30000, "paid_amount": 30000, "payment_method": "boleto", "status": "paid", "last_transaction": { "id": "tran_1RMV9ZTYgUdmL0Ja", "transaction_type": "boleto", "amount": 29000, "status": "paid", "paid_amount": 29000, "paid_at": "2020-01-03T03:39:08", "credit_at": "2020-01-03T03:39:08" } } ], "paging": { "total": 11, "previous": null, "next": "{url}?page=2&size=10" } }`,
		`{"data":[` + paidCharge + `,` + refundedCharge + `],"paging":{"next":null}}`,
		`{"data":[` + partialCharge + `,` + pendingNoUpdate + `],"paging":{"next":""}}`,
		`{"data":[],"paging":{"next":"x"}}`, `{"data":[null],"paging":{}}`, `{"data":[{"id":"ch_1","amount":-1}],"paging":{}}`,
		`{"data":[{"id":"ch 1","amount":1,"status":"paid"}],"paging":{}}`, `{"data":null}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	c, err := NewStatusClient(StatusConfig{SecretKey: testSecretKey, Options: rest.Options{Now: func() time.Time { return t0 }}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		const at = 4
		page, err := c.decodeListPage(body, at)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("error %v is not KindInvalid with a message", err)
			}
			return
		}
		// Decoded as the page is: one JSON value (rest hands over no more).
		var lp listPage
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&lp); err != nil || len(lp.Data) != len(page.Notifications) {
			t.Fatalf("decoded %d notifications from %d charges (%v)", len(page.Notifications), len(lp.Data), err)
		}
		for i, n := range page.Notifications {
			var ch charge
			if err := json.Unmarshal(lp.Data[i], &ch); err != nil {
				t.Fatal(err)
			}
			want, err := c.observeFetched(ch, "")
			if err != nil || !reflect.DeepEqual(n.Events, []domain.Event{want}) || n.ProviderEventID != want.ProviderEventID {
				t.Fatalf("charge %d: listed %+v, fetched %+v (%v)", i, n, want, err)
			}
			if !strings.HasPrefix(n.ProviderEventID, "obs_") || n.Provider != "pagarme" || n.ProviderEventType != "api.charge" {
				t.Fatalf("notification %+v", n)
			}
		}
		if page.Next == "" {
			return
		}
		if next, err := parseCursor(page.Next); err != nil || next != at+1 || len(page.Notifications) == 0 {
			t.Fatalf("next cursor %q (%d, %v) after page %d of %d charges", page.Next, next, err, at, len(page.Notifications))
		}
	})
}
