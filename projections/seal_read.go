package projections

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/eventstore"
)

// StreamSeals returns the seals of stream, by revision: the chain proof the
// evidence route shows beside each fact.
func (q *Queries) StreamSeals(ctx context.Context, stream string) ([]eventstore.Seal, error) {
	rows, _ := q.pool.Query(ctx, `SELECT revision, event_id, hash, sealed_at, backfill FROM event_seals
		WHERE stream = $1 ORDER BY revision`, stream)
	seals, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (eventstore.Seal, error) {
		var s eventstore.Seal
		var rev int64
		var hash []byte
		if err := row.Scan(&rev, &s.EventID, &hash, &s.SealedAt, &s.Backfill); err != nil {
			return s, err
		}
		if len(hash) != len(s.Hash) {
			return s, fmt.Errorf("seal of %s at %d holds %d bytes, not a SHA-256", stream, rev, len(hash))
		}
		s.Revision = uint64(rev)
		copy(s.Hash[:], hash)
		return s, nil
	})
	if err != nil {
		return nil, fmt.Errorf("projections: seals of %s: %w", stream, err)
	}
	return seals, nil
}
