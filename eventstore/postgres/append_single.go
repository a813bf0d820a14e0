package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// lockStreamSQL makes the append's transaction wait for its turn on the
// stream (migrations/00004_eventstore_stream_lock.sql).
const lockStreamSQL = `SELECT es_lock_stream($1)`

// appendSingleSQL appends one event without a plpgsql call, after
// lockStreamSQL in the same implicit transaction, and answers as an
// appendRow (ARCHITECTURE.md, "Deduplication, per store", says why its head
// is the real one and its feed order right).
const appendSingleSQL = `WITH head AS (
	SELECT coalesce(max(revision), -1) AS rev FROM es_events WHERE stream = $1
), ins AS (
	INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
	SELECT $1, head.rev + 1, $3, $4, $5, $6 FROM head
	 WHERE $2 = -2 OR $2 = head.rev
	ON CONFLICT DO NOTHING
	RETURNING revision, tx_id, seq
)
SELECT ins.revision, ins.tx_id, ins.seq, stored.stream, stored.revision,
       CASE WHEN $2 NOT IN (-2, head.rev) THEN head.rev END, false
  FROM head
  LEFT JOIN ins ON true
  LEFT JOIN es_events stored ON stored.event_id = $3`

// appendSingle appends a one-event call in one round trip: the lock and the
// statement pipelined in one implicit transaction. Its outcome is undecided
// when nothing was inserted for a reason it cannot see (a writer that
// skipped the stream lock): es_append, which classifies every case, decides.
func (s *Store) appendSingle(ctx context.Context, c appendCall) outcome {
	var r appendRow
	var b pgx.Batch
	queueSingle(&b, c, &r)
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return c.decodeError(err)
	}
	return c.decodeRow(r)
}

// queueSingle queues the stream lock and appendSingleSQL for c (one event)
// on b; the statement's row lands in r when the batch is read.
func queueSingle(b *pgx.Batch, c appendCall, r *appendRow) {
	e := c.events[0]
	b.Queue(lockStreamSQL, c.stream)
	b.Queue(appendSingleSQL, c.stream, sqlExpected(c.expected), e.id, e.typ, e.data, e.meta).
		QueryRow(func(row pgx.Row) error { return row.Scan(r.dest()...) })
}
