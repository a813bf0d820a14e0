package projections

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
)

// FollowUp enqueues the background work a batch of events causes (fetching
// a provider's view of a notified payment, …) in the batch's transaction, so
// the work exists if and only if the batch commits: a crash before the
// commit replays the batch and enqueues it again, a crash after it leaves it
// enqueued exactly once. Implementations must be idempotent per event,
// because a Reset and rebuild hands them every event again.
type FollowUp interface {
	// EnqueueTx is called after the batch's read-model writes and before the
	// commit, with the domain events of the batch in feed order. An error
	// rolls the whole batch back; the runner retries it like any other.
	EnqueueTx(ctx context.Context, tx pgx.Tx, events []domain.Event) error
}

// followUp hands the batch's events to the configured FollowUp, if any.
// Every event of the batch is passed, not only those new to payment_events:
// a batch commits once per checkpoint advance, so the two differ only when
// the feed redelivers an event, and follow-ups are idempotent anyway.
func (r *Runner) followUp(ctx context.Context, tx pgx.Tx, events []decoded) error {
	if r.cfg.FollowUp == nil || len(events) == 0 {
		return nil
	}
	evs := make([]domain.Event, len(events))
	for i, d := range events {
		evs[i] = d.event
	}
	if err := r.cfg.FollowUp.EnqueueTx(ctx, tx, evs); err != nil {
		return fmt.Errorf("follow-up of %d events: %w", len(evs), err)
	}
	return nil
}
