package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/internal/pgtest"
)

// newFloor opens the floor on a fresh database of the real Postgres, twice
// (the table is created only if needed), and serves it.
func newFloor(t *testing.T) (*httptest.Server, func() int) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	for range 2 {
		pool, err := openFloor(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		if got := pool.Config().MaxConns; got != floorDefaultConns {
			t.Fatalf("pool of %d connections, want the ledger's %d", got, floorDefaultConns)
		}
		if _, err := pool.Exec(ctx, `SELECT 1 FROM floor_events LIMIT 0`); err != nil {
			t.Fatal(err)
		}
	}
	pool, err := openFloor(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := httptest.NewServer(floorHandler(pool))
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

func TestFloorHandler(t *testing.T) {
	srv, rows := newFloor(t)
	tests := []struct {
		name        string
		id          string
		body        string
		wantCode    int
		wantOutcome string
	}{
		{"new", "stripe:evt_1", `{"id":"evt_1"}`, 200, "accepted"},
		{"redelivery", "stripe:evt_1", `{"id":"evt_1"}`, 200, "duplicate"},
		{"same event ID, other provider", "asaas:evt_1", `{"id":"evt_1"}`, 200, "accepted"},
		{"no ID header", "", `{"id":"evt_2"}`, 400, ""},
		{"body not JSON", "stripe:evt_3", `not json`, 503, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/stripe", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.id != "" {
				req.Header.Set(eventIDHeader, tt.id)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct{ Outcome string }
			raw, _ := io.ReadAll(resp.Body)
			_ = json.Unmarshal(raw, &body)
			if resp.StatusCode != tt.wantCode || body.Outcome != tt.wantOutcome {
				t.Errorf("HTTP %d %q, want %d with outcome %q", resp.StatusCode, raw, tt.wantCode, tt.wantOutcome)
			}
		})
	}
	if n := rows(); n != 2 {
		t.Errorf("%d rows stored, want 2", n)
	}
	resp, err := srv.Client().Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz: HTTP %d", resp.StatusCode)
	}
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
