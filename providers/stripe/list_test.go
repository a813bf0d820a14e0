package stripe

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/rest"
)

// listNow is the fake clock of the list tests; windows end before it.
const listNow = 1785400000

// listedEvent1 is one stored event of fakeEvents.
type storedEvent struct {
	id      string
	typ     string
	created int64
	body    string
}

// fakeEvents serves GET /v1/events the way Stripe documents it
// (provider-apis.md §1.1): created range, types[] filter, newest first,
// starting_after, limit, has_more. Scripted faults are served first, one per
// call. It records every query.
type fakeEvents struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	events  []storedEvent // newest first
	faults  []answer
	queries []url.Values
	charges map[string]string // GET /v1/charges/{id} bodies
}

func newFakeEvents(t *testing.T, events ...storedEvent) *fakeEvents {
	f := &fakeEvents{t: t, events: events, charges: map[string]string{}}
	slices.SortStableFunc(f.events, func(a, b storedEvent) int { return int(b.created - a.created) })
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEvents) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/events" {
		f.mu.Lock()
		f.queries = append(f.queries, r.URL.Query())
		f.mu.Unlock()
	}
	if r.Header.Get("Authorization") != "Bearer "+testKey {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"Invalid API Key provided"}}`, http.StatusUnauthorized)
		return
	}
	if id, ok := strings.CutPrefix(r.URL.Path, "/v1/charges/"); ok {
		body, found := f.charges[id]
		if !found {
			http.Error(w, `{"error":{"code":"resource_missing"}}`, http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(body))
		return
	}
	f.mu.Lock()
	var fault *answer
	if len(f.faults) > 0 {
		fault = &f.faults[0]
		f.faults = f.faults[1:]
	}
	f.mu.Unlock()
	if fault != nil {
		if fault.retryAfter != "" {
			w.Header().Set("Retry-After", fault.retryAfter)
		}
		w.WriteHeader(fault.status)
		_, _ = w.Write([]byte(fault.body))
		return
	}
	_, _ = w.Write([]byte(f.page(r.URL.Query())))
}

// page answers a list query from the stored events.
func (f *fakeEvents) page(q url.Values) string {
	gte, _ := strconv.ParseInt(q.Get("created[gte]"), 10, 64)
	lt, _ := strconv.ParseInt(q.Get("created[lt]"), 10, 64)
	limit, _ := strconv.Atoi(q.Get("limit"))
	after := q.Get("starting_after")
	var data []string
	more := false
	skipping := after != ""
	for _, e := range f.events {
		if skipping {
			skipping = e.id != after
			continue
		}
		if e.created < gte || e.created >= lt || !slices.Contains(q["types[]"], e.typ) {
			continue
		}
		if len(data) == limit {
			more = true
			break
		}
		data = append(data, e.body)
	}
	return fmt.Sprintf(`{"object":"list","url":"/v1/events","has_more":%t,"data":[%s]}`, more, strings.Join(data, ","))
}

func (f *fakeEvents) calls() []url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.queries)
}

func (f *fakeEvents) client(t *testing.T, key string) *StatusClient {
	t.Helper()
	c, err := NewStatusClient(StatusConfig{SecretKey: key, Options: rest.Options{BaseURL: f.srv.URL, Timeout: time.Second,
		MaxAttempts: 4, RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond,
		Now: func() time.Time { return time.Unix(listNow, 0) }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// succeeded is a payment_intent.succeeded event.
func succeeded(i int, created int64) storedEvent {
	id := fmt.Sprintf("evt_3Sb%06d", i)
	body := fmt.Sprintf(`{"id":%q,"object":"event","api_version":"2025-08-27.basil","created":%d,"type":"payment_intent.succeeded",`+
		`"data":{"object":{"id":"pi_3Sb%06d","object":"payment_intent","amount":%d,"amount_received":%d,"currency":"brl","status":"succeeded"}}}`,
		id, created, i, 100+i, 100+i)
	return storedEvent{id: id, typ: "payment_intent.succeeded", created: created, body: body}
}

// testdataEvents are the realistic payloads of testdata/events, re-dated
// into the window: the same bodies the webhook tests parse.
func testdataEvents(t *testing.T, since int64) []storedEvent {
	t.Helper()
	files, err := filepath.Glob("testdata/events/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata events: %v, %d files", err, len(files))
	}
	var out []storedEvent
	for i, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var env map[string]json.RawMessage
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		created := since + int64(i)
		env["created"] = json.RawMessage(strconv.FormatInt(created, 10))
		body, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ ID, Type string }
		_ = json.Unmarshal(body, &head)
		out = append(out, storedEvent{id: head.ID, typ: head.Type, created: created, body: string(body)})
	}
	return out
}

// listAll pages through w as a backfill would.
func listAll(t *testing.T, c *StatusClient, w providers.Window) ([]domain.Notification, int) {
	t.Helper()
	var all []domain.Notification
	cursor, pages := "", 0
	for {
		page, err := c.ListPage(t.Context(), w, cursor)
		if err != nil {
			t.Fatalf("ListPage after %q: %v", cursor, err)
		}
		pages++
		all = append(all, page.Notifications...)
		if cursor = page.Next; cursor == "" {
			return all, pages
		}
	}
}

func window(since, until int64) providers.Window {
	return providers.Window{Since: time.Unix(since, 0), Until: time.Unix(until, 0)}
}

func TestListPagePaginates(t *testing.T) {
	const since = listNow - 86400
	var stored []storedEvent
	for i := range 250 {
		stored = append(stored, succeeded(i, since+int64(i)))
	}
	// Not asked for: the types[] filter keeps it out.
	stored = append(stored, storedEvent{id: "evt_cus", typ: "customer.created", created: since + 5,
		body: `{"id":"evt_cus","object":"event","created":1,"type":"customer.created","data":{"object":{"id":"cus_1"}}}`})
	api := newFakeEvents(t, stored...)
	got, pages := listAll(t, api.client(t, testKey), window(since, since+1000))
	if pages != 3 || len(got) != 250 {
		t.Fatalf("%d pages, %d notifications; want 3, 250", pages, len(got))
	}
	for i, n := range got {
		// Newest first, as Stripe lists them.
		want := succeeded(249-i, 0).id
		if n.ProviderEventID != want || len(n.Events) != 1 || n.SignatureHeader != "" {
			t.Fatalf("notification %d = %+v; want %s mapped, unsigned", i, n, want)
		}
	}
	qs := api.calls()
	wantTypes := trackedTypes()
	for i, q := range qs {
		if q.Get("created[gte]") != strconv.Itoa(since) || q.Get("created[lt]") != strconv.Itoa(since+1000) ||
			q.Get("limit") != "100" || !slices.Equal(q["types[]"], wantTypes) || len(wantTypes) > 20 {
			t.Errorf("query %d = %v", i, q)
		}
	}
	if qs[0].Has("starting_after") || qs[1].Get("starting_after") != got[99].ProviderEventID ||
		qs[2].Get("starting_after") != got[199].ProviderEventID {
		t.Errorf("cursors %q, %q, %q; want none, the 100th and the 200th event", qs[0].Get("starting_after"),
			qs[1].Get("starting_after"), qs[2].Get("starting_after"))
	}
}

// TestListPageMapsAsParse lists every testdata event and checks that each
// notification is exactly Parse's for the same body, but for the signature.
func TestListPageMapsAsParse(t *testing.T) {
	const since = listNow - 3600
	stored := testdataEvents(t, since)
	api := newFakeEvents(t, stored...)
	api.charges[legacyCharge] = `{"id":"` + legacyCharge + `","payment_intent":"pi_17Qw5d"}`
	api.charges[legacyDisputeCharge] = `{"id":"` + legacyDisputeCharge + `","payment_intent":null}`
	c := api.client(t, testKey)
	got, _ := listAll(t, c, window(since, since+int64(len(stored))))
	p := newProvider(t, Config{Secrets: []string{vectorSecret}, Resolver: c})
	byID := map[string]domain.Notification{}
	for _, n := range got {
		byID[n.ProviderEventID] = n
	}
	mapped, types := 0, map[string]bool{}
	for _, e := range stored {
		want, err := p.Parse(t.Context(), headerOf("t=1,v1=00"), nil, []byte(e.body))
		if err != nil {
			t.Fatalf("Parse %s: %v", e.id, err)
		}
		want.SignatureHeader = ""
		n, listed := byID[e.id]
		if !slices.Contains(trackedTypes(), e.typ) {
			if listed || (len(want.Events) != 0) {
				t.Errorf("%s of untracked type %s: listed %v, Parse %+v", e.id, e.typ, listed, want)
			}
			continue
		}
		if !listed || !reflect.DeepEqual(n, want) {
			t.Errorf("%s listed as\n %+v\nParse gives\n %+v", e.id, n, want)
		}
		mapped += len(n.Events)
		types[e.typ] = types[e.typ] || len(n.Events) > 0
	}
	for _, typ := range trackedTypes() {
		if !types[typ] {
			t.Errorf("no listed %s mapped to a fact", typ)
		}
	}
	if legacy := byID["evt_17Qw5e2eZvKYlo2CnT8hUiJk"]; len(legacy.Events) != 1 || legacy.Events[0].EventMeta().ProviderPaymentID != "pi_17Qw5d" {
		t.Errorf("charge-only refund listed as %+v; want it on pi_17Qw5d", legacy)
	}
	if mapped < 15 {
		t.Errorf("only %d listed events mapped to facts", mapped)
	}
}

func TestListPageWindow(t *testing.T) {
	const since = listNow - 7200
	api := newFakeEvents(t, succeeded(1, since-1), succeeded(2, since), succeeded(3, since+59), succeeded(4, since+60))
	c := api.client(t, testKey)
	// Fractions of a second: [since-0.5s, since+59.5s) holds the events at
	// since and since+59 only.
	w := providers.Window{Since: time.Unix(since-1, 5e8), Until: time.Unix(since+59, 5e8)}
	got, _ := listAll(t, c, w)
	// A window of exactly the retention, computed a moment earlier, is fine.
	if _, err := c.ListPage(t.Context(), window(listNow-int64(EventRetention/time.Second)-5, listNow), ""); err != nil {
		t.Errorf("ListPage over the 30 days = %v", err)
	}
	if len(got) != 2 || got[0].ProviderEventID != succeeded(3, 0).id || got[1].ProviderEventID != succeeded(2, 0).id {
		t.Fatalf("listed %+v; want events 3 and 2", got)
	}
	if q := api.calls()[0]; q.Get("created[gte]") != strconv.Itoa(since) || q.Get("created[lt]") != strconv.Itoa(since+60) {
		t.Errorf("query %v; want created[gte]=%d, created[lt]=%d", q, since, since+60)
	}

	for _, tt := range []struct {
		name string
		w    providers.Window
		want string
	}{
		{"empty", window(since, since), "start before its end"},
		{"reversed", window(since, since-10), "start before its end"},
		{"no start", providers.Window{Until: time.Unix(since, 0)}, "start before its end"},
		{"beyond the 30-day retention", window(listNow-int64((EventRetention+retentionGrace)/time.Second)-1, listNow), "last 30 days only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(api.calls())
			_, err := c.ListPage(t.Context(), tt.w, "")
			if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(domain.MessageOf(err), tt.want) {
				t.Errorf("ListPage = %v; want KindInvalid saying %q", err, tt.want)
			}
			if len(api.calls()) != before {
				t.Errorf("an invalid window called the API")
			}
		})
	}
}

// TestListPageAnswers runs scripted answers (faults, malformed pages)
// before the fake's truth, one event in the window.
func TestListPageAnswers(t *testing.T) {
	const since = listNow - 600
	in := succeeded(7, since+1)
	ok := func(body string) answer { return answer{status: 200, body: body} }
	tests := []struct {
		name      string
		key       string
		faults    []answer
		wantCalls int
		wantKind  domain.Kind // with wantMsg or wantHTTP: the error's; else success
		wantMsg   string      // in the error
		wantHTTP  int         // the *rest.Error's status
		ignored   string      // success with one ignored notification
	}{
		{name: "429 with Retry-After, then success", faults: []answer{{status: 429, retryAfter: "1", body: `{"error":{"type":"rate_limit_error"}}`}},
			wantCalls: 2},
		{name: "500s, then success", faults: []answer{{status: 500}, {status: 502}, {status: 503}}, wantCalls: 4},
		{name: "5xx beyond the attempts", faults: []answer{{status: 500}, {status: 500}, {status: 500}, {status: 500}},
			wantCalls: 4, wantKind: domain.KindUnavailable, wantHTTP: 500},
		{name: "401 stops at once", key: "sk_test_wrong", wantCalls: 1, wantKind: domain.KindUnauthorized, wantHTTP: 401},
		{name: "403 stops at once", faults: []answer{{status: 403, body: `{"error":{"type":"invalid_request_error"}}`}},
			wantCalls: 1, wantKind: domain.KindUnauthorized, wantHTTP: 403},
		{name: "an ignored type", faults: []answer{ok(`{"object":"list","has_more":false,"data":[` +
			`{"id":"evt_cus","object":"event","created":` + strconv.Itoa(since+2) + `,"type":"customer.created","data":{"object":{"id":"cus_1"}}}]}`)},
			wantCalls: 1, ignored: "customer.created is not tracked"},
		{name: "not JSON", faults: []answer{ok(`<html>`)}, wantCalls: 1, wantKind: domain.KindInvalid, wantMsg: "not the expected JSON"},
		// Stripe's pagination example (docs.stripe.com/api/pagination,
		// provider-apis.md §1.1) lists customers, not events.
		{name: "published list of customers", faults: []answer{ok(`{ "object": "list", "url": "/v1/customers", "has_more": false, ` +
			`"data": [ { "id": "cus_4QFJOjw2pOmAGJ", "object": "customer" } ] }`)},
			wantCalls: 1, wantKind: domain.KindInvalid, wantMsg: `object "customer" is not a Stripe event`},
		// The published event fixture (fixtures3.json resources.event,
		// trimmed) has no data, so it maps to nothing.
		{name: "published event fixture without data", faults: []answer{ok(`{"object":"list","has_more":false,"data":[` +
			`{ "id": "evt_1Pgc76B7WZ01zgkWwyRHS12y", "object": "event", "api_version": null, "created": 1234567890, ` +
			`"livemode": false, "pending_webhooks": 0, "request": { "id": null, "idempotency_key": null }, "type": "plan.created" }]}`)},
			wantCalls: 1, wantKind: domain.KindInvalid, wantMsg: "data.object is missing"},
		{name: "not a list", faults: []answer{ok(`{"object":"event","data":[]}`)}, wantCalls: 1, wantKind: domain.KindInvalid, wantMsg: "is not a list"},
		{name: "has_more missing", faults: []answer{ok(`{"object":"list","data":[]}`)}, wantCalls: 1, wantKind: domain.KindInvalid, wantMsg: "has_more"},
		{name: "has_more without data", faults: []answer{ok(`{"object":"list","has_more":true,"data":[]}`)}, wantCalls: 1,
			wantKind: domain.KindInvalid, wantMsg: "no cursor"},
		{name: "data of the wrong type", faults: []answer{ok(`{"object":"list","has_more":false,"data":{}}`)}, wantCalls: 1,
			wantKind: domain.KindInvalid, wantMsg: "data has the wrong type"},
		{name: "event outside the window", faults: []answer{ok(`{"object":"list","has_more":false,"data":[` + succeeded(8, since-1).body + `]}`)},
			wantCalls: 1, wantKind: domain.KindInvalid, wantMsg: "outside the window"},
		{name: "malformed event", faults: []answer{ok(`{"object":"list","has_more":false,"data":[` + in.body + `,{"id":"evt_2","type":"charge.refunded","created":"x"}]}`)},
			wantCalls: 1, wantKind: domain.KindInvalid, wantMsg: "created is not a positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeEvents(t, in)
			api.faults = tt.faults
			page, err := api.client(t, cmpOr(tt.key, testKey)).ListPage(t.Context(), window(since, since+60), "")
			if got := len(api.calls()); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
			if tt.wantKind != 0 || tt.wantHTTP != 0 {
				if err == nil || domain.KindOf(err) != tt.wantKind || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("ListPage = %+v, %v; want a %v error with %q", page, err, tt.wantKind, tt.wantMsg)
				}
				var re *rest.Error
				if tt.wantHTTP != 0 && (!errors.As(err, &re) || re.Status != tt.wantHTTP) {
					t.Errorf("error %v; want a *rest.Error with status %d", err, tt.wantHTTP)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.ignored != "" {
				if len(page.Notifications) != 1 || !strings.Contains(page.Notifications[0].IgnoredReason, tt.ignored) {
					t.Fatalf("page %+v; want one ignored with %q", page, tt.ignored)
				}
				return
			}
			if len(page.Notifications) != 1 || page.Notifications[0].ProviderEventID != in.id || page.Next != "" {
				t.Fatalf("page %+v; want %s only", page, in.id)
			}
		})
	}
}

func TestListPageCursorAndCoverage(t *testing.T) {
	api := newFakeEvents(t)
	c := api.client(t, testKey)
	if _, err := c.ListPage(t.Context(), window(listNow-60, listNow), "evt 1"); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("ListPage with a bad cursor = %v; want KindInvalid", err)
	}
	if c.Coverage() != providers.CoverageChanges {
		t.Errorf("Coverage = %q", c.Coverage())
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
