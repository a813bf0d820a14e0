package asaas

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/rest"
)

// FuzzListPage checks the payment-list decoder: it fails only with
// KindInvalid; each payment it maps is the observation Observe makes of the
// same object, in order; and the next cursor moves forward.
func FuzzListPage(f *testing.F) {
	var env struct {
		Payment json.RawMessage `json:"payment"`
	}
	if err := json.Unmarshal(payload(f, nil), &env); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`{"object":"list","hasMore":false,"totalCount":1,"limit":10,"offset":0,"data":[` + string(env.Payment) + `]}`,
		`{"object":"list","hasMore":true,"totalCount":3,"limit":2,"offset":0,"data":[` + string(env.Payment) + `,{"id":"pay_2","status":"PENDING","value":1.5,"deleted":true}]}`,
		`{"hasMore":false,"data":[{"id":"pay_3","status":"REFUNDED","value":10,"netValue":9.01,"refunds":[{"status":"DONE","value":10}]}]}`,
		`{"hasMore":false,"data":[]}`, `{"hasMore":true,"data":[]}`, `{"data":null}`, `{"hasMore":false,"data":[null]}`,
		`{"hasMore":false,"data":[{"id":"pay 4","status":"X","value":"1"}]}`, `[]`, ``,
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(`{"hasMore":false,"data":[{"id":"pay_5","status":"CONFIRMED","value":0.01}]}`), true)
	c, err := NewStatusClient(StatusConfig{APIKey: "k", Options: rest.Options{Now: func() time.Time { return fetchedAt }}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, paid bool) {
		at := cursor{phase: phaseCreated, offset: 7}
		if paid {
			at.phase = phasePaid
		}
		page, err := c.decodeListPage(body, at)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("error %v is not KindInvalid with a message", err)
			}
			return
		}
		// Decoded as the page is: one JSON value (rest hands over no more).
		var lp struct{ Data []payment }
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&lp); err != nil || len(lp.Data) != len(page.Notifications) {
			t.Fatalf("decoded %d notifications from %d payments (%v)", len(page.Notifications), len(lp.Data), err)
		}
		for i, n := range page.Notifications {
			want, err := c.observe("asaas: fetch payment", lp.Data[i])
			if err != nil || !reflect.DeepEqual(n.Events, []domain.Event{want}) || n.ProviderEventID != want.ProviderEventID {
				t.Fatalf("payment %d: listed %+v, observed %+v (%v)", i, n, want, err)
			}
		}
		if page.Next == "" {
			if at.phase != phasePaid {
				t.Fatal("the created phase ended the listing")
			}
			return
		}
		next, err := parseCursor(page.Next)
		switch {
		case err != nil:
			t.Fatalf("next cursor %q: %v", page.Next, err)
		case next.phase == at.phase && next.offset <= at.offset, next.phase != at.phase && (at.phase != phaseCreated || next.offset != 0):
			t.Fatalf("next cursor %q does not move forward from %+v", page.Next, at)
		}
	})
}
