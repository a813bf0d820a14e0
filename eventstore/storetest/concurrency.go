package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore"
)

// testConcurrentDistinct: appenders racing on one stream with Any all get
// stored, each at its own revision.
func testConcurrentDistinct(t *testing.T, s eventstore.Store) {
	const appenders = 10
	sc := newScope(t, s)
	batches := make([][]eventstore.EventData, appenders)
	for i := range batches {
		batches[i] = sc.events("distinct", fmt.Sprint("e", i))
	}
	concurrentAppends(sc, sc.stream("distinct"), batches)
}

// testConcurrentBatches: racing batches with Any land whole, each at
// consecutive revisions in batch order, never interleaved.
func testConcurrentBatches(t *testing.T, s eventstore.Store) {
	const appenders = 5
	sc := newScope(t, s)
	batches := make([][]eventstore.EventData, appenders)
	for i := range batches {
		batches[i] = sc.events("batches", fmt.Sprint("b", i, "x"), fmt.Sprint("b", i, "y"), fmt.Sprint("b", i, "z"))
	}
	concurrentAppends(sc, sc.stream("batches"), batches)
}

// concurrentAppends appends every batch to stream at once, then checks that
// the stream is exactly the batches, each whole, at the revisions reported.
func concurrentAppends(sc *scope, stream string, batches [][]eventstore.EventData) {
	t := sc.t
	results := make([]eventstore.AppendResult, len(batches))
	errs := make([]error, len(batches))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, b := range batches {
		wg.Go(func() {
			<-start
			results[i], errs[i] = appendRetrying(sc.ctx, sc.s, stream, b)
		})
	}
	close(start)
	wg.Wait()

	stored := sc.readIDs(stream)
	at := make(map[uuid.UUID]int, len(stored))
	for rev, id := range stored {
		at[id] = rev
	}
	total := 0
	for i, b := range batches {
		total += len(b)
		if errs[i] != nil || results[i].Duplicate {
			t.Errorf("batch %d: %+v, %v; want appended", i, results[i], errs[i])
			continue
		}
		last := int(results[i].Revision)
		for j, e := range b {
			if rev, ok := at[e.ID]; !ok || rev != last-len(b)+1+j {
				t.Errorf("batch %d event %d at revision %d (stored %t), want %d", i, j, rev, ok, last-len(b)+1+j)
			}
		}
	}
	if len(stored) != total {
		t.Errorf("stream has %d events, want %d", len(stored), total)
	}
}
