package postgres

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/eventstore"
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
// merged call and the single-event statements, built by the same functions
// the appends use, on streams of its own, in a transaction it rolls back.
// Nothing it writes is ever visible; it costs one transaction ID and the
// sequence numbers of three rows, gaps the feed already allows (an aborted
// append leaves the same).
func WarmUp(ctx context.Context, conn *pgx.Conn) error {
	// Streams no payment uses and no other connection warms, so no lock
	// is shared with anything.
	prefix := "$warm-up-" + uuid.NewString()
	calls := make([]appendCall, 3)
	for i := range calls {
		c, err := newAppendCall(fmt.Sprintf("%s-%d", prefix, i+1), eventstore.Any(),
			[]eventstore.EventData{{ID: uuid.New(), Type: "WarmUp", Data: []byte(`{}`)}})
		if err != nil {
			return fmt.Errorf("postgres: warm up a connection: %w", err)
		}
		calls[i] = c
	}

	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: warm up a connection: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for i, o := range queryGroup(ctx, tx, calls[:2]) {
		if _, err := calls[i].answer(o); err != nil || o.kind != appended {
			return fmt.Errorf("postgres: warm up a connection: es_append_group: %s: %w", o.kind, err)
		}
	}
	var b pgx.Batch
	var r appendRow
	queueSingle(&b, calls[2], &r)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("postgres: warm up a connection: single append: %w", err)
	}
	return nil
}
