package main

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/floor"
	"github.com/payledger/payledger/internal/pgtest"
)

// newFloor serves the floor on a fresh database of the real Postgres
// (internal/floor's own tests check its table and pool).
func newFloor(t *testing.T) (*httptest.Server, func() int) {
	t.Helper()
	ctx := context.Background()
	pool, err := floor.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := httptest.NewServer(floor.Handler(pool))
	t.Cleanup(srv.Close)
	rows := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM floor_events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return srv, rows
}

// TestAckOnlyAgainstFloor drives the floor as bench-load.sh does: every
// provider's webhooks, duplicated, with --ack-only. The floor must store
// exactly one row per distinct webhook — it dedupes on the identity the
// ledger does — and paysim must neither verify nor sample lag.
func TestAckOnlyAgainstFloor(t *testing.T) {
	srv, rows := newFloor(t)
	cfg, err := parseConfig("run", []string{"--ack-only", "--payments", "120", "--dup", "0.3", "--reorder", "0.5",
		"--max-delay", "0", "--late-delay", "0", "--api-addr", "127.0.0.1:0", "--concurrency", "8", "--rate", "2000"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSim(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := s.run(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Verified || rep.Undelivered != 0 || rep.AcceptedTwice != 0 || rep.Matched+rep.Wrong+rep.Missing != 0 {
		t.Errorf("report %+v", rep)
	}
	if rep.Outcomes["accepted"] != rep.Webhooks || rep.Outcomes["duplicate"] != rep.Duplicated || rep.Duplicated == 0 || len(rep.ByProvider) != 4 {
		t.Errorf("outcomes %v for %d webhooks, %d duplicated", rep.Outcomes, rep.Webhooks, rep.Duplicated)
	}
	if n := rows(); n != rep.Webhooks {
		t.Errorf("floor stored %d rows, want one per distinct webhook (%d)", n, rep.Webhooks)
	}
	if rep.LagSamples+rep.LagReads != 0 {
		t.Errorf("--ack-only sampled lag: %d samples, %d reads", rep.LagSamples, rep.LagReads)
	}
}
