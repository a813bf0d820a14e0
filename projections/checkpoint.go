package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
)

// errCheckpointMoved says the compare-and-set of a checkpoint found another
// position than the one the batch was built on: another writer (a second
// runner, or Reset) moved it, so the batch is rolled back and the runner
// restarts from the database.
var errCheckpointMoved = errors.New("projections: checkpoint moved by another writer")

// rowQuerier is a pool or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readCheckpoint returns the committed checkpoint of name, or Start.
func readCheckpoint(ctx context.Context, q rowQuerier, name string) (eventstore.Position, error) {
	var s string
	err := q.QueryRow(ctx, "SELECT position FROM projection_checkpoints WHERE name = $1", name).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return eventstore.Start, nil
	}
	if err != nil {
		return eventstore.Start, fmt.Errorf("projections: read checkpoint %s: %w", name, err)
	}
	return parseCheckpoint(name, s)
}

// loadCheckpoint returns the committed checkpoint of name, storing Start
// first when there is none, so that every later advance is a plain
// compare-and-set.
func loadCheckpoint(ctx context.Context, pool *pgxpool.Pool, name string) (eventstore.Position, error) {
	const q = `INSERT INTO projection_checkpoints (name, position) VALUES ($1, $2)
		ON CONFLICT (name) DO NOTHING`
	if _, err := pool.Exec(ctx, q, name, eventstore.Start.String()); err != nil {
		return eventstore.Start, fmt.Errorf("projections: create checkpoint %s: %w", name, err)
	}
	return readCheckpoint(ctx, pool, name)
}

func parseCheckpoint(name, s string) (eventstore.Position, error) {
	p, err := eventstore.ParsePosition(s)
	if err != nil {
		return eventstore.Start, fmt.Errorf("projections: checkpoint %s: %w", name, err)
	}
	return p, nil
}

// queueAdvanceCheckpoint queues the move of name from from to to, which
// fails the batch with errCheckpointMoved when name is not at from. Queued
// first in the batch's transaction, it also serialises racing writers on the
// checkpoint row before either touches a read-model row.
func queueAdvanceCheckpoint(b *pgx.Batch, name string, from, to eventstore.Position) {
	const q = `UPDATE projection_checkpoints SET position = $3, updated_at = now()
		WHERE name = $1 AND position = $2 AND retired_at IS NULL`
	what := fmt.Sprintf("projections: advance checkpoint %s from %s to %s", name, from, to)
	queueExec(b, what, func(tag pgconn.CommandTag) error {
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%s: %w", what, errCheckpointMoved)
		}
		return nil
	}, q, name, from.String(), to.String())
}

// queueExec queues a statement whose error says what failed (a pipeline's
// error names no statement); check, when set, judges its command tag.
func queueExec(b *pgx.Batch, what string, check func(pgconn.CommandTag) error, sql string, args ...any) {
	b.Queue(sql, args...).Fn = func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if check != nil {
			return check(tag)
		}
		return nil
	}
}

// Reset empties the payments, ledger, reconciliation log and reviews read models and deletes the checkpoint name, in
// one transaction, so that the next Run rebuilds everything from the start
// of the feed. A runner active meanwhile notices through its compare-and-set
// and restarts from the start.
func Reset(ctx context.Context, pool *pgxpool.Pool, name string) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "TRUNCATE payments, payment_events, ledger_entries, ledger_totals, reconciliation_checks, reviews"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM projection_checkpoints WHERE name = $1", name)
		return err
	})
	if err != nil {
		return fmt.Errorf("projections: reset %s: %w", name, err)
	}
	return nil
}
