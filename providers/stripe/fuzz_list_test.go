package stripe

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/payledger/payledger/domain"
)

// FuzzListPage fuzzes the GET /v1/events page decoder and holds it to
// Parse: every listed event maps exactly as its webhook would. The window
// [fuzzSince, fuzzUntil) leaves some seeds' events outside it.
func FuzzListPage(f *testing.F) {
	const fuzzSince, fuzzUntil = 1_500_000_000, 1_800_000_000
	// Stripe's pagination example (docs.stripe.com/api/pagination,
	// provider-apis.md §1.1); more seeds in testdata/fuzz/FuzzListPage.
	f.Add([]byte(`{ "object": "list", "url": "/v1/customers", "has_more": false, "data": [ { "id": "cus_4QFJOjw2pOmAGJ", "object": "customer" } ] }`))
	p, err := New(Config{Secrets: []string{vectorSecret}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		page, err := mapPage(t.Context(), body, fuzzSince, fuzzUntil, nil)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("mapPage error %v is not KindInvalid with a message", err)
			}
			return
		}
		var list eventList
		if err := json.Unmarshal(body, &list); err != nil || list.HasMore == nil {
			t.Fatalf("mapPage accepted a page that does not decode: %v", err)
		}
		if len(page.Notifications) != len(list.Data) {
			t.Fatalf("%d notifications for %d events", len(page.Notifications), len(list.Data))
		}
		for i, raw := range list.Data {
			want, err := p.Parse(t.Context(), nil, nil, raw)
			if err != nil {
				t.Fatalf("event %d listed but Parse fails: %v", i, err)
			}
			if got := page.Notifications[i]; !reflect.DeepEqual(got, want) {
				t.Fatalf("event %d listed as %+v, Parse gives %+v", i, got, want)
			}
			for _, ev := range want.Events {
				checkEvent(t, want, ev)
				if s := ev.EventMeta().OccurredAt.Unix(); s < fuzzSince || s >= fuzzUntil {
					t.Fatalf("event %d created at %d, outside the window", i, s)
				}
			}
		}
		switch last := len(page.Notifications) - 1; {
		case !*list.HasMore && page.Next != "":
			t.Fatalf("Next %q without has_more", page.Next)
		case *list.HasMore && page.Next != page.Notifications[last].ProviderEventID:
			t.Fatalf("Next %q, want the last event's ID", page.Next)
		}
	})
}
