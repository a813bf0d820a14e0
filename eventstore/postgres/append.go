package postgres

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// maxAppendCalls bounds how often Append calls es_append for one batch when
// concurrent appenders keep winning (the function also retries inside).
const maxAppendCalls = 10

// appendSQL calls es_append (migrations 00002, 00004) and lays its answer
// out as an appendRow.
const appendSQL = `SELECT CASE outcome WHEN 'appended' THEN last_revision END, commit_tx, prepare_seq,
	CASE outcome WHEN 'duplicate' THEN $1 END, CASE outcome WHEN 'duplicate' THEN last_revision END,
	CASE outcome WHEN 'conflict' THEN last_revision END, outcome = 'retry'
	FROM es_append($1, $2, $3, $4, $5, $6)`

// Expected revisions as es_append takes them.
const (
	sqlExpectAny      int64 = -2
	sqlExpectNoStream int64 = -1
)

// appendCall is one batch for one stream, already validated.
type appendCall struct {
	op       string
	stream   string
	expected eventstore.ExpectedRevision
	events   []newEvent
}

// newEvent is one event of an appendCall.
type newEvent struct {
	id   uuid.UUID
	typ  string
	data []byte
	meta []byte // nil when absent: SQL NULL rather than invalid JSON
}

// eventArrays lay events out as the append functions' array arguments.
type eventArrays struct {
	ids   []uuid.UUID
	types []string
	data  [][]byte
	meta  [][]byte
}

func (a *eventArrays) add(e newEvent) {
	a.ids = append(a.ids, e.id)
	a.types = append(a.types, e.typ)
	a.data = append(a.data, e.data)
	a.meta = append(a.meta, e.meta)
}

// arrays lays c's events out for es_append.
func (c appendCall) arrays() eventArrays {
	var a eventArrays
	for _, e := range c.events {
		a.add(e)
	}
	return a
}

// Append writes events to stream at consecutive revisions, all or nothing,
// in one round trip unless it races (see eventstore.Store for the
// semantics and ARCHITECTURE.md, "Deduplication, per store", for how).
// An event ID stored in another stream is an error, not a duplicate.
func (s *Store) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) (eventstore.AppendResult, error) {
	call, err := newAppendCall(stream, expected, events)
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	if s.group != nil && len(call.events) == 1 && expected.IsAny() {
		return s.group.append(ctx, call)
	}
	return s.appendDirect(ctx, call)
}

// appendDirect appends c in a transaction of its own, calling again while
// the answer is retry, a bounded number of times.
func (s *Store) appendDirect(ctx context.Context, c appendCall) (eventstore.AppendResult, error) {
	for range maxAppendCalls {
		if len(c.events) == 1 {
			if o := s.appendSingle(ctx, c); o.kind != retry && o.kind != undecided {
				return c.answer(o)
			}
		}
		if o := s.appendOnce(ctx, c); o.kind != retry {
			return c.answer(o)
		}
	}
	return eventstore.AppendResult{}, fmt.Errorf("%s: %d attempts lost to concurrent appends: %w", c.op, maxAppendCalls, domain.ErrConflict)
}

// appendOnce calls es_append once.
func (s *Store) appendOnce(ctx context.Context, c appendCall) outcome {
	a := c.arrays()
	var r appendRow
	err := s.pool.QueryRow(ctx, appendSQL, c.stream, sqlExpected(c.expected), a.ids, a.types, a.data, a.meta).Scan(r.dest()...)
	if err != nil {
		if o := c.decodeError(err); o.kind != storedElsewhere {
			return o
		}
		return s.locateElsewhere(ctx, c)
	}
	return c.decodeRow(r)
}

// locateElsewhere finds which event of c es_append found stored in another
// stream (ES003 names neither the event nor, in a field, the stream). The
// row is committed, so a new statement sees it; a failed look-up is the
// append's failure.
func (s *Store) locateElsewhere(ctx context.Context, c appendCall) outcome {
	o := outcome{kind: storedElsewhere}
	err := s.pool.QueryRow(ctx, `SELECT event_id, stream FROM es_events WHERE event_id = ANY ($1) AND stream <> $2
		ORDER BY stream, revision LIMIT 1`, c.arrays().ids, c.stream).Scan(&o.eventID, &o.stream)
	if err != nil {
		return outcome{kind: failed, err: translate(c.op+": locate the event stored in another stream", err)}
	}
	return o
}

func newAppendCall(stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) (appendCall, error) {
	c := appendCall{op: "postgres: append " + stream, stream: stream, expected: expected}
	if len(events) == 0 {
		return c, domain.Invalid(c.op, "no events to append", nil)
	}
	seen := make(map[uuid.UUID]bool, len(events))
	for i, e := range events {
		switch {
		case e.ID == uuid.Nil:
			return c, domain.Invalid(c.op, fmt.Sprintf("event %d has no ID", i), nil)
		case seen[e.ID]:
			return c, domain.Invalid(c.op, fmt.Sprintf("event %d repeats ID %s within the batch", i, e.ID), nil)
		case e.Type == "":
			return c, domain.Invalid(c.op, fmt.Sprintf("event %d has no type", i), nil)
		case len(e.Data) == 0:
			return c, domain.Invalid(c.op, fmt.Sprintf("event %d has no data", i), nil)
		}
		seen[e.ID] = true
		c.events = append(c.events, newEvent{id: e.ID, typ: e.Type, data: e.Data, meta: nilIfEmpty(e.Metadata)})
	}
	return c, nil
}

// nilIfEmpty stores absent metadata as SQL NULL rather than invalid JSON.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func sqlExpected(e eventstore.ExpectedRevision) int64 {
	if rev, ok := e.Revision(); ok {
		return int64(rev)
	}
	if e.IsNoStream() {
		return sqlExpectNoStream
	}
	return sqlExpectAny
}
