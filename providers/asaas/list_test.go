package asaas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/rest"
)

// listWindow is the window the list tests ask for: 2024-06-12 00:30 to
// 2024-06-13 02:00 UTC, that is 2024-06-11 21:30 to 2024-06-12 23:00 in
// São Paulo.
var listWindow = providers.Window{
	Since: time.Date(2024, 6, 12, 0, 30, 0, 0, time.UTC),
	Until: time.Date(2024, 6, 13, 2, 0, 0, 0, time.UTC),
}

// failure is a scripted error answer.
type failure struct {
	status     int
	retryAfter string
	body       string
}

// listAPI is Asaas's GET /v3/payments over two lists, by creation and by
// payment date, paged by size whatever limit is asked, and GET
// /v3/payments/{id} over both; scripted failures come first. It records
// the queries.
type listAPI struct {
	mu            sync.Mutex
	created, paid []json.RawMessage
	size          int
	failures      []failure
	queries       []url.Values
}

func (a *listAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.queries = append(a.queries, r.URL.Query())
	if r.Header.Get("access_token") != testAPIKey || r.Header.Get("User-Agent") != DefaultUserAgent {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"errors":[{"code":"invalid_access_token","description":"A chave de API fornecida é inválida"}]}`))
		return
	}
	if len(a.failures) > 0 {
		f := a.failures[0]
		a.failures = a.failures[1:]
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(f.body))
		return
	}
	if id, ok := strings.CutPrefix(r.URL.Path, "/v3/payments/"); ok {
		for _, p := range append(append([]json.RawMessage(nil), a.created...), a.paid...) {
			if bytes.Contains(p, []byte(`"id":"`+id+`"`)) {
				_, _ = w.Write(p)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		return
	}
	list := a.created
	if r.URL.Query().Has("paymentDate[ge]") {
		list = a.paid
	}
	off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	end := min(off+a.size, len(list))
	page := map[string]any{"object": "list", "hasMore": end < len(list), "totalCount": len(list), "limit": a.size,
		"offset": off, "data": append([]json.RawMessage{}, list[min(off, end):end]...)}
	_ = json.NewEncoder(w).Encode(page)
}

func (a *listAPI) calls() []url.Values {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]url.Values(nil), a.queries...)
}

func serveList(t *testing.T, key string, a *listAPI) *StatusClient {
	t.Helper()
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	c, err := NewStatusClient(StatusConfig{APIKey: key, Options: rest.Options{BaseURL: srv.URL, Timeout: time.Second,
		MaxAttempts: 3, RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond, Now: func() time.Time { return fetchedAt }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// listedPayment is testdata/api/payment.json as payment id in status.
func listedPayment(t *testing.T, id, status string) json.RawMessage {
	return apiPayment(t, edits{"id": id, "status": status})
}

func payments(t *testing.T, prefix string, n int) []json.RawMessage {
	var out []json.RawMessage
	for i := range n {
		out = append(out, listedPayment(t, prefix+strconv.Itoa(i), "PENDING"))
	}
	return out
}

// listAll follows the cursors to the end.
func listAll(t *testing.T, c *StatusClient) []domain.Notification {
	t.Helper()
	var all []domain.Notification
	cur := ""
	for range 100 {
		page, err := c.ListPage(context.Background(), listWindow, cur)
		if err != nil {
			t.Fatalf("ListPage(%q): %v", cur, err)
		}
		all = append(all, page.Notifications...)
		if cur = page.Next; cur == "" {
			return all
		}
	}
	t.Fatal("ListPage never ended")
	return nil
}

func TestListPagePhases(t *testing.T) {
	// pay_c1 was created and paid in the window: listed in both phases.
	api := &listAPI{created: payments(t, "pay_c", 3), paid: append(payments(t, "pay_p", 2), listedPayment(t, "pay_c1", "PENDING")), size: 2}
	c := serveList(t, testAPIKey, api)
	all := listAll(t, c)
	var ids []string
	for _, n := range all {
		if n.Provider != "asaas" || n.ProviderEventType != "api.payment" || len(n.Events) != 1 || n.ProviderEventID != n.Events[0].EventMeta().ProviderEventID {
			t.Errorf("notification %+v", n)
		}
		ids = append(ids, n.Events[0].EventMeta().ProviderPaymentID)
	}
	if want := []string{"pay_c0", "pay_c1", "pay_c2", "pay_p0", "pay_p1", "pay_c1"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("listed %v, want %v", ids, want)
	}
	if all[1].ProviderEventID != all[5].ProviderEventID {
		t.Errorf("a payment listed in both phases is two facts: %s, %s", all[1].ProviderEventID, all[5].ProviderEventID)
	}
	day := func(f, ge, le string, off int) url.Values {
		return url.Values{f + "[ge]": {ge}, f + "[le]": {le}, "offset": {strconv.Itoa(off)}, "limit": {"100"}}
	}
	// The window's São Paulo days are 2024-06-11 to 2024-06-12.
	want := []url.Values{day("dateCreated", "2024-06-11", "2024-06-12", 0), day("dateCreated", "2024-06-11", "2024-06-12", 2),
		day("paymentDate", "2024-06-11", "2024-06-12", 0), day("paymentDate", "2024-06-11", "2024-06-12", 2)}
	if got := api.calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("queries\n%v\nwant\n%v", got, want)
	}
}

func TestListDays(t *testing.T) {
	utc := func(d, h int) time.Time { return time.Date(2024, 6, d, h, 0, 0, 0, time.UTC) }
	tests := []struct {
		name   string
		w      providers.Window
		ge, le string
	}{
		{name: "Until is excluded: a window ending at São Paulo midnight ends the day before",
			w: providers.Window{Since: utc(12, 3), Until: utc(13, 3)}, ge: "2024-06-12", le: "2024-06-12"},
		{name: "a UTC day spans two São Paulo days", w: providers.Window{Since: utc(12, 0), Until: utc(13, 0)}, ge: "2024-06-11", le: "2024-06-12"},
		{name: "an hour", w: providers.Window{Since: utc(12, 15), Until: utc(12, 16)}, ge: "2024-06-12", le: "2024-06-12"},
	}
	c, err := NewStatusClient(StatusConfig{APIKey: testAPIKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := c.listPath(tt.w, cursor{phase: phasePaid})
			q, err := url.ParseQuery(strings.TrimPrefix(p, "/v3/payments?"))
			if err != nil || q.Get("paymentDate[ge]") != tt.ge || q.Get("paymentDate[le]") != tt.le {
				t.Errorf("listPath = %s, want %s to %s", p, tt.ge, tt.le)
			}
		})
	}
}

// TestListPageVector: Asaas publishes no list answer (provider-apis.md
// §3.1), so the page is the SDK's envelope (PaymentListResponseDto field
// names) around the payment of the docs' PAYMENT_RECEIVED example (§3.2,
// testdata/vectors/asaas_payload.json).
func TestListPageVector(t *testing.T) {
	var env struct {
		Payment json.RawMessage `json:"payment"`
	}
	if err := json.Unmarshal(payload(t, nil), &env); err != nil {
		t.Fatal(err)
	}
	body := `{"object":"list","hasMore":false,"totalCount":1,"limit":10,"offset":0,"data":[` + string(env.Payment) + `]}`
	c, err := NewStatusClient(StatusConfig{APIKey: testAPIKey, Options: rest.Options{Now: func() time.Time { return fetchedAt }}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.decodeListPage([]byte(body), cursor{phase: phasePaid})
	if err != nil || len(page.Notifications) != 1 || page.Next != "" {
		t.Fatalf("page = %+v, %v", page, err)
	}
	obs := page.Notifications[0].Events[0].(*domain.PaymentStatusObserved)
	if obs.ProviderPaymentID != vectorPaymentID || obs.Status != domain.StatusConfirmed || obs.ProviderStatusDetail != DetailReceived ||
		obs.Amount != 10000 || obs.AmountCaptured != 10000 || obs.Fee != 549 || !obs.OccurredAt.Equal(fetchedAt) {
		t.Errorf("observation %+v", obs)
	}
	page, err = c.decodeListPage([]byte(body), cursor{phase: phaseCreated})
	if err != nil || page.Next != "phase=paid&offset=0" {
		t.Errorf("after the created phase: Next %q, %v", page.Next, err)
	}
}

// TestListPageMatchesObserve: a payment listed unchanged (deleted ones too)
// is the fact its status fetch stores.
func TestListPageMatchesObserve(t *testing.T) {
	created := []json.RawMessage{
		apiPayment(t, nil),
		listedPayment(t, "pay_pending", "PENDING"),
		apiPayment(t, edits{"id": "pay_deleted", "status": "PENDING", "deleted": true}),
		apiPayment(t, edits{"id": "pay_refunded", "status": "REFUNDED", "netValue": remove{}}),
	}
	api := &listAPI{created: created, size: 100}
	c := serveList(t, testAPIKey, api)
	all := listAll(t, c)
	if len(all) != len(created) {
		t.Fatalf("listed %d, want %d", len(all), len(created))
	}
	for _, n := range all {
		id := n.Events[0].EventMeta().ProviderPaymentID
		facts, err := c.Observe(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(facts, n.Events) {
			t.Errorf("payment %s: listed %+v, observed %+v", id, n.Events[0], facts[0])
		}
		if id == "pay_deleted" && n.Events[0].(*domain.PaymentStatusObserved).Status != domain.StatusCancelled {
			t.Errorf("deleted payment listed as %+v", n.Events[0])
		}
	}
}

func TestListPageFailures(t *testing.T) {
	tests := []struct {
		name      string
		key       string
		failures  []failure
		wantCalls int
		wantKind  domain.Kind // ignored when wantHTTP is 0
		wantHTTP  int         // 0: success
	}{
		{name: "429 then the page", failures: []failure{{status: 429, retryAfter: "0", body: `{"errors":[{"code":"rate_limit"}]}`}}, wantCalls: 2},
		{name: "5xx then the page", failures: []failure{{status: 502}}, wantCalls: 2},
		{name: "5xx outage", failures: []failure{{status: 503}, {status: 503}, {status: 503}}, wantCalls: 3, wantKind: domain.KindUnavailable, wantHTTP: 503},
		{name: "401 is not retried", key: "$aact_wrong", wantCalls: 1, wantKind: domain.KindUnauthorized, wantHTTP: 401},
		{name: "403 is not retried", failures: []failure{{status: 403}}, wantCalls: 1, wantKind: domain.KindUnauthorized, wantHTTP: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := tt.key
			if key == "" {
				key = testAPIKey
			}
			api := &listAPI{created: payments(t, "pay_c", 2), size: 100, failures: tt.failures}
			c := serveList(t, key, api)
			page, err := c.ListPage(context.Background(), listWindow, "")
			if n := len(api.calls()); n != tt.wantCalls {
				t.Errorf("calls = %d, want %d", n, tt.wantCalls)
			}
			if tt.wantHTTP == 0 {
				if err != nil || len(page.Notifications) != 2 || page.Next != "phase=paid&offset=0" {
					t.Fatalf("ListPage = %+v, %v", page, err)
				}
				return
			}
			var re *rest.Error
			if domain.KindOf(err) != tt.wantKind || !errors.As(err, &re) || re.Status != tt.wantHTTP {
				t.Errorf("ListPage error %v: want kind %v, HTTP %d", err, tt.wantKind, tt.wantHTTP)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Error("error leaks the API key")
			}
		})
	}
}

func TestListPageInvalid(t *testing.T) {
	good := string(listedPayment(t, "pay_1", "PENDING"))
	tests := []struct {
		name, body, want string
	}{
		{name: "not an object", body: `[]`, want: "malformed payment list"},
		{name: "no hasMore", body: `{"data":[]}`, want: "no data or hasMore"},
		{name: "no data", body: `{"hasMore":false}`, want: "no data or hasMore"},
		{name: "empty page with more", body: `{"hasMore":true,"data":[]}`, want: "empty page"},
		{name: "payment without id", body: `{"hasMore":false,"data":[` + good + `,{"status":"PENDING","value":1}]}`, want: "data[1] (created offset 41): id is missing"},
		{name: "payment without status", body: `{"hasMore":false,"data":[{"id":"pay_2","value":1}]}`, want: "data[0] (created offset 40): the answer has no status"},
		{name: "payment that fails mapping", body: `{"hasMore":false,"data":[` + string(apiPayment(t, edits{"id": "pay_1", "value": json.Number("1.005")})) + `]}`,
			want: `data[0] (created offset 40) payment "pay_1": payment.value`},
		{name: "payment of the wrong type", body: `{"hasMore":false,"data":[{"id":1}]}`, want: "data[0] (created offset 40): malformed payment: id has the wrong type"},
	}
	c, err := NewStatusClient(StatusConfig{APIKey: testAPIKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.decodeListPage([]byte(tt.body), cursor{phase: phaseCreated, offset: 40})
			if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want KindInvalid containing %q", err, tt.want)
			}
		})
	}
}

func TestListPageBadCursor(t *testing.T) {
	for _, cur := range []string{
		"garbage", "offset=0", "phase=paid", "phase=updated&offset=0", "phase=paid&offset=-1", "phase=paid&offset=01",
		"phase=paid&offset=0&x=1", "phase=paid&phase=created&offset=0", "%zz",
	} {
		t.Run(cur, func(t *testing.T) {
			api := &listAPI{size: 100}
			c := serveList(t, testAPIKey, api)
			_, err := c.ListPage(context.Background(), listWindow, cur)
			if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), "cursor") || len(api.calls()) != 0 {
				t.Errorf("ListPage(%q) = %v after %d calls, want KindInvalid naming the cursor, no call", cur, err, len(api.calls()))
			}
		})
	}
	c := serveList(t, testAPIKey, &listAPI{size: 100})
	if _, err := c.ListPage(context.Background(), providers.Window{Since: listWindow.Until, Until: listWindow.Until}, ""); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("empty window: %v", err)
	}
}

func TestCoverage(t *testing.T) {
	if got := (&StatusClient{}).Coverage(); got != providers.CoverageCreatedOrPaid {
		t.Errorf("Coverage = %q", got)
	}
}
