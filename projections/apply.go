package projections

import (
	"context"
	"errors"
	"fmt"

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
	events, to, stopErr := r.decodeBatch(from, batch)
	if len(events) == 0 && to == from {
		return from, stopErr
	}
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		if err := advanceCheckpoint(ctx, tx, r.cfg.Name, from, to); err != nil {
			return err
		}
		if err := projectPayments(ctx, tx, r.codec, events); err != nil {
			return err
		}
		return r.followUp(ctx, tx, events)
	})
	if err != nil {
		return from, fmt.Errorf("projections: apply %d events after %s: %w", len(events), from, err)
	}
	return to, stopErr
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
