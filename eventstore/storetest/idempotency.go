package storetest

import (
	"sync"
	"testing"

	"github.com/payledger/payledger/eventstore"
)

// testRedelivery: appending events that are stored already writes nothing
// and says Duplicate, whatever the expected revision, stale ones included.
func testRedelivery(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	stream := sc.stream("redelivered")
	first := sc.events("redelivered", "a", "b") // revisions 0 and 1
	third := sc.event("redelivered", "c")       // revision 2
	sc.mustAppend(stream, eventstore.NoStream(), first...)
	sc.mustAppend(stream, eventstore.Exact(1), third)
	stored := sc.readIDs(stream)

	tests := []struct {
		name     string
		batch    []eventstore.EventData
		expected eventstore.ExpectedRevision
		wantRev  uint64 // the stored copy's revision of the batch's last event
	}{
		{name: "single-any", batch: []eventstore.EventData{third}, expected: eventstore.Any(), wantRev: 2},
		{name: "single-original-exact", batch: []eventstore.EventData{third}, expected: eventstore.Exact(1), wantRev: 2},
		{name: "single-current-exact", batch: []eventstore.EventData{third}, expected: eventstore.Exact(2), wantRev: 2},
		{name: "single-stale-nostream", batch: first[:1], expected: eventstore.NoStream(), wantRev: 0},
		{name: "batch-original-nostream", batch: first, expected: eventstore.NoStream(), wantRev: 1},
		{name: "batch-any", batch: first, expected: eventstore.Any(), wantRev: 1},
		{name: "batch-current-exact", batch: first, expected: eventstore.Exact(2), wantRev: 1},
		{name: "batch-wrong-exact", batch: first, expected: eventstore.Exact(7), wantRev: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := sc.sub(t)
			res := sc.mustAppend(stream, tt.expected, tt.batch...)
			want := eventstore.AppendResult{Duplicate: true, Revision: tt.wantRev}
			if res != want {
				t.Fatalf("append = %+v, want %+v", res, want)
			}
			if got := sc.readIDs(stream); len(got) != len(stored) {
				t.Fatalf("stream has %d events, want %d", len(got), len(stored))
			}
		})
	}
}

// testDuplicateStorm: many deliveries of one event racing each other store
// it once; every other one is a Duplicate, none is an error.
func testDuplicateStorm(t *testing.T, s eventstore.Store) {
	const deliveries = 50
	sc := newScope(t, s)
	stream := sc.stream("storm")
	ev := sc.event("storm", "once")

	results := make([]eventstore.AppendResult, deliveries)
	errs := make([]error, deliveries)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range deliveries {
		expected := eventstore.Any()
		if i%2 == 1 {
			expected = eventstore.NoStream()
		}
		wg.Go(func() {
			<-start
			results[i], errs[i] = s.Append(sc.ctx, stream, expected, []eventstore.EventData{ev})
		})
	}
	close(start)
	wg.Wait()

	appended := 0
	for i := range deliveries {
		switch {
		case errs[i] != nil:
			t.Errorf("delivery %d: %v", i, errs[i])
		case !results[i].Duplicate:
			appended++
		case results[i].Revision != 0:
			t.Errorf("delivery %d: duplicate of revision %d, want 0", i, results[i].Revision)
		}
	}
	if appended != 1 {
		t.Errorf("%d deliveries appended, want exactly 1", appended)
	}
	if got := sc.readIDs(stream); len(got) != 1 || got[0] != ev.ID {
		t.Fatalf("stream holds %v, want only %v", got, ev.ID)
	}
}
