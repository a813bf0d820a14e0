package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payledger/payledger/eventstore"
)

// lockStreamSQL makes the append's transaction wait for its turn on the
// stream (migrations/00004_eventstore_stream_lock.sql).
const lockStreamSQL = `SELECT es_lock_stream($1)`

// appendSingleSQL appends one event without es_append: a plpgsql call costs
// more than everything else an uncontended append does. It runs after
// lockStreamSQL in the same implicit transaction but as its own statement,
// so its snapshot is taken once the stream's previous appender committed:
// the head it reads is the real head, and the insert cannot collide with a
// lock-taking appender. Its transaction ID is assigned by the insert, after
// that snapshot, so it is younger than the head's and the feed (ordered by
// transaction ID) keeps the stream in revision order.
//
// It always returns one row: the head it read, the inserted row's revision
// and position if it inserted, and where the event is stored if it already
// was. Uniqueness is still the constraints' business: ON CONFLICT DO
// NOTHING with no target lets every unique constraint arbitrate.
const appendSingleSQL = `WITH head AS (
	SELECT coalesce(max(revision), -1) AS rev FROM es_events WHERE stream = $1
), ins AS (
	INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
	SELECT $1, head.rev + 1, $3, $4, $5, $6 FROM head
	 WHERE $2 = -2 OR $2 = head.rev
	ON CONFLICT DO NOTHING
	RETURNING revision, tx_id, seq
)
SELECT head.rev, ins.revision, ins.tx_id, ins.seq, stored.stream, stored.revision
  FROM head
  LEFT JOIN ins ON true
  LEFT JOIN es_events stored ON stored.event_id = $3`

// singleRow is appendSingleSQL's answer.
type singleRow struct {
	head             int64
	rev, txID, seqNo *int64
	storedStream     *string
	storedRev        *int64
}

// appendSingle appends a one-event batch in one round trip: the lock and
// the statement are pipelined in one implicit transaction. settled is false
// when the answer is ambiguous (nothing inserted, no stored copy visible,
// expected revision met: a writer that skipped the stream lock, or a copy
// of the event committing in another stream meanwhile); nothing was written
// and es_append, which classifies every case, must decide.
func (s *Store) appendSingle(ctx context.Context, c appendCall) (res eventstore.AppendResult, settled bool, err error) {
	var r singleRow
	expected := sqlExpected(c.expected)
	var b pgx.Batch
	queueSingle(&b, c, &r)
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && (pgErr.Code == "40P01" || pgErr.Code == "40001") {
			return res, false, nil // rolled back: let es_append try
		}
		return res, true, translate(c.op, err)
	}
	switch {
	case r.rev != nil && r.txID != nil && r.seqNo != nil:
		return eventstore.AppendResult{
			Revision: uint64(*r.rev),
			Position: eventstore.Position{Commit: uint64(*r.txID), Prepare: uint64(*r.seqNo)},
		}, true, nil
	case r.storedStream != nil && r.storedRev != nil && *r.storedStream == c.stream:
		// A redelivery: this wins over the expected revision.
		return eventstore.AppendResult{Duplicate: true, Revision: uint64(*r.storedRev)}, true, nil
	case r.storedStream != nil:
		return res, true, fmt.Errorf("%s: event %s is stored in stream %s", c.op, c.ids[0], *r.storedStream)
	case expected != sqlExpectAny && expected != r.head:
		return res, true, c.conflict(r.head)
	}
	return res, false, nil
}

// queueSingle queues the stream lock and appendSingleSQL for c (one event)
// on b; the statement's row lands in r when the batch is read.
func queueSingle(b *pgx.Batch, c appendCall, r *singleRow) {
	b.Queue(lockStreamSQL, c.stream)
	b.Queue(appendSingleSQL, c.stream, sqlExpected(c.expected), c.ids[0], c.types[0], c.data[0], c.meta[0]).
		QueryRow(func(row pgx.Row) error {
			return row.Scan(&r.head, &r.rev, &r.txID, &r.seqNo, &r.storedStream, &r.storedRev)
		})
}
