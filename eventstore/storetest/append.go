package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

func testAppendToNewStream(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	stream := sc.stream("new")
	evs := sc.events("new", "a", "b", "c")

	res := sc.mustAppend(stream, eventstore.NoStream(), evs...)
	if res.Duplicate || res.Revision != 2 || res.Position == eventstore.Start {
		t.Fatalf("append = %+v, want revision 2, not duplicate, a position", res)
	}
	got := sc.read(stream)
	if !slices.Equal(recordedIDs(got), idsOf(evs)) {
		t.Fatalf("read IDs = %v, want %v", recordedIDs(got), idsOf(evs))
	}
	for i, e := range got {
		if e.Revision != uint64(i) || e.Stream != stream {
			t.Errorf("event %d: revision %d stream %q, want revision %d stream %q", i, e.Revision, e.Stream, i, stream)
		}
	}
	if last := got[len(got)-1].Position; last != res.Position {
		t.Errorf("last event's position %v, append reported %v", last, res.Position)
	}
}

func testExpectedRevision(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	tests := []struct {
		name     string
		existing int // events in the stream before the append
		expected eventstore.ExpectedRevision
		wantRev  uint64
		conflict bool
	}{
		{name: "any-missing", existing: 0, expected: eventstore.Any(), wantRev: 0},
		{name: "any-existing", existing: 2, expected: eventstore.Any(), wantRev: 2},
		{name: "nostream-missing", existing: 0, expected: eventstore.NoStream(), wantRev: 0},
		{name: "nostream-existing", existing: 1, expected: eventstore.NoStream(), conflict: true},
		{name: "exact-head", existing: 2, expected: eventstore.Exact(1), wantRev: 2},
		{name: "exact-behind", existing: 2, expected: eventstore.Exact(0), conflict: true},
		{name: "exact-ahead", existing: 2, expected: eventstore.Exact(5), conflict: true},
		{name: "exact-missing", existing: 0, expected: eventstore.Exact(0), conflict: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := sc.sub(t)
			stream := sc.stream(tt.name)
			for i := range tt.existing {
				sc.mustAppend(stream, eventstore.Any(), sc.event(tt.name, fmt.Sprint("old", i)))
			}
			ev := sc.event(tt.name, "new")
			res, err := s.Append(sc.ctx, stream, tt.expected, []eventstore.EventData{ev})
			want := tt.existing + 1
			if tt.conflict {
				want = tt.existing
				if !errors.Is(err, domain.ErrConflict) || domain.KindOf(err) != domain.KindConflict {
					t.Fatalf("append = %+v, %v; want an error wrapping domain.ErrConflict", res, err)
				}
			} else if err != nil || res.Duplicate || res.Revision != tt.wantRev {
				t.Fatalf("append = %+v, %v; want revision %d", res, err, tt.wantRev)
			}
			if n := len(sc.readIDs(stream)); n != want {
				t.Fatalf("stream has %d events, want %d", n, want)
			}
		})
	}
}

// testBatchAtomicity: a batch holding one event that is stored already is a
// redelivery, wherever that event sits in the batch: nothing of it is
// written, not even its new events.
func testBatchAtomicity(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	tests := []struct {
		name  string
		batch []string // "stored" is the event already in the stream
	}{
		{name: "first", batch: []string{"stored", "b", "c"}},
		{name: "middle", batch: []string{"b", "stored", "c"}},
		{name: "last", batch: []string{"b", "c", "stored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := sc.sub(t)
			stream := sc.stream("atomic-" + tt.name)
			stored := sc.event("atomic-"+tt.name, "stored")
			sc.mustAppend(stream, eventstore.NoStream(), stored)

			res, err := s.Append(sc.ctx, stream, eventstore.Any(), sc.events("atomic-"+tt.name, tt.batch...))
			if err != nil || !res.Duplicate {
				t.Fatalf("append = %+v, %v; want duplicate", res, err)
			}
			if got := sc.readIDs(stream); len(got) != 1 || got[0] != stored.ID {
				t.Fatalf("stream holds %v, want only %v", got, stored.ID)
			}
			// The new events were not stored anywhere: they append now.
			res = sc.mustAppend(stream, eventstore.Exact(0), sc.events("atomic-"+tt.name, "b", "c")...)
			if res.Duplicate || res.Revision != 2 {
				t.Fatalf("append of the new events = %+v, want revision 2", res)
			}
		})
	}
}

func testInvalidBatch(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	ev := sc.event("invalid", "a")
	tests := []struct {
		name  string
		batch []eventstore.EventData
	}{
		{name: "empty", batch: nil},
		{name: "repeated-id", batch: []eventstore.EventData{ev, ev}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := sc.sub(t)
			stream := sc.stream("invalid-" + tt.name)
			res, err := s.Append(sc.ctx, stream, eventstore.Any(), tt.batch)
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("append = %+v, %v; want a KindInvalid error", res, err)
			}
			if n := len(sc.read(stream)); n != 0 {
				t.Fatalf("stream has %d events, want none", n)
			}
		})
	}
}
