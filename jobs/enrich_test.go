package jobs

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// TestEnrichmentEndToEnd follows notifications without state through the
// whole path: appended to the real Postgres store, projected by a real
// runner that enqueues a fetch in its batch transaction, fetched by the
// worker through the real Stripe status client from a fake API, appended as
// an observation, and folded into the read model.
func TestEnrichmentEndToEnd(t *testing.T) {
	e := newEnv(t)
	j := e.startJobs(e.config())
	e.startProjector(j.Enqueuer())
	const pi = "pi_3QEnrich-e2e_1"
	steps := []struct {
		name          string
		status        string
		received      int64
		refunded      int64
		notifications []string
		want          domain.Status
	}{
		{"processing", "processing", 0, 0, []string{"n_1"}, domain.StatusAwaitingConfirmation},
		{"succeeded", "succeeded", 2000, 0, []string{"n_2"}, domain.StatusConfirmed},
		{"partially refunded, notified thrice", "succeeded", 2000, 500, []string{"n_3", "n_3", "n_4"}, domain.StatusPartiallyRefunded},
	}
	wantObserved := map[string]int{}
	for i, s := range steps {
		e.api.set(pi, s.status, 2000, s.received, s.refunded)
		for _, n := range s.notifications {
			e.notify("stripe", pi, n)
		}
		key := fmt.Sprintf("%s/%s 2000/%d/%d BRL", s.want, s.status, s.received, s.refunded)
		wantObserved[key] = 1
		eventually(t, s.name+" observed and projected", func() bool {
			p := e.payment("stripe", pi)
			return e.observed("stripe", pi)[key] == 1 && p.Status == s.want && p.EventCount == len(e.stream("stripe", pi))
		})
		eventually(t, "every fetch of step "+s.name+" done", func() bool {
			for _, job := range e.jobs(j) {
				if job.State != rivertype.JobStateCompleted {
					return false
				}
			}
			return true
		})
		if got := e.observed("stripe", pi); !reflect.DeepEqual(got, wantObserved) {
			t.Errorf("after step %d (%s): observations %v, want each state once: %v", i+1, s.name, got, wantObserved)
		}
	}

	got := e.payment("stripe", pi)
	want := domain.Fold(e.stream("stripe", pi)...).State()
	got.ReviewReasons, want.ReviewReasons = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read model\n got %+v\nwant the stream's fold %+v", got, want)
	}
	if got.Status != domain.StatusPartiallyRefunded || got.AmountCaptured != 2000 || got.AmountRefunded != 500 || got.Currency != "BRL" {
		t.Errorf("payment = %+v, want partially refunded 500 of 2000 BRL", got)
	}
	// One fetch per step at least (each step's notifications came after
	// the previous fetch finished); n_4 may have been absorbed by n_3's
	// fetch (same batch, or not yet started) or chained after it.
	if n := len(e.jobs(j)); n < 3 || n > 4 {
		t.Errorf("%d fetch jobs, want 3 or 4", n)
	}
}

// TestEnrichmentSurvivesKilledFetch is the kill test: a fetch dies part way
// (the connection drops, the process running it is killed mid-request, or
// killed after the append but before the job was marked done), the job is
// retried, the payment converges, and the stream holds the observed state
// exactly once.
// TestEnrichmentSurvivesKilledFetch: the fetch is killed mid-way (dropped
// connections, the process stopped mid-fetch, or stopped after the append
// but before the job was marked done); the job is retried, the state
// converges and exactly one observed-status event is stored. It runs for
// Mercado Pago, the provider that needs enrichment, and for Stripe.
func TestEnrichmentSurvivesKilledFetch(t *testing.T) {
	providers := []struct {
		name, payment string
		set           func(e *env, id string)
		want          string
	}{
		{"mercadopago", "1319876543211", func(e *env, id string) { e.api.setMP(id, "approved", "accredited", "20.00", "0") },
			"confirmed/approved 2000/2000/0 BRL"},
		{"stripe", "pi_3QKill-fetch_1", func(e *env, id string) { e.api.set(id, "succeeded", 2000, 2000, 0) },
			"confirmed/succeeded 2000/2000/0 BRL"},
	}
	for _, prov := range providers {
		t.Run(prov.name, func(t *testing.T) { testKilledFetch(t, prov.name, prov.payment, prov.set, prov.want) })
	}
}

func testKilledFetch(t *testing.T, provider, pi string, set func(e *env, id string), wantObserved string) {
	tests := []struct {
		name string
		// run drives the scenario once the notification is appended; it
		// returns the Jobs left running.
		run          func(t *testing.T, e *env) *Jobs
		wantAttempts int // attempts River counted for the completed job
		wantErrors   int // failed attempts recorded on it
	}{{
		name: "connection dropped on the first two attempts",
		run: func(t *testing.T, e *env) *Jobs {
			e.api.setScript(func(call int) action {
				if call <= 2 {
					return drop
				}
				return answer
			})
			return e.startJobs(e.configFor(provider))
		},
		wantAttempts: 3, wantErrors: 2,
	}, {
		name: "process killed mid-fetch, another takes over",
		run: func(t *testing.T, e *env) *Jobs {
			e.api.setScript(func(call int) action {
				if call == 1 {
					return hang
				}
				return answer
			})
			first := e.startJobs(e.configFor(provider))
			<-e.api.hung
			kill(t, first)
			return e.startJobs(e.configFor(provider))
		},
		// A job cancelled by a shutdown goes back in line without using
		// up an attempt.
		wantAttempts: 1, wantErrors: 0,
	}, {
		name: "process killed after the append, before the job was marked done",
		run: func(t *testing.T, e *env) *Jobs {
			appended := make(chan struct{})
			cfg := e.configFor(provider)
			cfg.Store = &stallingAppender{next: e.store, appended: appended}
			first := e.startJobs(cfg)
			<-appended
			kill(t, first)
			return e.startJobs(e.configFor(provider))
		},
		wantAttempts: 1, wantErrors: 0,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			set(e, pi)
			e.startProjector(nil) // the read model; jobs are enqueued below
			enqueue(t, e, e.configFor(provider), provider, pi)
			e.notify(provider, pi, "n_1")
			j := tt.run(t, e)

			eventually(t, "the payment confirmed", func() bool {
				return e.payment(provider, pi).Status == domain.StatusConfirmed
			})
			eventually(t, "the job completed", func() bool {
				jobs := e.jobs(j)
				return len(jobs) == 1 && jobs[0].State == rivertype.JobStateCompleted
			})
			job := e.jobs(j)[0]
			if job.Attempt != tt.wantAttempts || len(job.Errors) != tt.wantErrors {
				t.Errorf("job: attempt %d with %d errors, want %d with %d (errors: %+v)",
					job.Attempt, len(job.Errors), tt.wantAttempts, tt.wantErrors, job.Errors)
			}
			want := map[string]int{wantObserved: 1}
			if got := e.observed(provider, pi); !reflect.DeepEqual(got, want) {
				t.Errorf("observations %v, want exactly %v", got, want)
			}
			if n := e.api.callCount(); n < 2 {
				t.Errorf("the API was called %d times; the scenario needs a retried fetch", n)
			}
			p := e.payment(provider, pi)
			if p.AmountCaptured != 2000 || p.EventCount != 2 {
				t.Errorf("payment = %+v, want 2000 captured from 2 events", p)
			}
		})
	}
}

// enqueue inserts the fetch of one payment as the projector would, with a
// Jobs of its own (never started) built from cfg, so a scenario controls
// which process works it.
func enqueue(t *testing.T, e *env, cfg Config, provider, paymentID string) {
	t.Helper()
	j, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := e.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(t.Context()))
	n := &domain.PaymentNotified{Meta: domain.Meta{Provider: provider, ProviderEventID: "n_1", ProviderPaymentID: paymentID}}
	if err := j.Enqueuer().EnqueueTx(t.Context(), tx, []domain.Event{n}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// kill stops j as a shutdown whose grace period is already over does:
// running jobs are cancelled at once.
func kill(t *testing.T, j *Jobs) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := j.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// stallingAppender appends for real, then stalls until its job is
// cancelled: the process dies between its write and the job's completion.
type stallingAppender struct {
	next     Appender
	appended chan struct{}
}

func (s *stallingAppender) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) (eventstore.AppendResult, error) {
	res, err := s.next.Append(ctx, stream, expected, events)
	if err != nil {
		return res, err
	}
	close(s.appended)
	<-ctx.Done()
	return eventstore.AppendResult{}, ctx.Err()
}
