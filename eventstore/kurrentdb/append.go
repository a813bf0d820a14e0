package kurrentdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// Append writes events to stream at consecutive revisions, all or nothing
// (see eventstore.Store for the semantics and the package comment for how
// duplicates are kept out without trusting the server's Any).
//
// It reads the stream; a batch with an event already stored is a Duplicate,
// whatever the expected revision. Otherwise it appends with an exact
// expectation (the revision read, for Any). When another process appended
// in between, the server refuses, and Append reads and decides again: up to
// ConflictAttempts times for Any, once for an explicit expectation, which
// then fails with domain.ErrConflict unless the batch is now stored.
func (s *Store) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) (eventstore.AppendResult, error) {
	op := "kurrentdb: append " + stream
	proposed, err := proposedEvents(op, events)
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	unlock, err := s.locks.lock(ctx, stream)
	if err != nil {
		return eventstore.AppendResult{}, fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()

	var conflict error
	for range s.opts.ConflictAttempts {
		stored, err := s.read(ctx, op, stream)
		if err != nil {
			return eventstore.AppendResult{}, err
		}
		if rev, ok := duplicateOf(stored, events); ok {
			return eventstore.AppendResult{Duplicate: true, Revision: rev}, nil
		}
		if conflict != nil {
			return eventstore.AppendResult{}, conflict // an explicit expectation, and not a duplicate
		}
		res, err := s.write(ctx, op, stream, expectation(expected, stored), proposed)
		if !errors.Is(err, domain.ErrConflict) {
			return res, err
		}
		if !expected.IsAny() {
			// The stream moved; the one read left says whether it moved
			// because a concurrent append stored this very batch.
			conflict = err
		}
	}
	if conflict != nil {
		return eventstore.AppendResult{}, conflict
	}
	return eventstore.AppendResult{}, fmt.Errorf("%s: %d attempts lost to concurrent appends: %w", op, s.opts.ConflictAttempts, domain.ErrConflict)
}

// write appends once, retrying a call that got no answer with the same
// expected revision.
func (s *Store) write(ctx context.Context, op, stream string, want esdb.ExpectedRevision, proposed []esdb.EventData) (eventstore.AppendResult, error) {
	wr, err := retryResult(ctx, s, op, nil, func(ctx context.Context, c *esdb.Client) (*esdb.WriteResult, error) {
		return c.AppendToStream(ctx, stream, esdb.AppendToStreamOptions{ExpectedRevision: want}, proposed...)
	})
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	return eventstore.AppendResult{
		Revision: wr.NextExpectedVersion, // the client's name for the last written revision
		Position: eventstore.Position{Commit: wr.CommitPosition, Prepare: wr.PreparePosition},
	}, nil
}

// expectation is what the server must find: for Any, the head that was just
// read (so the append fails if anything landed since, instead of trusting
// the server's best-effort duplicate check); otherwise the caller's own.
func expectation(expected eventstore.ExpectedRevision, stored []eventstore.RecordedEvent) esdb.ExpectedRevision {
	if rev, ok := expected.Revision(); ok {
		return esdb.StreamRevision{Value: rev}
	}
	if expected.IsNoStream() || len(stored) == 0 {
		return esdb.NoStream{}
	}
	return esdb.StreamRevision{Value: stored[len(stored)-1].Revision}
}

// duplicateOf reports whether any event of the batch is stored, and the
// highest revision of the stored ones.
func duplicateOf(stored []eventstore.RecordedEvent, batch []eventstore.EventData) (uint64, bool) {
	ids := make(map[uuid.UUID]bool, len(batch))
	for _, e := range batch {
		ids[e.ID] = true
	}
	var rev uint64
	found := false
	for _, e := range stored {
		if ids[e.ID] {
			rev, found = max(rev, e.Revision), true
		}
	}
	return rev, found
}

// proposedEvents validates the batch and converts it for the client.
func proposedEvents(op string, events []eventstore.EventData) ([]esdb.EventData, error) {
	if len(events) == 0 {
		return nil, domain.Invalid(op, "no events to append", nil)
	}
	seen := make(map[uuid.UUID]bool, len(events))
	proposed := make([]esdb.EventData, len(events))
	for i, e := range events {
		switch {
		case e.ID == uuid.Nil:
			return nil, domain.Invalid(op, fmt.Sprintf("event %d has no ID", i), nil)
		case seen[e.ID]:
			return nil, domain.Invalid(op, fmt.Sprintf("event %d repeats ID %s within the batch", i, e.ID), nil)
		case e.Type == "":
			return nil, domain.Invalid(op, fmt.Sprintf("event %d has no type", i), nil)
		case len(e.Data) == 0:
			return nil, domain.Invalid(op, fmt.Sprintf("event %d has no data", i), nil)
		}
		seen[e.ID] = true
		proposed[i] = esdb.EventData{
			EventID:     e.ID,
			EventType:   e.Type,
			ContentType: esdb.ContentTypeJson,
			Data:        e.Data,
			Metadata:    e.Metadata,
		}
	}
	return proposed, nil
}
