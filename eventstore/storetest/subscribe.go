package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore"
)

// appendSeparately appends one event per key, each in its own call, to
// stream name and returns them as stored.
func (sc *scope) appendSeparately(name string, keys ...string) []eventstore.RecordedEvent {
	sc.t.Helper()
	for _, k := range keys {
		sc.mustAppend(sc.stream(name), eventstore.Any(), sc.event(name, k))
	}
	return sc.read(sc.stream(name))
}

// sameEvents fails unless got and want are the same events, in order, at the
// same positions.
func sameEvents(t *testing.T, got, want []eventstore.RecordedEvent) {
	t.Helper()
	if !slices.Equal(recordedIDs(got), recordedIDs(want)) {
		t.Fatalf("got events %v, want %v", recordedIDs(got), recordedIDs(want))
	}
	for i := range got {
		if got[i].Position != want[i].Position || got[i].Revision != want[i].Revision {
			t.Errorf("event %v: position %v revision %d, want %v %d",
				got[i].ID, got[i].Position, got[i].Revision, want[i].Position, want[i].Revision)
		}
	}
}

func testSubscribeFromStart(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	names := []string{"a", "b", "c"}
	var want []uuid.UUID
	for i := range 9 {
		ev := sc.event(names[i%3], fmt.Sprint("e", i))
		sc.mustAppend(sc.stream(names[i%3]), eventstore.Any(), ev)
		want = append(want, ev.ID)
	}
	stored := make(map[uuid.UUID]eventstore.RecordedEvent)
	for _, n := range names {
		for _, e := range sc.read(sc.stream(n)) {
			stored[e.ID] = e
		}
	}

	r := sc.subscribe(eventstore.Start, eventstore.Filter{StreamPrefix: sc.prefix()})
	got := sc.collect(r, len(want))
	if !slices.Equal(recordedIDs(got), want) {
		t.Fatalf("feed order %v, want the append order %v", recordedIDs(got), want)
	}
	for _, e := range got {
		if e.Position != stored[e.ID].Position {
			t.Errorf("event %v: feed position %v, stream position %v", e.ID, e.Position, stored[e.ID].Position)
		}
	}
	sc.expectEnd(r, "a")
}

// testSubscribeFromPosition: a subscription from an event's position starts
// right after it.
func testSubscribeFromPosition(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	stored := sc.appendSeparately("mid", "e0", "e1", "e2", "e3", "e4", "e5")
	r := sc.subscribe(stored[2].Position, eventstore.Filter{StreamPrefix: sc.prefix()})
	sameEvents(t, sc.collect(r, 3), stored[3:])
	sc.expectEnd(r, "mid")
}

// testResumeFromCheckpoint: a position stored as a string and parsed back
// resumes exactly where the consumer stopped, including events appended
// while it was away.
func testResumeFromCheckpoint(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	filter := eventstore.Filter{StreamPrefix: sc.prefix()}
	sc.appendSeparately("resume", "e0", "e1", "e2", "e3")

	first := sc.subscribe(eventstore.Start, filter)
	done := sc.collect(first, 2)
	checkpoint := done[1].Position.String()
	if err := first.sub.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	stored := sc.appendSeparately("resume", "e4", "e5", "e6")
	from, err := eventstore.ParsePosition(checkpoint)
	if err != nil {
		t.Fatalf("parse checkpoint %q: %v", checkpoint, err)
	}
	r := sc.subscribe(from, filter)
	sameEvents(t, sc.collect(r, 5), stored[2:])
	sc.expectEnd(r, "resume")
}

// testSubscribeFilter: a prefix filter delivers its streams' events only;
// the zero filter delivers every stream.
func testSubscribeFilter(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	var all []eventstore.EventData
	for i, name := range []string{"kept", "dropped", "kept", "dropped", "dropped", "kept"} {
		ev := sc.event(name, fmt.Sprint("e", i))
		sc.mustAppend(sc.stream(name), eventstore.Any(), ev)
		all = append(all, ev)
	}
	kept := sc.read(sc.stream("kept"))

	t.Run("prefix", func(t *testing.T) {
		sc := sc.sub(t)
		r := sc.subscribe(eventstore.Start, eventstore.Filter{StreamPrefix: sc.stream("kept")})
		sameEvents(t, sc.collect(r, len(kept)), kept)
		// Events the filter drops come before the sentinel, and still
		// nothing but the sentinel arrives.
		sc.mustAppend(sc.stream("dropped"), eventstore.Any(), sc.event("dropped", "late"))
		sc.expectEnd(r, "kept")
	})
	t.Run("zero", func(t *testing.T) {
		sc := sc.sub(t)
		r := sc.subscribe(eventstore.Start, eventstore.Filter{})
		want := idsOf(all)
		var got []uuid.UUID
		for len(got) < len(want) {
			e, err := r.next(sc.ctx)
			if err != nil {
				t.Fatalf("after %d of our %d events: %v", len(got), len(want), err)
			}
			if slices.Contains(want, e.ID) { // other subtests share the store
				got = append(got, e.ID)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}

// testLiveDelivery: a subscriber that has caught up and is waiting in Next
// receives events appended after it started waiting.
func testLiveDelivery(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	history := sc.appendSeparately("live", "e0", "e1")
	r := sc.subscribe(eventstore.Start, eventstore.Filter{StreamPrefix: sc.prefix()})
	sameEvents(t, sc.collect(r, 2), history)

	type result struct {
		evs []eventstore.RecordedEvent
		err error
	}
	got := make(chan result, 1)
	go func() {
		evs, err := r.collect(sc.ctx, 3)
		got <- result{evs, err}
	}()
	stored := sc.appendSeparately("live", "e2", "e3", "e4")
	res := <-got
	if res.err != nil {
		t.Fatal(res.err)
	}
	sameEvents(t, res.evs, stored[2:])
}
