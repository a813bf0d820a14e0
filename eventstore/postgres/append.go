package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// maxAppendCalls bounds how often Append calls es_append for one batch when
// concurrent appenders keep winning (the function also retries inside).
const maxAppendCalls = 10

// appendSQL is the whole append: one statement, so one round trip (the
// statement is prepared once per connection by pgx's cache). See
// migrations/00002_eventstore.sql for the outcomes and 00004 for the stream
// lock it takes.
const appendSQL = `SELECT outcome, last_revision, commit_tx, prepare_seq
	FROM es_append($1, $2, $3, $4, $5, $6)`

// Expected revisions as es_append takes them.
const (
	sqlExpectAny      int64 = -2
	sqlExpectNoStream int64 = -1
)

// appendCall is one batch, already validated and laid out as es_append's
// array arguments.
type appendCall struct {
	op       string
	stream   string
	expected eventstore.ExpectedRevision
	ids      []uuid.UUID
	types    []string
	data     [][]byte
	meta     [][]byte
}

// Append writes events to stream at consecutive revisions, all or nothing,
// in one round trip unless it races (see eventstore.Store for the
// semantics). A single event, the webhook case, is appended by one plain
// statement (appendSingle); batches and the rare ambiguous single append go
// through es_append. Races lost with Any are retried a bounded number of times,
// then reported as domain.ErrConflict. An event ID stored in another stream
// is an error, not a duplicate: the same provider event about two payments
// is a bug to look at, not a repeat to drop.
//
// Under load, single-event appends with any revision that wait at the same
// time share one transaction (see group); the answers are the same.
func (s *Store) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) (eventstore.AppendResult, error) {
	call, err := newAppendCall(stream, expected, events)
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	if s.group != nil && len(call.ids) == 1 && expected.IsAny() {
		return s.group.append(ctx, call)
	}
	return s.appendDirect(ctx, call)
}

// appendDirect appends call in a transaction of its own.
func (s *Store) appendDirect(ctx context.Context, call appendCall) (eventstore.AppendResult, error) {
	for range maxAppendCalls {
		if len(call.ids) == 1 {
			res, settled, err := s.appendSingle(ctx, call)
			if settled {
				return res, err
			}
		}
		res, again, err := s.appendOnce(ctx, call)
		if !again {
			return res, err
		}
	}
	return eventstore.AppendResult{}, fmt.Errorf("%s: %d attempts lost to concurrent appends: %w", call.op, maxAppendCalls, domain.ErrConflict)
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
		c.ids = append(c.ids, e.ID)
		c.types = append(c.types, e.Type)
		c.data = append(c.data, e.Data)
		c.meta = append(c.meta, nilIfEmpty(e.Metadata))
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

// appendOnce calls es_append once. again reports that nothing was written
// and a new call (a new transaction) may succeed.
func (s *Store) appendOnce(ctx context.Context, c appendCall) (res eventstore.AppendResult, again bool, err error) {
	var (
		outcome          string
		rev, txID, seqNo *int64
	)
	err = s.pool.QueryRow(ctx, appendSQL, c.stream, sqlExpected(c.expected), c.ids, c.types, c.data, c.meta).
		Scan(&outcome, &rev, &txID, &seqNo)
	if err != nil {
		return c.classifyError(err)
	}
	switch {
	case outcome == "appended" && rev != nil && txID != nil && seqNo != nil:
		return eventstore.AppendResult{
			Revision: uint64(*rev),
			Position: eventstore.Position{Commit: uint64(*txID), Prepare: uint64(*seqNo)},
		}, false, nil
	case outcome == "duplicate" && rev != nil:
		return eventstore.AppendResult{Duplicate: true, Revision: uint64(*rev)}, false, nil
	case outcome == "conflict" && rev != nil:
		return res, false, c.conflict(*rev)
	case outcome == "retry":
		return res, true, nil
	}
	return res, false, fmt.Errorf("%s: es_append returned unexpected outcome %q", c.op, outcome)
}

// classifyError handles the errors es_append raises on purpose (the
// statement rolled back, nothing is written) and translates the rest.
func (c appendCall) classifyError(err error) (eventstore.AppendResult, bool, error) {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	if !ok {
		return eventstore.AppendResult{}, false, translate(c.op, err)
	}
	switch pgErr.Code {
	case "ES001": // an event of the batch is stored already: a redelivery
		rev, perr := strconv.ParseUint(pgErr.Detail, 10, 64)
		if perr != nil {
			return eventstore.AppendResult{}, false, fmt.Errorf("%s: duplicate with unreadable revision %q: %w", c.op, pgErr.Detail, err)
		}
		return eventstore.AppendResult{Duplicate: true, Revision: rev}, false, nil
	case "ES002": // a concurrent append took one of the batch's revisions
		if c.expected.IsAny() {
			return eventstore.AppendResult{}, true, nil
		}
		return eventstore.AppendResult{}, false, fmt.Errorf("%s: expected %s, a concurrent append moved the stream: %w", c.op, c.expected, domain.ErrConflict)
	case "40P01", "40001": // deadlock or serialization failure: rolled back, so try again
		return eventstore.AppendResult{}, true, nil
	}
	return eventstore.AppendResult{}, false, translate(c.op, err)
}

func (c appendCall) conflict(head int64) error {
	current := "no stream"
	if head >= 0 {
		current = strconv.FormatInt(head, 10)
	}
	return fmt.Errorf("%s: expected %s, stream at %s: %w", c.op, c.expected, current, domain.ErrConflict)
}
