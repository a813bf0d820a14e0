package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
)

// FeeFetcher is a provider's fee client (Stripe's balance transactions):
// FetchFee returns the fee the provider states for a payment as a
// domain.FeeAssessed with a content-derived ProviderEventID. A nil fee and a
// nil error mean the provider does not state it yet (Stripe's balance
// transaction is null for up to an hour with asynchronous capture): the job
// asks again later. A payment the provider does not know wraps
// domain.ErrUnknownPayment.
type FeeFetcher interface {
	Name() string
	FetchFee(ctx context.Context, providerPaymentID string) (*domain.FeeAssessed, error)
}

// FeeKind is the job kind of FeeArgs. It is stored in every job row:
// renaming it strands the jobs already queued.
const FeeKind = "fetch_fee"

// FeeArgs asks for the fee of one payment to be fetched and recorded.
type FeeArgs struct {
	Provider  string `json:"provider"`
	PaymentID string `json:"payment_id"`
}

// Kind implements river.JobArgs.
func (FeeArgs) Kind() string { return FeeKind }

// FeeQueue is the River queue of fee fetches. It has its own workers so
// that fee fetches, which wait and retry for up to hours and come one per
// success, never delay the status fetches that decide a payment's state
// (under saturation load they did: bench-load in BENCHMARKS.md).
const FeeQueue = "fees"

// InsertOpts implements river.JobArgsWithInsertOpts: one fee fetch per
// payment while one is waiting, running or done. A balance transaction's fee
// does not change once stated, so unlike enrichment a completed fetch
// absorbs later triggers (until River's cleaner deletes it, a day later);
// only a dead-lettered or cancelled fetch lets a new trigger start afresh.
func (FeeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: FeeQueue, UniqueOpts: river.UniqueOpts{
		ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled,
			rivertype.JobStateCompleted},
	}}
}

// errFeeNotStated fails an attempt whose fee the provider does not state
// yet: River retries it with the jobs' backoff, and dead-letters it after
// the last attempt, which bounds the wait (see DefaultMaxAttempts).
var errFeeNotStated = errors.New("the provider does not state the fee yet")

// feeWorker works FeeArgs jobs.
type feeWorker struct {
	river.WorkerDefaults[FeeArgs]
	fetchers map[string]FeeFetcher
	rec      *recorder
	log      *slog.Logger
}

// Work fetches the payment's fee and appends it. Any error, "not stated
// yet" included, makes River retry the job with backoff.
func (w *feeWorker) Work(ctx context.Context, job *river.Job[FeeArgs]) error {
	a := job.Args
	op := "jobs: fetch fee of " + a.Provider + "/" + a.PaymentID
	f, ok := w.fetchers[a.Provider]
	if !ok {
		return fmt.Errorf("%s: no fee fetcher for provider %q", op, a.Provider)
	}
	fee, err := f.FetchFee(ctx, a.PaymentID)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if fee == nil {
		if job.Attempt >= job.MaxAttempts {
			w.log.WarnContext(ctx, "giving up on a fee the provider never stated; the job is dead-lettered",
				"provider", a.Provider, "payment_id", a.PaymentID, "attempts", job.Attempt, "since", job.CreatedAt)
		}
		return fmt.Errorf("%s: %w", op, errFeeNotStated)
	}
	if err := checkFact(op, a.Provider, a.PaymentID, fee); err != nil {
		return err
	}
	return w.rec.record(ctx, op, fee)
}
