package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// StatusFetcher is a provider's status client: Observe fetches the
// provider's current view of a payment and returns the facts it states, the
// status observation first (a domain.PaymentStatusObserved) and then any
// other, such as the fee (a domain.FeeAssessed), each with a
// content-derived ProviderEventID. A payment the provider does not know
// wraps domain.ErrUnknownPayment.
type StatusFetcher interface {
	Name() string
	Observe(ctx context.Context, providerPaymentID string) ([]domain.Event, error)
}

// Appender is the part of eventstore.Store the jobs write with.
type Appender interface {
	Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) (eventstore.AppendResult, error)
}

// EnrichKind is the job kind of EnrichArgs. It is stored in every job row:
// renaming it strands the jobs already queued.
const EnrichKind = "enrich_payment"

// EnrichArgs asks for a provider's view of one payment to be fetched and
// recorded.
type EnrichArgs struct {
	Provider  string `json:"provider"`
	PaymentID string `json:"payment_id"`
	// After is the ID of a fetch of the same payment that was already
	// running when this one was enqueued (see Enqueuer); it only makes the
	// job's unique key differ from that fetch's.
	After int64 `json:"after,omitempty"`
}

// Kind implements river.JobArgs.
func (EnrichArgs) Kind() string { return EnrichKind }

// InsertOpts implements river.JobArgsWithInsertOpts: one unfinished fetch
// per payment (and After). River requires available, pending, running and
// scheduled in ByState; retryable is added so that a burst of
// notifications during an outage waits for the pending retry instead of
// piling up fetches. Completed, discarded and cancelled are left out: a
// notification after a fetch finished gets a fresh one.
func (EnrichArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{
		ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled},
	}}
}

// enrichWorker works EnrichArgs jobs.
type enrichWorker struct {
	river.WorkerDefaults[EnrichArgs]
	fetchers map[string]StatusFetcher
	rec      *recorder
	log      *slog.Logger
}

// Work fetches the payment and appends what the provider says. Any error
// makes River retry the job with backoff, up to its last attempt.
func (w *enrichWorker) Work(ctx context.Context, job *river.Job[EnrichArgs]) error {
	a := job.Args
	op := "jobs: enrich " + a.Provider + "/" + a.PaymentID
	f, ok := w.fetchers[a.Provider]
	if !ok {
		return fmt.Errorf("%s: no status fetcher for provider %q", op, a.Provider)
	}
	facts, err := f.Observe(ctx, a.PaymentID)
	if err != nil {
		if errors.Is(err, domain.ErrUnknownPayment) {
			// Providers index new payments with a delay: not knowing it yet
			// is expected for a moment, and worth noticing if it lasts.
			w.log.WarnContext(ctx, "provider does not know the notified payment (yet); retrying",
				"provider", a.Provider, "payment_id", a.PaymentID, "attempt", job.Attempt, "max_attempts", job.MaxAttempts)
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	if len(facts) == 0 {
		return fmt.Errorf("%s: status fetcher returned nothing", op)
	}
	for _, ev := range facts {
		if err := checkFact(op, a.Provider, a.PaymentID, ev); err != nil {
			return err
		}
	}
	for _, ev := range facts {
		if err := w.rec.record(ctx, op, ev); err != nil {
			return err
		}
	}
	return nil
}
