package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/cmd/paysim/internal/verdict"
	"github.com/payledger/payledger/internal/pgtest"
)

// TestSmoke is the CI run of issue 5, item 5: the real ledger binary, a
// fresh database, a few hundred payments across every provider with
// duplicates and reordering, and not one payment wrong or missing.
func TestSmoke(t *testing.T) {
	rep := runSmoke(t, buildLedger(t), pgtest.NewDatabase(t), []string{
		"--payments", "300", "--seed", "20260305",
		"--dup", "0.3", "--reorder", "0.5", "--max-delay", "5ms", "--late-delay", "100ms",
		"--concurrency", "16",
	})
	if !rep.OK || rep.Matched != rep.Payments || rep.Undelivered != 0 || rep.AcceptedTwice != 0 {
		t.Errorf("run failed: %d of %d matched, %d undelivered, %d accepted twice", rep.Matched, rep.Payments, rep.Undelivered, rep.AcceptedTwice)
	}
	// The run exercised what it claims to.
	if rep.Duplicated == 0 || rep.Outcomes["duplicate"] == 0 || len(rep.ByProvider) != 4 || rep.APIFetches[truth.MercadoPago] == 0 {
		t.Errorf("run did not exercise duplicates, every provider and Mercado Pago fetches: %+v", rep)
	}
	// End-to-end lag was sampled, and every sample became visible.
	if rep.LagSamples == 0 || rep.LagUnresolved != 0 || rep.LagErrors != 0 {
		t.Errorf("lag: %d samples, %d unresolved, %d errors (%s)", rep.LagSamples, rep.LagUnresolved, rep.LagErrors, rep.LagFirstError)
	}
	if rep.Outcomes["accepted"] != rep.Webhooks {
		t.Errorf("accepted = %d, want one per distinct webhook (%d)", rep.Outcomes["accepted"], rep.Webhooks)
	}
	t.Run("books", func(t *testing.T) {
		b := rep.Books
		if b == nil || !b.OK() || b.Accounts == 0 {
			t.Fatalf("books: %+v", b)
		}
		if r := b.Recorded; r == nil || !r.OK() || r.Accounts == 0 {
			t.Errorf("recorded-basis check: %+v", r)
		} else if r.Moved {
			// Background jobs (fee fetches retried) posted around T on every
			// attempt: the books as of T were still compared at the end.
			t.Logf("recorded-basis check: balances moved around T; the answer at T was not compared")
		}
		if b.StripeFees && rep.APIFetches[truth.Stripe] == 0 {
			t.Error("Stripe fees expected but the ledger never fetched a payment intent")
		}
	})
}

var listeningRE = regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)

// startLedger runs `ledger serve` with env only and returns its address
// once it listens; it is stopped with SIGTERM when the test ends.
func startLedger(t *testing.T, bin string, env map[string]string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var logs lockedBuffer
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = &logs, io.MultiWriter(&logs, pw)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ledger: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("ledger logs:\n%s", logs.String())
		}
	})
	select {
	case a := <-addrs:
		return a
	case err := <-done:
		t.Fatalf("ledger exited before listening: %v\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("ledger did not listen within 60s\n%s", logs.String())
	}
	return ""
}

// lockedBuffer is a bytes.Buffer safe for the ledger's two output streams.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSmokeOutageBackfill is issue 17's outage check for the providers
// whose list APIs see every change (Mercado Pago's search by
// date_last_updated, Stripe's events): every delivery of an outage window is
// lost, `ledger backfill` over the window's provider times runs before the
// read-back, and every payment matches, some of them converged by the
// backfill; the backfill run a second time stores nothing new.
func TestSmokeOutageBackfill(t *testing.T) {
	bin := buildLedger(t)
	for _, tt := range []struct{ provider, epoch string }{
		{provider: "mercadopago"},
		// Stripe keeps 30 days of events: provider times from 20 days ago.
		// A lifecycle spans up to 30 days, so some facts are dated after
		// today and the books as of now rightly leave them out: the books
		// check is off (TestSmoke checks them), the statuses are checked.
		{provider: "stripe", epoch: time.Now().Add(-20 * 24 * time.Hour).UTC().Format(time.RFC3339)},
	} {
		t.Run(tt.provider, func(t *testing.T) { smokeOutageBackfill(t, bin, tt.provider, tt.epoch) })
	}
}

func smokeOutageBackfill(t *testing.T, bin, provider, epoch string) {
	db := pgtest.NewDatabase(t)
	t.Setenv("LEDGER_DATABASE_URL", db) // for the backfill --after-send runs
	second := filepath.Join(t.TempDir(), "second.json")
	backfill := bin + ` backfill --provider ` + provider + ` --since "$PAYSIM_OUTAGE_SINCE" --until "$PAYSIM_OUTAGE_UNTIL"`
	args := []string{
		"--payments", "200", "--seed", "20261202", "--providers", provider,
		"--dup", "0.2", "--concurrency", "8", "--rate", "300",
		"--outage", "300ms", "--outage-at", "200ms",
		"--after-send", backfill + " && " + backfill + " --json > " + second,
	}
	if epoch != "" {
		args = append(args, "--epoch", epoch, "--books=false")
	}
	rep := runSmoke(t, bin, db, args)
	if rep.LostDeliveries == 0 {
		t.Fatalf("the outage lost nothing: %+v", rep.Outage)
	}
	if !rep.OK || rep.Matched != rep.Payments {
		t.Errorf("after the backfill %d of %d matched", rep.Matched, rep.Payments)
	}
	if rep.Converged[verdict.ByBackfill] == 0 {
		t.Errorf("converged = %+v, want some by backfill", rep.Converged)
	}
	b, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	var again struct{ Fetched, New, Duplicates, Failed int }
	if err := json.Unmarshal(b, &again); err != nil || again.New != 0 || again.Duplicates == 0 || again.Failed != 0 {
		t.Errorf("second backfill = %s (%v), want only duplicates", b, err)
	}
}

// TestSmokeDropReconcile is issue 17's reconciliation check: a tenth of the
// payments never get their final webhooks (the provider gave up), and
// `ledger serve`'s reconciler, asking the fake APIs about payments quiet for
// 5 s (and, every pass, about every finished payment quiet as long: a
// Mercado Pago payment whose one fetch saw it paid looks final though its
// refund was dropped), converges every one of them: 0 wrong, 0 missing,
// one corrected row in the log per dropped payment and none for the others. A second pass over everything not final changes nothing.
func TestSmokeDropReconcile(t *testing.T) {
	bin := buildLedger(t)
	for _, provider := range []string{"mercadopago", "stripe", "asaas", "pagarme"} {
		t.Run(provider, func(t *testing.T) {
			db := pgtest.NewDatabase(t)
			rep, env := runSmokeEnv(t, bin, db, []string{
				"--payments", "200", "--seed", "20261203", "--providers", provider,
				"--dup", "0.2", "--concurrency", "8", "--rate", "400", "--drop", "0.1", "--reconciliation-log",
			}, map[string]string{"LEDGER_RECONCILE_INTERVAL": "1s", "LEDGER_RECONCILE_AFTER": "5s", "LEDGER_RECONCILE_SAMPLE": "1",
				"LEDGER_RECONCILE_RATE": "200"})
			if rep.DroppedPayments == 0 {
				t.Fatal("nothing was dropped")
			}
			if !rep.OK || rep.Matched != rep.Payments || !rep.Reconciliation.OK() {
				t.Errorf("%d of %d matched; reconciliation log %+v", rep.Matched, rep.Payments, rep.Reconciliation)
			}
			if rep.Converged[verdict.ByReconciliation] == 0 {
				t.Errorf("converged = %+v, want some by reconciliation", rep.Converged)
			}
			cmd := exec.Command(bin, "reconcile", "--older-than", "0s", "--json")
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.Output()
			var again struct {
				Providers []struct {
					Provider string
					Checks   map[string]int
				}
			}
			if jerr := json.Unmarshal(out, &again); err != nil || jerr != nil {
				t.Fatalf("second pass: %v %v\n%s", err, jerr, out)
			}
			for _, p := range again.Providers {
				if p.Checks["corrected"] != 0 || p.Checks["failed"] != 0 {
					t.Errorf("second pass changed something: %s", out)
				}
			}
		})
	}
}

// buildLedger builds the ledger binary the smoke runs start.
func buildLedger(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ledger")
	build := exec.Command("go", "build", "-o", bin, "../ledger")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build ledger: %v\n%s", err, out)
	}
	return bin
}

// runSmoke starts `ledger serve` (bin) on a fresh database db, runs paysim
// with args (plus loopback addresses, a 40 s settle and the smoke token)
// against it, logs the report and returns it.
func runSmoke(t *testing.T, bin, db string, args []string) *verdict.Report {
	t.Helper()
	rep, _ := runSmokeEnv(t, bin, db, args, nil)
	return rep
}

// runSmokeEnv is runSmoke with extra variables for the ledger; it also
// returns the ledger's whole environment (the fake APIs' credentials
// included), for a command run against the same ledger afterwards.
func runSmokeEnv(t *testing.T, bin, db string, args []string, extra map[string]string) (*verdict.Report, map[string]string) {
	t.Helper()
	args = append([]string{"--api-addr", "127.0.0.1:0", "--settle", "40s", "--token", "smoke-read-token"}, args...)
	cfg, err := parseConfig("run", args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSim(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	env := map[string]string{"LEDGER_HTTP_ADDR": "127.0.0.1:0", "LEDGER_DATABASE_URL": db, "LEDGER_EVENTSTORE_POLL_INTERVAL": "10ms"}
	for _, kv := range s.env() {
		env[kv[0]] = kv[1]
	}
	for k, v := range extra {
		env[k] = v
	}
	addr := startLedger(t, bin, env)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := s.run(ctx, "http://"+addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	t.Logf("\n%s", text.String())
	return rep, env
}
