package api

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/mux"

	"github.com/payledger/payledger/internal/openapitest"
)

// contract is the embedded OpenAPI document as a validator, built once:
// serve checks every answer of these tests against it.
var contract = sync.OnceValues(func() (*openapitest.Validator, error) {
	return openapitest.New(openAPIDocument)
})

// checkContract fails t when the answer to req is not what the OpenAPI
// document says it can be.
func checkContract(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	v, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Check(req, status, header, body); err != nil {
		t.Error(err)
	}
}

// GET /openapi.yaml serves the embedded document, unauthenticated, whatever
// route groups the server has.
func TestOpenAPIServed(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		noWebhooks, noReadAPI bool
	}{{"both", false, false}, {"webhooks only", false, true}, {"read API only", true, false}, {"neither", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			env.cfg.DisableWebhooks, env.cfg.DisableReadAPI = tc.noWebhooks, tc.noReadAPI
			res := serve(t, env.server(t), get("/openapi.yaml", ""))
			if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/yaml" {
				t.Fatalf("GET /openapi.yaml = %d %q", res.status, res.header.Get("Content-Type"))
			}
			if !bytes.Equal(res.raw, openAPIDocument) || !bytes.Equal(OpenAPI(), openAPIDocument) {
				t.Errorf("served document differs from the embedded one")
			}
		})
	}
}

// The document and the router describe the same routes: every route the
// router registers (with every group on) is an operation of the document,
// and every operation of the document reaches a route.
func TestOpenAPIRoutes(t *testing.T) {
	v, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	documented := v.Operations()
	router := newEnv(t).server(t).router()

	var registered []string
	err = router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		methods, err := route.GetMethods()
		if err != nil {
			return err
		}
		for _, m := range methods {
			registered = append(registered, m+" "+path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range registered {
		if !slices.Contains(documented, op) {
			t.Errorf("route %s is not in api/openapi.yaml", op)
		}
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	for _, op := range documented {
		method, path, _ := strings.Cut(op, " ")
		if strings.HasPrefix(path, "/console/") {
			continue // served by api/console in front of this router (cmd/ledger's tests check them)
		}
		req := httptest.NewRequest(method, param.ReplaceAllString(path, "x_1"), nil)
		var m mux.RouteMatch
		if !router.Match(req, &m) || m.MatchErr != nil {
			t.Errorf("api/openapi.yaml documents %s, which no route serves", op)
		}
	}
	if len(registered) == 0 || len(documented) == 0 {
		t.Fatalf("registered %v, documented %v", registered, documented)
	}
}

// The check bites: answers that differ from the document in a field, a
// status, a content type or a required header are reported, while the
// documented ones pass.
func TestOpenAPICheckRejects(t *testing.T) {
	v, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	const payment = `"provider":"stripe","provider_payment_id":"pi_1","status":"confirmed","amount":2000,` +
		`"currency":"USD","amount_captured":2000,"amount_refunded":0,"amount_disputed":0,"fee":59,"fee_currency":"USD",` +
		`"created_at":"2025-03-01T12:00:00Z","updated_at":"2025-03-01T12:00:00Z","event_count":2`
	const notFound = `{"error":{"code":"not_found","message":"no such route"},"request_id":"req-1"}`
	events := func(data string) string {
		return `{"stream":"payment-stripe-pi_1","events":[{"event_id":"5b0c8a3e-6f1d-5a8e-9c41-2d7e0f3b9a10",` +
			`"provider_event_id":"evt_1","type":"payment.succeeded.v1","occurred_at":"2025-03-01T12:00:00Z",` +
			`"recorded_at":"2025-03-01T12:00:01Z","revision":0,"data":{"provider":"stripe","provider_event_id":"evt_1",` +
			`"provider_event_type":"payment_intent.succeeded","provider_payment_id":"pi_1","occurred_at":"2025-03-01T12:00:00Z",` +
			data + `},"metadata":{"received_at":"2025-03-01T12:00:00Z","provider_event_type":"payment_intent.succeeded",` +
			`"signature_header":"t=1,v1=ab","raw_body":"e30=","request_id":"req-1","source":"webhook"},"state_after":{` + payment +
			`,"review_reasons":[],"requires_review":false,"projection":"live"}}]}`
	}
	balances := func(account, balance string) string {
		return `{"as_of":"2025-03-31T23:59:59Z","basis":"effective","balances":[{"account":` + account +
			`,"provider":"stripe","currency":"USD","normal":"credit","debits":2150,"credits":2000,"balance":` + balance + `}]}`
	}
	entries := func(reverses string) string {
		return `{"entries":[{"id":"le_2","provider":"stripe","provider_payment_id":"pi_1","currency":"USD",` +
			`"effective_at":"2025-03-01T12:00:00Z","recorded_at":"2025-03-02T08:00:00Z","cause_event_id":"5b0c8a3e",` + reverses +
			`"lines":[{"account":"provider_balance","debit":0,"credit":2000},{"account":"sales","debit":2000,"credit":0}]}],"next_cursor":""}`
	}
	check := func(fields string) string {
		return `{"stream":"payment-stripe-pi_1","events":[{"event_id":"5b0c8a3e-6f1d-5a8e-9c41-2d7e0f3b9a10",` +
			`"provider_event_id":"reconciliation:pass-1:pi_1","type":"payment.reconciliation_checked.v1",` +
			`"occurred_at":"2025-03-01T12:00:00Z","recorded_at":"2025-03-01T12:00:01Z","revision":0,"data":{"provider":"stripe",` +
			`"provider_event_id":"reconciliation:pass-1:pi_1","provider_event_type":"payledger.reconciliation_check",` +
			`"provider_payment_id":"pi_1","occurred_at":"2025-03-01T12:00:00Z","run":"pass-1","trigger":"in_doubt",` +
			`"status_before":"pending","status_after":"confirmed",` + fields + `},"metadata":{"received_at":"2025-03-01T12:00:00Z",` +
			`"provider_event_type":"payledger.reconciliation_check","signature_header":"","raw_body":"","request_id":"",` +
			`"source":"reconciliation"},"state_after":{` + payment + `,"review_reasons":[],"requires_review":false,"projection":"live"}}]}`
	}
	checkLog := func(cause string) string {
		return `{"checks":[{"id":"5b0c8a3e","provider":"stripe","provider_payment_id":"pi_1","checked_at":"2025-03-01T12:00:00Z",` +
			`"run":"pass-1","trigger":"sample","status_before":"confirmed","status_observed":"","provider_status":"",` +
			`"status_after":"confirmed","outcome":"not_found","cause":` + cause + `,"event_id":"","error":""}],"next_cursor":""}`
	}
	tests := []struct {
		name         string
		method, path string
		status       int
		header       map[string]string
		body         string
		wantErr      bool
	}{
		{name: "documented payment", method: "GET", path: "/v1/payments/stripe/pi_1", status: 200,
			body: `{` + payment + `,"review_reasons":[],"requires_review":false,"projection":"live"}`},
		{name: "field not in the document", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1", status: 200,
			body: `{` + payment + `,"review_reasons":[],"requires_review":false,"projection":"live","net":1941}`},
		{name: "documented field missing", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1", status: 200,
			body: `{` + payment + `}`},
		{name: "field of the wrong type", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1", status: 200,
			body: `{` + strings.Replace(payment, `"amount":2000`, `"amount":"20.00"`, 1) + `,"review_reasons":[],"requires_review":false,"projection":"live"}`},
		{name: "fee currency not a code", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1", status: 200,
			body: `{` + strings.Replace(payment, `"fee_currency":"USD"`, `"fee_currency":""`, 1) + `,"review_reasons":[],"requires_review":false,"projection":"live"}`},
		{name: "no fee stated", method: "GET", path: "/v1/payments/stripe/pi_1", status: 200,
			body: `{` + strings.Replace(payment, `"fee":59,"fee_currency":"USD"`, `"fee":0,"fee_currency":null`, 1) + `,"review_reasons":[],"requires_review":false,"projection":"live"}`},
		{name: "documented events", method: "GET", path: "/v1/payments/stripe/pi_1/events", status: 200,
			body: events(`"amount":2000,"amount_received":2000,"currency":"USD"`)},
		{name: "event data field not in its type's schema", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1/events",
			status: 200, body: events(`"amount":2000,"amount_received":2000,"currency":"USD","fee":30`)},
		{name: "event data of another type's shape", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1/events",
			status: 200, body: events(`"amount_refunded":2000,"amount_captured":2000,"currency":"USD"`)},
		{name: "undocumented status", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1", status: 409,
			body: `{"error":{"code":"conflict","message":"Conflict"},"request_id":"req-1"}`},
		{name: "undocumented content type", wantErr: true, method: "GET", path: "/healthz", status: 200,
			header: map[string]string{"Content-Type": "text/html"}, body: `{"status":"ok"}`},
		{name: "required header missing", wantErr: true, method: "GET", path: "/healthz", status: 200,
			header: map[string]string{"X-Request-Id": ""}, body: `{"status":"ok"}`},
		{name: "error code not the status's", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1", status: 404,
			body: `{"error":{"code":"invalid","message":"no"},"request_id":"req-1"}`},
		{name: "documented balances", method: "GET", path: "/v1/ledger/balances", status: 200, body: balances(`"sales"`, "-150")},
		{name: "balance of an account not in the chart", wantErr: true, method: "GET", path: "/v1/ledger/balances", status: 200,
			body: balances(`"cash"`, "0")},
		{name: "balance in decimals", wantErr: true, method: "GET", path: "/v1/ledger/balances", status: 200,
			body: balances(`"sales"`, "1.5")},
		{name: "documented balances CSV", method: "GET", path: "/v1/ledger/balances", status: 200,
			header: map[string]string{"Content-Type": "text/csv; charset=utf-8; header=present"}, body: "as_of,basis\r\n"},
		{name: "CSV where only JSON is documented", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1/ledger", status: 200,
			header: map[string]string{"Content-Type": "text/csv"}, body: "id\r\n"},
		{name: "documented entries", method: "GET", path: "/v1/ledger/entries", status: 200, body: entries(`"reverses":null,`)},
		{name: "documented reversal", method: "GET", path: "/v1/payments/stripe/pi_1/ledger", status: 200,
			body: entries(`"reverses":"le_1",`)},
		{name: "entry without reverses", wantErr: true, method: "GET", path: "/v1/ledger/entries", status: 200, body: entries(``)},
		{name: "reverses of the wrong type", wantErr: true, method: "GET", path: "/v1/ledger/entries", status: 200,
			body: entries(`"reverses":7,`)},
		{name: "documented check event", method: "GET", path: "/v1/payments/stripe/pi_1/events", status: 200,
			body: check(`"outcome":"corrected","cause":"missing_webhook","status_observed":"confirmed","provider_status":"succeeded"`)},
		{name: "check event of an unknown outcome", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1/events",
			status: 200, body: check(`"outcome":"fixed"`)},
		{name: "check event without its run", wantErr: true, method: "GET", path: "/v1/payments/stripe/pi_1/events",
			status: 200, body: strings.Replace(check(`"outcome":"unchanged"`), `"run":"pass-1",`, ``, 1)},
		{name: "documented check log", method: "GET", path: "/v1/reconciliation/log", status: 200, body: checkLog(`""`)},
		{name: "check log of an unknown cause", wantErr: true, method: "GET", path: "/v1/reconciliation/log", status: 200,
			body: checkLog(`"late"`)},
		{name: "check log with null cause", wantErr: true, method: "GET", path: "/v1/reconciliation/log", status: 200,
			body: checkLog(`null`)},
		{name: "documented 403", method: "POST", path: "/v1/payments/stripe/pi_1/reconcile", status: 403,
			body: `{"error":{"code":"forbidden","message":"this route needs a token with the admin role"},"request_id":"req-1"}`},
		{name: "403 coded unauthorized", wantErr: true, method: "POST", path: "/v1/payments/stripe/pi_1/reconcile", status: 403,
			body: `{"error":{"code":"unauthorized","message":"no"},"request_id":"req-1"}`},
		{name: "documented unknown route", method: "GET", path: "/nope", status: 404, body: notFound},
		{name: "unknown route answered 200", wantErr: true, method: "GET", path: "/nope", status: 200, body: notFound},
		{name: "405 without Allow", wantErr: true, method: "PUT", path: "/healthz", status: 405,
			body: `{"error":{"code":"method_not_allowed","message":"method not allowed"},"request_id":"req-1"}`},
		{name: "documented 405", method: "PUT", path: "/healthz", status: 405, header: map[string]string{"Allow": "GET, HEAD"},
			body: `{"error":{"code":"method_not_allowed","message":"method not allowed"},"request_id":"req-1"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req-1"}}
			for k, val := range tc.header {
				if val == "" {
					h.Del(k)
					continue
				}
				h.Set(k, val)
			}
			err := v.Check(httptest.NewRequest(tc.method, tc.path, nil), tc.status, h, []byte(tc.body))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Check = %v, want error: %v", err, tc.wantErr)
			}
			if err != nil {
				t.Logf("rejected as it should be:\n%v", err)
			}
		})
	}
}
