package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/backoff"
)

// StatusFetcher is a provider's status client: it fetches the provider's
// current view of a payment. A payment the provider does not know wraps
// domain.ErrUnknownPayment.
type StatusFetcher interface {
	Name() string
	FetchStatus(ctx context.Context, providerPaymentID string) (*domain.PaymentStatusObserved, error)
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

// maxAppendAttempts bounds the appends of one observation that lose a
// concurrency race (ErrConflict) before the job fails and River retries it;
// the waits between them double from 10 ms.
const maxAppendAttempts = 4

// enrichWorker works EnrichArgs jobs.
type enrichWorker struct {
	river.WorkerDefaults[EnrichArgs]
	fetchers map[string]StatusFetcher
	store    Appender
	codec    *eventstore.Codec
	now      func() time.Time
	log      *slog.Logger
}

// Work fetches the payment and appends what the provider says. Any error
// makes River retry the job with backoff, up to its last attempt.
func (w *enrichWorker) Work(ctx context.Context, job *river.Job[EnrichArgs]) error {
	a := job.Args
	f, ok := w.fetchers[a.Provider]
	if !ok {
		return fmt.Errorf("jobs: enrich %s/%s: no status fetcher for provider %q", a.Provider, a.PaymentID, a.Provider)
	}
	obs, err := f.FetchStatus(ctx, a.PaymentID)
	if err != nil {
		if errors.Is(err, domain.ErrUnknownPayment) {
			// Providers index new payments with a delay: not knowing it yet
			// is expected for a moment, and worth noticing if it lasts.
			w.log.WarnContext(ctx, "provider does not know the notified payment (yet); retrying",
				"provider", a.Provider, "payment_id", a.PaymentID, "attempt", job.Attempt, "max_attempts", job.MaxAttempts)
		}
		return fmt.Errorf("jobs: enrich %s/%s: %w", a.Provider, a.PaymentID, err)
	}
	if err := checkObservation(a, obs); err != nil {
		return err
	}
	return w.record(ctx, a, obs)
}

// checkObservation refuses an observation that would land in the wrong
// stream or collapse with every other one (no ID).
func checkObservation(a EnrichArgs, obs *domain.PaymentStatusObserved) error {
	switch {
	case obs == nil:
		return fmt.Errorf("jobs: enrich %s/%s: status fetcher returned nothing", a.Provider, a.PaymentID)
	case obs.Provider != a.Provider || obs.ProviderPaymentID != a.PaymentID:
		return fmt.Errorf("jobs: enrich %s/%s: status fetcher returned payment %s/%s",
			a.Provider, a.PaymentID, obs.Provider, obs.ProviderPaymentID)
	case obs.ProviderEventID == "":
		return fmt.Errorf("jobs: enrich %s/%s: observation has no provider event ID", a.Provider, a.PaymentID)
	}
	return nil
}

// record appends the observation. A duplicate is success: the same state
// was already recorded, by an earlier run of this job or by another fetch.
func (w *enrichWorker) record(ctx context.Context, a EnrichArgs, obs *domain.PaymentStatusObserved) error {
	data, err := w.codec.Encode(obs, eventstore.Metadata{
		Provider: obs.Provider, ProviderEventType: obs.ProviderEventType, ReceivedAt: w.now().UTC()})
	if err != nil {
		return fmt.Errorf("jobs: enrich %s/%s: %w", a.Provider, a.PaymentID, err)
	}
	stream := eventstore.PaymentStream(a.Provider, a.PaymentID)
	for attempt := 1; ; attempt++ {
		res, err := w.store.Append(ctx, stream, eventstore.Any(), []eventstore.EventData{data})
		if err == nil {
			w.log.DebugContext(ctx, "recorded the provider's view", "stream", stream,
				"status", obs.Status, "provider_status", obs.ProviderStatus, "duplicate", res.Duplicate)
			return nil
		}
		if !errors.Is(err, domain.ErrConflict) || attempt == maxAppendAttempts {
			return fmt.Errorf("jobs: enrich %s/%s: append: %w", a.Provider, a.PaymentID, err)
		}
		if err := backoff.Sleep(ctx, backoff.Exponential{Min: 10 * time.Millisecond, Max: 40 * time.Millisecond}.Delay(attempt)); err != nil {
			return fmt.Errorf("jobs: enrich %s/%s: append: %w", a.Provider, a.PaymentID, err)
		}
	}
}
