package projections

import (
	"slices"
	"strings"
	"testing"

	"github.com/payledger/payledger/internal/pgtest"
)

// TestUnreviewedAnomalies pages through the flagged payments by id. The
// flag is set directly here: its maintenance by the projector is tested
// with the projector.
func TestUnreviewedAnomalies(t *testing.T) {
	pool := pgtest.NewPool(t)
	seedReconciliation(t, pool)
	if _, err := pool.Exec(t.Context(), `UPDATE payments SET unreviewed_anomalies = (provider_payment_id IN ($1, $2, $3))`,
		sA.id, sB.id, mRef.id); err != nil {
		t.Fatal(err)
	}
	q := NewQueries(pool)
	var all []string
	var after int64
	for range 10 {
		got, next, err := q.UnreviewedAnomalies(t.Context(), 2, after)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			if next != after {
				t.Errorf("empty page moved the cursor %d → %d", after, next)
			}
			break
		}
		if next <= after {
			t.Fatalf("cursor did not advance: %d → %d", after, next)
		}
		all, after = append(all, ids(got)...), next
	}
	slices.Sort(all)
	want := names(sA, sB, mRef)
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Errorf("flagged %v, want %v", all, want)
	}
	if _, _, err := q.UnreviewedAnomalies(t.Context(), 0, 0); err == nil {
		t.Error("limit 0 accepted")
	}
}

func TestUnreviewedAnomaliesUsesIndex(t *testing.T) {
	pool := pgtest.NewPool(t)
	seedReconciliation(t, pool)
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(t.Context()) }()
	if _, err := tx.Exec(t.Context(), "SET LOCAL enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	var plan []string
	rows, err := tx.Query(t.Context(), "EXPLAIN "+unreviewedAnomaliesQuery, int64(0), 500)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "payments_unreviewed_anomalies_idx") {
		t.Errorf("plan does not use payments_unreviewed_anomalies_idx:\n%s", strings.Join(plan, "\n"))
	}
}
