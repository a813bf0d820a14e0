package migrations_test

import (
	"context"
	"testing"

	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/migrations"
)

// TestUpDownUp applies every migration, rolls all of them back, and applies
// them again: each Down undoes its Up, so a failed deploy can be reverted.
func TestUpDownUp(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewEmptyPool(t)
	m, err := migrations.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	n, err := m.Up(ctx)
	if err != nil || n == 0 {
		t.Fatalf("up: applied %d, %v", n, err)
	}
	current, target, err := m.Versions(ctx)
	if err != nil || current != target {
		t.Fatalf("versions after up: %d/%d, %v", current, target, err)
	}
	if n, err := m.Up(ctx); err != nil || n != 0 {
		t.Fatalf("second up: applied %d, %v; want 0 (idempotent)", n, err)
	}
	if err := m.DownTo(ctx, 0); err != nil {
		t.Fatalf("down: %v", err)
	}
	var tables int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'goose_db_version'`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("%d tables left after rolling everything back", tables)
	}
	if n, err := m.Up(ctx); err != nil || int64(n) != target {
		t.Fatalf("up again: applied %d, %v", n, err)
	}
}
