package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/projections"
)

// openJobDeadLetters waits for n open job dead letters and returns them.
func openJobDeadLetters(t *testing.T, e *env, n int) []domain.DeadLetter {
	t.Helper()
	dl := projections.NewDeadLetters(e.pool)
	var got []domain.DeadLetter
	eventually(t, fmt.Sprintf("%d job dead letters", n), func() bool {
		page, err := dl.ListDeadLetters(t.Context(), domain.DeadLetterQuery{DeadLetterFilter: domain.DeadLetterFilter{
			Kind: domain.DeadLetterJob, State: domain.DeadLetterOpen}})
		if err != nil {
			t.Fatal(err)
		}
		got = page.DeadLetters
		return len(got) >= n
	})
	if len(got) != n {
		t.Fatalf("%d dead letters, want %d: %+v", len(got), n, got)
	}
	return got
}

func (e *env) retrier() *Retrier {
	e.t.Helper()
	r, err := NewRetrier(RetrierConfig{Pool: e.pool, Store: e.store})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) retryFacts(id int64) int {
	e.t.Helper()
	recs, err := e.store.ReadStream(e.t.Context(), eventstore.DeadLetterStream(id))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type != domain.TypeDeadLetterRetried {
			e.t.Errorf("stream %s holds a %s", eventstore.DeadLetterStream(id), r.Type)
		}
	}
	return len(recs)
}

// TestDeadLetterJobRetry: a fetch that always fails ends as one dead letter;
// its retry once the fault is gone completes it exactly once, appends one
// retry fact, and a second retry finds it not open.
func TestDeadLetterJobRetry(t *testing.T) {
	const pi = "pi_3QDeadLetterRetry"
	e := newEnv(t)
	e.api.set(pi, "succeeded", 2000, 2000, 0)
	e.api.setScript(func(int) action { return outage })
	cfg := e.config()
	cfg.MaxAttempts = 2
	j := e.startJobs(cfg)
	enqueue(t, e, cfg, "stripe", pi)

	d := openJobDeadLetters(t, e, 1)[0]
	if d.Cause != EnrichKind || d.Provider != "stripe" || d.ProviderPaymentID != pi || d.Attempts != 2 ||
		len(d.Streams) != 1 || d.Streams[0] != eventstore.PaymentStream("stripe", pi) ||
		d.LastError == "" || d.State != domain.DeadLetterOpen {
		t.Fatalf("dead letter %+v", d)
	}
	eventually(t, "River discarded the job", func() bool {
		jobs := e.jobs(j)
		return len(jobs) == 1 && jobs[0].State == rivertype.JobStateDiscarded
	})
	if n, err := SyncDeadLetters(t.Context(), e.pool); err != nil || n != 0 {
		t.Errorf("SyncDeadLetters = %d, %v; want 0 (the error handler recorded it)", n, err)
	}

	e.api.setScript(nil)
	r := e.retrier()
	after, err := r.Retry(t.Context(), d.ID, "cli:ana")
	if err != nil {
		t.Fatal(err)
	}
	if after.State != domain.DeadLetterRetried || after.Retries != 1 || after.RetriedBy != "cli:ana" || after.RetriedAt.IsZero() {
		t.Errorf("after the retry: %+v", after)
	}
	eventually(t, "the retried job completed", func() bool {
		jobs := e.jobs(j)
		return len(jobs) == 1 && jobs[0].State == rivertype.JobStateCompleted
	})
	if got := e.observed("stripe", pi); got["confirmed/succeeded 2000/2000/0 BRL"] != 1 || len(got) != 1 {
		t.Errorf("observations after the retry: %v", got)
	}
	if n := e.retryFacts(d.ID); n != 1 {
		t.Errorf("%d retry facts, want 1", n)
	}
	_, err = r.Retry(t.Context(), d.ID, "cli:ana")
	if !errors.Is(err, projections.ErrNotOpen) || domain.KindOf(err) != domain.KindConflict {
		t.Errorf("second retry: %v, want a conflict wrapping ErrNotOpen", err)
	}
}

// TestDeadLetterBulkRetryKilled: a bulk retry killed between a fact and its
// transaction, run again, retries each matching entry once, appends each
// fact once, and leaves entries outside the filter alone.
func TestDeadLetterBulkRetryKilled(t *testing.T) {
	pis := []string{"pi_3QBulkA", "pi_3QBulkB"}
	e := newEnv(t)
	for _, pi := range pis {
		e.api.set(pi, "succeeded", 2000, 2000, 0)
	}
	e.api.setScript(func(int) action { return outage })
	cfg := e.config()
	cfg.MaxAttempts = 2
	j := e.startJobs(cfg)
	for _, pi := range pis {
		enqueue(t, e, cfg, "stripe", pi)
	}
	dead := openJobDeadLetters(t, e, 2)
	eventually(t, "River discarded the jobs", func() bool {
		jobs := e.jobs(j)
		return len(jobs) == 2 && jobs[0].State == rivertype.JobStateDiscarded && jobs[1].State == rivertype.JobStateDiscarded
	})
	other, err := projections.NewDeadLetters(e.pool).Record(t.Context(), domain.DeadLetterFailure{Key: "projection:x",
		Kind: domain.DeadLetterProjection, Cause: domain.CauseUnapplicable, Streams: []string{"payment-stripe-x"},
		At: now(), Error: "boom"})
	if err != nil {
		t.Fatal(err)
	}

	e.api.setScript(nil)
	r := e.retrier()
	killed := errors.New("killed")
	r.afterFact = func(id int64) error {
		if id == dead[1].ID {
			return killed
		}
		return nil
	}
	filter := domain.DeadLetterFilter{Kind: domain.DeadLetterJob, Cause: EnrichKind}
	if n, err := r.RetryMatching(t.Context(), filter, "cli:ana"); !errors.Is(err, killed) || n != 1 {
		t.Fatalf("killed bulk retry = %d, %v", n, err)
	}
	r.afterFact = nil
	if n, err := r.RetryMatching(t.Context(), filter, "cli:ana"); err != nil || n != 1 {
		t.Fatalf("re-run = %d, %v; want 1", n, err)
	}
	if n, err := r.RetryMatching(t.Context(), filter, "cli:ana"); err != nil || n != 0 {
		t.Fatalf("third run = %d, %v; want 0", n, err)
	}
	for _, d := range dead {
		if n := e.retryFacts(d.ID); n != 1 {
			t.Errorf("dead letter %d: %d retry facts, want 1", d.ID, n)
		}
	}
	eventually(t, "both jobs completed", func() bool {
		jobs := e.jobs(j)
		return len(jobs) == 2 && jobs[0].State == rivertype.JobStateCompleted && jobs[1].State == rivertype.JobStateCompleted
	})
	for _, pi := range pis {
		if got := e.observed("stripe", pi); len(got) != 1 {
			t.Errorf("%s observations: %v", pi, got)
		}
	}
	o, err := projections.NewDeadLetters(e.pool).DeadLetter(t.Context(), other)
	if err != nil || o.State != domain.DeadLetterOpen || e.retryFacts(other) != 0 {
		t.Errorf("entry outside the filter: %+v, %v", o, err)
	}
}

// scriptedRedeliverer answers each Redeliver with the next outcome and
// refuses payloads without a provider before any fact.
type scriptedRedeliverer struct{ outcomes []string }

func (s *scriptedRedeliverer) CheckRedelivery(payload json.RawMessage) error {
	var p struct{ Provider string }
	if json.Unmarshal(payload, &p) != nil || p.Provider == "" {
		return &domain.Error{Kind: domain.KindConflict, Op: "test", Msg: "provider not configured"}
	}
	return nil
}

func (s *scriptedRedeliverer) Redeliver(context.Context, json.RawMessage) (string, error) {
	o := s.outcomes[0]
	s.outcomes = s.outcomes[1:]
	return o, nil
}

// TestDeadLetterCollisionRetryFacts: a retry refused before it starts
// appends no fact; one refused after its fact (it still collides) counts on
// the entry, so the next retry is a fact of its own; the one that works
// marks the entry retried.
func TestDeadLetterCollisionRetryFacts(t *testing.T) {
	e := newEnv(t)
	dl := projections.NewDeadLetters(e.pool)
	record := func(key, payload string) int64 {
		id, err := dl.Record(t.Context(), domain.DeadLetterFailure{Key: key, Kind: domain.DeadLetterCollision,
			Cause: domain.CauseEventIDTaken, Provider: "stripe", Streams: []string{"payment-stripe-b", "payment-stripe-a"},
			At: now(), Error: "stored elsewhere", Payload: json.RawMessage(payload)})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	refused := record("collision:x:payment-stripe-b", `{"body":"e30="}`)
	colliding := record("collision:y:payment-stripe-b", `{"provider":"stripe","body":"e30="}`)
	red := &scriptedRedeliverer{outcomes: []string{OutcomeConflict, "accepted"}}
	r, err := NewRetrier(RetrierConfig{Pool: e.pool, Store: e.store, Redeliverer: red})
	if err != nil {
		t.Fatal(err)
	}

	if _, err := r.Retry(t.Context(), refused, "ana"); domain.KindOf(err) != domain.KindConflict {
		t.Fatalf("refused retry: %v, want a conflict", err)
	}
	if d, _ := dl.DeadLetter(t.Context(), refused); e.retryFacts(refused) != 0 || d.Retries != 0 || d.State != domain.DeadLetterOpen {
		t.Errorf("refused before its fact: %d facts, %+v", e.retryFacts(refused), d)
	}
	if _, err := r.Retry(t.Context(), colliding, "ana"); !errors.Is(err, errStillConflict) {
		t.Fatalf("first retry: %v, want still colliding", err)
	}
	if d, _ := dl.DeadLetter(t.Context(), colliding); e.retryFacts(colliding) != 1 || d.Retries != 1 || d.State != domain.DeadLetterOpen {
		t.Errorf("after a retry that still collides: %d facts, %+v", e.retryFacts(colliding), d)
	}
	d, err := r.Retry(t.Context(), colliding, "bo")
	if err != nil || d.State != domain.DeadLetterRetried || d.Retries != 2 || d.RetriedBy != "bo" || e.retryFacts(colliding) != 2 {
		t.Errorf("second retry: %+v, %v, %d facts", d, err, e.retryFacts(colliding))
	}
}
