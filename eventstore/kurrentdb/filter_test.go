package kurrentdb_test

import (
	"fmt"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrentdb"
)

// TestSubscriptionFilters: system streams never reach a subscriber, not
// even with the zero filter, and a prefix naming them is refused; events the
// filter drops still move the subscriber on through checkpoints.
func TestSubscriptionFilters(t *testing.T) {
	srv := newServer(t) // its log starts with a $epoch-information event
	s := openStore(t, srv, testOptions)

	if _, err := s.SubscribeAll(t.Context(), eventstore.Start, eventstore.Filter{StreamPrefix: "$et-"}); domain.KindOf(err) != domain.KindInvalid {
		t.Fatalf("subscribe to $et- = %v, want KindInvalid", err)
	}

	all, err := s.SubscribeAll(t.Context(), eventstore.Start, eventstore.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	kept := "pi_3Nk-x_Y2eZvKYlo2Ckept"
	first := event(t, kept, "first")
	mustAppend(t, s, stream(kept), eventstore.NoStream(), first)
	if got := collectEvents(t, all, 1); got[0].ID != first.ID {
		t.Fatalf("zero filter delivered %v of %s first, want %v", got[0].ID, got[0].Stream, first.ID)
	}

	narrow, err := s.SubscribeAll(t.Context(), eventstore.Start, eventstore.Filter{StreamPrefix: stream(kept)})
	if err != nil {
		t.Fatal(err)
	}
	defer narrow.Close()
	if got := collectEvents(t, narrow, 1); got[0].ID != first.ID {
		t.Fatalf("prefix filter delivered %v first, want %v", got[0].ID, first.ID)
	}
	other := "pi_3Nk-x_Y2eZvKYlo2Cother"
	for i := range 3 * 32 { // several checkpoint intervals of dropped events
		mustAppend(t, s, stream(other), eventstore.Any(), event(t, other, fmt.Sprint("e", i)))
	}
	sentinel := event(t, kept, "sentinel")
	res := mustAppend(t, s, stream(kept), eventstore.Any(), sentinel)

	checkpoints := 0
	last := eventstore.Position{}
	for {
		m, err := narrow.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if m.Checkpoint.Compare(last) <= 0 || m.Checkpoint.Compare(res.Position) > 0 {
			t.Fatalf("message at %v, want after %v and not after the sentinel's %v", m.Checkpoint, last, res.Position)
		}
		last = m.Checkpoint
		if m.Event != nil {
			if m.Event.ID != sentinel.ID {
				t.Fatalf("prefix filter delivered %v of %s", m.Event.ID, m.Event.Stream)
			}
			break
		}
		checkpoints++
	}
	if checkpoints == 0 {
		t.Fatalf("no checkpoint over %d dropped events", 3*32)
	}
}

// TestSubscribeRejectsClosedStore: a closed store refuses new work.
func TestSubscribeRejectsClosedStore(t *testing.T) {
	srv := newServer(t)
	s, err := kurrentdb.Open(t.Context(), srv.URL(), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SubscribeAll(t.Context(), eventstore.Start, eventstore.Filter{}); err == nil {
		t.Fatal("subscribe on a closed store succeeded")
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Fatal("ping on a closed store succeeded")
	}
}
