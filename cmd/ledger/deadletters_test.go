package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/user"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/jobs"
	"github.com/payledger/payledger/projections"
)

// dlJobBase is the first River job ID of the seeded dead letters: River's
// sequence never gets there, so River holds no such job and the retrier
// inserts it again from the payload's kind and args, as it does for a job
// River's cleaner deleted.
const dlJobBase = 1_000_000_000

// dlSeedJobs records n dead letters of jobs of kind (jobs.EnrichKind or
// jobs.FeeKind), numbered from first, as River's error handler records a
// job whose attempts ran out.
func dlSeedJobs(t testing.TB, pool *pgxpool.Pool, kind string, first, n int) []int64 {
	t.Helper()
	ctx := context.Background()
	dl := projections.NewDeadLetters(pool)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var ids []int64
	for i := first; i < first+n; i++ {
		jobID := int64(dlJobBase + i)
		payment := fmt.Sprintf("pi_dl_%05d", i)
		var args any = jobs.EnrichArgs{Provider: "stripe", PaymentID: payment}
		if kind == jobs.FeeKind {
			args = jobs.FeeArgs{Provider: "stripe", PaymentID: payment}
		}
		rawArgs, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		payload, err := json.Marshal(map[string]any{"job_id": jobID, "kind": kind, "args": json.RawMessage(rawArgs)})
		if err != nil {
			t.Fatal(err)
		}
		id, err := dl.Record(ctx, domain.DeadLetterFailure{Key: fmt.Sprintf("job:%d", jobID), Kind: domain.DeadLetterJob,
			Cause: kind, Provider: "stripe", ProviderPaymentID: payment, Streams: []string{eventstore.PaymentStream("stripe", payment)},
			Attempts: 12, At: at.Add(time.Duration(i) * time.Second), Error: "stripe: GET /v1/payment_intents: 503\n\tbody: upstream down",
			Payload: payload})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// dlRun runs `ledger dead-letters args...` in-process.
func dlRun(t *testing.T, env func(string) string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(t.Context(), append([]string{"dead-letters"}, args...), env, &out, &errOut)
	return out.String(), err
}

// dlDecode decodes a command's --json output into v.
func dlDecode(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
}

type dlListOutput struct {
	DeadLetters []api.DeadLetterView `json:"dead_letters"`
}

// dlStreamEvents is the number of retry facts in dead letter id's stream.
func dlStreamEvents(t *testing.T, store *postgres.Store, id int64) int {
	t.Helper()
	evs, err := store.ReadStream(t.Context(), eventstore.DeadLetterStream(id))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type != domain.TypeDeadLetterRetried {
			t.Errorf("stream %s holds a %s", e.Stream, e.Type)
		}
	}
	return len(evs)
}

// dlRiverJobs counts River's jobs of kind.
func dlRiverJobs(t *testing.T, pool *pgxpool.Pool, kind string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = $1`, kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// dlFixture is a queue of two enrich jobs, one fee job and one parked
// projection (another provider), in that order.
func dlFixture(t *testing.T) (*pgxpool.Pool, []int64) {
	pool := pgtest.NewPool(t)
	ids := dlSeedJobs(t, pool, jobs.EnrichKind, 1, 2)
	ids = append(ids, dlSeedJobs(t, pool, jobs.FeeKind, 3, 1)...)
	pid, err := projections.NewDeadLetters(pool).Record(t.Context(), domain.DeadLetterFailure{
		Key: "projection:payment-mercadopago-123", Kind: domain.DeadLetterProjection, Cause: domain.CauseUndecodable,
		Provider: "mercadopago", ProviderPaymentID: "123", Streams: []string{"payment-mercadopago-123"},
		At: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), Error: "decode payment.succeeded.v1: unexpected end of JSON"})
	if err != nil {
		t.Fatal(err)
	}
	return pool, append(ids, pid)
}

func dlEnv(pool *pgxpool.Pool, extra map[string]string) func(string) string {
	m := map[string]string{"LEDGER_DATABASE_URL": pool.Config().ConnString(), "LEDGER_LOG_LEVEL": "error"}
	for k, v := range extra {
		m[k] = v
	}
	return mapEnv(m)
}

func TestDeadLetterList(t *testing.T) {
	pool, ids := dlFixture(t)
	env := dlEnv(pool, nil)
	tests := []struct {
		args []string
		want []int64
	}{
		{args: nil, want: ids},
		{args: []string{"--kind", "job"}, want: ids[:3]},
		{args: []string{"--kind", "job", "--cause", jobs.FeeKind}, want: ids[2:3]},
		{args: []string{"--provider", "mercadopago"}, want: ids[3:]},
		{args: []string{"--state", "open", "--limit", "2"}, want: ids[:2]},
		{args: []string{"--state", "retried"}, want: nil},
		{args: []string{"--cause", "nosuch"}, want: nil},
	}
	for _, tt := range tests {
		out, err := dlRun(t, env, append([]string{"list", "--json"}, tt.args...)...)
		if err != nil {
			t.Fatalf("list %v: %v", tt.args, err)
		}
		var got dlListOutput
		dlDecode(t, out, &got)
		var gotIDs []int64
		for _, v := range got.DeadLetters {
			gotIDs = append(gotIDs, v.ID)
			if v.Payload != nil || v.Streams == nil || v.State != "open" || v.RetriedAt != nil {
				t.Errorf("list %v: entry %+v: want no payload, streams, open, never retried", tt.args, v)
			}
		}
		if !slices.Equal(gotIDs, tt.want) || got.DeadLetters == nil {
			t.Errorf("list %v = %v, want %v (and a list, never null)", tt.args, gotIDs, tt.want)
		}
	}
	first := mustDecodeList(t, env).DeadLetters[0]
	if first.Kind != "job" || first.Cause != jobs.EnrichKind || first.Provider != "stripe" || first.ProviderPaymentID != "pi_dl_00001" ||
		first.Attempts != 12 || first.FirstFailedAt != "2026-11-30T09:00:01Z" || !strings.Contains(first.LastError, "\n") {
		t.Errorf("first entry = %+v", first)
	}
	text, err := dlRun(t, env, "list", "--kind", "job")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[0], "LAST ERROR") ||
		!strings.Contains(lines[1], "pi_dl_00001") || !strings.HasSuffix(lines[1], "503…") || strings.Contains(text, "upstream") {
		t.Errorf("table:\n%s", text)
	}
	if text, _ := dlRun(t, env, "list", "--state", "retried"); !strings.Contains(text, "no dead letter matches") {
		t.Errorf("empty table: %q", text)
	}
}

func mustDecodeList(t *testing.T, env func(string) string) dlListOutput {
	t.Helper()
	out, err := dlRun(t, env, "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var l dlListOutput
	dlDecode(t, out, &l)
	return l
}

// TestDeadLetterExitCodes: bad subcommands, IDs and flags are usage errors
// (2) before anything is opened; an unknown ID is a failure (1).
func TestDeadLetterExitCodes(t *testing.T) {
	pool, _ := dlFixture(t)
	env := dlEnv(pool, nil)
	tests := []struct {
		args []string
		want int
	}{
		{args: nil, want: exitUsage},
		{args: []string{"frobnicate"}, want: exitUsage},
		{args: []string{"list", "--kind", "jobs"}, want: exitUsage},
		{args: []string{"list", "--state", "closed"}, want: exitUsage},
		{args: []string{"list", "--limit", "-1"}, want: exitUsage},
		{args: []string{"list", "--dry-run"}, want: exitUsage},
		{args: []string{"list", "extra"}, want: exitUsage},
		{args: []string{"list", "--bogus"}, want: exitUsage},
		{args: []string{"show"}, want: exitUsage},
		{args: []string{"show", "abc"}, want: exitUsage},
		{args: []string{"show", "0"}, want: exitUsage},
		{args: []string{"show", "1", "--kind", "job"}, want: exitUsage},
		{args: []string{"retry"}, want: exitUsage},                                     // bulk without --kind
		{args: []string{"retry", "--cause", jobs.EnrichKind}, want: exitUsage},         // still without --kind
		{args: []string{"retry", "--kind", "job", "--state", "open"}, want: exitUsage}, // bulk has no --state
		{args: []string{"retry", "1", "--kind", "job"}, want: exitUsage},               // an ID and a filter
		{args: []string{"retry", "1", "--dry-run"}, want: exitUsage},
		{args: []string{"retry", "1", "2"}, want: exitUsage},
		{args: []string{"show", "999999"}, want: exitProblems},
		{args: []string{"show", "999999", "--json"}, want: exitProblems},
		{args: []string{"retry", "999999"}, want: exitProblems},
		{args: []string{"-h"}, want: exitOK},
	}
	for _, tt := range tests {
		_, err := dlRun(t, env, tt.args...)
		if got := exitCode(err); got != tt.want {
			t.Errorf("ledger dead-letters %s: exit %d (%v), want %d", strings.Join(tt.args, " "), got, err, tt.want)
		}
	}
	if _, err := dlRun(t, env, "show", "999999"); err == nil || !strings.Contains(err.Error(), "no such dead letter") {
		t.Errorf("unknown ID: %v", err)
	}
	if _, err := dlRun(t, env, "retry", "--cause", "x"); err == nil || !strings.Contains(err.Error(), "needs --kind") {
		t.Errorf("bulk without --kind: %v", err)
	}
	if _, err := dlRun(t, dlEnv(pool, map[string]string{"LEDGER_OPERATOR": "Ana Silva"}), "list"); exitCode(err) != exitUsage ||
		!strings.Contains(err.Error(), "LEDGER_OPERATOR") {
		t.Errorf("a bad LEDGER_OPERATOR: %v, want a configuration error", err)
	}
}

func TestDeadLetterShow(t *testing.T) {
	pool, ids := dlFixture(t)
	env := dlEnv(pool, nil)
	out, err := dlRun(t, env, "show", fmt.Sprint(ids[0]), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v api.DeadLetterView
	dlDecode(t, out, &v)
	var p struct {
		JobID int64           `json:"job_id"`
		Kind  string          `json:"kind"`
		Args  jobs.EnrichArgs `json:"args"`
	}
	if err := json.Unmarshal(v.Payload, &p); err != nil || p.JobID != dlJobBase+1 || p.Kind != jobs.EnrichKind ||
		p.Args.PaymentID != "pi_dl_00001" || v.ID != ids[0] || len(v.Streams) != 1 {
		t.Errorf("show --json = %+v, payload %+v (%v)", v, p, err)
	}
	text, err := dlRun(t, env, "show", fmt.Sprint(ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"streams:", "payment-stripe-pi_dl_00001", "retried by:", "retried at:",
		"last error:\n  stripe: GET /v1/payment_intents: 503\n  \tbody: upstream down", "payload:\n  {\n", "\n    \"job_id\": 1000000001"} {
		if !strings.Contains(text, want) {
			t.Errorf("show lacks %q:\n%s", want, text)
		}
	}
}

// TestDeadLetterRetry: --dry-run changes nothing; a retry marks the entry,
// appends one fact naming the operator and inserts River's job again; a
// second retry of it is refused; a bulk retry takes the rest of its filter.
func TestDeadLetterRetry(t *testing.T) {
	pool, ids := dlFixture(t)
	env := dlEnv(pool, map[string]string{"LEDGER_OPERATOR": "ana"})
	store := postgres.New(pool, postgres.Options{GroupSize: 1})

	out, err := dlRun(t, env, "retry", "--kind", "job", "--cause", jobs.EnrichKind, "--dry-run", "--json")
	var dry struct {
		WouldRetry int     `json:"would_retry"`
		IDs        []int64 `json:"ids"`
	}
	dlDecode(t, out, &dry)
	if err != nil || dry.WouldRetry != 2 || !slices.Equal(dry.IDs, ids[:2]) {
		t.Fatalf("dry run = %+v, %v; want the two enrich jobs", dry, err)
	}
	if text, err := dlRun(t, env, "retry", "--kind", "job", "--dry-run"); err != nil || !strings.Contains(text, "would retry 3") ||
		!strings.Contains(text, "pi_dl_00003") || strings.Contains(text, "mercadopago") {
		t.Errorf("dry run text: %v\n%s", err, text)
	}
	for _, v := range mustDecodeList(t, env).DeadLetters {
		if v.State != "open" || v.Retries != 0 || dlStreamEvents(t, store, v.ID) != 0 {
			t.Errorf("after --dry-run: %+v, want open, no retry and no fact", v)
		}
	}
	if n := dlRiverJobs(t, pool, jobs.EnrichKind); n != 0 {
		t.Errorf("after --dry-run River holds %d enrich jobs", n)
	}

	out, err = dlRun(t, env, "retry", fmt.Sprint(ids[0]), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v api.DeadLetterView
	dlDecode(t, out, &v)
	if v.State != "retried" || v.Retries != 1 || v.RetriedBy != "cli:ana" || v.RetriedAt == nil {
		t.Errorf("after retry: %+v", v)
	}
	if n, m := dlStreamEvents(t, store, ids[0]), dlRiverJobs(t, pool, jobs.EnrichKind); n != 1 || m != 1 {
		t.Errorf("after retry: %d facts, %d enrich jobs; want 1 and 1", n, m)
	}
	_, err = dlRun(t, env, "retry", fmt.Sprint(ids[0]))
	if exitCode(err) != exitProblems || !strings.Contains(fmt.Sprint(err), "not open") ||
		!strings.Contains(fmt.Sprint(err), "cli:ana") || !errors.Is(err, projections.ErrNotOpen) {
		t.Errorf("second retry: %v, want exit 1 saying not open", err)
	}
	if n := dlStreamEvents(t, store, ids[0]); n != 1 {
		t.Errorf("a refused retry appended: %d facts", n)
	}

	text, err := dlRun(t, env, "retry", "--kind", "job")
	if err != nil || !strings.Contains(text, "retried 2 of 2 matched") {
		t.Errorf("bulk: %v\n%s", err, text)
	}
	if n, m := dlRiverJobs(t, pool, jobs.EnrichKind), dlRiverJobs(t, pool, jobs.FeeKind); n != 2 || m != 1 {
		t.Errorf("after bulk: %d enrich, %d fee jobs; want 2 and 1", n, m)
	}
	for _, v := range mustDecodeList(t, env).DeadLetters {
		wantState := map[string]string{"job": "retried", "projection": "open"}[v.Kind]
		if v.State != wantState || (v.Kind == "job" && (v.RetriedBy != "cli:ana" || dlStreamEvents(t, store, v.ID) != 1)) {
			t.Errorf("after bulk: %+v", v)
		}
	}
	if text, err := dlRun(t, env, "retry", "--kind", "job"); err != nil || !strings.Contains(text, "retried 0 of 0 matched") {
		t.Errorf("bulk again: %v\n%s", err, text)
	}
}

func TestDeadLetterRetriedBy(t *testing.T) {
	ana := func() (*user.User, error) { return &user.User{Username: "Ana"}, nil }
	none := func() (*user.User, error) { return nil, errors.New("no passwd entry") }
	tests := []struct {
		name     string
		operator string
		current  func() (*user.User, error)
		env      map[string]string
		want     string
	}{
		{name: "LEDGER_OPERATOR wins", operator: "bob", current: ana, want: "cli:bob"},
		{name: "the OS user, lower-cased", current: ana, want: "cli:ana"},
		{name: "$USER without a passwd entry", current: none, env: map[string]string{"USER": "carla"}, want: "cli:carla"},
		{name: "nobody", current: none, want: ""},
		{name: "a name we cannot record", current: none, env: map[string]string{"USER": "DOMAIN\\ana"}, want: ""},
	}
	for _, tt := range tests {
		got, err := dlRetriedBy(Config{Operator: tt.operator}, tt.current, mapEnv(tt.env))
		if got != tt.want || (tt.want == "") != (exitCode(err) == exitUsage) {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}
