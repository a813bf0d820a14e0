package pagarme

import (
	"context"
	"encoding/base64"
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

// listWindow is the window the list tests ask for.
var listWindow = providers.Window{
	Since: time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC),
	Until: time.Date(2026, 1, 16, 0, 0, 0, 0, time.UTC),
}

// chargesAPI is Pagar.me's GET /core/v5/charges over a fixed list, paged by
// size whatever size is asked, and GET /core/v5/charges/{id}; scripted
// failures come first. It records the queries.
type chargesAPI struct {
	mu       sync.Mutex
	charges  []string
	size     int
	failures []reply
	queries  []url.Values
}

func (a *chargesAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.queries = append(a.queries, r.URL.Query())
	if r.Header.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte(testSecretKey+":")) {
		http.Error(w, `{"message":"Authorization has been denied for this request."}`, http.StatusUnauthorized)
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
	if id, ok := strings.CutPrefix(r.URL.Path, "/core/v5/charges/"); ok {
		for _, c := range a.charges {
			if strings.Contains(c, `"id":"`+id+`"`) {
				_, _ = w.Write([]byte(c))
				return
			}
		}
		http.Error(w, `{"message":"Charge not found."}`, http.StatusNotFound)
		return
	}
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	start := min((p-1)*a.size, len(a.charges))
	end := min(start+a.size, len(a.charges))
	next := "null"
	if end < len(a.charges) {
		next = `"https://api.pagar.me/core/v5/charges?page=` + strconv.Itoa(p+1) + `&size=` + strconv.Itoa(a.size) + `"`
	}
	_, _ = w.Write([]byte(`{"data":[` + strings.Join(a.charges[start:end], ",") + `],"paging":{"total":` + strconv.Itoa(len(a.charges)) +
		`,"previous":null,"next":` + next + `}}`))
}

func (a *chargesAPI) calls() []url.Values {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]url.Values(nil), a.queries...)
}

func serveCharges(t *testing.T, key string, a *chargesAPI) *StatusClient {
	t.Helper()
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	c, err := NewStatusClient(StatusConfig{SecretKey: key, Options: rest.Options{BaseURL: srv.URL + "/core/v5", Timeout: time.Second,
		MaxAttempts: 3, RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond, Now: func() time.Time { return t0 }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// charges are n paid charges ch_list0… created in listWindow.
func charges(n int) []string {
	var out []string
	for i := range n {
		out = append(out, strings.Replace(paidCharge, "ch_KjN7oWvTnCeGq3p1", "ch_list"+strconv.Itoa(i), 1))
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

func TestListPagePagination(t *testing.T) {
	api := &chargesAPI{charges: charges(5), size: 2}
	c := serveCharges(t, testSecretKey, api)
	all := listAll(t, c)
	if len(all) != 5 {
		t.Fatalf("listed %d, want 5", len(all))
	}
	for i, n := range all {
		want := "ch_list" + strconv.Itoa(i)
		if n.Provider != "pagarme" || n.ProviderEventType != "api.charge" || len(n.Events) != 1 ||
			n.Events[0].EventMeta().ProviderPaymentID != want || n.ProviderEventID != n.Events[0].EventMeta().ProviderEventID {
			t.Errorf("notification %d = %+v, want charge %s", i, n, want)
		}
	}
	calls := api.calls()
	if len(calls) != 3 {
		t.Fatalf("calls = %d, want 3", len(calls))
	}
	for i, q := range calls {
		want := url.Values{"created_since": {"2026-01-15T00:00:00Z"}, "created_until": {"2026-01-16T00:00:00Z"},
			"page": {strconv.Itoa(i + 1)}, "size": {"30"}}
		if !reflect.DeepEqual(q, want) {
			t.Errorf("query %d = %v, want %v", i, q, want)
		}
	}
}

func TestListDates(t *testing.T) {
	w := providers.Window{Since: listWindow.Since.Add(1500 * time.Millisecond).In(time.FixedZone("BRT", -3*3600)),
		Until: listWindow.Until.Add(200 * time.Millisecond)}
	q, err := url.ParseQuery(strings.TrimPrefix(listPath(w, 1), "charges?"))
	if err != nil || q.Get("created_since") != "2026-01-15T00:00:01Z" || q.Get("created_until") != "2026-01-16T00:00:01Z" {
		t.Errorf("listPath = %v, %v: want whole UTC seconds rounded outwards", q, err)
	}
}

// TestListPagePublishedExample: the paging envelope of Pagar.me's docs
// (provider-apis.md §4.1, docs.pagar.me/reference/paginação-1) around the
// charge of Pagar.me's own module tests (§4.2, ecommerce-module-core
// ChargeFactoryTest.php): no currency and no updated_at.
func TestListPagePublishedExample(t *testing.T) {
	body := `{ "data": [ { "id": "ch_bVrP01wUjDfy951k", "code": "000000050-15", "amount": 30000, "paid_amount": 30000, "payment_method": "boleto",
  "status": "paid", "last_transaction": { "id": "tran_1RMV9ZTYgUdmL0Ja", "transaction_type": "boleto", "amount": 29000,
  "status": "paid", "paid_amount": 29000, "paid_at": "2020-01-03T03:39:08", "credit_at": "2020-01-03T03:39:08" } } ],
  "paging": { "total": 11, "previous": null, "next": "{url}?page=2&size=10" } }`
	c := newStatusClient(t, "http://127.0.0.1:1", testSecretKey)
	page, err := c.decodeListPage([]byte(body), 1)
	if err != nil || len(page.Notifications) != 1 || page.Next != "page=2" {
		t.Fatalf("page = %+v, %v", page, err)
	}
	obs := page.Notifications[0].Events[0].(*domain.PaymentStatusObserved)
	if obs.ProviderPaymentID != "ch_bVrP01wUjDfy951k" || obs.Status != domain.StatusConfirmed || obs.Amount != 30000 ||
		obs.AmountCaptured != 30000 || obs.Currency != "BRL" || !obs.OccurredAt.Equal(t0) {
		t.Errorf("observation %+v", obs)
	}
	last, err := c.decodeListPage([]byte(`{"data":[],"paging":{"total":11,"previous":"{url}?page=1&size=10","next":null}}`), 2)
	if err != nil || len(last.Notifications) != 0 || last.Next != "" {
		t.Errorf("last page = %+v, %v", last, err)
	}
}

// TestListPageMatchesObserve: a charge listed unchanged is the fact its
// status fetch stores.
func TestListPageMatchesObserve(t *testing.T) {
	list := []string{paidCharge, strings.Replace(refundedCharge, "ch_KjN7oWvTnCeGq3p1", "ch_refunded", 1),
		strings.Replace(partialCharge, "ch_KjN7oWvTnCeGq3p1", "ch_partial", 1), strings.Replace(pendingNoUpdate, "ch_KjN7oWvTnCeGq3p1", "ch_pending", 1)}
	api := &chargesAPI{charges: list, size: 30}
	c := serveCharges(t, testSecretKey, api)
	all := listAll(t, c)
	if len(all) != len(list) {
		t.Fatalf("listed %d, want %d", len(all), len(list))
	}
	for _, n := range all {
		id := n.Events[0].EventMeta().ProviderPaymentID
		facts, err := c.Observe(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(facts, n.Events) {
			t.Errorf("charge %s: listed %+v, observed %+v", id, n.Events[0], facts[0])
		}
	}
}

func TestListPageFailures(t *testing.T) {
	tests := []struct {
		name      string
		key       string
		failures  []reply
		wantCalls int
		wantKind  domain.Kind // ignored when wantHTTP is 0
		wantHTTP  int         // 0: success
	}{
		{name: "429 then the page", failures: []reply{{status: 429, retryAfter: "0", body: `{"message":"Rate limit exceeded"}`}}, wantCalls: 2},
		{name: "5xx then the page", failures: []reply{{status: 502}}, wantCalls: 2},
		{name: "5xx outage", failures: []reply{{status: 500}, {status: 500}, {status: 500}}, wantCalls: 3, wantKind: domain.KindUnavailable, wantHTTP: 500},
		{name: "401 is not retried", key: "sk_test_wrong", wantCalls: 1, wantKind: domain.KindUnauthorized, wantHTTP: 401},
		{name: "403 is not retried", failures: []reply{{status: 403}}, wantCalls: 1, wantKind: domain.KindUnauthorized, wantHTTP: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := tt.key
			if key == "" {
				key = testSecretKey
			}
			api := &chargesAPI{charges: charges(2), size: 30, failures: tt.failures}
			c := serveCharges(t, key, api)
			page, err := c.ListPage(context.Background(), listWindow, "")
			if n := len(api.calls()); n != tt.wantCalls {
				t.Errorf("calls = %d, want %d", n, tt.wantCalls)
			}
			if tt.wantHTTP == 0 {
				if err != nil || len(page.Notifications) != 2 || page.Next != "" {
					t.Fatalf("ListPage = %+v, %v", page, err)
				}
				return
			}
			var re *rest.Error
			if domain.KindOf(err) != tt.wantKind || !errors.As(err, &re) || re.Status != tt.wantHTTP {
				t.Errorf("ListPage error %v: want kind %v, HTTP %d", err, tt.wantKind, tt.wantHTTP)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Error("error leaks the secret key")
			}
		})
	}
}

func TestListPageInvalid(t *testing.T) {
	paging := `"paging":{"next":null}`
	tests := []struct {
		name, body, want string
	}{
		{name: "not an object", body: `[]`, want: "malformed charge list"},
		{name: "no paging", body: `{"data":[]}`, want: "no data or paging"},
		{name: "no data", body: `{` + paging + `}`, want: "no data or paging"},
		{name: "charge of the wrong type", body: `{"data":[` + paidCharge + `,"ch_1"],` + paging + `}`, want: "page 3: pagarme: parse: malformed charge"},
		{name: "decimal amount", body: `{"data":[` + strings.Replace(paidCharge, `"amount":15990`, `"amount":159.9`, 1) + `],` + paging + `}`,
			want: "data[0].amount has the wrong type"},
		{name: "charge without id", body: `{"data":[{"status":"paid","amount":1,"last_transaction":{"status":"captured"}}],` + paging + `}`,
			want: `page 3 charge "": pagarme: parse: data[0].id is missing`},
		{name: "charge without amount", body: `{"data":[{"id":"ch_1","status":"paid"}],` + paging + `}`, want: `charge "ch_1": pagarme: parse: data[0].amount is missing`},
	}
	c := newStatusClient(t, "http://127.0.0.1:1", testSecretKey)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.decodeListPage([]byte(tt.body), 3)
			if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want KindInvalid containing %q", err, tt.want)
			}
		})
	}
}

func TestListPageBadCursor(t *testing.T) {
	for _, cur := range []string{"garbage", "2", "page=", "page=1", "page=0", "page=-2", "page=02", "page=2&size=10", "page=99999999999999999999"} {
		t.Run(cur, func(t *testing.T) {
			api := &chargesAPI{size: 30}
			c := serveCharges(t, testSecretKey, api)
			_, err := c.ListPage(context.Background(), listWindow, cur)
			if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), "cursor") || len(api.calls()) != 0 {
				t.Errorf("ListPage(%q) = %v after %d calls, want KindInvalid naming the cursor, no call", cur, err, len(api.calls()))
			}
		})
	}
	c := serveCharges(t, testSecretKey, &chargesAPI{size: 30})
	if _, err := c.ListPage(context.Background(), providers.Window{Since: listWindow.Until, Until: listWindow.Since}, ""); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("inverted window: %v", err)
	}
}

func TestCoverage(t *testing.T) {
	if got := (&StatusClient{}).Coverage(); got != providers.CoverageCreated {
		t.Errorf("Coverage = %q", got)
	}
}
