package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/payledger/payledger/eventstore"
)

// nextEvent returns the subscription's next event, passing over checkpoints.
func nextEvent(t *testing.T, sub eventstore.Subscription) eventstore.RecordedEvent {
	t.Helper()
	for {
		m, err := sub.Next(t.Context())
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		if m.Event != nil {
			return *m.Event
		}
	}
}

// TestFeedWaitsForOlderTransaction proves the xmin rule. A slow transaction
// appends first and stays open; a fast one appends after it and commits.
// The fast event sits later in the feed order but is visible first: a feed
// that delivered it would move every consumer's checkpoint past the slow
// event, which would then never be delivered. The feed must stop at the open
// transaction and, once it commits, deliver both in order.
func TestFeedWaitsForOlderTransaction(t *testing.T) {
	ctx := t.Context()
	pool := newPool(t, 4)
	s := New(pool, Options{PollInterval: time.Millisecond})
	sub, _ := s.SubscribeAll(ctx, eventstore.Start, eventstore.Filter{})
	defer sub.Close()

	before := testEvent(t, "pi_3Nk-x_Ybefore", "a")
	if _, err := s.Append(ctx, "payment-stripe-pi_3Nk-x_Ybefore", eventstore.Any(), []eventstore.EventData{before}); err != nil {
		t.Fatal(err)
	}
	if got := nextEvent(t, sub); got.ID != before.ID {
		t.Fatalf("first event %v, want %v", got.ID, before.ID)
	}

	slowTx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slowTx.Rollback(context.Background())
	slow := testEvent(t, "pi_3Nk-x_Yslow", "a")
	if out, err := appendIn(ctx, slowTx, "payment-stripe-pi_3Nk-x_Yslow", slow); err != nil || out != "appended" {
		t.Fatalf("slow append: %q, %v", out, err)
	}
	fast := testEvent(t, "pi_3Nk-x_Yfast", "a")
	fastRes, err := s.Append(ctx, "payment-stripe-pi_3Nk-x_Yfast", eventstore.Any(), []eventstore.EventData{fast})
	if err != nil {
		t.Fatal(err)
	}
	if evs, err := s.ReadStream(ctx, "payment-stripe-pi_3Nk-x_Yfast"); err != nil || len(evs) != 1 {
		t.Fatalf("the fast event is not committed: %v, %v", evs, err)
	}

	// One page read now, while the slow transaction is open, must be empty.
	probe, _ := s.SubscribeAll(ctx, eventstore.Start, eventstore.Filter{})
	defer probe.Close()
	if err := probe.(*subscription).fetch(ctx); err != nil {
		t.Fatal(err)
	}
	for _, m := range probe.(*subscription).buf {
		if m.Event == nil || m.Event.ID != before.ID {
			t.Fatalf("feed read past the open transaction: %+v", m)
		}
	}
	// The live subscription, polling every millisecond meanwhile, delivers
	// nothing either. (Waiting can only miss a bug, never invent one.)
	wait, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if m, err := sub.Next(wait); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("next while the slow transaction is open = %+v, %v; want nothing", m, err)
	}

	if err := slowTx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	first, second := nextEvent(t, sub), nextEvent(t, sub)
	if first.ID != slow.ID || second.ID != fast.ID {
		t.Fatalf("after commit got %v then %v, want slow %v then fast %v", first.ID, second.ID, slow.ID, fast.ID)
	}
	if first.Position.Compare(second.Position) >= 0 || second.Position != fastRes.Position {
		t.Fatalf("positions slow %v, fast %v (append said %v)", first.Position, second.Position, fastRes.Position)
	}
}

// TestFeedSkipsAbortedTransaction: an append rolled back never reaches the
// feed, and the feed goes on past it.
func TestFeedSkipsAbortedTransaction(t *testing.T) {
	ctx := t.Context()
	pool := newPool(t, 4)
	s := New(pool, Options{PollInterval: time.Millisecond})
	sub, _ := s.SubscribeAll(ctx, eventstore.Start, eventstore.Filter{})
	defer sub.Close()

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	aborted := testEvent(t, "pi_3Nk-x_Yaborted", "a")
	if out, err := appendIn(ctx, tx, "payment-stripe-pi_3Nk-x_Yaborted", aborted); err != nil || out != "appended" {
		t.Fatalf("append in transaction: %q, %v", out, err)
	}
	after := testEvent(t, "pi_3Nk-x_Yafter", "a")
	if _, err := s.Append(ctx, "payment-stripe-pi_3Nk-x_Yafter", eventstore.Any(), []eventstore.EventData{after}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := nextEvent(t, sub); got.ID != after.ID {
		t.Fatalf("got %v, want %v (the rolled-back event must not appear)", got.ID, after.ID)
	}
}
