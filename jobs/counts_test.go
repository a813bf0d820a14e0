package jobs

import (
	"maps"
	"testing"
	"time"

	"github.com/payledger/payledger/internal/pgtest"
)

func TestCountUnfinished(t *testing.T) {
	const insert = `INSERT INTO river_job (kind, args, state, attempt, attempted_at, max_attempts, queue, priority, finalized_at)
		VALUES ('enrich_payment', '{"provider":"mercadopago","payment_id":"1654467000529"}', $1::text::river_job_state, 1, $2, 12, 'default', 1,
		CASE WHEN $1::text IN ('completed', 'discarded') THEN now() END)`
	attempted := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	tests := []struct {
		name   string
		states []string // one job each, attempted at attempted
		want   map[string]int
		drop   bool
	}{
		{name: "empty queue"},
		{name: "only completed", states: []string{"completed", "completed"}},
		{name: "one left running", states: []string{"running", "completed"}, want: map[string]int{"running": 1}},
		{name: "mixed", states: []string{"available", "discarded", "discarded", "running", "retryable"},
			want: map[string]int{"available": 1, "discarded": 2, "running": 1, "retryable": 1}},
		{name: "no River tables", drop: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := pgtest.NewPool(t)
			for _, st := range tt.states {
				if _, err := pool.Exec(t.Context(), insert, st, attempted); err != nil {
					t.Fatal(err)
				}
			}
			if tt.drop {
				if _, err := pool.Exec(t.Context(), "DROP TABLE river_job CASCADE"); err != nil {
					t.Fatal(err)
				}
			}
			c, err := CountUnfinished(t.Context(), pool)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(c.ByState, tt.want) || (c.ByState == nil) != (tt.want == nil) {
				t.Errorf("ByState = %v, want %v", c.ByState, tt.want)
			}
			if running := tt.want["running"] > 0; (c.OldestRunning != nil) != running ||
				(running && !c.OldestRunning.Equal(attempted)) {
				t.Errorf("OldestRunning = %v, want %v (running: %v)", c.OldestRunning, attempted, running)
			}
		})
	}
}
