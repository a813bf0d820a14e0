package mercadopago

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
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

// listWindow is the window the list tests ask for.
var listWindow = providers.Window{
	Since: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
	Until: time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC),
}

// searchAPI is Mercado Pago's search and payment endpoints over a fixed set
// of payments, paged by `size` results whatever limit is asked, after
// scripted failures; it records the queries it was asked.
type searchAPI struct {
	mu       sync.Mutex
	payments []string // answers, in date_last_updated order
	size     int
	failures []reply // answered first, one per call
	queries  []url.Values
}

func (s *searchAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries = append(s.queries, r.URL.Query())
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"message":"invalid access token","error":"unauthorized","status":401}`)
		return
	}
	if len(s.failures) > 0 {
		f := s.failures[0]
		s.failures = s.failures[1:]
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.WriteHeader(f.status)
		_, _ = io.WriteString(w, f.body)
		return
	}
	if id, ok := strings.CutPrefix(r.URL.Path, "/v1/payments/"); ok && id != "search" {
		for _, p := range s.payments {
			if strings.Contains(p, `"id":`+id+`,`) || strings.Contains(p, `"id": `+id+`,`) {
				_, _ = io.WriteString(w, p)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		return
	}
	off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	end := min(off+s.size, len(s.payments))
	_, _ = io.WriteString(w, `{"paging":{"total":`+strconv.Itoa(len(s.payments))+`,"limit":50,"offset":`+strconv.Itoa(off)+
		`},"results":[`+strings.Join(s.payments[min(off, end):end], ",")+`]}`)
}

func (s *searchAPI) calls() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.queries...)
}

func serveSearch(t *testing.T, token string, api *searchAPI) *StatusClient {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	c, err := NewStatusClient(StatusConfig{AccessToken: token, Options: rest.Options{BaseURL: srv.URL, Timeout: time.Second,
		MaxAttempts: 3, RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond, Now: func() time.Time { return fixedNow }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// listedPayments are five payments updated in listWindow.
func listedPayments() []string {
	var out []string
	for i := range 5 {
		upd := listWindow.Since.Add(time.Duration(i) * time.Minute).In(time.FixedZone("", -4*3600)).Format(searchTime)
		out = append(out, answer("22000000000"+strconv.Itoa(10+i), "approved", "accredited", "150.10", "0", "BRL", upd))
	}
	return out
}

// listAll follows the cursors to the end.
func listAll(t *testing.T, c *StatusClient, w providers.Window) []domain.Notification {
	t.Helper()
	var all []domain.Notification
	cur := ""
	for range 100 {
		page, err := c.ListPage(context.Background(), w, cur)
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

func TestListPagePagination(t *testing.T) {
	api := &searchAPI{payments: listedPayments(), size: 2}
	c := serveSearch(t, testToken, api)
	all := listAll(t, c, listWindow)
	if len(all) != 5 {
		t.Fatalf("listed %d payments, want 5", len(all))
	}
	for i, n := range all {
		want := "22000000000" + strconv.Itoa(10+i)
		if n.Provider != "mercadopago" || n.ProviderEventType != "api.payment" || len(n.Events) != 1 ||
			n.Events[0].EventMeta().ProviderPaymentID != want || n.ProviderEventID != n.Events[0].EventMeta().ProviderEventID {
			t.Errorf("notification %d = %+v, want payment %s", i, n, want)
		}
	}
	calls := api.calls()
	if len(calls) != 3 {
		t.Fatalf("calls = %d, want 3", len(calls))
	}
	for i, q := range calls {
		want := url.Values{"range": {"date_last_updated"}, "sort": {"date_last_updated"}, "criteria": {"asc"},
			"begin_date": {"2026-03-01T12:00:00.000+00:00"}, "end_date": {"2026-03-01T12:59:59.999+00:00"},
			"offset": {strconv.Itoa(2 * i)}, "limit": {"50"}}
		if !reflect.DeepEqual(q, want) {
			t.Errorf("query %d = %v, want %v", i, q, want)
		}
	}
}

func TestSearchDates(t *testing.T) {
	tests := []struct {
		name       string
		w          providers.Window
		begin, end string
	}{
		{name: "whole seconds", w: listWindow, begin: "2026-03-01T12:00:00.000+00:00", end: "2026-03-01T12:59:59.999+00:00"},
		{name: "sub-millisecond bounds keep every millisecond of the window",
			w:     providers.Window{Since: listWindow.Since.Add(1500 * time.Microsecond), Until: listWindow.Until.Add(500 * time.Microsecond)},
			begin: "2026-03-01T12:00:00.001+00:00", end: "2026-03-01T13:00:00.000+00:00"},
		{name: "zone of the window does not matter",
			w:     providers.Window{Since: listWindow.Since.In(time.FixedZone("BRT", -3*3600)), Until: listWindow.Until},
			begin: "2026-03-01T12:00:00.000+00:00", end: "2026-03-01T12:59:59.999+00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := searchPath(tt.w, cursor{from: tt.w.Since})
			q, err := url.ParseQuery(strings.TrimPrefix(p, "/v1/payments/search?"))
			if err != nil || q.Get("begin_date") != tt.begin || q.Get("end_date") != tt.end {
				t.Errorf("searchPath = %s (%v), want begin %s end %s", p, err, tt.begin, tt.end)
			}
		})
	}
}

// TestListPagePublishedExample decodes Mercado Pago's own search example
// (provider-apis.md §2.1, devsite reference/payments/samples/
// search_curl_response.sh, trimmed): a string id, 17 493 results in all.
func TestListPagePublishedExample(t *testing.T) {
	body, err := os.ReadFile("testdata/api/search_published.json")
	if err != nil {
		t.Fatal(err)
	}
	page, err := decodeSearchPage(body, cursor{from: listWindow.Since}, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Notifications) != 1 || len(page.Notifications[0].Events) != 1 {
		t.Fatalf("page = %+v", page)
	}
	obs, ok := page.Notifications[0].Events[0].(*domain.PaymentStatusObserved)
	if !ok {
		t.Fatalf("event %T", page.Notifications[0].Events[0])
	}
	want := time.Date(2017, 8, 31, 11, 26, 38, 0, time.UTC)
	if obs.ProviderPaymentID != "0000001" || obs.Status != domain.StatusConfirmed || obs.Amount != 25000 || obs.Currency != "ARS" ||
		!obs.OccurredAt.Equal(want) || !obs.StatesFee() || obs.Fee != 0 {
		t.Errorf("observation %+v", obs)
	}
	if next, err := parseCursor(page.Next, providers.Window{Since: listWindow.Since, Until: listWindow.Until}); err != nil || next.offset != 1 {
		t.Errorf("Next = %q (%+v, %v), want offset 1", page.Next, next, err)
	}
}

// TestListPageMatchesObserve: a payment listed unchanged is the fact its
// status fetch stores, so a backfill after a reconciliation adds nothing.
func TestListPageMatchesObserve(t *testing.T) {
	approved, err := os.ReadFile("testdata/api/payment_approved.json")
	if err != nil {
		t.Fatal(err)
	}
	published, err := os.ReadFile("testdata/api/payment_published_fee.json")
	if err != nil {
		t.Fatal(err)
	}
	api := &searchAPI{payments: []string{string(approved), string(published), listedPayments()[0]}, size: 50}
	c := serveSearch(t, testToken, api)
	all := listAll(t, c, listWindow)
	if len(all) != 3 {
		t.Fatalf("listed %d, want 3", len(all))
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
	}
}

func TestListPageFailures(t *testing.T) {
	tests := []struct {
		name      string
		token     string
		failures  []reply
		wantCalls int
		wantKind  domain.Kind // ignored when wantHTTP is 0
		wantHTTP  int         // 0: success
	}{
		{name: "429 then the page", failures: []reply{{status: 429, retryAfter: "0", body: `{"message":"too many requests"}`}}, wantCalls: 2},
		{name: "5xx then the page", failures: []reply{{status: 503, body: "down"}}, wantCalls: 2},
		{name: "5xx outage", failures: []reply{{status: 500}, {status: 500}, {status: 500}}, wantCalls: 3, wantKind: domain.KindUnavailable, wantHTTP: 500},
		{name: "401 is not retried", token: "APP_USR-wrong", wantCalls: 1, wantKind: domain.KindUnauthorized, wantHTTP: 401},
		{name: "403 is not retried", failures: []reply{{status: 403, body: `{"message":"forbidden"}`}}, wantCalls: 1, wantKind: domain.KindUnauthorized, wantHTTP: 403},
		{name: "bad date is not retried", failures: []reply{{status: 400, body: `{"message":"Date format must be yyyy-MM-dd'T'HH:mm:ss.SSSZ","error":"1001"}`}},
			wantCalls: 1, wantKind: domain.KindInternal, wantHTTP: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token := tt.token
			if token == "" {
				token = testToken
			}
			api := &searchAPI{payments: listedPayments(), size: 50, failures: tt.failures}
			c := serveSearch(t, token, api)
			page, err := c.ListPage(context.Background(), listWindow, "")
			if n := len(api.calls()); n != tt.wantCalls {
				t.Errorf("calls = %d, want %d", n, tt.wantCalls)
			}
			if tt.wantHTTP == 0 {
				if err != nil || len(page.Notifications) != 5 || page.Next != "" {
					t.Fatalf("ListPage = %+v, %v", page, err)
				}
				return
			}
			var re *rest.Error
			if domain.KindOf(err) != tt.wantKind || !errors.As(err, &re) || re.Status != tt.wantHTTP {
				t.Errorf("ListPage error %v: want kind %v, HTTP %d", err, tt.wantKind, tt.wantHTTP)
			}
			if err != nil && strings.Contains(err.Error(), testToken) {
				t.Error("error leaks the token")
			}
		})
	}
}

func TestListPageInvalid(t *testing.T) {
	good := listedPayments()[0]
	tests := []struct {
		name, body, want string
	}{
		{name: "not an object", body: `[]`, want: "malformed search page"},
		{name: "no paging", body: `{"results":[]}`, want: "paging.total"},
		{name: "no results", body: `{"paging":{"total":0}}`, want: "no results"},
		{name: "results of the wrong type", body: `{"paging":{"total":1},"results":{}}`, want: "results has the wrong type"},
		{name: "result without id", body: `{"paging":{"total":2},"results":[` + good + `,{"status":"approved"}]}`, want: "results[1] (offset 1): mercadopago: id is missing"},
		{name: "result that fails mapping", body: `{"paging":{"total":1},"results":[` + strings.Replace(good, `:150.10,`, `:1.005,`, 1) + `]}`,
			want: "results[0] (offset 0): payment 2200000000010: mercadopago: transaction_amount"},
		{name: "result with a decimal id", body: `{"paging":{"total":1},"results":[{"id":1.5}]}`, want: "results[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeSearchPage([]byte(tt.body), cursor{from: listWindow.Since}, fixedNow)
			if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want KindInvalid containing %q", err, tt.want)
			}
		})
	}
}

func TestListPageBadCursor(t *testing.T) {
	inside := listWindow.Since.Add(time.Minute).Format(time.RFC3339Nano)
	for _, cur := range []string{
		"garbage", "offset=50", "from=" + inside, "from=" + inside + "&offset=-50", "from=" + inside + "&offset=1e2",
		"from=" + inside + "&offset=9951", "from=2026-03-01T11:59:59Z&offset=0", "from=2026-03-01T13:00:00Z&offset=0",
		"from=" + inside + "&offset=0&x=1", "from=yesterday&offset=0", "%zz",
	} {
		t.Run(cur, func(t *testing.T) {
			api := &searchAPI{payments: listedPayments(), size: 50}
			c := serveSearch(t, testToken, api)
			_, err := c.ListPage(context.Background(), listWindow, cur)
			if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), "cursor") || len(api.calls()) != 0 {
				t.Errorf("ListPage(%q) = %v after %d calls, want KindInvalid naming the cursor, no call", cur, err, len(api.calls()))
			}
		})
	}
	api := &searchAPI{payments: listedPayments(), size: 50}
	c := serveSearch(t, testToken, api)
	if _, err := c.ListPage(context.Background(), providers.Window{Since: listWindow.Until, Until: listWindow.Since}, ""); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("inverted window: %v", err)
	}
}

// TestNextCursorOffsetCap: the search lists at most offset 10 000, so a
// longer listing starts again from the last listed update.
func TestNextCursorOffsetCap(t *testing.T) {
	from := listWindow.Since
	last := from.Add(10 * time.Minute)
	tests := []struct {
		name     string
		at       cursor
		n, total int64
		last     time.Time
		want     cursor
		wantMore bool
		wantErr  bool
	}{
		{name: "next page", at: cursor{from: from}, n: 50, total: 120, last: last, want: cursor{from: from, offset: 50}, wantMore: true},
		{name: "last page", at: cursor{from: from, offset: 100}, n: 20, total: 120, last: last},
		{name: "empty page ends", at: cursor{from: from, offset: 100}, n: 0, total: 120},
		{name: "up to the cap", at: cursor{from: from, offset: 9900}, n: 50, total: 20000, last: last, want: cursor{from: from, offset: 9950}, wantMore: true},
		{name: "past the cap starts again", at: cursor{from: from, offset: 9950}, n: 50, total: 20000, last: last,
			want: cursor{from: last.Add(-time.Millisecond)}, wantMore: true},
		{name: "no progress possible", at: cursor{from: from, offset: 9950}, n: 50, total: 20000, last: from, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, more, err := nextCursor(tt.at, tt.n, tt.total, tt.last)
			if (err != nil) != tt.wantErr || more != tt.wantMore || !got.from.Equal(tt.want.from) || got.offset != tt.want.offset {
				t.Fatalf("nextCursor = %+v, %v, %v; want %+v, %v", got, more, err, tt.want, tt.wantMore)
			}
			if more {
				back, err := parseCursor(got.String(), listWindow)
				if err != nil || !back.from.Equal(got.from) || back.offset != got.offset {
					t.Errorf("cursor %q parses to %+v, %v", got.String(), back, err)
				}
			}
		})
	}
}

func TestCoverage(t *testing.T) {
	if got := (&StatusClient{}).Coverage(); got != providers.CoverageChanges {
		t.Errorf("Coverage = %q", got)
	}
}
