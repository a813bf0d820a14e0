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

// feeTrigger is one payment whose fee to fetch; now says a notification
// asked for it (Stripe's charge.updated when the balance transaction
// appears), so a fetch waiting for its next retry should run at once.
type feeTrigger struct {
	args FeeArgs
	now  bool
}

// enqueueFees inserts one fee fetch per payment of a fee provider that
// events report a success (the fee exists once money moved) or a
// notification of. A fetch already waiting, running or done absorbs it
// (FeeArgs.InsertOpts); one waiting for a retry is made to run now when a
// notification triggered it. A rebuild enqueues a fetch per payment whose
// last one River has cleaned: harmless, content-derived IDs store a fee once.
func (e *Enqueuer) enqueueFees(ctx context.Context, tx pgx.Tx, events []domain.Event) error {
	triggers := e.feeTriggers(events)
	if len(triggers) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(triggers))
	now := map[FeeArgs]bool{}
	for i, tr := range triggers {
		params[i] = river.InsertManyParams{Args: tr.args}
		now[tr.args] = tr.now
	}
	res, err := e.client.InsertManyTx(ctx, tx, params)
	if err != nil {
		return fmt.Errorf("jobs: enqueue %d fee fetches: %w", len(params), err)
	}
	for _, r := range res {
		waiting := r.Job.State == rivertype.JobStateRetryable || r.Job.State == rivertype.JobStateScheduled
		if !r.UniqueSkippedAsDuplicate || !waiting || !now[feeArgsOf(r.Job)] {
			continue
		}
		if _, err := e.client.JobRetryTx(ctx, tx, r.Job.ID); err != nil {
			return fmt.Errorf("jobs: enqueue: run fee fetch %d now: %w", r.Job.ID, err)
		}
	}
	return nil
}

// feeTriggers returns one trigger per payment of a fee provider that events
// report a success, a notification or an observed capture (stating no fee)
// of, in order of first mention.
func (e *Enqueuer) feeTriggers(events []domain.Event) []feeTrigger {
	var out []feeTrigger
	at := map[FeeArgs]int{}
	for _, ev := range events {
		notified := false
		switch x := ev.(type) {
		case *domain.PaymentSucceeded:
		case *domain.PaymentNotified:
			notified = true
		case *domain.PaymentStatusObserved:
			// The reconciler found the money moved (its success webhook was
			// lost): the fee is fetched as after a success webhook.
			if x.StatesFee() || x.AmountCaptured <= 0 {
				continue
			}
		default:
			continue
		}
		m := ev.EventMeta()
		if !e.fees[m.Provider] {
			continue
		}
		a := FeeArgs{Provider: m.Provider, PaymentID: m.ProviderPaymentID}
		if i, seen := at[a]; seen {
			out[i].now = out[i].now || notified
			continue
		}
		at[a] = len(out)
		out = append(out, feeTrigger{args: a, now: notified})
	}
	return out
}

// feeArgsOf reads a fee job's arguments back from its row; a row that does
// not decode is not one of ours to hurry.
func feeArgsOf(j *rivertype.JobRow) FeeArgs {
	var a FeeArgs
	if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
		return FeeArgs{}
	}
	return a
}
