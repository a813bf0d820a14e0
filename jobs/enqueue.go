package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
)

// maxChain bounds the rounds of one EnqueueTx. Each round past the first
// means another fetch of the same payment is running right now, which the
// worker count (and the rescue of jobs of dead processes) bounds; hitting
// the limit fails the batch, which the projector retries.
const maxChain = 32

// Enqueuer enqueues the jobs the event stream calls for, in the caller's
// transaction. It satisfies projections.FollowUp.
type Enqueuer struct {
	client *river.Client[pgx.Tx]
	enrich map[string]bool
	fees   map[string]bool
}

// EnqueueTx inserts, in tx, the jobs events call for: one enrichment fetch
// per payment they notify of, and one fee fetch per payment of a fee
// provider they report a success or a notification of (see enqueueFees). A
// fetch not yet finished absorbs a new one; a fetch already
// running may have read the provider before the change now notified, so the
// new notification enqueues a fetch After it. A rebuild re-fetches each
// notified payment once: harmless, content-derived IDs store a state once.
func (e *Enqueuer) EnqueueTx(ctx context.Context, tx pgx.Tx, events []domain.Event) error {
	if err := e.enqueueFees(ctx, tx, events); err != nil {
		return err
	}
	pending := e.fetches(events)
	for round := 0; len(pending) > 0; round++ {
		if round == maxChain {
			return fmt.Errorf("jobs: enqueue: more than %d fetches of %s/%s running at once",
				maxChain, pending[0].Provider, pending[0].PaymentID)
		}
		var err error
		if pending, err = e.insert(ctx, tx, pending); err != nil {
			return err
		}
	}
	return nil
}

// fetches returns one EnrichArgs per notified payment of an enriched
// provider, in order of first notification.
func (e *Enqueuer) fetches(events []domain.Event) []EnrichArgs {
	var out []EnrichArgs
	seen := map[EnrichArgs]bool{}
	for _, ev := range events {
		n, ok := ev.(*domain.PaymentNotified)
		if !ok || !e.enrich[n.Provider] {
			continue
		}
		a := EnrichArgs{Provider: n.Provider, PaymentID: n.ProviderPaymentID}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// insert inserts args in one statement and returns the fetches to chain
// after those that were found running.
func (e *Enqueuer) insert(ctx context.Context, tx pgx.Tx, args []EnrichArgs) ([]EnrichArgs, error) {
	params := make([]river.InsertManyParams, len(args))
	for i, a := range args {
		params[i] = river.InsertManyParams{Args: a}
	}
	res, err := e.client.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, fmt.Errorf("jobs: enqueue %d fetches: %w", len(args), err)
	}
	var next []EnrichArgs
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate || r.Job.State != rivertype.JobStateRunning {
			continue
		}
		// Read the arguments back from the row rather than trusting the
		// order of the results.
		var a EnrichArgs
		if err := json.Unmarshal(r.Job.EncodedArgs, &a); err != nil {
			return nil, fmt.Errorf("jobs: enqueue: decode job %d: %w", r.Job.ID, err)
		}
		next = append(next, EnrichArgs{Provider: a.Provider, PaymentID: a.PaymentID, After: r.Job.ID})
	}
	return next, nil
}
