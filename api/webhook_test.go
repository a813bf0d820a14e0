package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

const testPayment = "pi_3OqK2b-Lk9x_Zq"

func succeededBody(eventID string) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"type":"payment_intent.succeeded","events":[`+
		`{"kind":"succeeded","payment":%q,"amount":4200,"currency":"usd","at":%d}]}`,
		eventID, testPayment, testNow.Add(-time.Minute).Unix()))
}

func TestWebhook(t *testing.T) {
	ok := succeededBody("evt_1Nv0-aB_c")
	wantID := eventstore.EventID(domain.Meta{Provider: fakeName, ProviderEventID: "evt_1Nv0-aB_c"}).String()
	wantStream := "payment-fakepay-" + testPayment
	storeDown := func(context.Context, string, eventstore.ExpectedRevision, []eventstore.EventData) (eventstore.AppendResult, error) {
		return eventstore.AppendResult{}, fmt.Errorf("postgres: append: %w", domain.ErrUnavailable)
	}
	storeBroken := func(context.Context, string, eventstore.ExpectedRevision, []eventstore.EventData) (eventstore.AppendResult, error) {
		return eventstore.AppendResult{}, errors.New("postgres: append: relation \"events\" does not exist")
	}
	alwaysDuplicate := func(context.Context, string, eventstore.ExpectedRevision, []eventstore.EventData) (eventstore.AppendResult, error) {
		return eventstore.AppendResult{Duplicate: true, Revision: 3}, nil
	}
	withHeader := func(body []byte, value string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/webhooks/"+fakeName, bytes.NewReader(body))
		if value != "" {
			req.Header.Set(fakeSigHeader, value)
		}
		return req
	}
	big := bytes.Repeat([]byte("a"), 2<<20)

	tests := []struct {
		name        string
		req         *http.Request
		appendFn    func(context.Context, string, eventstore.ExpectedRevision, []eventstore.EventData) (eventstore.AppendResult, error)
		verifyFn    func(context.Context, http.Header, url.Values, []byte, time.Time) error
		wantStatus  int
		wantCode    string // error.code, or "" for success
		wantOutcome string
		wantAppends int
	}{
		{name: "accepted", req: signedWebhook(ok, testNow), wantStatus: 200, wantOutcome: "accepted", wantAppends: 1},
		{name: "signed a little in the future", req: signedWebhook(ok, testNow.Add(time.Minute)), wantStatus: 200, wantOutcome: "accepted", wantAppends: 1},
		{name: "duplicate", req: signedWebhook(ok, testNow), appendFn: alwaysDuplicate, wantStatus: 200, wantOutcome: "duplicate", wantAppends: 1},
		{name: "ignored type", req: signedWebhook([]byte(`{"id":"evt_9","type":"customer.created"}`), testNow), wantStatus: 200, wantOutcome: "ignored"},
		{name: "forged signature", req: withHeader(ok, fakeSign("whsec_attacker", testNow, ok)), wantStatus: 400, wantCode: "invalid"},
		{name: "body altered after signing", req: withHeader(bytes.Replace(ok, []byte("4200"), []byte("9999"), 1), fakeSign(fakeSecret, testNow, ok)), wantStatus: 400, wantCode: "invalid"},
		{name: "stale signature", req: signedWebhook(ok, testNow.Add(-time.Hour)), wantStatus: 400, wantCode: "invalid"},
		{name: "missing signature", req: withHeader(ok, ""), wantStatus: 400, wantCode: "invalid"},
		{name: "malformed signature", req: withHeader(ok, "v1=deadbeef"), wantStatus: 400, wantCode: "invalid"},
		{name: "empty body", req: signedWebhook(nil, testNow), wantStatus: 400, wantCode: "invalid"},
		{name: "signed but not JSON", req: signedWebhook([]byte(`{"id":`), testNow), wantStatus: 400, wantCode: "invalid"},
		{name: "event without payment ID", req: signedWebhook([]byte(`{"id":"evt_2","type":"x","events":[{"kind":"created","at":1}]}`), testNow), wantStatus: 400, wantCode: "invalid"},
		{name: "event of another provider", req: signedWebhook([]byte(`{"id":"evt_2","type":"x","events":[{"kind":"created","provider":"paypal","payment":"p1","at":1}]}`), testNow), wantStatus: 400, wantCode: "invalid"},
		{name: "event without provider event ID", req: signedWebhook([]byte(`{"type":"x","events":[{"kind":"created","payment":"p1","at":1}]}`), testNow), wantStatus: 400, wantCode: "invalid"},
		{name: "nil event", req: signedWebhook([]byte(`{"id":"evt_2","type":"x","events":[{"kind":"bogus","payment":"p1"}]}`), testNow), wantStatus: 400, wantCode: "invalid"},
		{name: "same fact twice in one delivery", req: signedWebhook([]byte(`{"id":"evt_2","type":"x","events":[{"kind":"created","payment":"p1"},{"kind":"failed","payment":"p1"}]}`), testNow), wantStatus: 400, wantCode: "invalid"},
		{name: "oversized", req: signedWebhook(big, testNow), wantStatus: 413, wantCode: "too_large"},
		{name: "oversized to an unknown provider", req: httptest.NewRequest(http.MethodPost, "/webhooks/paypal", bytes.NewReader(big)), wantStatus: 413, wantCode: "too_large"},
		{name: "unknown provider", req: httptest.NewRequest(http.MethodPost, "/webhooks/paypal", bytes.NewReader(ok)), wantStatus: 404, wantCode: "not_found"},
		{name: "provider name case matters", req: httptest.NewRequest(http.MethodPost, "/webhooks/FAKEPAY", bytes.NewReader(ok)), wantStatus: 404, wantCode: "not_found"},
		{name: "provider says unauthorized", req: signedWebhook(ok, testNow), wantStatus: 401, wantCode: "unauthorized",
			verifyFn: func(context.Context, http.Header, url.Values, []byte, time.Time) error {
				return domain.Unauthorized("fakepay: verify", "unknown account", nil)
			}},
		{name: "provider fails unclassified", req: signedWebhook(ok, testNow), wantStatus: 400, wantCode: "invalid",
			verifyFn: func(context.Context, http.Header, url.Values, []byte, time.Time) error { return errors.New("boom") }},
		{name: "store down", req: signedWebhook(ok, testNow), appendFn: storeDown, wantStatus: 503, wantCode: "unavailable", wantAppends: 1},
		{name: "store fails unclassified", req: signedWebhook(ok, testNow), appendFn: storeBroken, wantStatus: 503, wantCode: "unavailable", wantAppends: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			calls := 0
			inner := env.store.AppendFn
			if tc.appendFn != nil {
				inner = tc.appendFn
			}
			env.store.AppendFn = func(ctx context.Context, s string, x eventstore.ExpectedRevision, evs []eventstore.EventData) (eventstore.AppendResult, error) {
				calls++
				return inner(ctx, s, x, evs)
			}
			// Parse must never see a delivery that did not verify.
			p := newFakepay(fakeSecret)
			if tc.verifyFn != nil {
				p.VerifyFn = tc.verifyFn
			}
			var verifyErr error
			verified, parsed := 0, 0
			verify, parse := p.VerifyFn, p.ParseFn
			p.VerifyFn = func(ctx context.Context, h http.Header, q url.Values, b []byte, now time.Time) error {
				verified++
				verifyErr = verify(ctx, h, q, b, now)
				return verifyErr
			}
			p.ParseFn = func(ctx context.Context, h http.Header, q url.Values, b []byte) (domain.Notification, error) {
				parsed++
				return parse(ctx, h, q, b)
			}
			env.deps.Providers = []Provider{p}
			res := serve(t, env.server(t), tc.req)
			if (verified == 0 || verifyErr != nil) && parsed != 0 {
				t.Errorf("parsed a delivery that did not verify (verify calls %d, err %v)", verified, verifyErr)
			}

			if res.status != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", res.status, tc.wantStatus, res.raw)
			}
			if got := res.errorCode(); got != tc.wantCode {
				t.Errorf("error code = %q, want %q", got, tc.wantCode)
			}
			if calls != tc.wantAppends {
				t.Errorf("appends = %d, want %d", calls, tc.wantAppends)
			}
			if res.status >= 500 {
				if msg := res.errorMessage(); msg != msgUnavailable {
					t.Errorf("5xx message = %q, want the generic %q", msg, msgUnavailable)
				}
			}
			if res.body["request_id"] == nil && tc.wantCode != "" {
				t.Errorf("error body has no request_id: %s", res.raw)
			}
			switch tc.wantOutcome {
			case "":
			case "ignored":
				if res.body["outcome"] != "ignored" || res.body["provider_event_id"] != "evt_9" {
					t.Errorf("body = %s, want ignored evt_9", res.raw)
				}
			default:
				if res.body["outcome"] != tc.wantOutcome || res.body["event_id"] != wantID || res.body["stream"] != wantStream {
					t.Errorf("body = %s, want outcome %s, event_id %s, stream %s", res.raw, tc.wantOutcome, wantID, wantStream)
				}
				if _, ok := res.body["streams"]; ok {
					t.Errorf("single-stream delivery has streams: %s", res.raw)
				}
			}
		})
	}
}

func TestWebhookBodyLimit(t *testing.T) {
	const limit = 512
	for _, tc := range []struct {
		size       int
		wantStatus int
	}{
		{limit, 200}, {limit + 1, 413},
	} {
		env := newEnv(t)
		env.cfg.MaxBodyBytes = limit
		body := succeededBody("evt_limit")
		body = append(body, bytes.Repeat([]byte(" "), tc.size-len(body))...) // JSON allows trailing space
		res := serve(t, env.server(t), signedWebhook(body, testNow))
		if res.status != tc.wantStatus {
			t.Errorf("%d-byte body with a %d-byte limit: %d %s, want %d", tc.size, limit, res.status, res.raw, tc.wantStatus)
		}
	}
}

// TestWebhookStoresDeliveryForAudit checks what an auditor relies on: the
// exact raw bytes, the signature header as received, our clock, and the
// request ID, stored with every event; the deterministic ID; Any revision;
// and a deadline on the append.
func TestWebhookStoresDeliveryForAudit(t *testing.T) {
	env := newEnv(t)
	body := []byte("{\n  \"id\": \"evt_1Audit\",\r\n  \"type\": \"payment_intent.succeeded\",\t\"events\": [" +
		"{\"kind\":\"succeeded\",\"payment\":\"pi_a\",\"amount\":100,\"currency\":\"eur\",\"at\":1700000000,\"note\":\"caf\\u00e9 ☕\"}]}  \n")
	var deadline bool
	inner := env.store.AppendFn
	env.store.AppendFn = func(ctx context.Context, s string, x eventstore.ExpectedRevision, evs []eventstore.EventData) (eventstore.AppendResult, error) {
		_, deadline = ctx.Deadline()
		return inner(ctx, s, x, evs)
	}
	req := signedWebhook(body, testNow)
	req.Header.Set("X-Request-Id", "req-audit-1")
	sig := req.Header.Get(fakeSigHeader)

	res := serve(t, env.server(t), req)
	if res.status != 200 {
		t.Fatalf("status %d: %s", res.status, res.raw)
	}
	calls := env.store.appendCalls()
	if len(calls) != 1 || len(calls[0].events) != 1 {
		t.Fatalf("appends = %+v, want one event", calls)
	}
	if !calls[0].expected.IsAny() {
		t.Errorf("expected revision = %s, want any", calls[0].expected)
	}
	if !deadline {
		t.Error("append context has no deadline")
	}
	ev := calls[0].events[0]
	if want := eventstore.EventID(domain.Meta{Provider: fakeName, ProviderEventID: "evt_1Audit"}); ev.ID != want {
		t.Errorf("event ID = %s, want %s", ev.ID, want)
	}
	if ev.Type != domain.TypePaymentSucceeded {
		t.Errorf("type = %q", ev.Type)
	}
	md, err := eventstore.DecodeMetadata(ev.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(md.RawBody, body) {
		t.Errorf("raw body differs:\n got %q\nwant %q", md.RawBody, body)
	}
	want := eventstore.Metadata{Provider: fakeName, ProviderEventType: "payment_intent.succeeded", ReceivedAt: testNow,
		RawBody: md.RawBody, SignatureHeader: sig, RequestID: "req-audit-1"}
	if md.Provider != want.Provider || md.ProviderEventType != want.ProviderEventType || !md.ReceivedAt.Equal(want.ReceivedAt) ||
		md.SignatureHeader != want.SignatureHeader || md.RequestID != want.RequestID {
		t.Errorf("metadata = %+v\nwant %+v", md, want)
	}
}

func TestWebhookSeveralStreams(t *testing.T) {
	body := []byte(`{"id":"evt_multi","type":"batch.settled","events":[` +
		`{"kind":"succeeded","payment":"pi_one","sub":"a","amount":1,"currency":"usd"},` +
		`{"kind":"succeeded","payment":"pi_two","sub":"b","amount":2,"currency":"usd"},` +
		`{"kind":"refunded","payment":"pi_one","sub":"c","amount":1,"currency":"usd"}]}`)
	env := newEnv(t)
	srv := env.server(t)

	first := serve(t, srv, signedWebhook(body, testNow))
	if first.status != 200 || first.body["outcome"] != "accepted" || first.body["stream"] != "payment-fakepay-pi_one" {
		t.Fatalf("first delivery: %d %s", first.status, first.raw)
	}
	streams, _ := first.body["streams"].([]any)
	if len(streams) != 2 || streams[0] != "payment-fakepay-pi_one" || streams[1] != "payment-fakepay-pi_two" {
		t.Errorf("streams = %v", first.body["streams"])
	}
	wantFirst := eventstore.EventID(domain.Meta{Provider: fakeName, ProviderEventID: "evt_multi", SubKey: "a"}).String()
	if first.body["event_id"] != wantFirst {
		t.Errorf("event_id = %v, want %s", first.body["event_id"], wantFirst)
	}
	if calls := env.store.appendCalls(); len(calls) != 2 || len(calls[0].events) != 2 || len(calls[1].events) != 1 {
		t.Errorf("appends = %+v, want pi_one with 2 events then pi_two with 1", calls)
	}

	again := serve(t, srv, signedWebhook(body, testNow))
	if again.status != 200 || again.body["outcome"] != "duplicate" {
		t.Errorf("redelivery: %d %s", again.status, again.raw)
	}

	// One stream already stored, the other new: the delivery is accepted.
	env2 := newEnv(t)
	env2.store.streams["payment-fakepay-pi_two"] = env.store.streams["payment-fakepay-pi_two"]
	partial := serve(t, env2.server(t), signedWebhook(body, testNow))
	if partial.body["outcome"] != "accepted" {
		t.Errorf("partly stored redelivery: %s", partial.raw)
	}
}

func TestWebhookConflictRetry(t *testing.T) {
	tests := []struct {
		name        string
		attempts    int // Config.AppendAttempts; 0 = default
		conflicts   int // appends failing with ErrConflict before one succeeds
		wantStatus  int
		wantAppends int
		wantRetries float64
	}{
		{name: "two conflicts then stored", conflicts: 2, wantStatus: 200, wantAppends: 3, wantRetries: 2},
		{name: "always conflicting, default attempts", conflicts: 1000, wantStatus: 503, wantAppends: DefaultAppendAttempts, wantRetries: DefaultAppendAttempts - 1},
		{name: "always conflicting, one attempt", attempts: 1, conflicts: 1000, wantStatus: 503, wantAppends: 1, wantRetries: 0},
		{name: "last attempt succeeds", attempts: 3, conflicts: 2, wantStatus: 200, wantAppends: 3, wantRetries: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			env.cfg.AppendAttempts = tc.attempts
			calls := 0
			inner := env.store.AppendFn
			env.store.AppendFn = func(ctx context.Context, s string, x eventstore.ExpectedRevision, evs []eventstore.EventData) (eventstore.AppendResult, error) {
				calls++
				if calls <= tc.conflicts {
					return eventstore.AppendResult{}, fmt.Errorf("postgres: append %s: %w", s, domain.ErrConflict)
				}
				return inner(ctx, s, x, evs)
			}
			res := serve(t, env.server(t), signedWebhook(succeededBody("evt_race"), testNow))
			if res.status != tc.wantStatus {
				t.Fatalf("status = %d, want %d: %s", res.status, tc.wantStatus, res.raw)
			}
			if calls != tc.wantAppends {
				t.Errorf("appends = %d, want %d", calls, tc.wantAppends)
			}
			retries := metricValue(t, env.deps.Registry, "payledger_append_conflict_retries_total", map[string]string{"provider": fakeName})
			if retries != tc.wantRetries {
				t.Errorf("retries metric = %v, want %v", retries, tc.wantRetries)
			}
		})
	}
}

func TestWebhookAppendStopsWhenContextEnds(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	env.store.AppendFn = func(context.Context, string, eventstore.ExpectedRevision, []eventstore.EventData) (eventstore.AppendResult, error) {
		cancel() // the provider hung up while we were appending
		return eventstore.AppendResult{}, domain.ErrConflict
	}
	req := signedWebhook(succeededBody("evt_gone"), testNow).WithContext(ctx)
	res := serve(t, env.server(t), req)
	if res.status != 503 {
		t.Errorf("status = %d, want 503: %s", res.status, res.raw)
	}
}

func TestWebhookMetrics(t *testing.T) {
	env := newEnv(t)
	srv := env.server(t)
	serve(t, srv, signedWebhook(succeededBody("evt_m1"), testNow))
	serve(t, srv, signedWebhook(succeededBody("evt_m1"), testNow))
	serve(t, srv, signedWebhook([]byte(`{"id":"evt_m2","type":"customer.created"}`), testNow))
	serve(t, srv, signedWebhook(succeededBody("evt_m3"), testNow.Add(-time.Hour)))
	serve(t, srv, httptest.NewRequest(http.MethodPost, "/webhooks/invented-"+strings.Repeat("x", 3), strings.NewReader("{}")))

	for _, c := range []struct {
		provider, outcome string
		want              float64
	}{
		{fakeName, "accepted", 1}, {fakeName, "duplicate", 1}, {fakeName, "ignored", 1},
		{fakeName, "rejected", 1}, {fakeName, "error", 0}, {unknownProvider, "rejected", 1},
	} {
		got := metricValue(t, env.deps.Registry, "payledger_webhook_deliveries_total", map[string]string{"provider": c.provider, "outcome": c.outcome})
		if got != c.want {
			t.Errorf("deliveries{%s,%s} = %v, want %v", c.provider, c.outcome, got, c.want)
		}
	}
	res := serve(t, srv, get("/metrics", ""))
	if res.status != 200 || !bytes.Contains(res.raw, []byte(`payledger_webhook_deliveries_total{outcome="accepted",provider="fakepay"} 1`)) ||
		!bytes.Contains(res.raw, []byte(`payledger_webhook_duration_seconds_count{provider="fakepay"} 4`)) ||
		!bytes.Contains(res.raw, []byte(`payledger_append_conflict_retries_total{provider="fakepay"} 0`)) {
		t.Errorf("GET /metrics = %d:\n%s", res.status, res.raw)
	}
}
