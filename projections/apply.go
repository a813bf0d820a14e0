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
// transaction, and returns the new committed checkpoint. An event that does
// not decode parks its stream in that transaction (see parking), and the
// events of parked streams are skipped.
func (r *Runner) apply(ctx context.Context, from eventstore.Position, batch []eventstore.Message) (eventstore.Position, error) {
	start := time.Now()
	events, parks, to := r.decodeBatch(from, batch)
	if len(events) == 0 && len(parks) == 0 && to == from {
		return from, nil
	}
	err := safely(func() error { return r.writeBatch(ctx, from, to, events, parks) })
	if err != nil {
		// The commit may or may not have happened: what the cache holds
		// can no longer be trusted to equal payment_events.
		r.histories.purge()
		if !unapplicable(err) && !errors.Is(err, errFoldPanic) {
			return from, fmt.Errorf("projections: apply %d events after %s: %w", len(events), from, err)
		}
		// Some payment's data is at fault: find it, park it, apply the rest.
		if parks, err = r.isolate(ctx, from, to, events, parks); err != nil {
			return from, err
		}
	}
	var last time.Time
	if len(events) > 0 {
		last = events[len(events)-1].rec.RecordedAt
	}
	r.cfg.Metrics.committed(len(events), last, start)
	for _, p := range parks {
		r.parked[p.rec.Stream] = true
		r.log.WarnContext(ctx, "parked a payment stream", "stream", p.rec.Stream, "cause", p.cause, "err", p.err)
	}
	return to, nil
}

// errStaleFresh says a payment planned as fresh (see plan.fresh) was not:
// payment_events held other events of it. Its journal entries may already
// be queued from the wrong history, and entries are never deleted, so the
// batch is rolled back and written again with every history read back.
var errStaleFresh = errors.New("projections: a new payment had stored events")

// writeBatch writes the batch (see write), again with every history read
// back when a fresh payment turns out to be stale.
func (r *Runner) writeBatch(ctx context.Context, from, to eventstore.Position, events []decoded, parks []parking) error {
	keys := affectedPayments(events)
	err := r.write(ctx, from, to, events, parks, keys, r.histories.plan(keys, events))
	if errors.Is(err, errStaleFresh) {
		err = r.write(ctx, from, to, events, parks, keys, plan{histories: map[paymentKey][]recorded{}, missing: keys})
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
func (r *Runner) write(ctx context.Context, from, to eventstore.Position, events []decoded, parks []parking, keys []paymentKey, pl plan) error {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	queueAdvanceCheckpoint(b, r.cfg.Name, from, to)
	now := time.Now()
	for _, p := range parks {
		queuePark(b, p, now)
	}
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

// decodeBatch decodes the batch's events and returns them, the events that
// park their stream (the first undecodable one of a stream not parked yet),
// and the position of the batch's last message. Events of parked streams,
// and the events after the one that parks a stream, are skipped: they
// wait with the stream (those before it are applied, whatever the batch
// boundaries).
// Positions only move forward: a message at or before from changes nothing.
func (r *Runner) decodeBatch(from eventstore.Position, batch []eventstore.Message) ([]decoded, []parking, eventstore.Position) {
	filter := eventstore.Filter{StreamPrefix: eventstore.PaymentStreamPrefix}
	events := make([]decoded, 0, len(batch))
	var parks []parking
	parkedNow := map[string]bool{}
	to := from
	for _, m := range batch {
		pos := m.Checkpoint
		if m.Event != nil {
			pos = m.Event.Position
			// Defensive: a store that ignores the filter must not make us
			// project another aggregate's events.
			if s := m.Event.Stream; filter.Match(s) && !r.parked[s] && !parkedNow[s] && pos.Compare(from) > 0 {
				d, err := r.decode(m.Event)
				if err != nil {
					parks = append(parks, parking{rec: m.Event, cause: domain.CauseUndecodable, err: err})
					parkedNow[s] = true
				} else {
					events = append(events, d)
				}
			}
		}
		if pos.Compare(to) > 0 {
			to = pos
		}
	}
	return events, parks, to
}

// decode turns a recorded event into its domain event, which must name its
// payment (Meta is where provider and payment ID travel; stream names are
// never parsed).
func (r *Runner) decode(rec *eventstore.RecordedEvent) (decoded, error) {
	e, err := r.decoder.DecodeData(rec.Type, rec.Data)
	if err == nil && (e.EventMeta().Provider == "" || e.EventMeta().ProviderPaymentID == "") {
		err = errors.New("no provider or provider payment ID in the event data")
	}
	if err != nil {
		return decoded{}, fmt.Errorf("%w %s (type %q, stream %s, revision %d, position %s): %w",
			errUndecodable, rec.ID, rec.Type, rec.Stream, rec.Revision, rec.Position, err)
	}
	return decoded{rec: rec, event: e, meta: e.EventMeta()}, nil
}
