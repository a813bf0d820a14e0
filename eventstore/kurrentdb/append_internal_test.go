package kurrentdb

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore"
)

func TestExpectation(t *testing.T) {
	stored := []eventstore.RecordedEvent{{Revision: 0}, {Revision: 1}, {Revision: 2}}
	tests := []struct {
		name     string
		expected eventstore.ExpectedRevision
		stored   []eventstore.RecordedEvent
		want     esdb.ExpectedRevision
	}{
		// Any never reaches the server as Any: the revision read does.
		{"any-missing", eventstore.Any(), nil, esdb.NoStream{}},
		{"any-existing", eventstore.Any(), stored, esdb.StreamRevision{Value: 2}},
		{"nostream", eventstore.NoStream(), stored, esdb.NoStream{}},
		{"exact", eventstore.Exact(1), stored, esdb.StreamRevision{Value: 1}},
		{"exact-missing", eventstore.Exact(0), nil, esdb.StreamRevision{Value: 0}},
	}
	for _, tt := range tests {
		if got := expectation(tt.expected, tt.stored); got != tt.want {
			t.Errorf("%s: expectation = %#v, want %#v", tt.name, got, tt.want)
		}
	}
}

func TestDuplicateOf(t *testing.T) {
	a, b, c, d := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	stored := []eventstore.RecordedEvent{{ID: a, Revision: 0}, {ID: b, Revision: 1}, {ID: c, Revision: 2}}
	tests := []struct {
		name    string
		batch   []uuid.UUID
		wantRev uint64
		wantDup bool
	}{
		{"new", []uuid.UUID{d}, 0, false},
		{"first", []uuid.UUID{a}, 0, true},
		{"batch", []uuid.UUID{a, b}, 1, true},
		{"partly-stored", []uuid.UUID{d, b}, 1, true},
		{"out-of-order", []uuid.UUID{c, a}, 2, true},
	}
	for _, tt := range tests {
		batch := make([]eventstore.EventData, len(tt.batch))
		for i, id := range tt.batch {
			batch[i] = eventstore.EventData{ID: id}
		}
		rev, dup := duplicateOf(stored, batch)
		if rev != tt.wantRev || dup != tt.wantDup {
			t.Errorf("%s: duplicateOf = %d, %t; want %d, %t", tt.name, rev, dup, tt.wantRev, tt.wantDup)
		}
	}
}

// TestStreamLocks: one holder per stream at a time, other streams are not
// held up, a waiter gives up with its ctx, and entries do not pile up.
func TestStreamLocks(t *testing.T) {
	l := newStreamLocks()
	ctx := t.Context()
	unlock, err := l.lock(ctx, "payment-stripe-pi_1")
	if err != nil {
		t.Fatal(err)
	}
	other, err := l.lock(ctx, "payment-stripe-pi_2")
	if err != nil {
		t.Fatalf("another stream: %v", err)
	}
	other()

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.lock(cancelled, "payment-stripe-pi_1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("lock of a held stream with a cancelled ctx = %v, want context.Canceled", err)
	}

	var wg sync.WaitGroup
	inside := 0
	for range 20 {
		wg.Go(func() {
			u, err := l.lock(ctx, "payment-stripe-pi_1")
			if err != nil {
				t.Error(err)
				return
			}
			inside++ // the race detector flags this if two hold the lock
			u()
		})
	}
	unlock()
	wg.Wait()
	if inside != 20 {
		t.Fatalf("%d lock holders ran, want 20", inside)
	}
	if n := len(l.held); n != 0 {
		t.Fatalf("%d lock entries left, want 0", n)
	}
}

// TestMessageFilter: what a subscription never hands out.
func TestMessageFilter(t *testing.T) {
	at := func(c uint64) esdb.Position { return esdb.Position{Commit: c, Prepare: c} }
	event := func(stream string, c uint64) *esdb.SubscriptionEvent {
		return &esdb.SubscriptionEvent{EventAppeared: &esdb.ResolvedEvent{Event: &esdb.RecordedEvent{StreamID: stream, Position: at(c)}}}
	}
	checkpoint := func(c uint64) *esdb.SubscriptionEvent {
		p := at(c)
		return &esdb.SubscriptionEvent{CheckPointReached: &p}
	}
	tests := []struct {
		name      string
		prefix    string
		pos       uint64
		fromStart bool
		ev        *esdb.SubscriptionEvent
		want      bool
	}{
		{"event-after", "payment-", 10, false, event("payment-stripe-pi_1", 11), true},
		{"event-from-start", "payment-", 0, true, event("payment-stripe-pi_1", 1), true},
		{"event-repeated", "payment-", 10, false, event("payment-stripe-pi_1", 10), false},
		{"event-before", "payment-", 10, false, event("payment-stripe-pi_1", 9), false},
		{"system-stream", "", 0, true, event("$$payment-stripe-pi_1", 1), false},
		{"other-prefix", "payment-", 0, true, event("refund-stripe-re_1", 11), false},
		{"checkpoint-after", "payment-", 10, false, checkpoint(12), true},
		{"checkpoint-same", "payment-", 10, false, checkpoint(10), false},
		{"checkpoint-back", "payment-", 10, false, checkpoint(3), false},
		{"checkpoint-end-sentinel", "payment-", 0, true, checkpoint(math.MaxUint64), false},
		{"checkpoint-start", "payment-", 0, true, checkpoint(0), false},
		{"caught-up", "payment-", 0, true, &esdb.SubscriptionEvent{CaughtUp: &esdb.Subscription{}}, false},
	}
	for _, tt := range tests {
		r := &subscription{
			filter:    eventstore.Filter{StreamPrefix: tt.prefix},
			pos:       eventstore.Position{Commit: tt.pos, Prepare: tt.pos},
			fromStart: tt.fromStart,
		}
		if _, ok := r.message(tt.ev); ok != tt.want {
			t.Errorf("%s: delivered %t, want %t", tt.name, ok, tt.want)
		}
	}
}
