package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/backoff"
)

// batch is the events of one delivery that go to one stream.
type batch struct {
	stream string
	events []eventstore.EventData
}

// recorded is what the command path did with a delivery.
type recorded struct {
	eventID   uuid.UUID // ID of the delivery's first event
	streams   []string  // in the order the delivery first names them
	duplicate bool      // every append was a duplicate: nothing new stored
}

// record is the command path of a verified delivery: group its events by
// payment stream, encode them with meta, and append each group. Appends use
// eventstore.Any because the store, not a read-then-write here, rejects a
// redelivery by its deterministic event ID; a concurrent writer to the same
// stream surfaces as domain.ErrConflict and is retried a bounded number of
// times. A failure to store is KindUnavailable (503): the provider keeps the
// delivery and retries, and the retry is idempotent even when some of the
// streams were already written.
func (s *Server) record(ctx context.Context, n domain.Notification, meta eventstore.Metadata) (recorded, error) {
	batches, err := s.encode(n, meta)
	if err != nil {
		return recorded{}, err
	}
	out := recorded{eventID: batches[0].events[0].ID, duplicate: true}
	for _, b := range batches {
		res, err := s.appendRetry(ctx, meta.Provider, b)
		if err != nil {
			return recorded{}, domain.Unavailable("api: record "+n.ProviderEventID, "could not store the delivery", err)
		}
		out.streams = append(out.streams, b.stream)
		out.duplicate = out.duplicate && res.Duplicate
	}
	return out, nil
}

// encode checks that every event belongs to the verified provider and names
// a payment and a provider event (they make the stream and the event ID),
// then encodes the events grouped by stream.
func (s *Server) encode(n domain.Notification, meta eventstore.Metadata) ([]batch, error) {
	const op = "api: record"
	var batches []batch
	index := make(map[string]int)
	seen := make(map[uuid.UUID]bool, len(n.Events))
	for i, e := range n.Events {
		if e == nil {
			return nil, domain.Invalid(op, fmt.Sprintf("event %d is empty", i), nil)
		}
		m := e.EventMeta()
		switch {
		case m.Provider != meta.Provider:
			return nil, domain.Invalid(op, fmt.Sprintf("event %d belongs to provider %q, not %q", i, m.Provider, meta.Provider), nil)
		case m.ProviderPaymentID == "":
			return nil, domain.Invalid(op, fmt.Sprintf("event %d has no payment ID", i), nil)
		case m.ProviderEventID == "":
			return nil, domain.Invalid(op, fmt.Sprintf("event %d has no provider event ID", i), nil)
		}
		md := meta
		if m.ProviderEventType != "" {
			md.ProviderEventType = m.ProviderEventType
		}
		data, err := s.codec.Encode(e, md)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err) // an adapter emitting an unknown type is a bug: 500
		}
		if seen[data.ID] {
			return nil, domain.Invalid(op, fmt.Sprintf("event %d repeats fact %q", i, m.Key()), nil)
		}
		seen[data.ID] = true
		stream := eventstore.PaymentStream(m.Provider, m.ProviderPaymentID)
		j, ok := index[stream]
		if !ok {
			j = len(batches)
			index[stream] = j
			batches = append(batches, batch{stream: stream})
		}
		batches[j].events = append(batches[j].events, data)
	}
	return batches, nil
}

// appendRetry appends b, retrying with jittered exponential backoff while the
// store reports a concurrent write, for at most AppendAttempts appends.
func (s *Server) appendRetry(ctx context.Context, provider string, b batch) (eventstore.AppendResult, error) {
	var err error
	for attempt := 1; attempt <= s.cfg.AppendAttempts; attempt++ {
		if attempt > 1 {
			s.metrics.conflictRetry(provider)
			if werr := backoff.Sleep(ctx, backoff.Exponential{Min: retryBase, Max: retryMax}.Delay(attempt-1)); werr != nil {
				return eventstore.AppendResult{}, fmt.Errorf("api: append %s: %w (after %w)", b.stream, werr, err)
			}
		}
		var res eventstore.AppendResult
		res, err = s.store.Append(ctx, b.stream, eventstore.Any(), b.events)
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, domain.ErrConflict) {
			return eventstore.AppendResult{}, fmt.Errorf("api: append %s: %w", b.stream, err)
		}
	}
	return eventstore.AppendResult{}, fmt.Errorf("api: append %s: gave up after %d attempts: %w", b.stream, s.cfg.AppendAttempts, err)
}

// Backoff bounds of the conflict retry: jitter spreads writers that
// collided on a stream so they do not collide again in lockstep.
const (
	retryBase = 10 * time.Millisecond
	retryMax  = 200 * time.Millisecond
)
