package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore"
)

// testNoSkip is the feed's central promise under load: while many
// goroutines append to a few shared streams (so appends race, retry and
// commit out of order), a subscriber that started first receives every
// appended event exactly once, in increasing positions, each stream's
// events in revision order. A store whose feed let a later commit overtake
// an earlier, slower one would lose events here.
func testNoSkip(t *testing.T, s eventstore.Store) {
	const (
		writers   = 8
		perWriter = 24
		streams   = 4
	)
	sc := newScope(t, s)
	r := sc.subscribe(eventstore.Start, eventstore.Filter{StreamPrefix: sc.prefix()})
	batches := noSkipBatches(sc, writers, perWriter, streams)

	// The end marker is appended once every writer is done, so it follows
	// all their events in the global order: the subscriber owes exactly the
	// events before it.
	end := sc.event("end", "marker")
	type result struct {
		evs []eventstore.RecordedEvent
		err error
	}
	received := make(chan result, 1)
	go func() {
		evs, err := r.until(sc.ctx, end.ID)
		received <- result{evs, err}
	}()

	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i, b := range batches[w] {
				name := fmt.Sprint("s", (w+i)%streams)
				if _, err := appendRetrying(sc.ctx, s, sc.stream(name), b); err != nil {
					errs[w] = fmt.Errorf("writer %d append %d: %w", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	sc.mustAppend(sc.stream("end"), eventstore.NoStream(), end)
	res := <-received
	if res.err != nil {
		t.Fatal(res.err)
	}
	checkFeed(t, res.evs, batches)
}

// noSkipBatches returns, per writer, the batches it appends, each to stream
// "s{(writer+i) % streams}"; every third append is a batch of two.
func noSkipBatches(sc *scope, writers, perWriter, streams int) [][][]eventstore.EventData {
	batches := make([][][]eventstore.EventData, writers)
	for w := range writers {
		for i := range perWriter {
			name := fmt.Sprint("s", (w+i)%streams)
			b := sc.events(name, fmt.Sprintf("w%d-%d", w, i))
			if i%3 == 0 {
				b = append(b, sc.event(name, fmt.Sprintf("w%d-%db", w, i)))
			}
			batches[w] = append(batches[w], b)
		}
	}
	return batches
}

// checkFeed compares what a subscriber received with what was appended: no
// event missing, none twice, and each stream in revision order from 0.
func checkFeed(t *testing.T, got []eventstore.RecordedEvent, batches [][][]eventstore.EventData) {
	t.Helper()
	want := make(map[uuid.UUID]bool)
	for _, w := range batches {
		for _, b := range w {
			for _, e := range b {
				want[e.ID] = true
			}
		}
	}
	seen := make(map[uuid.UUID]bool, len(got))
	next := make(map[string]uint64) // stream → revision expected next
	for _, e := range got {
		switch {
		case seen[e.ID]:
			t.Errorf("event %v delivered twice", e.ID)
		case !want[e.ID]:
			t.Errorf("event %v of %s delivered but never appended", e.ID, e.Stream)
		}
		seen[e.ID] = true
		if e.Revision != next[e.Stream] {
			t.Errorf("%s: revision %d delivered when %d was due", e.Stream, e.Revision, next[e.Stream])
		}
		next[e.Stream] = e.Revision + 1
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("event %v appended but never delivered", id)
		}
	}
}
