package postgres

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// WarmUp readies a new connection for appends; it is meant for the store's
// pool as pgxpool.Config.AfterConnect. The first call of es_append_group on
// a connection compiles the plpgsql function and plans its statements:
// about 20 ms on an idle two-core machine, 50 ms under load, against 1–2 ms
// afterwards. Paid by a webhook, that is its acknowledgement's latency and,
// through the group commit, the latency of every append queued behind it
// in its lane; and a pool meets new connections all the time (it grows
// under a burst, recycles each one after its lifetime). So every new
// connection runs the append path once, before the pool hands it out: the
// merged call and the single-event statements, on streams of its own, in a
// transaction it rolls back. Nothing it writes is ever visible; it costs
// one transaction ID and the sequence numbers of three rows, gaps the feed
// already allows (an aborted append leaves the same).
func WarmUp(ctx context.Context, conn *pgx.Conn) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: warm up a connection: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// Streams no payment uses and no other connection warms, so no lock
	// is shared with anything.
	prefix := "$warm-up-" + uuid.NewString()
	streams := []string{prefix + "-1", prefix + "-2"}
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	data := []byte(`{}`)
	rows, err := tx.Query(ctx, groupSQL, streams, ids, []string{"WarmUp", "WarmUp"}, [][]byte{data, data}, [][]byte{nil, nil})
	if err == nil {
		_, err = pgx.CollectRows(rows, pgx.RowToStructByPos[groupRow])
	}
	if err != nil {
		return fmt.Errorf("postgres: warm up a connection: es_append_group: %w", err)
	}
	single := prefix + "-3"
	if _, err := tx.Exec(ctx, lockStreamSQL, single); err != nil {
		return fmt.Errorf("postgres: warm up a connection: %w", err)
	}
	var r singleRow
	err = tx.QueryRow(ctx, appendSingleSQL, single, sqlExpectAny, uuid.New(), "WarmUp", data, []byte(nil)).
		Scan(&r.head, &r.rev, &r.txID, &r.seqNo, &r.storedStream, &r.storedRev)
	if err != nil {
		return fmt.Errorf("postgres: warm up a connection: single append: %w", err)
	}
	return nil
}
