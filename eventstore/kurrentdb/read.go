package kurrentdb

import (
	"context"
	"errors"
	"io"
	"math"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/payledger/payledger/eventstore"
)

// readAll is the count of a whole-stream read. The server takes a signed
// 64-bit count, so "everything" is MaxInt64, not MaxUint64.
const readAll = math.MaxInt64

// ReadStream returns stream's events in revision order; a missing stream
// gives an empty slice and no error.
func (s *Store) ReadStream(ctx context.Context, stream string) ([]eventstore.RecordedEvent, error) {
	return s.read(ctx, "kurrentdb: read "+stream, stream)
}

// read is ReadStream with the caller's operation name in its errors.
func (s *Store) read(ctx context.Context, op, stream string) ([]eventstore.RecordedEvent, error) {
	events, err := retryResult(ctx, s, op, nil, func(ctx context.Context, c *esdb.Client) ([]eventstore.RecordedEvent, error) {
		return readStream(ctx, c, stream)
	})
	if err != nil {
		return nil, err
	}
	return events, nil
}

// readStream reads stream forwards from its start. Only io.EOF ends the
// read; a stream-not-found answer (which can only come first) means no
// events; every other error is returned, never taken for the end.
func readStream(ctx context.Context, c *esdb.Client, stream string) ([]eventstore.RecordedEvent, error) {
	rs, err := c.ReadStream(ctx, stream, esdb.ReadStreamOptions{Direction: esdb.Forwards, From: esdb.Start{}}, readAll)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	events := []eventstore.RecordedEvent{}
	for {
		ev, err := rs.Recv()
		switch {
		case errors.Is(err, io.EOF):
			return events, nil
		case err != nil && len(events) == 0 && isNotFound(err):
			return events, nil
		case err != nil:
			return nil, err
		}
		if rec := ev.OriginalEvent(); rec != nil {
			events = append(events, recorded(rec))
		}
	}
}

// recorded converts a client event.
func recorded(e *esdb.RecordedEvent) eventstore.RecordedEvent {
	return eventstore.RecordedEvent{
		ID:         e.EventID,
		Stream:     e.StreamID,
		Revision:   e.EventNumber,
		Type:       e.EventType,
		Data:       e.Data,
		Metadata:   e.UserMetadata,
		RecordedAt: e.CreatedDate,
		Position:   eventstore.Position{Commit: e.Position.Commit, Prepare: e.Position.Prepare},
	}
}
