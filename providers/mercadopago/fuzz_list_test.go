package mercadopago

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// FuzzSearchPage checks the search-page decoder: it fails only with
// KindInvalid; each result it maps is the observation Observe makes of the
// same object, in order; and a next cursor moves forward within the caps.
func FuzzSearchPage(f *testing.F) {
	published, err := os.ReadFile("testdata/api/search_published.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(published)
	p := listedPayments()
	for _, s := range []string{
		`{"paging":{"total":5,"limit":50,"offset":0},"results":[` + p[0] + `,` + p[1] + `]}`,
		`{"paging":{"total":0},"results":[]}`,
		`{"paging":{"total":20000},"results":[` + p[4] + `]}`,
		`{"paging":{"total":-1},"results":[]}`,
		`{"paging":{"total":1},"results":[{"id":"x y","status":"approved"}]}`,
		`{"paging":{"total":1},"results":[null]}`,
		`{"results":[1]}`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	at := cursor{from: listWindow.Since, offset: 9950}
	f.Fuzz(func(t *testing.T, body []byte) {
		page, err := decodeSearchPage(body, at, fixedNow)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("error %v is not KindInvalid with a message", err)
			}
			return
		}
		var sp searchPage
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&sp); err != nil || len(sp.Results) != len(page.Notifications) {
			t.Fatalf("decoded %d notifications from %d results (%v)", len(page.Notifications), len(sp.Results), err)
		}
		for i, n := range page.Notifications {
			id := n.Events[0].EventMeta().ProviderPaymentID
			want, err := observeFacts(sp.Results[i], id, fixedNow)
			if err != nil || !reflect.DeepEqual(want, n.Events) || n.ProviderEventID != want[0].EventMeta().ProviderEventID {
				t.Fatalf("result %d: listed %+v, observed %+v (%v)", i, n, want, err)
			}
		}
		if page.Next == "" {
			return
		}
		// A fuzzed page may list updates anywhere in time: the cursor must
		// still parse and move forward.
		w := providers.Window{Since: at.from, Until: maxTime.Add(time.Millisecond)}
		next, err := parseCursor(page.Next, w)
		if err != nil || (next.offset <= at.offset && !next.from.After(at.from)) {
			t.Fatalf("next cursor %q (%+v, %v) does not move forward from %+v", page.Next, next, err, at)
		}
	})
}
