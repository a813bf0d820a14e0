package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/jobs"
)

// dlProc is one `ledger dead-letters` process of the built binary.
type dlProc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan error
}

func dlStart(t *testing.T, env map[string]string, args ...string) *dlProc {
	t.Helper()
	cmd := exec.Command(ledgerBin, append([]string{"dead-letters"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &dlProc{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ledger dead-letters: %v", err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// dlWait waits for p to exit and returns its error (nil for status 0).
func (p *dlProc) dlWait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(3 * time.Minute):
		t.Fatalf("ledger dead-letters did not end within 3 minutes\nstderr: %s", p.stderr.String())
	}
	return nil
}

// dlStates counts the queue's entries by state.
func dlStates(t *testing.T, pool *pgxpool.Pool) (open, retried int) {
	t.Helper()
	err := pool.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE state = 'open'), count(*) FILTER (WHERE state = 'retried')
        FROM dead_letters`).Scan(&open, &retried)
	if err != nil {
		t.Fatal(err)
	}
	return open, retried
}

// dlKillMidway starts a bulk retry and kills it with SIGKILL once it has
// retried a fifth of the open entries, or more, but not all. It reports false when the
// run ended (or was killed) with nothing left open: the caller seeds more.
func dlKillMidway(t *testing.T, pool *pgxpool.Pool, env map[string]string, args []string) bool {
	t.Helper()
	open, before := dlStates(t, pool)
	target := before + max(open/5, 1)
	p := dlStart(t, env, args...)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the bulk retry made no progress to %d retried in 3 minutes\nstderr: %s", target, p.stderr.String())
		}
		select {
		case err := <-p.done:
			if err != nil {
				t.Fatalf("the bulk retry failed: %v\nstdout: %s\nstderr: %s", err, p.stdout.String(), p.stderr.String())
			}
			t.Logf("the bulk retry ended before it could be killed: %s", p.stdout.String())
			return false
		default:
		}
		open, retried := dlStates(t, pool)
		if retried >= target && open > 0 {
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
			open, retried = dlStates(t, pool)
			t.Logf("killed the bulk retry with %d retried, %d open", retried-before, open)
			return open > 0
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestE2EKillDuringBulkRetry: `ledger dead-letters retry --kind job`
// killed with SIGKILL half way through a thousand job dead letters, then
// run again, retries each entry exactly once: one deadletter.retried.v1
// fact in each deadletter-{id} stream, one River job inserted per entry,
// no entry lost. That holds because the retrier appends the fact first,
// with an event ID derived from (entry, retry number), which the store
// drops when it holds it already; then one transaction marks the entry
// retried (only if still open with the retries counted so far) and inserts
// the job. A kill before that commit leaves the entry open and its fact
// stored: the next run appends nothing new and does the transaction once;
// a kill after it leaves the entry retried, which the next run skips.
func TestE2EKillDuringBulkRetry(t *testing.T) {
	t.Parallel()
	dbURL := newDB(t)
	env := map[string]string{"LEDGER_DATABASE_URL": dbURL, "LEDGER_LOG_LEVEL": "error", "LEDGER_OPERATOR": "oncall"}
	if err := run(t.Context(), []string{"migrate"}, mapEnv(env), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	const batch = 1000
	args := []string{"retry", "--kind", "job", "--cause", jobs.EnrichKind}
	ids := dlSeedJobs(t, pool, jobs.EnrichKind, 0, batch)
	for attempt := 1; !dlKillMidway(t, pool, env, args); attempt++ {
		if attempt == 5 {
			t.Fatalf("the bulk retry of %d entries always finished before it could be killed", batch)
		}
		ids = append(ids, dlSeedJobs(t, pool, jobs.EnrichKind, len(ids), batch)...)
	}
	open, _ := dlStates(t, pool)

	p := dlStart(t, env, args...)
	if err := p.dlWait(t); err != nil {
		t.Fatalf("the bulk retry run again: %v\nstdout: %s\nstderr: %s", err, p.stdout.String(), p.stderr.String())
	}
	if want := "retried " + strconv.Itoa(open) + " of " + strconv.Itoa(open) + " matched"; !strings.Contains(p.stdout.String(), want) {
		t.Errorf("the second run printed %q, want %q", p.stdout.String(), want)
	}
	dlCheckRetriedOnce(t, pool, ids)
}

// dlCheckRetriedOnce asserts that every entry of ids was retried once by
// cli:oncall and nothing else is in the queue, its facts or River.
func dlCheckRetriedOnce(t *testing.T, pool *pgxpool.Pool, ids []int64) {
	t.Helper()
	ctx := t.Context()
	var entries, once int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state = 'retried' AND retries = 1 AND retried_by = 'cli:oncall')
        FROM dead_letters`).Scan(&entries, &once); err != nil {
		t.Fatal(err)
	}
	if entries != len(ids) || once != len(ids) {
		t.Errorf("%d entries, %d retried once by cli:oncall; want %d of each", entries, once, len(ids))
	}
	store := postgres.New(pool, postgres.Options{GroupSize: 1})
	for _, id := range ids {
		evs, err := store.ReadStream(ctx, eventstore.DeadLetterStream(id))
		if err != nil {
			t.Fatal(err)
		}
		var fact domain.DeadLetterRetry
		if len(evs) != 1 || evs[0].Type != domain.TypeDeadLetterRetried || json.Unmarshal(evs[0].Data, &fact) != nil ||
			fact.Retry != 1 || fact.DeadLetterID != id || fact.RetriedBy != "cli:oncall" || fact.Bulk == nil {
			t.Fatalf("deadletter-%d holds %d events (%+v), want one deadletter.retried.v1 of retry 1", id, len(evs), fact)
		}
	}
	var jobsInserted, payments, otherKinds int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE kind = $1), count(DISTINCT args->>'payment_id') FILTER (WHERE kind = $1),
        count(*) FILTER (WHERE kind <> $1) FROM river_job`, jobs.EnrichKind).Scan(&jobsInserted, &payments, &otherKinds); err != nil {
		t.Fatal(err)
	}
	if jobsInserted != len(ids) || payments != len(ids) || otherKinds != 0 {
		t.Errorf("river_job holds %d enrich jobs for %d payments and %d others; want one per entry (%d) and none else",
			jobsInserted, payments, otherKinds, len(ids))
	}
}
