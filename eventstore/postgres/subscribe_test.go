package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/payledger/payledger/eventstore"
)

// TestFeedCheckpointAfterFilteredPage: a page that ends with events the
// filter drops ends with a checkpoint at the page's last row, so a consumer
// can advance past streams it does not follow.
func TestFeedCheckpointAfterFilteredPage(t *testing.T) {
	ctx := t.Context()
	s := New(newPool(t, 4), Options{BatchSize: 2})
	var stored []eventstore.AppendResult
	for _, stream := range []string{"payment-stripe-pi_3Nk-x_Ya", "refund-stripe-re_1", "refund-stripe-re_2", "refund-stripe-re_3"} {
		res, err := s.Append(ctx, stream, eventstore.NoStream(), []eventstore.EventData{testEvent(t, stream, "a")})
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, res)
	}
	sub, _ := s.SubscribeAll(ctx, eventstore.Start, eventstore.Filter{StreamPrefix: eventstore.PaymentStreamPrefix})
	defer sub.Close()

	// Pages of two: [payment, re_1] then [re_2, re_3], each ending with a
	// checkpoint at its last row. A page can come back shorter when a
	// transaction anywhere in the cluster (another test package) holds the
	// feed's xmin horizon back; then its checkpoints fall on other stored
	// rows. Either way: the payment event first, then only checkpoints,
	// each on a stored row and moving forward, the last on re_3. A store
	// that kept quiet about filtered pages would block: the deadline says so.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := sub.Next(ctx)
	if err != nil {
		t.Fatalf("message 0: %v", err)
	}
	if m.Event == nil || m.Event.Position != stored[0].Position || m.Checkpoint != stored[0].Position {
		t.Fatalf("message 0 = event %v checkpoint %v, want the payment event at %v", m.Event, m.Checkpoint, stored[0].Position)
	}
	next := 1 // the first stored row a checkpoint may still name
	for i := 1; m.Checkpoint != stored[3].Position; i++ {
		if m, err = sub.Next(ctx); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		at := -1
		for j := next; j < len(stored); j++ {
			if m.Checkpoint == stored[j].Position {
				at = j
			}
		}
		if m.Event != nil || at < 0 {
			t.Fatalf("message %d = event %v checkpoint %v, want a checkpoint on one of %v", i, m.Event, m.Checkpoint, stored[next:])
		}
		next = at + 1
	}
}

// TestSubscriptionEnds: a Next blocked waiting for events returns, with
// the right error, when its own ctx ends (the subscription stays usable),
// when the subscription's ctx ends, or after Close (it stays ended).
func TestSubscriptionEnds(t *testing.T) {
	s := New(newPool(t, 4), Options{})
	tests := []struct {
		name  string
		end   func(cancelNext, cancelSub context.CancelFunc, sub eventstore.Subscription)
		want  error
		ended bool // the subscription is over, not just this Next
	}{
		{"next-ctx", func(cancelNext, _ context.CancelFunc, _ eventstore.Subscription) { cancelNext() }, context.Canceled, false},
		{"subscription-ctx", func(_, cancelSub context.CancelFunc, _ eventstore.Subscription) { cancelSub() }, context.Canceled, true},
		{"close", func(_, _ context.CancelFunc, sub eventstore.Subscription) { _ = sub.Close() }, errClosed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subCtx, cancelSub := context.WithCancel(t.Context())
			defer cancelSub()
			nextCtx, cancelNext := context.WithCancel(t.Context())
			defer cancelNext()
			sub, _ := s.SubscribeAll(subCtx, eventstore.Start, eventstore.Filter{})
			defer sub.Close()

			ended := make(chan error, 1)
			go func() {
				_, err := sub.Next(nextCtx) // the store is empty: blocks
				ended <- err
			}()
			tt.end(cancelNext, cancelSub, sub)
			if err := <-ended; !errors.Is(err, tt.want) {
				t.Fatalf("blocked next = %v, want %v", err, tt.want)
			}
			if tt.ended {
				if _, err := sub.Next(t.Context()); !errors.Is(err, tt.want) {
					t.Fatalf("later next = %v, want %v", err, tt.want)
				}
				return
			}
			stream := "payment-stripe-pi_3Nk-x_Y" + tt.name
			ev := testEvent(t, stream, "a")
			if _, err := s.Append(t.Context(), stream, eventstore.NoStream(), []eventstore.EventData{ev}); err != nil {
				t.Fatal(err)
			}
			if got := nextEvent(t, sub); got.ID != ev.ID {
				t.Fatalf("later next = %v, want %v", got.ID, ev.ID)
			}
		})
	}
}
