package fakeapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/fakeapi"
	"github.com/payledger/payledger/cmd/paysim/internal/gen"
	"github.com/payledger/payledger/cmd/paysim/internal/sign"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// Published envelopes, copied from ../shared/specs/provider-apis.md: every
// top-level (and paging) key of these must be in what the fakes answer.
const (
	// Stripe: docs.stripe.com/api/pagination, example response (§1.1).
	stripeEnvelope = `{ "object": "list", "url": "/v1/customers", "has_more": false, "data": [ { "id": "cus_4QFJOjw2pOmAGJ", "object": "customer" } ] }`
	// Stripe: openapi fixtures3.json resources.event (§1.1).
	stripeEvent = `{ "id": "evt_1Pgc76B7WZ01zgkWwyRHS12y", "object": "event", "api_version": null, "created": 1234567890,
  "livemode": false, "pending_webhooks": 0, "request": { "id": null, "idempotency_key": null }, "type": "plan.created" }`
	// Mercado Pago: devsite reference/payments/samples/search_curl_response.sh (§2.1).
	mpEnvelope = `{ "paging": { "total": 17493, "limit": 30, "offset": 0 }, "results": [ { "id": "0000001", "status": "approved" } ] }`
	// Asaas: no published list JSON; the field list of the official SDK's
	// PaymentListResponseDto (§3.1), not a copy.
	asaasEnvelope = `{"object":"list","hasMore":false,"totalCount":1,"limit":10,"offset":0,"data":[]}`
	// Pagar.me: docs.pagar.me/reference/paginação-1 (§4.1).
	pagarmeEnvelope = `{ "data": [ ], "paging": { "total": 11, "previous": null, "next": "{url}?page=2&size=10" } }`
)

// listServer serves 400 payments; only those for which shown says so are
// visible, at their last step.
func listServer(t *testing.T, shown func(i int) bool) (*httptest.Server, []*truth.Payment) {
	t.Helper()
	ps, err := gen.Generate(13, 400, truth.Providers(), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := sign.LoadKey("")
	api, err := fakeapi.New(creds, "kid", &key.PublicKey, ps)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		if shown(i) {
			api.Advance(p, len(p.Steps)-1)
		}
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return srv, ps
}

// call GETs path with the provider's credentials (wrong ones when bad)
// and returns the status and raw body.
func call(t *testing.T, srv *httptest.Server, provider, path string, bad bool) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	secret := map[string]string{truth.Stripe: creds.StripeAPIKey, truth.MercadoPago: creds.MercadoPagoToken,
		truth.Asaas: creds.AsaasAPIKey, truth.Pagarme: creds.PagarmeAPIKey}[provider]
	if bad {
		secret = "wrong"
	}
	switch provider {
	case truth.Stripe, truth.MercadoPago:
		req.Header.Set("Authorization", "Bearer "+secret)
	case truth.Asaas:
		req.Header.Set("access_token", secret)
	case truth.Pagarme:
		req.SetBasicAuth(secret, "")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&raw)
	return resp.StatusCode, raw
}

// hasKeys fails unless every key of the published example (and of its
// "paging" object) is in got.
func hasKeys(t *testing.T, example string, got []byte) {
	t.Helper()
	var want, have map[string]json.RawMessage
	if err := json.Unmarshal([]byte(example), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &have); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	for k := range want {
		if _, ok := have[k]; !ok {
			t.Errorf("key %q of the published shape missing in %.200s", k, got)
		}
	}
	if want["paging"] != nil && have["paging"] != nil {
		hasKeys(t, string(want["paging"]), have["paging"])
	}
}

type stripeList struct {
	Object  string            `json:"object"`
	HasMore bool              `json:"has_more"`
	Data    []json.RawMessage `json:"data"`
}

type stripeEventObj struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Type    string `json:"type"`
	Created int64  `json:"created"`
	Data    struct {
		Object struct {
			ID string `json:"id"`
		} `json:"object"`
	} `json:"data"`
}

// stripeEvents pages GET /v1/events with q to the end and returns the
// events in the order served.
func stripePages(t *testing.T, srv *httptest.Server, q url.Values) []stripeEventObj {
	t.Helper()
	var all []stripeEventObj
	for range 1000 {
		code, raw := call(t, srv, truth.Stripe, "/stripe/v1/events?"+q.Encode(), false)
		var l stripeList
		if code != 200 || json.Unmarshal(raw, &l) != nil || l.Object != "list" {
			t.Fatalf("%s: %d %s", q.Encode(), code, raw)
		}
		hasKeys(t, stripeEnvelope, raw)
		for _, d := range l.Data {
			var e stripeEventObj
			if err := json.Unmarshal(d, &e); err != nil {
				t.Fatal(err)
			}
			hasKeys(t, stripeEvent, d)
			all = append(all, e)
		}
		if !l.HasMore {
			return all
		}
		q.Set("starting_after", all[len(all)-1].ID)
	}
	t.Fatal("no end of pages")
	return nil
}

// TestStripeEvents: /v1/events serves the webhook events themselves (same
// IDs and bodies) of the payments that happened, newest first, filtered by
// created and types[], paged with starting_after and ending_before.
func TestStripeEvents(t *testing.T) {
	srv, ps := listServer(t, func(i int) bool { return i%8 != 0 }) // some Stripe payments not yet begun
	want := map[string]truth.Step{}
	var times []int64
	for i, p := range ps {
		if p.Provider == truth.Stripe && i%8 != 0 {
			for _, s := range p.Steps {
				want[s.Webhook.EventID] = s
				times = append(times, s.At.Unix())
			}
		}
	}
	sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
	all := stripePages(t, srv, url.Values{"limit": {"7"}})
	if len(all) != len(want) {
		t.Fatalf("%d events served, want %d", len(all), len(want))
	}
	for i, e := range all {
		s, ok := want[e.ID]
		if !ok || e.Type != s.Webhook.Type || e.Created != s.At.Unix() || e.Object != "event" {
			t.Fatalf("event %+v not a sent webhook", e)
		}
		if i > 0 && e.Created > all[i-1].Created {
			t.Fatalf("not newest first at %d", i)
		}
	}
	// The body is the webhook's, byte for byte.
	code, raw := call(t, srv, truth.Stripe, "/stripe/v1/events?limit=1", false)
	var l stripeList
	_ = json.Unmarshal(raw, &l)
	if code != 200 || len(l.Data) != 1 || string(l.Data[0]) != string(want[all[0].ID].Webhook.Body) {
		t.Errorf("first event body differs from its webhook")
	}

	gte, lt := times[len(times)/4], times[3*len(times)/4]
	q := url.Values{"created[gte]": {strconv.FormatInt(gte, 10)}, "created[lt]": {strconv.FormatInt(lt, 10)},
		"types[]": {"payment_intent.succeeded", "charge.dispute.*"}, "limit": {"100"}}
	n := 0
	for _, s := range want {
		c := s.At.Unix()
		if c >= gte && c < lt && (s.Webhook.Type == "payment_intent.succeeded" || strings.HasPrefix(s.Webhook.Type, "charge.dispute.")) {
			n++
		}
	}
	got := stripePages(t, srv, q)
	if len(got) != n || n == 0 {
		t.Errorf("window and types: %d events, want %d", len(got), n)
	}
	for _, e := range got {
		if e.Created < gte || e.Created >= lt || e.Type != "payment_intent.succeeded" && !strings.HasPrefix(e.Type, "charge.dispute.") {
			t.Errorf("filtered out event served: %+v", e)
		}
	}

	// ending_before: the page just newer than the cursor, newest first.
	code, raw = call(t, srv, truth.Stripe, "/stripe/v1/events?limit=3&ending_before="+all[10].ID, false)
	_ = json.Unmarshal(raw, &l)
	var ids []string
	for _, d := range l.Data {
		var e stripeEventObj
		_ = json.Unmarshal(d, &e)
		ids = append(ids, e.ID)
	}
	if code != 200 || !slices.Equal(ids, []string{all[7].ID, all[8].ID, all[9].ID}) || !l.HasMore {
		t.Errorf("ending_before: %d %v has_more %v", code, ids, l.HasMore)
	}

	for _, bad := range []string{"limit=0", "limit=101", "created[gte]=yesterday", "type=a&types[]=b",
		"starting_after=evt_nope", "starting_after=" + all[0].ID + "&ending_before=" + all[1].ID} {
		if code, raw := call(t, srv, truth.Stripe, "/stripe/v1/events?"+bad, false); code != 400 || !strings.Contains(string(raw), "invalid_request_error") {
			t.Errorf("%s: %d %s", bad, code, raw)
		}
	}
	if code, _ := call(t, srv, truth.Stripe, "/stripe/v1/events", true); code != 401 {
		t.Errorf("wrong key: %d", code)
	}
}

// TestStripeCharge: GET /v1/charges/{id} names the charge's PaymentIntent
// (the lookup of a charge-only dispute), expanded on request.
func TestStripeCharge(t *testing.T) {
	srv, ps := listServer(t, func(int) bool { return true })
	var p *truth.Payment
	for _, q := range ps {
		if q.Provider == truth.Stripe && q.Lifecycle == "dispute_lost" {
			p = q
			break
		}
	}
	ch := "ch_3Q" + strings.TrimPrefix(p.ID, "pi_3Q")
	var c struct {
		ID            string          `json:"id"`
		Object        string          `json:"object"`
		PaymentIntent json.RawMessage `json:"payment_intent"`
		BT            json.RawMessage `json:"balance_transaction"`
		Disputed      bool            `json:"disputed"`
	}
	code, raw := call(t, srv, truth.Stripe, "/stripe/v1/charges/"+ch, false)
	if code != 200 || json.Unmarshal(raw, &c) != nil || c.ID != ch || c.Object != "charge" || string(c.PaymentIntent) != `"`+p.ID+`"` ||
		!strings.HasPrefix(string(c.BT), `"txn_`) || !c.Disputed {
		t.Errorf("charge: %d %s", code, raw)
	}
	_, raw = call(t, srv, truth.Stripe, "/stripe/v1/charges/"+ch+"?expand[]=payment_intent", false)
	var pi struct {
		ID           string `json:"id"`
		Status       string `json:"status"`
		LatestCharge string `json:"latest_charge"`
	}
	if json.Unmarshal(raw, &c) != nil || json.Unmarshal(c.PaymentIntent, &pi) != nil || pi.ID != p.ID || pi.Status != "succeeded" || pi.LatestCharge != ch {
		t.Errorf("expanded: %s", raw)
	}
	for path, want := range map[string]int{"/stripe/v1/charges/ch_nope": 404, "/stripe/v1/payment_intents/" + p.ID: 200} {
		if code, _ := call(t, srv, truth.Stripe, path, false); code != want {
			t.Errorf("%s: %d, want %d", path, code, want)
		}
	}
	if code, _ := call(t, srv, truth.Stripe, "/stripe/v1/charges/"+ch, true); code != 401 {
		t.Errorf("wrong key: %d", code)
	}
}

// offsetPages pages an offset/limit list to the end and returns the IDs.
func offsetPages(t *testing.T, srv *httptest.Server, provider, path, example string, limit int, results func([]byte) ([]string, int)) []string {
	t.Helper()
	var ids []string
	for offset := 0; ; offset += limit {
		code, raw := call(t, srv, provider, path+"&offset="+strconv.Itoa(offset)+"&limit="+strconv.Itoa(limit), false)
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, raw)
		}
		hasKeys(t, example, raw)
		page, total := results(raw)
		ids = append(ids, page...)
		if offset+limit >= total {
			if len(ids) != total {
				t.Fatalf("%s: %d IDs, total %d", path, len(ids), total)
			}
			return ids
		}
	}
}

type mpSearch struct {
	Paging struct {
		Total, Limit, Offset int
	} `json:"paging"`
	Results []struct {
		ID              json.Number `json:"id"`
		Status          string      `json:"status"`
		DateLastUpdated string      `json:"date_last_updated"`
	} `json:"results"`
}

func TestMercadoPagoSearch(t *testing.T) {
	srv, ps := listServer(t, func(i int) bool { return i%5 != 1 })
	var updated []time.Time
	for i, p := range ps {
		if p.Provider == truth.MercadoPago && i%5 != 1 {
			updated = append(updated, p.Steps[len(p.Steps)-1].At)
		}
	}
	slices.SortFunc(updated, func(a, b time.Time) int { return a.Compare(b) })
	begin, end := updated[len(updated)/3], updated[2*len(updated)/3]
	zone := time.FixedZone("", -4*3600) // any offset: the bounds are instants
	path := "/mercadopago/v1/payments/search?range=date_last_updated&sort=date_last_updated&criteria=asc&begin_date=" +
		url.QueryEscape(begin.In(zone).Format("2006-01-02T15:04:05.000-07:00")) + "&end_date=" + url.QueryEscape(end.In(zone).Format("2006-01-02T15:04:05.000-07:00"))
	var last time.Time
	ids := offsetPages(t, srv, truth.MercadoPago, path, mpEnvelope, 7, func(raw []byte) ([]string, int) {
		var s mpSearch
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range s.Results {
			at, _ := time.Parse("2006-01-02T15:04:05.000-07:00", r.DateLastUpdated)
			if at.Before(last) || at.Before(begin.Truncate(time.Millisecond)) || at.After(end) {
				t.Errorf("%s updated %s: out of order or window", r.ID, r.DateLastUpdated)
			}
			last = at
			out = append(out, r.ID.String())
		}
		return out, s.Paging.Total
	})
	if want := 2*len(updated)/3 - len(updated)/3 + 1; len(ids) < want-1 || len(ids) > want+1 {
		t.Errorf("%d payments in the window, want about %d", len(ids), want)
	}
	all := offsetPages(t, srv, truth.MercadoPago, "/mercadopago/v1/payments/search?sort=id&criteria=desc", mpEnvelope, 50, func(raw []byte) ([]string, int) {
		var s mpSearch
		_ = json.Unmarshal(raw, &s)
		var out []string
		for _, r := range s.Results {
			out = append(out, r.ID.String())
		}
		return out, s.Paging.Total
	})
	if len(all) != len(updated) || !slices.IsSortedFunc(all, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("all by id desc: %d of %d, sorted %v", len(all), len(updated), all[:3])
	}
	for _, bad := range []string{"sort=id", "criteria=asc", "sort=nope&criteria=asc", "sort=id&criteria=up",
		"sort=id&criteria=asc&limit=51", "sort=id&criteria=asc&offset=10001", "sort=id&criteria=asc&begin_date=2026-03-02"} {
		if code, raw := call(t, srv, truth.MercadoPago, "/mercadopago/v1/payments/search?"+bad, false); code != 400 || !strings.Contains(string(raw), `"cause"`) {
			t.Errorf("%s: %d %s", bad, code, raw)
		}
	}
	if code, _ := call(t, srv, truth.MercadoPago, "/mercadopago/v1/payments/search?sort=id&criteria=asc", true); code != 401 {
		t.Errorf("wrong token: %d", code)
	}
}

type asaasPage struct {
	Object     string `json:"object"`
	HasMore    bool   `json:"hasMore"`
	TotalCount int    `json:"totalCount"`
	Data       []struct {
		ID          string  `json:"id"`
		DateCreated string  `json:"dateCreated"`
		PaymentDate *string `json:"paymentDate"`
		Status      string  `json:"status"`
	} `json:"data"`
}

func TestAsaasList(t *testing.T) {
	srv, ps := listServer(t, func(i int) bool { return i%6 != 2 })
	created, paid := map[string]string{}, map[string]string{}
	var days []string
	for i, p := range ps {
		if p.Provider != truth.Asaas || i%6 == 2 {
			continue
		}
		var b struct {
			DateCreated string  `json:"dateCreated"`
			PaymentDate *string `json:"paymentDate"`
		}
		_ = json.Unmarshal(p.Steps[len(p.Steps)-1].API, &b)
		created[p.ID] = b.DateCreated
		if b.PaymentDate != nil {
			paid[p.ID] = *b.PaymentDate
		}
		days = append(days, b.DateCreated)
	}
	slices.Sort(days)
	ge, le := days[len(days)/4], days[3*len(days)/4]
	tests := []struct {
		name  string
		query string
		want  func(id string) bool
	}{
		{"everything", "", func(string) bool { return true }},
		{"dateCreated", "dateCreated%5Bge%5D=" + ge + "&dateCreated%5Ble%5D=" + le,
			func(id string) bool { return created[id] >= ge && created[id] <= le }},
		{"paymentDate", "paymentDate[ge]=" + ge + "&paymentDate[le]=" + le,
			func(id string) bool { d, ok := paid[id]; return ok && d >= ge && d <= le }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids := offsetPages(t, srv, truth.Asaas, "/asaas/v3/payments?"+tt.query, asaasEnvelope, 9, func(raw []byte) ([]string, int) {
				var pg asaasPage
				if err := json.Unmarshal(raw, &pg); err != nil || pg.Object != "list" {
					t.Fatalf("%v %s", err, raw)
				}
				var out []string
				for _, d := range pg.Data {
					out = append(out, d.ID)
				}
				return out, pg.TotalCount
			})
			n := 0
			for id := range created {
				if tt.want(id) {
					n++
				}
			}
			for _, id := range ids {
				if !tt.want(id) {
					t.Errorf("%s served, filtered out", id)
				}
			}
			if len(ids) != n || n == 0 {
				t.Errorf("%d served, want %d", len(ids), n)
			}
		})
	}
	for _, bad := range []string{"limit=101", "limit=0", "offset=-1", "dateCreated[ge]=02/03/2026"} {
		if code, raw := call(t, srv, truth.Asaas, "/asaas/v3/payments?"+bad, false); code != 400 || !strings.Contains(string(raw), `"errors"`) {
			t.Errorf("%s: %d %s", bad, code, raw)
		}
	}
	if code, _ := call(t, srv, truth.Asaas, "/asaas/v3/payments", true); code != 401 {
		t.Errorf("wrong key: %d", code)
	}
}

func TestPagarmeList(t *testing.T) {
	srv, ps := listServer(t, func(i int) bool { return i%7 != 3 })
	created := map[string]time.Time{}
	var times []time.Time
	for i, p := range ps {
		if p.Provider == truth.Pagarme && i%7 != 3 {
			created[p.ID] = p.Steps[0].At.Truncate(time.Millisecond)
			times = append(times, created[p.ID])
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	since, until := times[len(times)/4], times[3*len(times)/4]
	next := srv.URL + "/pagarme/core/v5/charges?size=6&created_since=" + since.Format(time.RFC3339Nano) + "&created_until=" + until.Format(time.RFC3339Nano)
	var ids []string
	var prev time.Time
	for next != "" {
		code, raw := call(t, srv, truth.Pagarme, strings.TrimPrefix(next, srv.URL), false)
		var pg struct {
			Data []struct {
				ID        string `json:"id"`
				CreatedAt string `json:"created_at"`
			} `json:"data"`
			Paging struct {
				Total int     `json:"total"`
				Next  *string `json:"next"`
			} `json:"paging"`
		}
		if code != 200 || json.Unmarshal(raw, &pg) != nil {
			t.Fatalf("%d %s", code, raw)
		}
		hasKeys(t, pagarmeEnvelope, raw)
		for _, d := range pg.Data {
			at, _ := time.Parse(time.RFC3339, d.CreatedAt)
			if at.Before(since) || at.After(until) || (!prev.IsZero() && at.After(prev)) {
				t.Errorf("%s created %s: out of window or order", d.ID, d.CreatedAt)
			}
			prev = at
			ids = append(ids, d.ID)
		}
		next = ""
		if pg.Paging.Next != nil {
			next = *pg.Paging.Next
		}
	}
	n := 0
	for _, c := range created {
		if !c.Before(since) && !c.After(until) {
			n++
		}
	}
	if len(ids) != n || n == 0 {
		t.Errorf("%d charges served, want %d", len(ids), n)
	}
	for _, bad := range []string{"size=0", "size=101", "page=0", "created_since=yesterday"} {
		if code, _ := call(t, srv, truth.Pagarme, "/pagarme/core/v5/charges?"+bad, false); code != 422 {
			t.Errorf("%s: %d", bad, code)
		}
	}
	if code, _ := call(t, srv, truth.Pagarme, "/pagarme/core/v5/charges", true); code != 401 {
		t.Errorf("wrong key: %d", code)
	}
}
