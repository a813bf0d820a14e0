package kurrenttest_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// TestSubscribeDuringWrites subscribes to $all while writers append
// concurrently: the subscription must deliver every event exactly once, in
// position order, across the switch from catch-up to live.
func TestSubscribeDuringWrites(t *testing.T) {
	const writers, perWriter = 4, 50
	e := newEnv(t, kurrenttest.WithoutSystemEvents())
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			stream := fmt.Sprintf("w-%d", w)
			for i := range perWriter {
				exp := esdb.ExpectedRevision(esdb.Revision(uint64(i - 1)))
				if i == 0 {
					exp = esdb.NoStream{}
				}
				if _, err := e.append(stream, exp, fmt.Sprintf("w%d-%d", w, i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	close(start)
	sub := e.subscribeAll(esdb.SubscribeToAllOptions{From: esdb.Start{}})

	seen := make(map[uuid.UUID]bool)
	var last uint64
	for len(seen) < writers*perWriter {
		m := sub.Recv()
		if m.SubscriptionDropped != nil {
			t.Fatalf("dropped after %d events: %v", len(seen), m.SubscriptionDropped.Error)
		}
		if m.EventAppeared == nil {
			continue // caught-up, somewhere in the middle
		}
		ev := m.EventAppeared.OriginalEvent()
		if seen[ev.EventID] || ev.Position.Commit <= last {
			t.Fatalf("event %s at %d after %d: duplicate or out of order", nameOf(ev), ev.Position.Commit, last)
		}
		seen[ev.EventID], last = true, ev.Position.Commit
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("writer: %v", err)
	}
}

// BenchmarkAppend measures one-event appends through the official client,
// for comparison with the adapter's own figures.
func BenchmarkAppend(b *testing.B) {
	srv, err := kurrenttest.NewServer()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	cfg, err := esdb.ParseConnectionString(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	cfg.Logger = esdb.NoopLogging()
	c, err := esdb.NewClient(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	ev := esdb.EventData{EventType: "bench", ContentType: esdb.ContentTypeJson, Data: []byte(`{"amount":100}`)}
	for i := 0; b.Loop(); i++ {
		ev.EventID = uuid.New()
		stream := fmt.Sprintf("payment-bench-%d", i%1000)
		if _, err := c.AppendToStream(b.Context(), stream, esdb.AppendToStreamOptions{}, ev); err != nil {
			b.Fatal(err)
		}
	}
}
