package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/eventstore"
)

// eventColumns are the columns scanEvent reads, in its order.
const eventColumns = `tx_id, seq, stream, revision, event_id, type, data, metadata, recorded_at`

const readStreamSQL = `SELECT ` + eventColumns + ` FROM es_events WHERE stream = $1 ORDER BY revision`

// ReadStream returns stream's events in revision order; a stream with no
// events gives an empty slice and no error.
func (s *Store) ReadStream(ctx context.Context, stream string) ([]eventstore.RecordedEvent, error) {
	rows, _ := s.pool.Query(ctx, readStreamSQL, stream) // CollectRows reports the error
	events, err := pgx.CollectRows(rows, scanEvent)
	if err != nil {
		return nil, translate("postgres: read "+stream, err)
	}
	if events == nil {
		events = []eventstore.RecordedEvent{}
	}
	return events, nil
}

// scanEvent reads one row of eventColumns.
func scanEvent(row pgx.CollectableRow) (eventstore.RecordedEvent, error) {
	var e eventstore.RecordedEvent
	err := row.Scan(&e.Position.Commit, &e.Position.Prepare, &e.Stream, &e.Revision, &e.ID,
		&e.Type, &e.Data, &e.Metadata, &e.RecordedAt)
	return e, err
}
