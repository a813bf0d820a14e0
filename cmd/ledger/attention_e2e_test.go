package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/projections"
)

// Issue 18 through the real `ledger serve`: a payment the read model
// rejects is parked alone and re-projected by an operator's retry, and a
// delivery whose event ID another payment holds is answered "conflict" and
// kept as a dead letter. Every answer is checked against the OpenAPI
// document by send (harness_test.go).

// attPool opens env's read-model database for the test's own statements.
func attPool(t *testing.T, env map[string]string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), env["LEDGER_DATABASE_URL"])
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// attExec runs one statement of the test's own (a constraint the read
// model does not have, a look into the store).
func attExec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// attDeadLetters reads the dead-letter queue with query q, page by page.
func (p *ledgerProc) attDeadLetters(t *testing.T, q string) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		code, body := p.get(t, "/v1/dead-letters?limit=2&"+q+"&cursor="+cursor, readToken)
		if code != http.StatusOK {
			t.Fatalf("dead letters ?%s: %d %v", q, code, body)
		}
		for _, d := range body["dead_letters"].([]any) {
			out = append(out, d.(map[string]any))
		}
		if cursor, _ = body["next_cursor"].(string); cursor == "" {
			return out
		}
	}
}

// attOneDeadLetter is the only dead letter q lists.
func (p *ledgerProc) attOneDeadLetter(t *testing.T, q string) map[string]any {
	t.Helper()
	dls := p.attDeadLetters(t, q)
	if len(dls) != 1 {
		t.Fatalf("dead letters ?%s: %v, want exactly one", q, dls)
	}
	return dls[0]
}

// attRetry posts a retry of dead letter id with token.
func (p *ledgerProc) attRetry(t *testing.T, id int64, token string) (int, map[string]any) {
	t.Helper()
	return p.postAuth(t, fmt.Sprintf("/v1/dead-letters/%d/retry", id), token)
}

// attLedger is a payment's journal entries from the read API.
func (p *ledgerProc) attLedger(t *testing.T, id string) []any {
	t.Helper()
	code, body := p.get(t, "/v1/payments/stripe/"+id+"/ledger", readToken)
	if code != http.StatusOK {
		t.Fatalf("ledger of %s: %d %v", id, code, body)
	}
	entries, _ := body["entries"].([]any)
	return entries
}

// attVerifyOK is verifyOK for either backend: `ledger verify` is given the
// event store the serve used, so its audit folds the same streams. It
// returns the report.
func attVerifyOK(t *testing.T, env map[string]string) verifyReport {
	t.Helper()
	var out bytes.Buffer
	venv := map[string]string{"LEDGER_DATABASE_URL": env["LEDGER_DATABASE_URL"], "LEDGER_LOG_LEVEL": "error"}
	if u := env["LEDGER_EVENTSTORE_URL"]; u != "" {
		venv["LEDGER_EVENTSTORE_URL"] = u
	}
	err := run(t.Context(), []string{"verify", "--json", "--wait", "60s"}, mapEnv(venv), &out, io.Discard)
	var rep verifyReport
	if jerr := json.Unmarshal(out.Bytes(), &rep); err != nil || jerr != nil || !rep.OK {
		t.Fatalf("verify: %v (%v)\n%s", err, jerr, out.String())
	}
	return rep
}

func isLive(b map[string]any) bool { return b["projection"] == "live" }

// TestE2EPoisonParksOnePayment (issue 18, "How it is checked"): an event
// the read model cannot take parks its payment alone, as a dead letter,
// while the other payments go on; after the cause is fixed an admin's
// retry re-projects it to what a rebuild gives.
func TestE2EPoisonParksOnePayment(t *testing.T) { forEachBackend(t, testPoisonParksOnePayment) }

func testPoisonParksOnePayment(t *testing.T, env map[string]string) {
	l := startLedger(t, env)
	pool := attPool(t, env)
	a, b, c := "pi_3QxAttPoison_a", "pi_3QxAtt-Poison_b", "pi_3QxAttPoison_c"
	base := time.Now().Add(-time.Hour).Unix()
	for _, id := range []string{a, b, c} {
		l.deliver(t, piEvent("evt_att_cr_"+id, "payment_intent.created", id, base, 2500))
	}
	var before map[string]any
	for _, id := range []string{a, b, c} {
		before = l.waitPayment(t, id, func(m map[string]any) bool { return num(m["event_count"]) == 1 && isLive(m) })
	}

	// A check violation (class 23) is the payment's fault, not the
	// database's: projections parks the payment (park.go, unapplicable).
	attExec(t, pool, `ALTER TABLE payments ADD CONSTRAINT att_poison CHECK (NOT (provider_payment_id = '`+b+`' AND status = 'confirmed'))`)
	l.deliver(t, piEvent("evt_att_ok_"+b, "payment_intent.succeeded", b, base+10, 2500))
	for _, id := range []string{a, c} {
		l.deliver(t, piEvent("evt_att_ok_"+id, "payment_intent.succeeded", id, base+10, 2500))
	}
	for _, id := range []string{a, c} {
		l.waitPayment(t, id, func(m map[string]any) bool { return m["status"] == "confirmed" && isLive(m) })
	}
	parked := l.waitPayment(t, b, func(m map[string]any) bool { return m["projection"] == "parked" })
	if parked["status"] != before["status"] || num(parked["event_count"]) != 1 {
		t.Errorf("parked payment %v, want its earlier status %v and 1 event", parked, before["status"])
	}

	stream := eventstore.PaymentStream("stripe", b)
	dl := l.attOneDeadLetter(t, "kind=projection")
	id := num(dl["id"])
	if streams, _ := dl["streams"].([]any); dl["state"] != "open" || dl["cause"] != "unapplicable" || dl["provider"] != "stripe" ||
		dl["provider_payment_id"] != b || len(streams) != 1 || streams[0] != stream || num(dl["attempts"]) != 1 || id < 1 {
		t.Errorf("dead letter %v, want one open unapplicable entry of %s", dl, stream)
	}

	// One more event of B waits: A's later refund is projected after it,
	// and B still reads parked with its earlier status.
	l.deliver(t, refundEvent("evt_att_rf_"+b, b, base+20, 2500, 500))
	l.deliver(t, refundEvent("evt_att_rf_"+a, a, base+20, 2500, 700))
	l.waitPayment(t, a, statusIs("partially_refunded", 700))
	if _, m := l.payment(t, b); m["projection"] != "parked" || m["status"] != before["status"] || num(m["event_count"]) != 1 {
		t.Errorf("B after its next event: %v, want still parked with 1 event", m)
	}

	attRetryParked(t, l, pool, id, b)
	attRebuildEquals(t, l, env, pool, b)
}

// attRetryParked: a read token may not retry; once the cause is gone an
// admin's retry marks the entry retried and re-projects B, with every event
// it waited for; a second retry is a conflict.
func attRetryParked(t *testing.T, l *ledgerProc, pool *pgxpool.Pool, id int64, b string) {
	t.Helper()
	if code, body := l.attRetry(t, id, readToken); code != http.StatusForbidden {
		t.Errorf("read token's retry: %d %v, want 403", code, body)
	}
	attExec(t, pool, `ALTER TABLE payments DROP CONSTRAINT att_poison`)
	code, body := l.attRetry(t, id, adminTok)
	if code != http.StatusOK || body["state"] != "retried" || num(body["retries"]) != 1 || body["retried_by"] != "admin" ||
		body["retried_at"] == nil {
		t.Fatalf("admin's retry: %d %v, want 200 retried by admin", code, body)
	}
	l.waitPayment(t, b, func(m map[string]any) bool {
		return isLive(m) && m["status"] == "partially_refunded" && num(m["amount_refunded"]) == 500 && num(m["event_count"]) == 3
	})
	if code, body := l.attRetry(t, id, adminTok); code != http.StatusConflict {
		t.Errorf("second retry: %d %v, want 409", code, body)
	}
	if open := l.attDeadLetters(t, "kind=projection&state=open"); len(open) != 0 {
		t.Errorf("open projection dead letters after the retry: %v", open)
	}
}

// attRebuildEquals checks that B's re-projected row and journal are what a
// rebuild gives, twice: `ledger verify` folds every stream and audits the
// journal against the read model, and then the read models are rebuilt
// from the start of the feed (projections.Reset, then a fresh serve; the
// CLI has no rebuild command) and B's answers must not change.
func attRebuildEquals(t *testing.T, l *ledgerProc, env map[string]string, pool *pgxpool.Pool, b string) {
	t.Helper()
	attVerifyOK(t, env)
	_, payBefore := l.payment(t, b)
	ledgerBefore := l.attLedger(t, b)
	if len(ledgerBefore) == 0 {
		t.Fatalf("B's ledger is empty after the retry")
	}
	l.stop()
	if err := projections.Reset(t.Context(), pool, projections.DefaultName); err != nil {
		t.Fatal(err)
	}
	l = startLedger(t, env)
	payAfter := l.waitPayment(t, b, func(m map[string]any) bool { return num(m["event_count"]) == 3 && isLive(m) })
	if !reflect.DeepEqual(payBefore, payAfter) {
		t.Errorf("B after the retry %v\nafter a rebuild %v", payBefore, payAfter)
	}
	if ledgerAfter := l.attLedger(t, b); !reflect.DeepEqual(ledgerBefore, ledgerAfter) {
		t.Errorf("B's ledger after the retry %v\nafter a rebuild %v", ledgerBefore, ledgerAfter)
	}
	attVerifyOK(t, env)
}

// TestE2ECollisionIsConflict (issue 18): a delivery whose event ID is
// stored for another payment is answered 200 conflict, stores nothing and
// is kept as one dead letter that redeliveries and retries count on.
// Postgres store only: KurrentDB has no lookup by event ID and stores such
// an event in both streams (ARCHITECTURE.md, "An event ID stored in
// another stream"), so there is no collision to see there.
func TestE2ECollisionIsConflict(t *testing.T) {
	env := baseEnv(newDB(t))
	l := startLedger(t, env)
	pool := attPool(t, env)
	base := time.Now().Add(-time.Hour).Unix()
	firstPI, secondPI := "pi_3QxAttCollide_first", "pi_3QxAtt-Collide_second"
	first := piEvent("evt_3QxAttCollide", "payment_intent.succeeded", firstPI, base, 1200)
	second := piEvent("evt_3QxAttCollide", "payment_intent.succeeded", secondPI, base+5, 3400)
	firstStream, secondStream := eventstore.PaymentStream("stripe", firstPI), eventstore.PaymentStream("stripe", secondPI)

	code, res := l.webhook(t, first.body(), secretNew, time.Now())
	if code != http.StatusOK || res["outcome"] != "accepted" || res["stream"] != firstStream {
		t.Fatalf("first delivery: %d %v, want 200 accepted in %s", code, res, firstStream)
	}
	id := attConflict(t, l, second, secondStream, firstStream)
	var stored int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM es_events WHERE stream = $1`, secondStream).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("%d events stored in %s (%v), want none", stored, secondStream, err)
	}
	if code, body := l.get(t, "/v1/payments/stripe/"+secondPI+"/events", readToken); code != http.StatusNotFound {
		t.Errorf("events of the second payment: %d %v, want 404", code, body)
	}
	attCollisionEntry(t, l, id, secondPI, []string{secondStream, firstStream}, 1, 0)

	// A redelivery counts on the same entry.
	if again := attConflict(t, l, second, secondStream, firstStream); again != id {
		t.Errorf("redelivery's dead letter %d, want %d", again, id)
	}
	attCollisionEntry(t, l, id, secondPI, []string{secondStream, firstStream}, 2, 0)

	// A retry re-checks the delivery: it still collides, so 409, and the
	// entry counts the attempt and the retry and stays open.
	if code, body := l.attRetry(t, id, adminTok); code != http.StatusConflict {
		t.Errorf("retry of a collision: %d %v, want 409", code, body)
	}
	attCollisionEntry(t, l, id, secondPI, []string{secondStream, firstStream}, 3, 1)
	// A bulk retry skips what still collides: none retried, the entry open.
	bulk := []byte(`{"kind":"collision","cause":"","provider":"stripe"}`)
	if code, body := l.post(t, "/v1/dead-letters/retry", bulk, map[string]string{"Authorization": "Bearer " + readToken}); code != http.StatusForbidden {
		t.Errorf("read token's bulk retry: %d %v, want 403", code, body)
	}
	if code, body := l.post(t, "/v1/dead-letters/retry", bulk, map[string]string{"Authorization": "Bearer " + adminTok}); code != http.StatusOK ||
		num(body["retried"]) != 0 {
		t.Errorf("bulk retry of collisions: %d %v, want 200 retried 0", code, body)
	}
	if dl := l.attOneDeadLetter(t, "kind=collision"); dl["state"] != "open" || num(dl["id"]) != id {
		t.Errorf("collision after the bulk retry: %v, want entry %d still open", dl, id)
	}

	code, full := l.get(t, fmt.Sprintf("/v1/dead-letters/%d", id), readToken)
	payload, _ := full["payload"].(map[string]any)
	raw, err := base64.StdEncoding.DecodeString(fmt.Sprint(payload["body"]))
	if code != http.StatusOK || payload["provider"] != "stripe" || err != nil || !bytes.Equal(raw, second.body()) {
		t.Errorf("dead letter %d: %d %v (body %v), want the second delivery as its payload", id, code, full, err)
	}

	// The first payment is untouched: stored once, its delivery's answer
	// the same as a redelivery of a stored fact.
	l.waitPayment(t, firstPI, func(m map[string]any) bool {
		return m["status"] == "confirmed" && num(m["amount"]) == 1200 && num(m["event_count"]) == 1
	})
	if code, res := l.webhook(t, first.body(), secretNew, time.Now()); code != http.StatusOK || res["outcome"] != "duplicate" {
		t.Errorf("first delivery again: %d %v, want 200 duplicate", code, res)
	}
}

// attConflict delivers ev and checks the conflict answer; it returns the
// dead letter's ID.
func attConflict(t *testing.T, l *ledgerProc, ev stripeEvent, stream, storedIn string) int64 {
	t.Helper()
	code, res := l.webhook(t, ev.body(), secretNew, time.Now())
	id := num(res["dead_letter_id"])
	if code != http.StatusOK || res["outcome"] != "conflict" || res["stream"] != stream || res["conflicting_stream"] != storedIn || id < 1 {
		t.Fatalf("colliding delivery: %d %v, want 200 conflict of %s with %s", code, res, stream, storedIn)
	}
	return id
}

// attCollisionEntry checks that the queue's only collision is entry id,
// open, with streams, attempts and retries.
func attCollisionEntry(t *testing.T, l *ledgerProc, id int64, paymentID string, streams []string, attempts, retries int64) {
	t.Helper()
	dl := l.attOneDeadLetter(t, "kind=collision")
	var got []string
	for _, s := range dl["streams"].([]any) {
		got = append(got, s.(string))
	}
	if num(dl["id"]) != id || dl["state"] != "open" || dl["cause"] != "event_id_collision" || dl["provider"] != "stripe" ||
		dl["provider_payment_id"] != paymentID || !reflect.DeepEqual(got, streams) || num(dl["attempts"]) != attempts ||
		num(dl["retries"]) != retries {
		t.Errorf("collision dead letter %v, want entry %d open, streams %v, attempts %d, retries %d",
			dl, id, streams, attempts, retries)
	}
}

// attFakeMP is Mercado Pago's GET /v1/payments/{id}, answering 500 while
// failing is set; it counts the calls.
type attFakeMP struct {
	mu      sync.Mutex
	state   map[string]map[string]any
	failing bool
	calls   int
}

func (f *attFakeMP) heal()      { f.mu.Lock(); f.failing = false; f.mu.Unlock() }
func (f *attFakeMP) count() int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls }

func (f *attFakeMP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	p, ok := f.state[strings.TrimPrefix(r.URL.Path, "/v1/payments/")]
	switch {
	case r.Header.Get("Authorization") != "Bearer APP_USR-e2e":
		w.WriteHeader(http.StatusUnauthorized)
	case f.failing:
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"message":"internal_error","status":500}`)
	case !ok:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"Payment not found","status":404}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(p)
	}
}

// TestE2EJobDeadLetterRetry (issue 18): a status fetch that always fails
// ends as a dead letter, and a retry after the fault is gone completes it
// exactly once. jobs' TestDeadLetterJobRetry proves it in the package;
// this is the same through serve. Mercado Pago is the provider whose every
// notification is followed by a status fetch job (Stripe's only follow a
// charge's new balance transaction), so its API is the one faked.
func TestE2EJobDeadLetterRetry(t *testing.T) {
	const pay = "1319876500018"
	api := &attFakeMP{state: map[string]map[string]any{
		pay: mpPayment(pay, "approved", "accredited", "80.00", "0", "2026-03-01T11:00:00.000-03:00")}, failing: true}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	env := baseEnv(newDB(t))
	env["LEDGER_MERCADOPAGO_WEBHOOK_SECRETS"] = "mp_e2e_secret"
	env["LEDGER_MERCADOPAGO_ACCESS_TOKEN"] = "APP_USR-e2e"
	env["LEDGER_MERCADOPAGO_API_BASE"] = srv.URL
	env["LEDGER_JOBS_MAX_ATTEMPTS"] = "1"  // the first failed attempt discards the job
	env["LEDGER_RECONCILE_INTERVAL"] = "0" // no pass fetches the payment behind the job's back
	l := startLedger(t, env)

	if code, body := l.mercadoPagoWebhook(t, 9101, pay, "payment.created", "mp_e2e_secret"); code != http.StatusOK || body["outcome"] != "accepted" {
		t.Fatalf("notification: %d %v", code, body)
	}
	dl := attWaitDeadLetter(t, l, "kind=job&state=open")
	id := num(dl["id"])
	if dl["cause"] != "enrich_payment" || dl["provider"] != "mercadopago" || dl["provider_payment_id"] != pay ||
		num(dl["attempts"]) != 1 || dl["last_error"] == "" {
		t.Errorf("job dead letter %v, want the enrichment of %s after 1 attempt", dl, pay)
	}
	if n := l.streamEvents(t, "mercadopago", pay)["payment.status_observed.v1 api"]; n != 0 {
		t.Fatalf("%d observations stored by a failing fetch", n)
	}

	api.heal()
	before := api.count()
	if body := attRetryFinished(t, l, id); body["state"] != "retried" || body["retried_by"] != "admin" {
		t.Fatalf("retry: %v, want retried by admin", body)
	}
	l.waitPayment(t, pay, func(b map[string]any) bool { return b["status"] == "confirmed" && num(b["amount"]) == 8000 }, "mercadopago")
	// Let a second run, if there were one, show itself before counting.
	time.Sleep(2 * time.Second)
	if n := api.count() - before; n != 1 {
		t.Errorf("%d fetches after the retry, want 1", n)
	}
	if n := l.streamEvents(t, "mercadopago", pay)["payment.status_observed.v1 api"]; n != 1 {
		t.Errorf("%d observations after the retry, want 1", n)
	}
	if code, body := l.attRetry(t, id, adminTok); code != http.StatusConflict {
		t.Errorf("second retry: %d %v, want 409", code, body)
	}
	if open := l.attDeadLetters(t, "kind=job&state=open"); len(open) != 0 {
		t.Errorf("open job dead letters after the retry: %v", open)
	}
	// Completed: no job is left in any other state, discarded included.
	if rep := attVerifyOK(t, env); len(rep.Jobs) != 0 {
		t.Errorf("jobs not completed after the retry: %v", rep.Jobs)
	}
}

// attWaitDeadLetter waits until q lists exactly one dead letter.
func attWaitDeadLetter(t *testing.T, l *ledgerProc, q string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		dls := l.attDeadLetters(t, q)
		if len(dls) == 1 {
			return dls[0]
		}
		if len(dls) > 1 || time.Now().After(deadline) {
			t.Fatalf("dead letters ?%s: %v, want one", q, dls)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// attRetryFinished retries job dead letter id as the admin until it is
// taken: the entry is listed as soon as the last attempt failed, and the
// retrier answers 409 "still finishing" until River has discarded the job
// (jobs.Retrier.retryJob).
func attRetryFinished(t *testing.T, l *ledgerProc, id int64) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := l.attRetry(t, id, adminTok)
		if code == http.StatusOK {
			return body
		}
		e, _ := body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != http.StatusConflict || !strings.Contains(msg, "still finishing") || time.Now().After(deadline) {
			t.Fatalf("retry of dead letter %d: %d %v, want 200", id, code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
