package projections

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// errUndecodable marks an event the runner must not skip: its type is not in
// the catalogue or its data does not decode into a placeable payment event.
var errUndecodable = errors.New("projections: undecodable event")

// decoded is a recorded event with its domain event and that event's Meta,
// which places it in its payment.
type decoded struct {
	rec   *eventstore.RecordedEvent
	event domain.Event
	meta  domain.Meta
}

// apply applies batch on top of the committed checkpoint from, in one
// transaction, and returns the new committed checkpoint. When an event does
// not decode, the messages before it are applied and the error is returned
// with the checkpoint just before the event, so the projection stops there.
func (r *Runner) apply(ctx context.Context, from eventstore.Position, batch []eventstore.Message) (eventstore.Position, error) {
	start := time.Now()
	events, to, stopErr := r.decodeBatch(from, batch)
	if len(events) == 0 && to == from {
		return from, stopErr
	}
	if err := r.writeBatch(ctx, from, to, events); err != nil {
		// The commit may or may not have happened: what the cache holds
		// can no longer be trusted to equal payment_events.
		r.histories.purge()
		return from, fmt.Errorf("projections: apply %d events after %s: %w", len(events), from, err)
	}
	var last time.Time
	if len(events) > 0 {
		last = events[len(events)-1].rec.RecordedAt
	}
	r.cfg.Metrics.committed(len(events), last, start)
	return to, stopErr
}

// errStaleFresh says a payment planned as fresh (see plan.fresh) was not:
// payment_events held other events of it. Its journal entries may already
// be queued from the wrong history, and entries are never deleted, so the
// batch is rolled back and written again with every history read back.
var errStaleFresh = errors.New("projections: a new payment had stored events")

// writeBatch writes the batch (see write), again with every history read
// back when a fresh payment turns out to be stale.
func (r *Runner) writeBatch(ctx context.Context, from, to eventstore.Position, events []decoded) error {
	keys := affectedPayments(events)
	err := r.write(ctx, from, to, events, keys, r.histories.plan(keys, events))
	if errors.Is(err, errStaleFresh) {
		err = r.write(ctx, from, to, events, keys, plan{histories: map[paymentKey][]recorded{}, missing: keys})
	}
	return err
}

// write commits the batch in one transaction: the checkpoint's
// compare-and-set, the events into payment_events (and the reconciliation
// checks among them into the reconciliation log), every touched payment
// re-folded from its full history into payments, its journal entries
// posted by the batch's arrivals into the ledger, and the follow-up's jobs.
// Round trips are much of a small batch's cost, so its statements are
// pipelined: the first round trip carries BEGIN, the compare-and-set, the history insert
// and, when every touched payment's history is known without reading it
// (kept in memory, or the payment is new: see plan), the upsert and the
// ledger; when some are not, it reads theirs back instead and the upsert and
// the ledger take a second. Then the follow-up's statements, if any, and COMMIT.
func (r *Runner) write(ctx context.Context, from, to eventstore.Position, events []decoded, keys []paymentKey, pl plan) error {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	queueAdvanceCheckpoint(b, r.cfg.Name, from, to)
	if len(events) > 0 {
		queueInsertHistory(b, events)
		queueInsertChecks(b, events)
	}
	var stale []paymentKey
	if len(pl.fresh) > 0 {
		queueCheckFresh(b, pl.fresh, pl.histories, &stale)
	}
	if len(pl.missing) > 0 {
		queueLoadHistories(b, r.codec, pl.missing, pl.histories)
	} else if err := queueReadModels(b, keys, pl.histories, events); err != nil {
		return err
	}
	br := r.pool.SendBatch(ctx, b)
	tx := br.Tx()
	// After a commit this does nothing; on any failure it ends the
	// transaction (or the connection, if ctx is done).
	defer func() { _ = tx.Rollback(ctx) }()
	if err := br.Close(); err != nil {
		return err
	}
	if len(stale) > 0 {
		return fmt.Errorf("%d payments: %w", len(stale), errStaleFresh)
	}
	if len(pl.missing) > 0 {
		// The histories were just read back: upsert and post now.
		b := &pgx.Batch{}
		if err := queueReadModels(b, keys, pl.histories, events); err != nil {
			return err
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
	}
	if err := r.followUp(ctx, tx, events); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	r.histories.store(pl.histories)
	return nil
}

// queueReadModels queues the upsert of every key's payments row and the
// insert of its ledger entries, from the full histories hs.
func queueReadModels(b *pgx.Batch, keys []paymentKey, hs map[paymentKey][]recorded, events []decoded) error {
	if len(keys) == 0 {
		return nil
	}
	if err := queueUpsertPayments(b, fold(keys, hs)); err != nil {
		return err
	}
	return queueInsertLedger(b, keys, hs, events)
}

// decodeBatch decodes the batch's events up to the first one that does not
// decode, and returns them with the position of the last message before it.
// Positions only move forward: a message at or before from changes nothing.
func (r *Runner) decodeBatch(from eventstore.Position, batch []eventstore.Message) ([]decoded, eventstore.Position, error) {
	filter := eventstore.Filter{StreamPrefix: eventstore.PaymentStreamPrefix}
	events := make([]decoded, 0, len(batch))
	to := from
	for _, m := range batch {
		pos := m.Checkpoint
		if m.Event != nil {
			pos = m.Event.Position
			// Defensive: a store that ignores the filter must not make us
			// stop on another aggregate's events.
			if filter.Match(m.Event.Stream) {
				d, err := r.decode(m.Event)
				if err != nil {
					return events, to, err
				}
				events = append(events, d)
			}
		}
		if pos.Compare(to) > 0 {
			to = pos
		}
	}
	return events, to, nil
}

// decode turns a recorded event into its domain event, which must name its
// payment (Meta is where provider and payment ID travel; stream names are
// never parsed).
func (r *Runner) decode(rec *eventstore.RecordedEvent) (decoded, error) {
	e, err := r.codec.DecodeData(rec.Type, rec.Data)
	if err == nil && (e.EventMeta().Provider == "" || e.EventMeta().ProviderPaymentID == "") {
		err = errors.New("no provider or provider payment ID in the event data")
	}
	if err != nil {
		return decoded{}, fmt.Errorf("%w %s (type %q, stream %s, revision %d, position %s): %w",
			errUndecodable, rec.ID, rec.Type, rec.Stream, rec.Revision, rec.Position, err)
	}
	return decoded{rec: rec, event: e, meta: e.EventMeta()}, nil
}
