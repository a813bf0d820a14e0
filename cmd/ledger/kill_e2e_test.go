package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The crash check: kill -9 `ledger serve` in the middle of a
// reconciliation pass and `ledger backfill` in the middle of its listing;
// nothing doubles and the next run completes the work.

// kill ends the process with SIGKILL (no shutdown at all) and waits for it.
func (p *ledgerProc) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatalf("kill ledger: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.t.Fatal("ledger did not die within 30s of SIGKILL")
	}
}

// allChecks reads the whole reconciliation log with query q, 500 a page.
func (p *ledgerProc) allChecks(t *testing.T, q string) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		code, body := p.get(t, "/v1/reconciliation/log?limit=500&"+q+"&cursor="+url.QueryEscape(cursor), readToken)
		if code != http.StatusOK {
			t.Fatalf("log: %d %v", code, body)
		}
		for _, c := range body["checks"].([]any) {
			out = append(out, c.(map[string]any))
		}
		if cursor, _ = body["next_cursor"].(string); cursor == "" {
			return out
		}
	}
}

// streamEvents is the number of stored events of each type and source
// ("payment.status_observed.v1 reconciliation") in a payment's stream (none
// for a payment never stored).
func (p *ledgerProc) streamEvents(t *testing.T, provider, id string) map[string]int {
	t.Helper()
	code, body := p.get(t, "/v1/payments/"+provider+"/"+id+"/events", readToken)
	out := map[string]int{}
	switch code {
	case http.StatusNotFound:
		return out
	case http.StatusOK:
	default:
		t.Fatalf("events of %s/%s: %d %v", provider, id, code, body)
	}
	for _, e := range body["events"].([]any) {
		m := e.(map[string]any)
		md, _ := m["metadata"].(map[string]any)
		out[fmt.Sprint(m["type"], " ", md["source"])]++
	}
	return out
}

// verifyOK runs `ledger verify --json` in-process against env's database.
func verifyOK(t *testing.T, env map[string]string) {
	t.Helper()
	var out bytes.Buffer
	venv := mapEnv(map[string]string{"LEDGER_DATABASE_URL": env["LEDGER_DATABASE_URL"], "LEDGER_LOG_LEVEL": "error"})
	err := run(t.Context(), []string{"verify", "--json", "--wait", "60s"}, venv, &out, io.Discard)
	var rep verifyReport
	if jerr := json.Unmarshal(out.Bytes(), &rep); err != nil || jerr != nil || !rep.OK || rep.DuplicateEventIDs != 0 {
		t.Fatalf("verify: %v (%v): %+v\n%s", err, jerr, rep, out.String())
	}
}

// TestE2EKillDuringReconciliation: a serve killed with SIGKILL while its
// pass corrects 150 payments leaves the pass job running; the next serve's
// rescuer retries it (after LEDGER_JOBS_RESCUE_AFTER) and it corrects the
// rest. Each payment holds one observation and one corrected check, and
// the journal books each sale once.
func TestE2EKillDuringReconciliation(t *testing.T) {
	t.Parallel()
	api, base := newFakeAsaas(t)
	env := reconcileEnv(t, base)
	env["LEDGER_RECONCILE_INTERVAL"] = "1s"
	env["LEDGER_RECONCILE_AFTER"] = "1s"
	env["LEDGER_RECONCILE_RATE"] = "20"
	env["LEDGER_JOBS_RESCUE_AFTER"] = "2m" // its minimum: how long a killed pass job stays running
	l := startLedger(t, env)
	tok := map[string]string{"asaas-access-token": "asaas_e2e_token"}

	const n = 150
	ids := make([]string, n)
	var total int64
	for i := range ids {
		ids[i] = fmt.Sprintf("pay_kill_rc_%03d", i)
		cents := int64(1000 + i)
		total += cents
		value := fmt.Sprintf("%d.%02d", cents/100, cents%100)
		api.set(ids[i], asaasObject(ids[i], "RECEIVED", value))
		d := asaasEvent(fmt.Sprintf("evt_kill_rc&%d", i), "PAYMENT_CREATED", ids[i], "2026-03-02 09:00:00", value, "PENDING", "null")
		if code, body := l.post(t, "/webhooks/asaas", d, tok); code != http.StatusOK {
			t.Fatalf("delivery %d: %d %v", i, code, body)
		}
	}

	corrected := func(p *ledgerProc) int64 {
		code, sum := p.get(t, "/v1/reconciliation/summary?since=2020-01-01T00:00:00Z", readToken)
		if code != http.StatusOK {
			t.Fatalf("summary: %d %v", code, sum)
		}
		for _, pr := range sum["providers"].([]any) {
			if m := pr.(map[string]any); m["provider"] == "asaas" {
				return num(m["checks"].(map[string]any)["corrected"])
			}
		}
		return 0
	}
	var before int64
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if before = corrected(l); before >= 30 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pass corrected %d payments in 60s", before)
		}
	}
	l.kill()
	killed := time.Now()
	if before >= n {
		t.Fatalf("the pass was done (%d corrected) before the kill", before)
	}

	l = startLedger(t, env)
	started := time.Since(killed)
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		c := corrected(l)
		if c >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d corrected 5 minutes after the kill (%d before it)", c, n, before)
		}
	}
	done := time.Since(killed)
	for _, id := range ids {
		l.waitPayment(t, id, statusIs("confirmed"), "asaas")
	}

	perPayment := map[string][]map[string]any{}
	runs := map[string]int{}
	for _, c := range l.allChecks(t, "provider=asaas") {
		id := c["provider_payment_id"].(string)
		perPayment[id] = append(perPayment[id], c)
		if c["outcome"] == "corrected" {
			run, _ := c["run"].(string)
			runs[run]++
		}
	}
	// The killed run is the one that checked first; the next run's first
	// check is when the pass resumed.
	var first, resumed time.Time
	firstRun := ""
	for _, c := range perPayment {
		for _, row := range c {
			at, err := time.Parse(time.RFC3339Nano, row["checked_at"].(string))
			if err != nil {
				t.Fatalf("checked_at: %v", err)
			}
			if first.IsZero() || at.Before(first) {
				first, firstRun = at, row["run"].(string)
			}
		}
	}
	for _, c := range perPayment {
		for _, row := range c {
			at, _ := time.Parse(time.RFC3339Nano, row["checked_at"].(string))
			if row["run"] != firstRun && (resumed.IsZero() || at.Before(resumed)) {
				resumed = at
			}
		}
	}
	t.Logf("killed after %d of %d corrected; serve up again %v after the kill; the pass resumed %v after it (run %s killed); all corrected %v after it; corrections by run: %v",
		before, n, started.Round(time.Millisecond), resumed.Sub(killed).Round(time.Millisecond), firstRun, done.Round(time.Millisecond), runs)
	if len(runs) < 2 || runs[firstRun] == 0 || runs[firstRun] >= n {
		t.Errorf("corrections by run = %v: want the killed run's and its successors'", runs)
	}
	for _, id := range ids {
		nCorrected := 0
		for _, c := range perPayment[id] {
			switch c["outcome"] {
			case "corrected":
				nCorrected++
			case "unchanged":
			default:
				t.Errorf("%s: check %v", id, c)
			}
		}
		if nCorrected != 1 {
			t.Errorf("%s: %d corrected checks, want 1: %v", id, nCorrected, perPayment[id])
		}
		evs := l.streamEvents(t, "asaas", id)
		// The webhook's own PAYMENT_CREATED is an observation too.
		if evs["payment.status_observed.v1 reconciliation"] != 1 || evs["payment.status_observed.v1 webhook"] != 1 ||
			evs["payment.reconciliation_checked.v1 reconciliation"] != len(perPayment[id]) || len(evs) != 3 {
			t.Errorf("%s: stream holds %v, want the webhook's, one observation of the reconciler and %d checks", id, evs, len(perPayment[id]))
		}
	}
	if api.count(ids[0]) < 1 {
		t.Errorf("Asaas was never asked about %s", ids[0])
	}

	verifyOK(t, env)
	bal := l.balances(t, url.Values{})
	if bal["sales/asaas/BRL"] != total {
		t.Errorf("sales/asaas/BRL = %d, want %d (one correction each): %v", bal["sales/asaas/BRL"], total, bal)
	}
	for acct, v := range bal {
		if v != total && v != -total && v != 0 {
			t.Errorf("balance %s = %d, want ±%d or 0 (one entry each): %v", acct, v, total, bal)
		}
	}
}

// fakeAsaasList is Asaas's GET /v3/payments: the created phase lists every
// payment, the paid phase those with a paymentDate, page pageSize at a
// time after delay (whatever limit asks), counting the pages served.
type fakeAsaasList struct {
	pays     []string // JSON payment objects
	paid     []string
	pageSize int
	delay    time.Duration
	mu       sync.Mutex
	pages    int
}

func (f *fakeAsaasList) served() int { f.mu.Lock(); defer f.mu.Unlock(); return f.pages }

func (f *fakeAsaasList) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v3/payments" || r.Header.Get("access_token") != "asaas_api_e2e" {
		http.Error(w, `{"errors":[{"code":"invalid_access_token","description":"A chave de API informada não pertence a este ambiente"}]}`, http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	list := f.pays
	if q.Get("paymentDate[ge]") != "" {
		list = f.paid
	}
	off, err := strconv.Atoi(q.Get("offset"))
	if err != nil || off < 0 {
		http.Error(w, `{"errors":[{"code":"invalid_offset","description":"offset"}]}`, http.StatusBadRequest)
		return
	}
	time.Sleep(f.delay)
	f.mu.Lock()
	f.pages++
	f.mu.Unlock()
	end := min(off+f.pageSize, len(list))
	off = min(off, end)
	objs := make([]json.RawMessage, end-off)
	for i, s := range list[off:end] {
		objs[i] = json.RawMessage(s)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "hasMore": end < len(list), "totalCount": len(list),
		"limit": f.pageSize, "offset": off, "data": objs})
}

// backfillRun is one `ledger backfill` process of the built binary.
type backfillRun struct {
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan error
}

func startBackfill(t *testing.T, env map[string]string, args ...string) *backfillRun {
	t.Helper()
	cmd := exec.Command(ledgerBin, append([]string{"backfill", "--json"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	b := &backfillRun{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = b.stdout, b.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start backfill: %v", err)
	}
	go func() { b.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

// wait waits for the run to end and returns its summary.
func (b *backfillRun) wait(t *testing.T) backfillReport {
	t.Helper()
	select {
	case err := <-b.done:
		if err != nil {
			t.Fatalf("backfill: %v\nstdout: %s\nstderr: %s", err, b.stdout.String(), b.stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("backfill did not end within 2 minutes\nstderr: %s", b.stderr.String())
	}
	var rep backfillReport
	if err := json.Unmarshal([]byte(b.stdout.String()), &rep); err != nil {
		t.Fatalf("backfill output is not one JSON object: %v\n%s", err, b.stdout.String())
	}
	return rep
}

// TestE2EKillDuringBackfill: `ledger backfill` killed with SIGKILL in the
// middle of a slow listing stored what it had; run again it stores the
// rest once and counts what was there as duplicates; a third run finds
// only duplicates.
func TestE2EKillDuringBackfill(t *testing.T) {
	t.Parallel()
	const n = 100
	f := &fakeAsaasList{pageSize: 5, delay: 200 * time.Millisecond}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("pay_kill_bf_%03d", i)
		value := fmt.Sprintf("%d.00", 10+i)
		// Every other payment was paid in the window too: the paid phase
		// lists it again, the very same fact.
		status, paidOn := "PENDING", "null"
		if i%2 == 0 {
			status, paidOn = "RECEIVED", `"2026-03-02"`
			f.paid = append(f.paid, "")
		}
		obj := fmt.Sprintf(`{"object":"payment","id":%q,"dateCreated":"2026-03-02","customer":"cus_000005219613","value":%s,"netValue":%s,"billingType":"PIX","status":%q,"paymentDate":%s,"confirmedDate":%s,"externalReference":"order-%d","refunds":null}`,
			ids[i], value, value, status, paidOn, paidOn, i)
		f.pays = append(f.pays, obj)
		if i%2 == 0 {
			f.paid[len(f.paid)-1] = obj
		}
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	env := reconcileEnv(t, srv.URL)
	env["LEDGER_RECONCILE_INTERVAL"] = "0" // nothing but the backfill asks Asaas
	l := startLedger(t, env)
	window := []string{"--provider", "asaas", "--since", "2026-03-02T00:00:00-03:00", "--until", "2026-03-03T00:00:00-03:00"}
	allPages := (n+f.pageSize-1)/f.pageSize + (len(f.paid)+f.pageSize-1)/f.pageSize
	listed := n + len(f.paid)

	first := startBackfill(t, env, window...)
	for deadline := time.Now().Add(60 * time.Second); f.served() < 6; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the backfill listed %d pages in 60s\n%s", f.served(), first.stderr.String())
		}
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done
	killedAt := f.served()
	if killedAt >= allPages {
		t.Fatalf("the backfill listed all %d pages before the kill", allPages)
	}
	stored := 0
	for _, id := range ids {
		switch evs := l.streamEvents(t, "asaas", id); evs["payment.status_observed.v1 backfill"] {
		case 0:
		case 1:
			stored++
		default:
			t.Errorf("%s: %v after the kill", id, evs)
		}
	}
	t.Logf("killed after %d of %d pages, %d of %d payments stored", killedAt, allPages, stored, n)
	if stored == 0 || stored == n {
		t.Fatalf("%d of %d stored at the kill: want some but not all", stored, n)
	}

	second := startBackfill(t, env, window...).wait(t)
	if second.Fetched != listed || second.New != n-stored || second.New+second.Duplicates != listed ||
		second.Failed != 0 || second.Ignored != 0 {
		t.Errorf("second run = %+v; want %d listed, %d new, the rest duplicates", second, listed, n-stored)
	}
	third := startBackfill(t, env, window...).wait(t)
	if third.Fetched != listed || third.New != 0 || third.Duplicates != listed || third.Failed != 0 {
		t.Errorf("third run = %+v; want only duplicates (%d)", third, listed)
	}
	for _, id := range ids {
		if evs := l.streamEvents(t, "asaas", id); evs["payment.status_observed.v1 backfill"] != 1 || len(evs) != 1 {
			t.Errorf("%s: stream holds %v, want one observation", id, evs)
		}
	}
	verifyOK(t, env)
}
