package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAsaas is Asaas's GET /v3/payments/{id}: each payment's current object,
// or an HTTP status to answer instead; it counts the calls per payment.
type fakeAsaas struct {
	mu     sync.Mutex
	pays   map[string]string // id → JSON payment object
	status map[string]int    // id → status to answer instead
	calls  map[string]int
}

func newFakeAsaas(t *testing.T) (*fakeAsaas, string) {
	f := &fakeAsaas{pays: map[string]string{}, status: map[string]int{}, calls: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeAsaas) set(id, object string) { f.mu.Lock(); f.pays[id] = object; f.mu.Unlock() }
func (f *fakeAsaas) fail(id string, code int) {
	f.mu.Lock()
	f.status[id] = code
	f.mu.Unlock()
}

func (f *fakeAsaas) count(id string) int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls[id] }

func (f *fakeAsaas) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, "/v3/payments/")
	f.mu.Lock()
	f.calls[id]++
	body, known := f.pays[id]
	code := f.status[id]
	f.mu.Unlock()
	switch {
	case !ok || r.Header.Get("access_token") != "asaas_api_e2e":
		http.Error(w, `{"errors":[{"code":"invalid_access_token","description":"A chave de API informada não pertence a este ambiente"}]}`, http.StatusUnauthorized)
	case code != 0:
		w.WriteHeader(code)
	case !known:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"errors":[{"code":"invalid_action","description":"Cobrança não encontrada."}]}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

// asaasObject is an Asaas payment as its API returns it.
func asaasObject(id, status, value string) string {
	return fmt.Sprintf(`{"object":"payment","id":%q,"dateCreated":"2026-03-02","customer":"cus_000005219613","value":%s,"netValue":%s,"billingType":"PIX","status":%q,"paymentDate":"2026-03-02","confirmedDate":"2026-03-02","externalReference":"order-77","refunds":null}`,
		id, value, value, status)
}

func reconcileEnv(t *testing.T, apiBase string) map[string]string {
	return withAsaasAPI(baseEnv(newDB(t)), apiBase)
}

// withAsaasAPI configures env for Asaas webhooks and its fake API at
// apiBase, with no sample of finished payments.
func withAsaasAPI(env map[string]string, apiBase string) map[string]string {
	env["LEDGER_ASAAS_WEBHOOK_TOKENS"] = "asaas_e2e_token"
	env["LEDGER_ASAAS_API_KEY"] = "asaas_api_e2e"
	env["LEDGER_ASAAS_API_BASE"] = apiBase
	env["LEDGER_RECONCILE_SAMPLE"] = "0"
	return env
}

// checks reads the whole reconciliation log (newest first) with query q.
func (p *ledgerProc) checks(t *testing.T, q string) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		code, body := p.get(t, "/v1/reconciliation/log?limit=2&"+q+"&cursor="+cursor, readToken)
		if code != http.StatusOK {
			t.Fatalf("log: %d %v", code, body)
		}
		list, _ := body["checks"].([]any)
		for _, c := range list {
			out = append(out, c.(map[string]any))
		}
		cursor, _ = body["next_cursor"].(string)
		if cursor == "" {
			return out
		}
	}
}

// TestE2EReconcile: `ledger serve`'s periodic pass finds a payment whose
// confirmation webhook never came, asks Asaas, and corrects it; a payment
// Asaas does not know is logged not_found; a final one is left alone until
// someone asks for it; the summary and the metrics say so. On both event
// stores: the check facts go to the payment's stream and back through the
// store's feed.
func TestE2EReconcile(t *testing.T) { forEachBackend(t, testReconcile) }

func testReconcile(t *testing.T, env map[string]string) {
	api, base := newFakeAsaas(t)
	env = withAsaasAPI(env, base)
	env["LEDGER_RECONCILE_INTERVAL"] = "1s"
	env["LEDGER_RECONCILE_AFTER"] = "2s"
	l := startLedger(t, env)
	tok := map[string]string{"asaas-access-token": "asaas_e2e_token"}

	lost, unknown, final := "pay_rc_lost_1", "pay_rc_unknown_2", "pay_rc_final_3"
	api.set(lost, asaasObject(lost, "RECEIVED", "120.00"))
	api.set(final, asaasObject(final, "RECEIVED", "80.00"))
	for _, d := range [][]byte{
		asaasEvent("evt_rc&1", "PAYMENT_CREATED", lost, "2026-03-02 09:00:00", "120.00", "PENDING", "null"),
		asaasEvent("evt_rc&2", "PAYMENT_CREATED", unknown, "2026-03-02 09:00:00", "99.00", "PENDING", "null"),
		asaasEvent("evt_rc&3", "PAYMENT_CREATED", final, "2026-03-02 09:00:00", "80.00", "PENDING", "null"),
		asaasEvent("evt_rc&4", "PAYMENT_RECEIVED", final, "2026-03-02 09:01:00", "80.00", "RECEIVED", "null"),
	} {
		if code, body := l.post(t, "/webhooks/asaas", d, tok); code != http.StatusOK {
			t.Fatalf("delivery: %d %v", code, body)
		}
	}
	got := l.waitPayment(t, lost, statusIs("confirmed"), "asaas")
	if num(got["amount_captured"]) != 12000 {
		t.Errorf("corrected payment = %v", got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(l.checks(t, "provider=asaas&outcome=not_found")) == 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}

	corrected := l.checks(t, "outcome=corrected")
	if len(corrected) != 1 {
		t.Fatalf("corrected checks = %v, want one", corrected)
	}
	c := corrected[0]
	for k, want := range map[string]any{"provider": "asaas", "provider_payment_id": lost, "status_before": "awaiting_confirmation",
		"status_observed": "confirmed", "status_after": "confirmed", "outcome": "corrected", "cause": "missing_webhook"} {
		if c[k] != want {
			t.Errorf("check %s = %v, want %v (%v)", k, c[k], want, c)
		}
	}
	if id, _ := c["event_id"].(string); id == "" {
		t.Errorf("corrected check names no observation: %v", c)
	}
	if rows := l.checks(t, "provider=asaas&outcome=not_found"); len(rows) == 0 || rows[0]["provider_payment_id"] != unknown {
		t.Errorf("not_found checks = %v", rows)
	}
	for _, row := range l.checks(t, "") {
		if row["provider_payment_id"] == final {
			t.Errorf("a final payment was checked without being sampled or asked for: %v", row)
		}
	}
	if api.count(final) != 0 {
		t.Errorf("Asaas was asked %d times about a final payment", api.count(final))
	}
	// The observation and the check are facts of the payment's stream.
	sources := map[string]string{}
	for _, e := range l.events(t, "asaas", lost) {
		md, _ := e["metadata"].(map[string]any)
		sources[e["type"].(string)], _ = md["source"].(string)
	}
	if sources["payment.status_observed.v1"] != "reconciliation" || sources["payment.reconciliation_checked.v1"] != "reconciliation" {
		t.Errorf("sources by type = %v", sources)
	}

	// Asked for by name (admin only), a final payment is checked once.
	if code, body := l.postAuth(t, "/v1/payments/asaas/"+final+"/reconcile", readToken); code != http.StatusForbidden {
		t.Errorf("read token: %d %v, want 403", code, body)
	}
	if code, body := l.postAuth(t, "/v1/payments/asaas/pay_nobody/reconcile", adminTok); code != http.StatusNotFound {
		t.Errorf("unknown payment: %d %v, want 404", code, body)
	}
	code, body := l.postAuth(t, "/v1/payments/asaas/"+final+"/reconcile", adminTok)
	if id, _ := body["job_id"].(float64); code != http.StatusAccepted || id <= 0 {
		t.Fatalf("reconcile: %d %v, want 202 with a job ID", code, body)
	}
	deadline = time.Now().Add(20 * time.Second)
	var onDemand []map[string]any
	for time.Now().Before(deadline) {
		for _, row := range l.checks(t, "provider=asaas&outcome=unchanged") {
			if row["provider_payment_id"] == final {
				onDemand = append(onDemand, row)
			}
		}
		if len(onDemand) > 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(onDemand) != 1 || onDemand[0]["status_after"] != "confirmed" {
		t.Errorf("on-demand checks of %s = %v, want one unchanged", final, onDemand)
	}

	code, sum := l.get(t, "/v1/reconciliation/summary?since=2020-01-01T00:00:00Z", readToken)
	if code != http.StatusOK {
		t.Fatalf("summary: %d %v", code, sum)
	}
	provs, _ := sum["providers"].([]any)
	var asaas map[string]any
	for _, p := range provs {
		if m := p.(map[string]any); m["provider"] == "asaas" {
			asaas = m
		}
	}
	checks, _ := asaas["checks"].(map[string]any)
	if num(checks["corrected"]) != 1 || num(checks["unchanged"]) != 1 || num(checks["not_found"]) < 1 || num(checks["failed"]) != 0 {
		t.Errorf("summary checks = %v", asaas)
	}
	if code, _ := l.get(t, "/v1/reconciliation/summary?since=yesterday", readToken); code != http.StatusBadRequest {
		t.Errorf("bad since: %d, want 400", code)
	}
	if code, _ := l.get(t, "/v1/reconciliation/log?outcome=fixed", readToken); code != http.StatusBadRequest {
		t.Errorf("bad outcome: %d, want 400", code)
	}

	metrics := l.metrics(t)
	for _, want := range []string{
		`payledger_reconciliation_checks_total{outcome="corrected",provider="asaas"} 1`,
		`payledger_reconciliation_corrections_total{cause="missing_webhook",provider="asaas"} 1`,
		`payledger_reconciliation_breaker_open{provider="asaas"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func (p *ledgerProc) postAuth(t *testing.T, path, token string) (int, map[string]any) {
	t.Helper()
	return p.post(t, path, nil, map[string]string{"Authorization": "Bearer " + token})
}

func (p *ledgerProc) metrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(p.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestReconcileCommand runs `ledger reconcile` beside a serve whose periodic
// pass is off: a dry run appends nothing, the pass corrects, a second pass
// finds nothing in doubt, a provider failing is exit status 1, and usage
// errors are exit status 2.
func TestReconcileCommand(t *testing.T) {
	api, base := newFakeAsaas(t)
	env := reconcileEnv(t, base)
	env["LEDGER_RECONCILE_INTERVAL"] = "0"
	l := startLedger(t, env)
	tok := map[string]string{"asaas-access-token": "asaas_e2e_token"}
	pay := "pay_cli_1"
	api.set(pay, asaasObject(pay, "RECEIVED", "42.00"))
	if code, body := l.post(t, "/webhooks/asaas", asaasEvent("evt_cli&1", "PAYMENT_CREATED", pay, "2026-03-02 09:00:00", "42.00", "PENDING", "null"), tok); code != http.StatusOK {
		t.Fatalf("delivery: %d %v", code, body)
	}
	l.waitPayment(t, pay, statusIs("awaiting_confirmation"), "asaas")
	getenv := mapEnv(map[string]string{"LEDGER_DATABASE_URL": env["LEDGER_DATABASE_URL"], "LEDGER_LOG_LEVEL": "error",
		"LEDGER_ASAAS_WEBHOOK_TOKENS": "x", "LEDGER_ASAAS_API_KEY": "asaas_api_e2e", "LEDGER_ASAAS_API_BASE": base,
		"LEDGER_RECONCILE_SAMPLE": "0"})
	pass := func(args ...string) (passReport, error) {
		t.Helper()
		var out bytes.Buffer
		err := run(t.Context(), append([]string{"reconcile", "--json"}, args...), getenv, &out, io.Discard)
		var rep passReport
		if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil && err == nil {
			t.Fatalf("output is not one JSON object: %v\n%s", jerr, out.String())
		}
		return rep, err
	}
	line := func(r passReport, provider string) providerPassLine {
		for _, l := range r.Providers {
			if l.Provider == provider {
				return l
			}
		}
		t.Fatalf("report has no %s line: %+v", provider, r)
		return providerPassLine{}
	}

	before := len(l.events(t, "asaas", pay))
	rep, err := pass("--dry-run", "--older-than", "0s")
	if err != nil || line(rep, "asaas").Checks["corrected"] != 1 || !rep.DryRun || len(rep.Checks) != 1 {
		t.Fatalf("dry run: %v %+v", err, rep)
	}
	if n := len(l.events(t, "asaas", pay)); n != before {
		t.Fatalf("the dry run appended %d events", n-before)
	}
	if rep.Checks[0].StatusAfter != "confirmed" || rep.Checks[0].Cause != "missing_webhook" {
		t.Errorf("dry-run check = %+v", rep.Checks[0])
	}
	if line(rep, "stripe").Skipped == "" {
		t.Errorf("stripe has no credentials but is not reported skipped: %+v", line(rep, "stripe"))
	}

	rep, err = pass("--provider", "asaas", "--older-than", "0s")
	if err != nil || line(rep, "asaas").Checks["corrected"] != 1 || line(rep, "asaas").Corrections["missing_webhook"] != 1 {
		t.Fatalf("pass: %v %+v", err, rep)
	}
	l.waitPayment(t, pay, statusIs("confirmed"), "asaas")
	rep, err = pass("--provider", "asaas", "--older-than", "0s")
	if err != nil || rep.Checked != 0 {
		t.Fatalf("second pass: %v %+v, want nothing in doubt", err, rep)
	}
	// Asked by name, a final payment is checked and unchanged.
	rep, err = pass("--provider", "asaas", "--payment", pay)
	if err != nil || line(rep, "asaas").Checks["unchanged"] != 1 {
		t.Fatalf("--payment: %v %+v", err, rep)
	}

	// Asaas failing: the check is logged failed and the exit status is 1.
	api.fail(pay, http.StatusBadGateway)
	rep, err = pass("--provider", "asaas", "--payment", pay)
	if exitCode(err) != exitProblems || line(rep, "asaas").Checks["failed"] != 1 {
		t.Fatalf("failing provider: exit %d (%v) %+v", exitCode(err), err, rep)
	}

	for _, args := range [][]string{
		{"--payment", pay},
		{"--provider", "paypal"},
		{"--older-than", "soon"},
		{"--provider", "stripe"}, // no API key configured
	} {
		if err := run(t.Context(), append([]string{"reconcile"}, args...), getenv, io.Discard, io.Discard); exitCode(err) != exitUsage {
			t.Errorf("reconcile %v: exit %d (%v), want %d", args, exitCode(err), err, exitUsage)
		}
	}
}
