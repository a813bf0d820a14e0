package projections

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrentdb"
	"github.com/payledger/payledger/eventstore/kurrenttest"
	"github.com/payledger/payledger/internal/pgtest"
)

// sealedKurrent is a fresh in-memory KurrentDB server, the official client
// on it, and a Postgres pool holding the seals of sealStreams (three events
// each), all closed when the test ends.
func sealedKurrent(t *testing.T) (*kurrenttest.Server, *kurrentdb.Store, *pgxpool.Pool) {
	t.Helper()
	srv, store := kurrentStore(t)
	pool := pgtest.NewPool(t)
	for _, s := range sealStreams {
		for i := range 3 {
			_, err := store.Append(t.Context(), s, eventstore.Any(), []eventstore.EventData{{
				ID: uuid.New(), Type: "payment.succeeded.v1",
				Data:     []byte(fmt.Sprintf(`{"amount": %d}`, i)),
				Metadata: []byte(`{"source": "webhook"}`),
			}})
			if err != nil {
				t.Fatalf("append %s: %v", s, err)
			}
		}
	}
	sealer := NewSealer(SealerConfig{BatchSize: 4, RetryMin: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond}, pool, store)
	if err := sealer.SealUntilIdle(t.Context(), 500*time.Millisecond); err != nil {
		t.Fatalf("SealUntilIdle: %v", err)
	}
	return srv, store, pool
}

// TestSealAndVerifyChainsOnKurrentDB seals a KurrentDB store (the official
// client against the in-memory server) into Postgres: the chain of what
// the feed delivered equals the chain of what a stream read returns, and an
// event rewritten on the node behind the client's back breaks exactly its
// link.
func TestSealAndVerifyChainsOnKurrentDB(t *testing.T) {
	t.Run("intact", func(t *testing.T) {
		_, store, pool := sealedKurrent(t)
		rep, err := VerifyChains(t.Context(), store, pool, nil)
		if err != nil || !rep.OK() || rep.Streams != 3 || rep.Events != 9 || rep.UnsealedStreams != 0 {
			t.Fatalf("VerifyChains: %+v, %v; want 3 intact streams of 9 events", rep, err)
		}
	})
	stream := sealStreams[0]
	tests := []struct {
		name   string
		tamper func(*kurrenttest.Server) error
	}{
		{"data", func(s *kurrenttest.Server) error {
			return s.Tamper(stream, 1, func(e *kurrenttest.TamperedEvent) { e.Data = []byte(`{"amount": 9}`) })
		}},
		{"metadata", func(s *kurrenttest.Server) error {
			return s.Tamper(stream, 1, func(e *kurrenttest.TamperedEvent) { e.Metadata = []byte(`{"source": "api"}`) })
		}},
		{"type", func(s *kurrenttest.Server) error {
			return s.Tamper(stream, 1, func(e *kurrenttest.TamperedEvent) { e.Type = "payment.failed.v1" })
		}},
		// Revisions 1 and 2 exchanged: the first link that no longer holds is 1.
		{"order", func(s *kurrenttest.Server) error { return s.Swap(stream, 1, 2) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, store, pool := sealedKurrent(t)
			if err := tt.tamper(srv); err != nil {
				t.Fatalf("tamper: %v", err)
			}
			rep, err := VerifyChains(t.Context(), store, pool, nil)
			if err != nil || rep.BrokenStreams != 1 || len(rep.Broken) != 1 {
				t.Fatalf("VerifyChains: %+v, %v; want one broken stream", rep, err)
			}
			if got := rep.Broken[0]; got.Stream != stream || got.Revision != 1 {
				t.Errorf("broken at %s@%d, want %s@1", got.Stream, got.Revision, stream)
			}
		})
	}
}

// kurrentStore is an in-memory KurrentDB server and the official client's
// store on it, both closed when the test ends.
func kurrentStore(t *testing.T) (*kurrenttest.Server, *kurrentdb.Store) {
	t.Helper()
	srv, err := kurrenttest.NewServer()
	if err != nil {
		t.Fatalf("kurrenttest: %v", err)
	}
	t.Cleanup(srv.Close)
	store, err := kurrentdb.Open(t.Context(), srv.URL(), kurrentdb.Options{RetryMin: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("open %s: %v", srv.URL(), err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return srv, store
}
