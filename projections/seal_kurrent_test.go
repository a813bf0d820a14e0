package projections

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrentdb"
	"github.com/payledger/payledger/eventstore/kurrenttest"
	"github.com/payledger/payledger/internal/pgtest"
)

// tamperedReader reads through the store but returns one event altered, as
// a KurrentDB node rewritten behind our back would serve it.
type tamperedReader struct {
	StreamReader
	stream   string
	revision uint64
	alter    func(e *eventstore.RecordedEvent)
}

func (r tamperedReader) ReadStream(ctx context.Context, stream string) ([]eventstore.RecordedEvent, error) {
	evs, err := r.StreamReader.ReadStream(ctx, stream)
	for i := range evs {
		if evs[i].Stream == r.stream && evs[i].Revision == r.revision {
			r.alter(&evs[i])
		}
	}
	return evs, err
}

// TestSealAndVerifyChainsOnKurrentDB seals a KurrentDB store (the official
// client against the in-memory server) into Postgres: the chain of what
// the feed delivered equals the chain of what a stream read returns, and an
// event served altered breaks exactly its link.
func TestSealAndVerifyChainsOnKurrentDB(t *testing.T) {
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
	rep, err := VerifyChains(t.Context(), store, pool, nil)
	if err != nil || !rep.OK() || rep.Streams != 3 || rep.Events != 9 || rep.UnsealedStreams != 0 {
		t.Fatalf("VerifyChains: %+v, %v; want 3 intact streams of 9 events", rep, err)
	}
	tests := []struct {
		name  string
		alter func(e *eventstore.RecordedEvent)
	}{
		{"data", func(e *eventstore.RecordedEvent) { e.Data = []byte(`{"amount": 9}`) }},
		{"metadata", func(e *eventstore.RecordedEvent) { e.Metadata = []byte(`{"source": "api"}`) }},
		{"type", func(e *eventstore.RecordedEvent) { e.Type = "payment.failed.v1" }},
		{"order", func(e *eventstore.RecordedEvent) { e.Revision = 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tamperedReader{StreamReader: store, stream: sealStreams[0], revision: 1, alter: tt.alter}
			rep, err := VerifyChains(t.Context(), r, pool, nil)
			if err != nil || rep.BrokenStreams != 1 {
				t.Fatalf("VerifyChains: %+v, %v; want one broken stream", rep, err)
			}
			if got := rep.Broken[0]; got.Stream != sealStreams[0] || got.Revision != 1 {
				t.Errorf("broken at %s@%d, want %s@1", got.Stream, got.Revision, sealStreams[0])
			}
		})
	}
}
