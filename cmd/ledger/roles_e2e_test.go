package main

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestE2ERoles runs payledger split in two, as LEDGER_ROLES lets an operator
// deploy it: a front process answering webhooks and the read API, and a
// worker running the projector and the jobs. Mercado Pago's notification
// needs all of it: the front stores it, the worker's projector enqueues the
// status fetch, the worker's jobs fetch and append the observed status, the
// projector applies it, and the front's read API shows the result.
func TestE2ERoles(t *testing.T) { forEachBackend(t, testRoles) }

func testRoles(t *testing.T, env map[string]string) {
	api := &fakeMercadoPago{state: map[string]map[string]any{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	env["LEDGER_MERCADOPAGO_WEBHOOK_SECRETS"] = "mp_e2e_secret"
	env["LEDGER_MERCADOPAGO_ACCESS_TOKEN"] = "APP_USR-e2e"
	env["LEDGER_MERCADOPAGO_API_BASE"] = srv.URL
	frontEnv, workerEnv := maps.Clone(env), maps.Clone(env)
	frontEnv["LEDGER_ROLES"] = "webhooks,api"
	workerEnv["LEDGER_ROLES"] = "projector,jobs"

	front := startLedger(t, frontEnv)
	if !strings.Contains(front.logs.String(), `"roles":"webhooks,api"`) {
		t.Errorf("the front's start-up log does not name its roles:\n%s", front.logs.String())
	}
	id := "1319876549999"
	api.set(id, mpPayment(id, "approved", "accredited", "99.90", "0", "2026-03-01T10:00:05.000-03:00"))
	if code, body := front.mercadoPagoWebhook(t, 9101, id, "payment.created", "mp_e2e_secret"); code != http.StatusOK || body["outcome"] != "accepted" {
		t.Fatalf("webhook to the front: %d %v", code, body)
	}
	// The front projects nothing and fetches nothing on its own. (A wait,
	// not a timing assertion: a front that projected would show the
	// payment long before; one that does not can only pass.)
	time.Sleep(300 * time.Millisecond)
	if code, body := front.payment(t, id, "mercadopago"); code != http.StatusNotFound {
		t.Errorf("payment visible with no projector running: %d %v", code, body)
	}

	worker := startLedger(t, workerEnv)
	got := front.waitPayment(t, id, statusIs("confirmed"), "mercadopago")
	if num(got["amount"]) != 9990 || got["currency"] != "BRL" {
		t.Errorf("payment = %v", got)
	}
	// Each process serves only its roles' routes, and every one can be
	// probed and scraped.
	if code, _ := worker.mercadoPagoWebhook(t, 9102, id, "payment.updated", "mp_e2e_secret"); code != http.StatusNotFound {
		t.Errorf("webhook to the worker = %d, want 404", code)
	}
	if code, _ := worker.get(t, "/v1/payments", readToken); code != http.StatusNotFound {
		t.Errorf("read API on the worker = %d, want 404", code)
	}
	metrics := map[*ledgerProc]string{}
	for _, p := range []*ledgerProc{front, worker} {
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			code, body := p.raw(t, path)
			if code != http.StatusOK {
				t.Errorf("GET %s on %s = %d", path, p.addr, code)
			}
			if path == "/metrics" {
				metrics[p] = body
			}
		}
	}
	// The projector's metrics are the worker's: it leads and has applied
	// the notification and the observed status.
	if m := metrics[worker]; !strings.Contains(m, `payledger_projection_leader{projection="payments_v1"} 1`) ||
		!strings.Contains(m, `payledger_projection_events_applied_total{projection="payments_v1"}`) {
		t.Errorf("worker /metrics lacks the projector's leadership or progress:\n%s", grepLines(m, "payledger_projection"))
	}
	if m := metrics[front]; strings.Contains(m, "payledger_projection_") {
		t.Errorf("front /metrics has projector metrics without running one:\n%s", grepLines(m, "payledger_projection"))
	}
	worker.stop()
	front.stop()
}

// raw GETs path and returns the status and body as text.
func (p *ledgerProc) raw(t *testing.T, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.url(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := send(t, req)
	return code, string(body)
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, strings.TrimSuffix(line, "\n"))
		}
	}
	return strings.Join(out, "\n")
}
