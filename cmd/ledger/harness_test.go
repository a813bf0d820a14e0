package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/eventstore/kurrenttest"
	"github.com/payledger/payledger/internal/openapitest"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/providers/stripe"
)

// The end-to-end tests build the real binary once and run `ledger serve` as a
// child process on a free port against a fresh database, the way an operator
// runs it, so restarts and signals are real.

var ledgerBin string

// contract is api/openapi.yaml as a validator: send checks every answer the
// end-to-end tests get against it.
var contract *openapitest.Validator

func TestMain(m *testing.M) {
	var err error
	if contract, err = openapitest.New(api.OpenAPI()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "ledger-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ledgerBin = filepath.Join(dir, "ledger")
	build := exec.Command("go", "build", "-race", "-o", ledgerBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build ledger:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	secretOld = "whsec_e2e_old_secret"
	secretNew = "whsec_e2e_new_secret"
	readToken = "e2e-read-token"
	adminTok  = "e2e-admin-token"
)

type ledgerProc struct {
	t    testing.TB
	cmd  *exec.Cmd
	addr string
	logs *syncBuffer
	done chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// baseEnv is a working configuration against dbURL.
func baseEnv(dbURL string) map[string]string {
	return map[string]string{
		"LEDGER_HTTP_ADDR":                "127.0.0.1:0",
		"LEDGER_DATABASE_URL":             dbURL,
		"LEDGER_STRIPE_WEBHOOK_SECRETS":   secretOld + "," + secretNew,
		"LEDGER_API_TOKENS":               "read:" + readToken + ",admin:" + adminTok,
		"LEDGER_EVENTSTORE_POLL_INTERVAL": "10ms",
		"LEDGER_LOG_LEVEL":                "info",
	}
}

var listeningRE = regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)

// startLedger runs `ledger serve` with env and waits until it listens.
func startLedger(t testing.TB, env map[string]string) *ledgerProc {
	t.Helper()
	cmd := exec.Command(ledgerBin, "serve")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logs := &syncBuffer{}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(logs, pw)
	cmd.Stdout = logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ledger: %v", err)
	}
	p := &ledgerProc{t: t, cmd: cmd, logs: logs, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); pw.Close() }()
	addrCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addrCh <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case p.addr = <-addrCh:
	case err := <-p.done:
		t.Fatalf("ledger exited before listening: %v\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("ledger did not listen within 60s\n%s", logs.String())
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			p.stop()
		}
		if t.Failed() {
			t.Logf("ledger logs:\n%s", logs.String())
		}
	})
	return p
}

// stop sends SIGTERM and waits for a clean exit.
func (p *ledgerProc) stop() {
	p.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			p.t.Errorf("ledger exited with %v after SIGTERM", err)
		}
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		p.t.Errorf("ledger did not stop within 60s of SIGTERM")
	}
}

func (p *ledgerProc) url(path string) string { return "http://" + p.addr + path }

var client = &http.Client{Timeout: 30 * time.Second}

// webhook posts a Stripe delivery signed with secret at time ts.
func (p *ledgerProc) webhook(t testing.TB, body []byte, secret string, ts time.Time) (int, map[string]any) {
	t.Helper()
	h := map[string]string{"Stripe-Signature": stripe.Sign(body, secret, ts)}
	return p.post(t, "/webhooks/stripe", body, h)
}

// deliver posts Stripe deliveries signed now, each of which must be taken (200).
func (p *ledgerProc) deliver(t testing.TB, evs ...stripeEvent) {
	t.Helper()
	now := time.Now()
	for _, e := range evs {
		if code, body := p.webhook(t, e.body(), secretNew, now); code != http.StatusOK {
			t.Fatalf("%s: %d %v", e.ID, code, body)
		}
	}
}

func (p *ledgerProc) post(t testing.TB, path string, body []byte, headers map[string]string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.url(path), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

func (p *ledgerProc) get(t testing.TB, path, token string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.url(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return do(t, req)
}

func do(t testing.TB, req *http.Request) (int, map[string]any) {
	t.Helper()
	code, header, raw := send(t, req)
	var out map[string]any
	if len(raw) > 0 && strings.HasPrefix(header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: body is not JSON: %v: %s", req.Method, req.URL.Path, err, raw)
		}
	}
	return code, out
}

// send sends req and returns the answer's status, header and body, after
// checking the answer against the OpenAPI document.
func send(t testing.TB, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	if err := contract.Check(req, resp.StatusCode, resp.Header, raw); err != nil {
		t.Error(err)
	}
	return resp.StatusCode, resp.Header, raw
}

// payment fetches a payment of provider (default stripe) from the read API.
func (p *ledgerProc) payment(t testing.TB, id string, provider ...string) (int, map[string]any) {
	name := "stripe"
	if len(provider) > 0 {
		name = provider[0]
	}
	return p.get(t, "/v1/payments/"+name+"/"+id, readToken)
}

// events returns a payment's stored events from the audit endpoint.
func (p *ledgerProc) events(t testing.TB, provider, id string) []map[string]any {
	t.Helper()
	code, body := p.get(t, "/v1/payments/"+provider+"/"+id+"/events", readToken)
	if code != http.StatusOK {
		t.Fatalf("events of %s/%s: %d %v", provider, id, code, body)
	}
	var out []map[string]any
	for _, e := range body["events"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// waitPayment polls the read API until check accepts the payment; the
// projector is asynchronous, so visibility is eventual.
func (p *ledgerProc) waitPayment(t testing.TB, id string, check func(map[string]any) bool, provider ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last map[string]any
	for time.Now().Before(deadline) {
		code, body := p.payment(t, id, provider...)
		if code == http.StatusOK && check(body) {
			return body
		}
		last = body
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("payment %s never reached the expected state; last: %v", id, last)
	return nil
}

func statusIs(want string, amounts ...int64) func(map[string]any) bool {
	return func(b map[string]any) bool {
		if b["status"] != want {
			return false
		}
		if len(amounts) > 0 && num(b["amount_refunded"]) != amounts[0] {
			return false
		}
		return true
	}
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// newDB returns a fresh, empty database URL for one test.
func newDB(t *testing.T) string { return pgtest.NewDatabase(t) }

// --- Stripe payload builders ------------------------------------------------

type stripeEvent struct {
	ID      string
	Type    string
	Created int64
	Object  map[string]any
}

func (e stripeEvent) body() []byte {
	b, _ := json.Marshal(map[string]any{
		"id": e.ID, "object": "event", "api_version": "2026-07-29.dahlia", "created": e.Created,
		"livemode": false, "type": e.Type, "pending_webhooks": 1,
		"data": map[string]any{"object": e.Object},
	})
	return b
}

func pi(id string, amount int64, status string) map[string]any {
	return map[string]any{"id": id, "object": "payment_intent", "amount": amount, "amount_received": 0,
		"amount_capturable": 0, "currency": "usd", "status": status}
}

func piEvent(evt, typ, piID string, created int64, amount int64) stripeEvent {
	obj := pi(piID, amount, strings.TrimPrefix(typ, "payment_intent."))
	switch typ {
	case "payment_intent.succeeded":
		obj["amount_received"] = amount
	case "payment_intent.payment_failed":
		obj["last_payment_error"] = map[string]any{"code": "card_declined", "message": "Your card was declined."}
	case "payment_intent.amount_capturable_updated":
		obj["amount_capturable"] = amount
	}
	return stripeEvent{ID: evt, Type: typ, Created: created, Object: obj}
}

func refundEvent(evt, piID string, created, captured, refunded int64) stripeEvent {
	return stripeEvent{ID: evt, Type: "charge.refunded", Created: created, Object: map[string]any{
		"id": "ch_" + piID, "object": "charge", "payment_intent": piID, "amount": captured,
		"amount_captured": captured, "amount_refunded": refunded, "refunded": refunded == captured, "currency": "usd"}}
}

func disputeEvent(evt, typ, piID string, created, amount int64, status string) stripeEvent {
	return stripeEvent{ID: evt, Type: typ, Created: created, Object: map[string]any{
		"id": "dp_" + piID, "object": "dispute", "payment_intent": piID, "charge": "ch_" + piID,
		"amount": amount, "currency": "usd", "status": status, "reason": "fraudulent"}}
}

// forEachBackend runs test once per event store backend: the Postgres store
// in the test's database, and KurrentDB through the official client against
// an in-process kurrenttest server that outlives ledger restarts.
func forEachBackend(t *testing.T, test func(t *testing.T, env map[string]string)) {
	t.Run("postgres", func(t *testing.T) { test(t, baseEnv(newDB(t))) })
	t.Run("kurrentdb", func(t *testing.T) {
		env := baseEnv(newDB(t))
		env["LEDGER_EVENTSTORE_URL"] = newKurrent(t).URL()
		test(t, env)
	})
}

// newKurrent starts an in-memory KurrentDB server for one test.
func newKurrent(t *testing.T) *kurrenttest.Server {
	t.Helper()
	srv, err := kurrenttest.NewServer()
	if err != nil {
		t.Fatalf("kurrenttest: %v", err)
	}
	t.Cleanup(srv.Close)
	return srv
}
