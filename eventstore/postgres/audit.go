package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/eventstore"
)

// Audit is what the store holds around one position, for an audit of the
// read models built from it.
type Audit struct {
	// UniqueEventID says the UNIQUE constraint on es_events.event_id is in
	// place, which makes a duplicate impossible.
	UniqueEventID bool
	// Duplicates lists every event ID stored more than once, however
	// impossible: an audit also covers a dropped constraint or a restored dump.
	Duplicates []DuplicateEventID
	// Streams lists the streams with the audited prefix that have an event
	// at or below the position.
	Streams []string
	// Head is the last event a subscriber can see now.
	Head eventstore.Position
	// After counts the events of those streams after the position.
	After int64
}

// DuplicateEventID is an event ID stored Count times.
type DuplicateEventID struct {
	ID    uuid.UUID
	Count int
}

// Audit reads, over the whole store, the event ID checks and the streams
// with prefix at or below at, and how far the store's head is beyond at.
func (s *Store) Audit(ctx context.Context, prefix string, at eventstore.Position) (Audit, error) {
	var a Audit
	const constraintSQL = `SELECT EXISTS (SELECT 1 FROM pg_constraint
		WHERE conrelid = 'es_events'::regclass AND conname = 'es_events_event_id_key' AND contype = 'u')`
	if err := s.pool.QueryRow(ctx, constraintSQL).Scan(&a.UniqueEventID); err != nil {
		return a, fmt.Errorf("postgres: audit: event ID constraint: %w", err)
	}
	const dupSQL = `SELECT event_id, count(*) FROM es_events GROUP BY event_id HAVING count(*) > 1 ORDER BY event_id`
	rows, _ := s.pool.Query(ctx, dupSQL) // CollectRows reports the error
	dups, err := pgx.CollectRows(rows, pgx.RowToStructByPos[DuplicateEventID])
	if err != nil {
		return a, fmt.Errorf("postgres: audit: duplicate event IDs: %w", err)
	}
	a.Duplicates = dups
	const streamsSQL = `SELECT DISTINCT stream FROM es_events
		WHERE starts_with(stream, $3) AND (tx_id, seq) <= ($1, $2) ORDER BY stream`
	rows, _ = s.pool.Query(ctx, streamsSQL, at.Commit, at.Prepare, prefix)
	if a.Streams, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return a, fmt.Errorf("postgres: audit: streams: %w", err)
	}
	a.Head, a.After, err = s.Lag(ctx, prefix, at)
	return a, err
}

// Lag returns the store's head (the last event a subscriber can see now,
// Start when there is none) and how many events of streams with prefix lie
// after the position from.
func (s *Store) Lag(ctx context.Context, prefix string, from eventstore.Position) (eventstore.Position, int64, error) {
	const headSQL = `SELECT tx_id, seq FROM es_events
		WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
		ORDER BY tx_id DESC, seq DESC LIMIT 1`
	const lagSQL = `SELECT count(*) FROM es_events WHERE starts_with(stream, $3) AND (tx_id, seq) > ($1, $2)`
	var head eventstore.Position
	err := s.pool.QueryRow(ctx, headSQL).Scan(&head.Commit, &head.Prepare)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return head, 0, fmt.Errorf("postgres: store head: %w", err)
	}
	var n int64
	if err := s.pool.QueryRow(ctx, lagSQL, from.Commit, from.Prepare, prefix).Scan(&n); err != nil {
		return head, 0, fmt.Errorf("postgres: events after %s: %w", from, err)
	}
	return head, n, nil
}
