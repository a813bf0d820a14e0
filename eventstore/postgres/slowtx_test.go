package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
)

// TestFeedNoSkipWithSlowTransactions is the conformance suite's no-skip
// test plus what the Store interface cannot do: writers that hold their
// transaction open for a while after appending, so commits land far out of
// transaction-ID order while a subscriber follows the feed.
func TestFeedNoSkipWithSlowTransactions(t *testing.T) {
	const (
		fastWriters, fastEach = 4, 30
		slowWriters, slowEach = 4, 10
		streams               = 4
	)
	ctx := t.Context()
	pool := newPool(t, 12)
	s := New(pool, Options{PollInterval: time.Millisecond})
	sub, _ := s.SubscribeAll(ctx, eventstore.Start, eventstore.Filter{})
	defer sub.Close()
	// The subscriber follows the feed while the writers run; the end marker,
	// appended after them all, tells it when it has everything.
	end := testEvent(t, "pi_3Nk-x_Yend", "end")
	type result struct {
		evs []eventstore.RecordedEvent
		err error
	}
	received := make(chan result, 1)
	go func() {
		var evs []eventstore.RecordedEvent
		for {
			m, err := sub.Next(ctx)
			if err != nil || m.Event != nil && m.Event.ID == end.ID {
				received <- result{evs, err}
				return
			}
			if m.Event != nil {
				evs = append(evs, *m.Event)
			}
		}
	}()

	streamOf := func(i int) string { return fmt.Sprintf("payment-stripe-pi_3Nk-x_Y%d", i%streams) }
	var (
		mu       sync.Mutex
		appended = map[uuid.UUID]bool{}
		wg       sync.WaitGroup
		errs     = make(chan error, fastWriters+slowWriters)
	)
	record := func(id uuid.UUID) { mu.Lock(); appended[id] = true; mu.Unlock() }
	for w := range fastWriters {
		wg.Go(func() {
			for i := range fastEach {
				ev := testEvent(t, "pi_3Nk-x_Y", fmt.Sprintf("fast%d-%d", w, i))
				if _, err := s.Append(ctx, streamOf(w+i), eventstore.Any(), []eventstore.EventData{ev}); err != nil {
					errs <- fmt.Errorf("fast writer %d: %w", w, err)
					return
				}
				record(ev.ID)
			}
		})
	}
	for w := range slowWriters {
		wg.Go(func() {
			for i := range slowEach {
				ev := testEvent(t, "pi_3Nk-x_Y", fmt.Sprintf("slow%d-%d", w, i))
				hold := time.Duration(rand.IntN(20)) * time.Millisecond
				if err := appendHolding(ctx, pool, streamOf(w+i), ev, hold); err != nil {
					errs <- fmt.Errorf("slow writer %d: %w", w, err)
					return
				}
				record(ev.ID)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	if _, err := s.Append(ctx, "payment-stripe-pi_3Nk-x_Yend", eventstore.NoStream(), []eventstore.EventData{end}); err != nil {
		t.Fatal(err)
	}
	res := <-received
	if res.err != nil {
		t.Fatalf("subscriber, after %d events: %v", len(res.evs), res.err)
	}
	var last eventstore.Position
	next := map[string]uint64{}
	for _, e := range res.evs {
		if e.Position.Compare(last) <= 0 || e.Revision != next[e.Stream] || !appended[e.ID] {
			t.Fatalf("event %v of %s at %v revision %d: last position %v, revision due %d, appended %t",
				e.ID, e.Stream, e.Position, e.Revision, last, next[e.Stream], appended[e.ID])
		}
		delete(appended, e.ID)
		last, next[e.Stream] = e.Position, e.Revision+1
	}
	if len(appended) != 0 {
		t.Fatalf("%d appended events never delivered: %v", len(appended), appended)
	}
}

// appendHolding appends ev in a transaction it keeps open for hold after
// es_append returns, retrying as Store.Append does when es_append asks.
func appendHolding(ctx context.Context, pool *pgxpool.Pool, stream string, ev eventstore.EventData, hold time.Duration) error {
	var lost error
	for range maxAppendCalls {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		out, err := appendIn(ctx, tx, stream, ev)
		if err != nil || out != "appended" {
			// Lost a race (ES002, retry or conflict): try a new transaction.
			_ = tx.Rollback(ctx)
			lost = fmt.Errorf("outcome %q: %v", out, err)
			continue
		}
		time.Sleep(hold)
		return tx.Commit(ctx)
	}
	return fmt.Errorf("append to %s: %w", stream, lost)
}
