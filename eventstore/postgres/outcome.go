package postgres

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// outcomeKind is what an append statement did with one event (a merged
// call) or one batch (es_append).
type outcomeKind uint8

const (
	undecided       outcomeKind = iota // nothing written, and the statement cannot tell why
	appended                           // written now
	duplicate                          // stored already in this stream: a redelivery
	storedElsewhere                    // the event ID is stored in another stream: an error
	conflict                           // the stream is not at the expected revision
	retry                              // rolled back or refused, nothing written: a new transaction may succeed
	failed                             // any other error
)

var outcomeNames = [...]string{"undecided", "appended", "duplicate", "stored elsewhere", "conflict", "retry", "failed"}

func (k outcomeKind) String() string { return outcomeNames[k] }

// outcome is an append's decoded answer, whichever statement gave it.
type outcome struct {
	kind     outcomeKind
	revision uint64              // appended: the last revision written; duplicate: the stored copy's
	position eventstore.Position // appended
	head     *int64              // conflict: the head found (-1: no stream), nil when unknown
	stream   string              // storedElsewhere: where the event is ("" when es_append raised it)
	eventID  uuid.UUID           // storedElsewhere: which event (uuid.Nil when es_append raised it)
	err      error               // failed
}

// appendRow is the row every append statement answers with, in these
// columns: each statement's SQL lays its own answer out this way.
type appendRow struct {
	revision, commitTx, prepareSeq *int64 // set when appended
	storedStream                   *string
	storedRevision                 *int64 // where the event is stored already
	conflictHead                   *int64 // set when the head contradicts the expected revision
	retry                          bool   // the head is younger than the transaction
}

// dest is r's fields in the column order of appendRow.
func (r *appendRow) dest() []any {
	return []any{&r.revision, &r.commitTx, &r.prepareSeq, &r.storedStream, &r.storedRevision, &r.conflictHead, &r.retry}
}

// decodeRow is the one decoder of an append statement's row for c. A copy
// in c's own stream is a duplicate, which wins over the expected revision.
func (c appendCall) decodeRow(r appendRow) outcome {
	switch {
	case r.revision != nil && r.commitTx != nil && r.prepareSeq != nil:
		return outcome{kind: appended, revision: uint64(*r.revision),
			position: eventstore.Position{Commit: uint64(*r.commitTx), Prepare: uint64(*r.prepareSeq)}}
	case r.storedStream != nil && r.storedRevision != nil && *r.storedStream == c.stream:
		return outcome{kind: duplicate, revision: uint64(*r.storedRevision)}
	case r.storedStream != nil:
		// Rows name a stored copy only for one-event calls (single, group).
		return outcome{kind: storedElsewhere, stream: *r.storedStream, eventID: c.events[0].id}
	case r.conflictHead != nil:
		return outcome{kind: conflict, head: r.conflictHead}
	case r.retry:
		return outcome{kind: retry}
	}
	return outcome{kind: undecided}
}

// The SQLSTATEs decodeError knows: the project's own (the table is in
// doc.go) and the two rollbacks a new transaction resolves.
const (
	codeStoredAlready    = "ES001"
	codeRevisionTaken    = "ES002"
	codeOtherStream      = "ES003"
	codeGroupNotInserted = "ES004"
	codeGroupYoungerHead = "ES005"
	codeDeadlock         = "40P01"
	codeSerialization    = "40001"
)

// decodeError is the one decoder of an append statement's error for c.
// The codes our functions raise on purpose, deadlocks and serialization
// failures all roll the statement back, so nothing was written.
func (c appendCall) decodeError(err error) outcome {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	if !ok {
		return outcome{kind: failed, err: translate(c.op, err)}
	}
	switch pgErr.Code {
	case codeStoredAlready:
		rev, perr := strconv.ParseUint(pgErr.Detail, 10, 64)
		if perr != nil {
			return outcome{kind: failed, err: fmt.Errorf("%s: duplicate with unreadable revision %q: %w", c.op, pgErr.Detail, err)}
		}
		return outcome{kind: duplicate, revision: rev}
	case codeRevisionTaken:
		if c.expected.IsAny() {
			return outcome{kind: retry}
		}
		return outcome{kind: conflict}
	case codeOtherStream:
		// es_append does not say which event: appendOnce looks it up.
		return outcome{kind: storedElsewhere}
	case codeGroupNotInserted, codeGroupYoungerHead, codeDeadlock, codeSerialization:
		return outcome{kind: retry}
	}
	return outcome{kind: failed, err: translate(c.op, err)}
}

// answer is o as Append's result.
func (c appendCall) answer(o outcome) (eventstore.AppendResult, error) {
	switch {
	case o.err != nil:
		return eventstore.AppendResult{}, o.err
	case o.kind == appended:
		return eventstore.AppendResult{Revision: o.revision, Position: o.position}, nil
	case o.kind == duplicate:
		return eventstore.AppendResult{Duplicate: true, Revision: o.revision}, nil
	case o.kind == storedElsewhere:
		return eventstore.AppendResult{}, fmt.Errorf("%s: %w", c.op,
			&eventstore.StoredElsewhereError{EventID: o.eventID, Stream: c.stream, StoredIn: o.stream})
	case o.kind == conflict && o.head == nil:
		return eventstore.AppendResult{}, fmt.Errorf("%s: expected %s, a concurrent append moved the stream: %w", c.op, c.expected, domain.ErrConflict)
	case o.kind == conflict:
		current := "no stream"
		if *o.head >= 0 {
			current = strconv.FormatInt(*o.head, 10)
		}
		return eventstore.AppendResult{}, fmt.Errorf("%s: expected %s, stream at %s: %w", c.op, c.expected, current, domain.ErrConflict)
	}
	return eventstore.AppendResult{}, fmt.Errorf("%s: the append statement gave no outcome (%s)", c.op, o.kind)
}
