package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

var (
	corrected = domain.ReconciliationCheck{ID: "0b6c3d1e-5f3a-5d8e-9a41-6f2c7b1e2d90", Provider: fakeName,
		ProviderPaymentID: "pi_3Nk-x_Y2", CheckedAt: time.Date(2025, 3, 1, 11, 0, 0, 0, time.FixedZone("BRT", -3*3600)),
		Run: "pass-4211-1", Trigger: domain.TriggerInDoubt, StatusBefore: domain.StatusPending,
		StatusObserved: domain.StatusConfirmed, ProviderStatus: "succeeded", StatusAfter: domain.StatusConfirmed,
		Outcome: domain.OutcomeCorrected, Cause: domain.CauseMissingWebhook, EventID: "7f1e2d90-0b6c-5d8e-9a41-6f2c3d1e5f3a"}
	failed = domain.ReconciliationCheck{ID: "1c7d4e2f-6a4b-5e9f-8b52-7a3d8c2f3ea1", Provider: fakeName,
		ProviderPaymentID: "pi_9", CheckedAt: time.Date(2025, 3, 1, 10, 59, 0, 500_000_000, time.UTC),
		Run: "pass-4211-1", Trigger: domain.TriggerSample, StatusBefore: domain.StatusConfirmed,
		StatusAfter: domain.StatusConfirmed, Outcome: domain.OutcomeFailed, Error: "fakepay: HTTP 503"}
)

func TestReconciliationLog(t *testing.T) {
	env := newEnv(t)
	recon := &fakeRecon{ChecksFn: func(context.Context, domain.CheckQuery) (domain.CheckPage, error) {
		return domain.CheckPage{Checks: []domain.ReconciliationCheck{corrected, failed}, NextCursor: "Y3Vy"}, nil
	}}
	env.deps.Reconciliation = recon
	res := serve(t, env.server(t), get("/v1/reconciliation/log?provider=fakepay&outcome=corrected&cause=missing_webhook"+
		"&since=2025-03-01T08:00:00-03:00&limit=2&cursor=abc", readToken))
	if res.status != 200 {
		t.Fatalf("status %d: %s", res.status, res.raw)
	}
	wantQ := domain.CheckQuery{Provider: fakeName, Outcome: domain.OutcomeCorrected, Cause: domain.CauseMissingWebhook,
		Since: time.Date(2025, 3, 1, 11, 0, 0, 0, time.UTC), Limit: 2, Cursor: "abc"}
	if len(recon.checkQs) != 1 || !recon.checkQs[0].Since.Equal(wantQ.Since) {
		t.Fatalf("queries = %+v", recon.checkQs)
	}
	got := recon.checkQs[0]
	got.Since = wantQ.Since
	if got != wantQ {
		t.Errorf("query = %+v, want %+v", got, wantQ)
	}
	want := map[string]any{"next_cursor": "Y3Vy", "checks": []any{
		map[string]any{"id": corrected.ID, "provider": "fakepay", "provider_payment_id": "pi_3Nk-x_Y2",
			"checked_at": "2025-03-01T14:00:00Z", "run": "pass-4211-1", "trigger": "in_doubt", "status_before": "pending",
			"status_observed": "confirmed", "provider_status": "succeeded", "status_after": "confirmed",
			"outcome": "corrected", "cause": "missing_webhook", "event_id": corrected.EventID, "error": ""},
		map[string]any{"id": failed.ID, "provider": "fakepay", "provider_payment_id": "pi_9",
			"checked_at": "2025-03-01T10:59:00.5Z", "run": "pass-4211-1", "trigger": "sample", "status_before": "confirmed",
			"status_observed": "", "provider_status": "", "status_after": "confirmed",
			"outcome": "failed", "cause": "", "event_id": "", "error": "fakepay: HTTP 503"},
	}}
	if !reflect.DeepEqual(res.body, want) {
		t.Errorf("body = %v\nwant %v", res.body, want)
	}
}

// No checks is an empty array and an empty cursor, never null or absent.
func TestReconciliationLogEmpty(t *testing.T) {
	env := newEnv(t)
	env.deps.Reconciliation = &fakeRecon{ChecksFn: func(context.Context, domain.CheckQuery) (domain.CheckPage, error) {
		return domain.CheckPage{}, nil
	}}
	res := serve(t, env.server(t), get("/v1/reconciliation/log", adminToken))
	if res.status != 200 || strings.TrimSpace(string(res.raw)) != `{"checks":[],"next_cursor":""}` {
		t.Errorf("got %d %s", res.status, res.raw)
	}
}

func TestReconciliationLogBadQuery(t *testing.T) {
	badCursor := domain.Invalid("projections: checks", "cursor is not one this server returned", nil)
	tests := []struct {
		name, query string
		reader      error  // what the reader answers; nil: it must not be asked
		wantInMsg   string // the parameter the message names
	}{
		{"unknown provider", "provider=paypal", nil, "provider"},
		{"unknown outcome", "outcome=fixed", nil, "outcome"},
		{"outcome in upper case", "outcome=CORRECTED", nil, "outcome"},
		{"unknown cause", "cause=late", nil, "cause"},
		{"since not RFC 3339", "since=2025-03-01", nil, "since"},
		{"since without offset", "since=2025-03-01T10:00:00", nil, "since"},
		{"limit zero", "limit=0", nil, "limit"},
		{"limit too large", "limit=501", nil, "limit"},
		{"limit not a number", "limit=ten", nil, "limit"},
		{"unknown parameter", "status=pending", nil, "status"},
		{"repeated parameter", "outcome=failed&outcome=corrected", nil, "outcome"},
		{"cursor refused by the reader", "cursor=%21%21", badCursor, "cursor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			recon := &fakeRecon{}
			if tc.reader != nil {
				recon.ChecksFn = func(context.Context, domain.CheckQuery) (domain.CheckPage, error) {
					return domain.CheckPage{}, tc.reader
				}
			}
			env.deps.Reconciliation = recon
			res := serve(t, env.server(t), get("/v1/reconciliation/log?"+tc.query, readToken))
			if res.status != 400 || res.errorCode() != "invalid" || !strings.Contains(res.errorMessage(), tc.wantInMsg) {
				t.Errorf("got %d %s, want 400 naming %s", res.status, res.raw, tc.wantInMsg)
			}
			if tc.reader == nil && recon.calls() != 0 {
				t.Errorf("reader asked %d times for a bad query", recon.calls())
			}
		})
	}
}

// Following next_cursor from the first page visits every check once, in
// the reader's order, with the filters kept.
func TestReconciliationLogPages(t *testing.T) {
	var all []domain.ReconciliationCheck
	for i := range 5 {
		c := failed
		c.ID, c.ProviderPaymentID = fmt.Sprintf("check-%d", i), fmt.Sprintf("pi_%d", i)
		all = append(all, c)
	}
	env := newEnv(t)
	env.deps.Reconciliation = &fakeRecon{ChecksFn: func(_ context.Context, q domain.CheckQuery) (domain.CheckPage, error) {
		if q.Outcome != domain.OutcomeFailed || q.Limit != 2 {
			return domain.CheckPage{}, fmt.Errorf("filters lost: %+v", q)
		}
		from := 0
		if q.Cursor != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(q.Cursor, "c"))
			if err != nil {
				return domain.CheckPage{}, domain.Invalid("fake: checks", "bad cursor", err)
			}
			from = n
		}
		to := min(from+q.Limit, len(all))
		page := domain.CheckPage{Checks: all[from:to]}
		if to < len(all) {
			page.NextCursor = "c" + strconv.Itoa(to)
		}
		return page, nil
	}}
	srv := env.server(t)
	var seen []string
	cursor, pages := "", 0
	for {
		res := serve(t, srv, get("/v1/reconciliation/log?outcome=failed&limit=2&cursor="+cursor, readToken))
		if res.status != 200 {
			t.Fatalf("page %d: %d %s", pages, res.status, res.raw)
		}
		pages++
		for _, c := range res.body["checks"].([]any) {
			seen = append(seen, c.(map[string]any)["id"].(string))
		}
		if cursor = res.body["next_cursor"].(string); cursor == "" {
			break
		}
		if pages > len(all) {
			t.Fatal("pagination does not end")
		}
	}
	if want := []string{"check-0", "check-1", "check-2", "check-3", "check-4"}; pages != 3 || !reflect.DeepEqual(seen, want) {
		t.Errorf("%d pages, saw %v, want %v", pages, seen, want)
	}
}

func TestReconciliationSummary(t *testing.T) {
	oldest := time.Date(2025, 3, 1, 9, 15, 0, 0, time.UTC)
	sum := domain.ReconciliationSummary{Providers: []domain.ProviderReconciliation{
		{Provider: "stripe", Checks: map[domain.CheckOutcome]int64{domain.OutcomeUnchanged: 40, domain.OutcomeCorrected: 2}},
		{Provider: fakeName, Checks: map[domain.CheckOutcome]int64{domain.OutcomeFailed: 1}, InDoubt: []domain.DoubtTotal{
			{Currency: "USD", Payments: 2, Amount: 7000, Oldest: oldest.Add(time.Hour)},
			{Currency: "BRL", Payments: 1, Amount: 12990, Oldest: oldest},
		}},
	}}
	tests := []struct {
		name             string
		query            string
		reconcileAfter   time.Duration
		wantSince, quiet time.Time
	}{
		{"defaults", "", 0, testNow.Add(-24 * time.Hour), testNow.Add(-30 * time.Minute)},
		{"since and LEDGER_RECONCILE_AFTER", "?since=2025-02-01T00:00:00-03:00", 2 * time.Hour,
			time.Date(2025, 2, 1, 3, 0, 0, 0, time.UTC), testNow.Add(-2 * time.Hour)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			env.cfg.ReconcileAfter = tc.reconcileAfter
			recon := &fakeRecon{SummaryFn: func(_ context.Context, since, _ time.Time) (domain.ReconciliationSummary, error) {
				s := sum
				s.Since = since
				return s, nil
			}}
			env.deps.Reconciliation = recon
			res := serve(t, env.server(t), get("/v1/reconciliation/summary"+tc.query, readToken))
			if res.status != 200 {
				t.Fatalf("status %d: %s", res.status, res.raw)
			}
			if q := recon.summaryQs; len(q) != 1 || !q[0][0].Equal(tc.wantSince) || !q[0][1].Equal(tc.quiet) {
				t.Errorf("reader asked for %v, want since %v quiet since %v", q, tc.wantSince, tc.quiet)
			}
			want := map[string]any{"since": formatTime(tc.wantSince), "quiet_since": formatTime(tc.quiet), "providers": []any{
				map[string]any{"provider": "fakepay",
					"checks": map[string]any{"unchanged": 0.0, "corrected": 0.0, "not_found": 0.0, "failed": 1.0},
					"in_doubt": []any{
						map[string]any{"currency": "BRL", "payments": 1.0, "amount": 12990.0, "oldest_recorded_at": "2025-03-01T09:15:00Z"},
						map[string]any{"currency": "USD", "payments": 2.0, "amount": 7000.0, "oldest_recorded_at": "2025-03-01T10:15:00Z"},
					}},
				map[string]any{"provider": "stripe",
					"checks":   map[string]any{"unchanged": 40.0, "corrected": 2.0, "not_found": 0.0, "failed": 0.0},
					"in_doubt": []any{}},
			}}
			if !reflect.DeepEqual(res.body, want) {
				t.Errorf("body = %v\nwant %v", res.body, want)
			}
		})
	}
}

func TestReconciliationSummaryErrors(t *testing.T) {
	tests := []struct {
		name, query string
		reader      error
		wantStatus  int
		wantInMsg   string
	}{
		{"since not a time", "?since=yesterday", nil, 400, "since"},
		{"unknown parameter", "?provider=fakepay", nil, 400, "provider"},
		{"repeated since", "?since=2025-03-01T00:00:00Z&since=2025-03-02T00:00:00Z", nil, 400, "since"},
		{"database down", "", fmt.Errorf("projections: summary: %w", domain.ErrUnavailable), 503, "retry later"},
		{"reader bug", "", errors.New("scan: boom"), 500, "internal error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			recon := &fakeRecon{}
			if tc.reader != nil {
				recon.SummaryFn = func(context.Context, time.Time, time.Time) (domain.ReconciliationSummary, error) {
					return domain.ReconciliationSummary{}, tc.reader
				}
			}
			env.deps.Reconciliation = recon
			res := serve(t, env.server(t), get("/v1/reconciliation/summary"+tc.query, readToken))
			if res.status != tc.wantStatus || !strings.Contains(res.errorMessage(), tc.wantInMsg) {
				t.Errorf("got %d %s, want %d naming %q", res.status, res.raw, tc.wantStatus, tc.wantInMsg)
			}
			if tc.reader == nil && recon.calls() != 0 {
				t.Errorf("reader asked for a bad query")
			}
		})
	}
}

func post(path, token string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"ignored":true}`))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

func TestPostReconcile(t *testing.T) {
	noCredentials := &domain.Error{Kind: domain.KindConflict, Op: "jobs: enqueue reconcile",
		Msg: `provider "fakepay" has no API credentials configured`}
	tests := []struct {
		name       string
		path       string
		token      string
		payment    error // the payment reader's answer
		enqueue    error // the enqueuer's answer; nil is job 4217
		wantStatus int
		wantCode   string
		wantInMsg  string
		wantAsked  bool // the enqueuer was called
	}{
		{name: "admin", token: adminToken, wantStatus: 202, wantAsked: true},
		{name: "no token", wantStatus: 401, wantCode: "unauthorized"},
		{name: "read token", token: readToken, wantStatus: 403, wantCode: "forbidden", wantInMsg: "admin"},
		{name: "unknown provider", path: "/v1/payments/paypal/pi_1/reconcile", token: adminToken,
			wantStatus: 404, wantCode: "not_found", wantInMsg: "provider"},
		{name: "unknown payment", token: adminToken, payment: fmt.Errorf("projections: payment: %w", domain.ErrUnknownPayment),
			wantStatus: 404, wantCode: "not_found", wantInMsg: "unknown payment"},
		{name: "read model down", token: adminToken, payment: fmt.Errorf("projections: payment: %w", domain.ErrUnavailable),
			wantStatus: 503, wantCode: "unavailable"},
		{name: "provider without API credentials", token: adminToken, enqueue: noCredentials,
			wantStatus: 409, wantCode: "conflict", wantInMsg: "no API credentials", wantAsked: true},
		{name: "queue down", token: adminToken, enqueue: fmt.Errorf("jobs: insert: %w", domain.ErrUnavailable),
			wantStatus: 503, wantCode: "unavailable", wantAsked: true},
		{name: "enqueuer answers a client kind", token: adminToken,
			enqueue:    domain.Invalid("jobs: enqueue reconcile", "empty payment ID", nil),
			wantStatus: 500, wantCode: "internal", wantAsked: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			env.deps.Payments = &fakeReader{PaymentFn: func(context.Context, string, string) (domain.PaymentState, error) {
				return samplePayment, tc.payment
			}}
			enq := &fakeEnqueuer{EnqueueFn: func(context.Context, string, string) (int64, error) { return 4217, tc.enqueue }}
			env.deps.Reconcile = enq
			path := tc.path
			if path == "" {
				path = "/v1/payments/fakepay/pi_3Nk-x_Y2/reconcile"
			}
			res := serve(t, env.server(t), post(path, tc.token))
			if res.status != tc.wantStatus || res.errorCode() != tc.wantCode || !strings.Contains(res.errorMessage(), tc.wantInMsg) {
				t.Fatalf("got %d %s, want %d %s naming %q", res.status, res.raw, tc.wantStatus, tc.wantCode, tc.wantInMsg)
			}
			if asked := enq.calls(); (len(asked) > 0) != tc.wantAsked || (tc.wantAsked && asked[0] != "fakepay/pi_3Nk-x_Y2") {
				t.Errorf("enqueuer asked %v, want asked: %v", asked, tc.wantAsked)
			}
			if tc.wantStatus == 202 && !reflect.DeepEqual(res.body, map[string]any{"job_id": 4217.0}) {
				t.Errorf("body = %s", res.raw)
			}
		})
	}
}

// POST is the only method of the reconcile path, and GET on it says so.
func TestPostReconcileMethod(t *testing.T) {
	res := serve(t, newEnv(t).server(t), get("/v1/payments/fakepay/pi_1/reconcile", adminToken))
	if res.status != 405 || res.header.Get("Allow") != "POST" {
		t.Errorf("GET …/reconcile = %d Allow %q", res.status, res.header.Get("Allow"))
	}
}

// Without the reconciliation dependencies the routes are not served, like
// any route of a feature the process does not have.
func TestReconciliationDisabled(t *testing.T) {
	env := newEnv(t)
	env.deps.Reconciliation, env.deps.Reconcile = nil, nil
	srv := env.server(t)
	for _, req := range []*http.Request{
		get("/v1/reconciliation/log", readToken),
		get("/v1/reconciliation/summary", readToken),
		post("/v1/payments/fakepay/pi_1/reconcile", adminToken),
	} {
		if res := serve(t, srv, req); res.status != 404 || res.errorMessage() != "no such route" {
			t.Errorf("%s %s = %d %s", req.Method, req.URL, res.status, res.raw)
		}
	}
}

// The routes need a token like every /v1 route.
func TestReconciliationAuth(t *testing.T) {
	srv := newEnv(t).server(t)
	for _, path := range []string{"/v1/reconciliation/log", "/v1/reconciliation/summary"} {
		if res := serve(t, srv, get(path, "")); res.status != 401 || res.header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("GET %s without token = %d", path, res.status)
		}
	}
}

// A reconciliation check in a payment's stream is listed by /events with
// its data as the document describes it, and leaves state_after alone.
func TestPaymentEventsWithCheck(t *testing.T) {
	env := newEnv(t)
	srv := env.server(t)
	t0 := time.Date(2025, 2, 28, 9, 0, 0, 0, time.UTC)
	if res := serve(t, srv, signedWebhook(delivery("evt_a", "created", 5000, t0), testNow)); res.status != 200 {
		t.Fatalf("deliver: %d %s", res.status, res.raw)
	}
	codec := eventstore.NewCodec()
	stream := eventstore.PaymentStream(fakeName, "pi_ev-1_x")
	checks := []*domain.ReconciliationChecked{
		{Meta: domain.Meta{Provider: fakeName, ProviderEventID: domain.CheckEventID("pass-1", "pi_ev-1_x"),
			ProviderEventType: domain.ReconciliationEventType, ProviderPaymentID: "pi_ev-1_x", OccurredAt: testNow},
			Run: "pass-1", Trigger: domain.TriggerInDoubt, StatusBefore: domain.StatusPending, StatusAfter: domain.StatusPending,
			Outcome: domain.OutcomeFailed, Error: "fakepay: HTTP 503"},
		{Meta: domain.Meta{Provider: fakeName, ProviderEventID: domain.CheckEventID("pass-2", "pi_ev-1_x"),
			ProviderEventType: domain.ReconciliationEventType, ProviderPaymentID: "pi_ev-1_x", OccurredAt: testNow.Add(time.Minute)},
			Run: "pass-2", Trigger: domain.TriggerOnDemand, StatusBefore: domain.StatusPending, StatusObserved: domain.StatusConfirmed,
			ProviderStatus: "succeeded", StatusAfter: domain.StatusConfirmed, Outcome: domain.OutcomeCorrected,
			Cause: domain.CauseMissingWebhook, EventID: "7f1e2d90-0b6c-5d8e-9a41-6f2c3d1e5f3a"},
	}
	for _, c := range checks {
		ed, err := codec.Encode(c, eventstore.Metadata{Provider: fakeName, ProviderEventType: domain.ReconciliationEventType,
			ReceivedAt: testNow, Source: eventstore.SourceReconciliation})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.store.Append(context.Background(), stream, eventstore.Any(), []eventstore.EventData{ed}); err != nil {
			t.Fatal(err)
		}
	}

	res := serve(t, srv, get("/v1/payments/fakepay/pi_ev-1_x/events", readToken))
	if res.status != 200 {
		t.Fatalf("status %d: %s", res.status, res.raw)
	}
	events := res.body["events"].([]any)
	if len(events) != 3 {
		t.Fatalf("events = %s", res.raw)
	}
	for i, e := range events[1:] {
		ev := e.(map[string]any)
		state := ev["state_after"].(map[string]any)
		if ev["type"] != domain.TypeReconciliationChecked || ev["metadata"].(map[string]any)["source"] != "reconciliation" ||
			state["status"] != "pending" || state["event_count"] != 1.0 {
			t.Errorf("check %d = %v", i, ev)
		}
	}
}
