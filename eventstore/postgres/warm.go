package postgres

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/eventstore"
)

// WarmUp readies a new connection for appends, as the store's
// pgxpool.Config.AfterConnect: it runs the append statements once, on
// streams of its own, in a transaction it rolls back, so no webhook pays
// for compiling and planning them (ARCHITECTURE.md, "Warm connections").
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
