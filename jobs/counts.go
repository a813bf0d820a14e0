package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Counts is the queue's unfinished work: jobs in every state but completed.
// A running or available job may still append an observation; discarded
// ones are the dead-letter queue.
type Counts struct {
	ByState map[string]int // nil when every job completed
	// OldestRunning is when the oldest still-running job was attempted (nil:
	// none runs). A job whose process was killed stays running until the
	// queue rescues it.
	OldestRunning *time.Time
}

// CountUnfinished counts the jobs not completed, by state. It needs only
// the database, not a started Jobs, and reads nothing when River's tables
// do not exist.
func CountUnfinished(ctx context.Context, pool *pgxpool.Pool) (Counts, error) {
	var c Counts
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('river_job') IS NOT NULL").Scan(&exists); err != nil {
		return c, fmt.Errorf("jobs: count unfinished: %w", err)
	}
	if !exists {
		return c, nil
	}
	const q = `SELECT state::text, count(*), min(attempted_at) FILTER (WHERE state = 'running')
		FROM river_job WHERE state <> 'completed' GROUP BY state`
	rows, _ := pool.Query(ctx, q) // ForEachRow reports the error
	var (
		state  string
		n      int
		oldest *time.Time
	)
	_, err := pgx.ForEachRow(rows, []any{&state, &n, &oldest}, func() error {
		if c.ByState == nil {
			c.ByState = map[string]int{}
		}
		c.ByState[state] = n
		if oldest != nil {
			t := oldest.UTC()
			c.OldestRunning = &t
		}
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("jobs: count unfinished: %w", err)
	}
	return c, nil
}
