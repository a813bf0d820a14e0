package floor

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payledger/payledger/cmd/paysim/internal/deliver"
	"github.com/payledger/payledger/internal/pgtest"
)

// newFloor opens the floor on a fresh database of the real Postgres, twice
// (the table is created only if needed), and serves it.
func newFloor(t *testing.T) (*httptest.Server, func() int) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	for range 2 {
		pool, err := Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		if got := pool.Config().MaxConns; got != DefaultConns {
			t.Fatalf("pool of %d connections, want the ledger's %d", got, DefaultConns)
		}
		if _, err := pool.Exec(ctx, `SELECT 1 FROM floor_events LIMIT 0`); err != nil {
			t.Fatal(err)
		}
	}
	pool, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := httptest.NewServer(Handler(pool))
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
				req.Header.Set(deliver.EventIDHeader, tt.id)
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
