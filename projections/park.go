package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// Decoder turns a recorded event's type and data into a domain event
// (*eventstore.Codec). RunnerConfig.Decoder replaces it in tests.
type Decoder interface {
	DecodeData(typ string, data []byte) (domain.Event, error)
}

// retryPoll is how often the session looks for re-projection requests.
const retryPoll = time.Second

// parking is an event whose stream the batch parks, with why.
type parking struct {
	rec   *eventstore.RecordedEvent
	cause string
	err   error
}

// parkSQL records the dead letter and parks its stream in one statement,
// queued in the batch's transaction: $1..$10 are recordArgs, then stream,
// provider, payment ID, event ID, position and time. A stream parked
// already keeps its first row.
const parkSQL = `WITH d AS (` + recordDeadLetterSQL + `)
INSERT INTO parked_streams (stream, provider, provider_payment_id, dead_letter_id, event_id, position, parked_at)
SELECT $11, $12, $13, d.id, $14, $15, $8 FROM d
ON CONFLICT (stream) DO NOTHING`

// failure is the dead letter of p.
func (p parking) failure(at time.Time) (domain.DeadLetterFailure, string, string) {
	// The IDs travel in the event body; best effort, data may not decode.
	var ids struct {
		Provider          string `json:"provider"`
		ProviderPaymentID string `json:"provider_payment_id"`
	}
	_ = json.Unmarshal(p.rec.Data, &ids)
	payload, _ := json.Marshal(map[string]any{"stream": p.rec.Stream, "event_id": p.rec.ID.String(),
		"revision": p.rec.Revision, "position": p.rec.Position.String(), "type": p.rec.Type})
	return domain.DeadLetterFailure{
		Key: "projection:" + p.rec.Stream, Kind: domain.DeadLetterProjection, Cause: p.cause,
		Provider: ids.Provider, ProviderPaymentID: ids.ProviderPaymentID, Streams: []string{p.rec.Stream},
		At: at, Error: p.err.Error(), Payload: payload,
	}, ids.Provider, ids.ProviderPaymentID
}

// queuePark queues parkSQL for p.
func queuePark(b *pgx.Batch, p parking, at time.Time) {
	f, provider, id := p.failure(at)
	args := append(recordArgs(f), p.rec.Stream, provider, id, p.rec.ID, p.rec.Position.String())
	queueExec(b, "park "+p.rec.Stream, nil, parkSQL, args...)
}

// loadParked reads the parked streams (at session start).
func (r *Runner) loadParked(ctx context.Context) error {
	rows, err := r.pool.Query(ctx, `SELECT stream FROM parked_streams`)
	if err != nil {
		return fmt.Errorf("projections: load parked streams: %w", err)
	}
	streams, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("projections: load parked streams: %w", err)
	}
	r.parked = make(map[string]bool, len(streams))
	for _, s := range streams {
		r.parked[s] = true
	}
	return nil
}

// reprojectRequested re-projects every parked stream whose retry was
// requested. Only infrastructure failures are returned: a stream that
// fails again stays parked with its dead letter open.
func (r *Runner) reprojectRequested(ctx context.Context) error {
	if r.cfg.Streams == nil {
		return nil
	}
	rows, err := r.pool.Query(ctx, `SELECT stream FROM parked_streams WHERE retry_requested ORDER BY parked_at`)
	if err != nil {
		return fmt.Errorf("projections: parked streams to retry: %w", err)
	}
	streams, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("projections: parked streams to retry: %w", err)
	}
	for _, s := range streams {
		if err := r.reproject(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// reproject projects parked stream from the store, as the live path would
// have: history, payment row, ledger entries, checks and follow-ups, and
// unparks it, in one transaction. An event that still does not decode, or
// a payment the read model rejects, parks it again.
func (r *Runner) reproject(ctx context.Context, stream string) error {
	recs, err := r.cfg.Streams.ReadStream(ctx, stream)
	if err != nil {
		return fmt.Errorf("projections: read parked stream %s: %w", stream, err)
	}
	events := make([]decoded, 0, len(recs))
	for i := range recs {
		d, err := r.decode(&recs[i])
		if err != nil {
			return r.parkAgain(ctx, parking{rec: &recs[i], cause: domain.CauseUndecodable, err: err})
		}
		events = append(events, d)
	}
	keys := affectedPayments(events)
	err = safely(func() error { return r.writeStream(ctx, stream, keys, events) })
	for _, k := range keys {
		r.histories.remove(k)
	}
	if err == nil {
		delete(r.parked, stream)
		r.log.InfoContext(ctx, "re-projected a parked stream", "stream", stream, "events", len(events))
		return nil
	}
	if (!unapplicable(err) && !errors.Is(err, errFoldPanic)) || len(recs) == 0 {
		return fmt.Errorf("projections: re-project %s: %w", stream, err)
	}
	return r.parkAgain(ctx, parking{rec: &recs[len(recs)-1], cause: domain.CauseUnapplicable, err: err})
}

// writeStream is reproject's transaction.
func (r *Runner) writeStream(ctx context.Context, stream string, keys []paymentKey, events []decoded) error {
	return pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		hs := map[paymentKey][]recorded{}
		b := &pgx.Batch{}
		if len(events) > 0 {
			queueInsertHistory(b, events)
			queueInsertChecks(b, events)
			queueLoadHistories(b, r.codec, keys, hs)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		b = &pgx.Batch{}
		if err := queueReadModels(b, keys, hs, events); err != nil {
			return err
		}
		queueExec(b, "unpark "+stream, nil, `DELETE FROM parked_streams WHERE stream = $1`, stream)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		return r.followUp(ctx, tx, events)
	})
}

// parkAgain keeps stream parked after a failed retry: its dead letter
// counts one more attempt and is open again, and the retry is done.
func (r *Runner) parkAgain(ctx context.Context, p parking) error {
	r.log.WarnContext(ctx, "a parked stream failed again", "stream", p.rec.Stream, "err", p.err)
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		f, _, _ := p.failure(time.Now())
		id, err := recordDeadLetter(ctx, tx, f)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE parked_streams SET retry_requested = false, dead_letter_id = $2 WHERE stream = $1`,
			p.rec.Stream, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("projections: park %s again: %w", p.rec.Stream, err)
	}
	return nil
}

// unapplicable reports whether err is the read model rejecting a payment's
// data (Postgres classes 22, data exception, and 23, constraint violation)
// rather than an infrastructure failure.
func unapplicable(err error) bool {
	var pgErr interface{ SQLState() string }
	if !errors.As(err, &pgErr) {
		return false
	}
	c := pgErr.SQLState()
	return len(c) == 5 && (c[:2] == "22" || c[:2] == "23")
}

// remove forgets k: its history changed outside the live path.
func (h *histories) remove(k paymentKey) {
	if h.lru != nil {
		h.lru.Remove(k)
	}
}

// errFoldPanic is a panic while folding or posting a batch's payments: a
// fault of some payment's data, found and parked by isolate.
var errFoldPanic = errors.New("projections: panic while folding")

// safely runs f, turning a panic into errFoldPanic.
func safely(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errFoldPanic, p)
		}
	}()
	return f()
}

// isolate writes the batch payment by payment, each under a savepoint of
// one transaction that also advances the checkpoint and parks parks: a
// payment the read model rejects (see unapplicable) or whose fold panics is
// rolled back to its savepoint and parked, cause unapplicable; the rest
// commit. It returns every parking, the given ones included. Any other
// error fails the whole batch, to be retried.
func (r *Runner) isolate(ctx context.Context, from, to eventstore.Position, events []decoded, parks []parking) ([]parking, error) {
	byKey := map[paymentKey][]decoded{}
	for _, d := range events {
		k := paymentKey{d.meta.Provider, d.meta.ProviderPaymentID}
		byKey[k] = append(byKey[k], d)
	}
	var applied []decoded
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		now := time.Now()
		b := &pgx.Batch{}
		queueAdvanceCheckpoint(b, r.cfg.Name, from, to)
		for _, p := range parks {
			queuePark(b, p, now)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		for _, k := range affectedPayments(events) {
			evs := byKey[k]
			err := safely(func() error { return r.writePayment(ctx, tx, k, evs) })
			if err == nil {
				applied = append(applied, evs...)
				continue
			}
			if !unapplicable(err) && !errors.Is(err, errFoldPanic) {
				return err
			}
			if _, rbErr := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT payment`); rbErr != nil {
				return rbErr
			}
			p := parking{rec: evs[0].rec, cause: domain.CauseUnapplicable, err: err}
			b := &pgx.Batch{}
			queuePark(b, p, now)
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			parks = append(parks, p)
		}
		return r.followUp(ctx, tx, applied)
	})
	if err != nil {
		return nil, fmt.Errorf("projections: apply %d events after %s payment by payment: %w", len(events), from, err)
	}
	return parks, nil
}

// writePayment writes one payment's events of a batch under savepoint
// "payment", its history read back.
func (r *Runner) writePayment(ctx context.Context, tx pgx.Tx, k paymentKey, evs []decoded) error {
	hs := map[paymentKey][]recorded{}
	b := &pgx.Batch{}
	b.Queue(`SAVEPOINT payment`)
	queueInsertHistory(b, evs)
	queueInsertChecks(b, evs)
	queueLoadHistories(b, r.codec, []paymentKey{k}, hs)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	b = &pgx.Batch{}
	if err := queueReadModels(b, []paymentKey{k}, hs, evs); err != nil {
		return err
	}
	b.Queue(`RELEASE SAVEPOINT payment`)
	return tx.SendBatch(ctx, b).Close()
}
