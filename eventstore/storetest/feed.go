package storetest

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore"
)

// reader consumes a subscription and checks on every message what the
// contract promises of any feed: events match the filter, event positions
// strictly increase and follow the start position, checkpoints never go
// back. It is used by one goroutine at a time and reports, never fails the
// test, so it may run beside the test goroutine.
type reader struct {
	sub    eventstore.Subscription
	filter eventstore.Filter
	last   eventstore.Position // the latest position delivered, or the start
	// atStart: nothing delivered yet and subscribed from Start, so the first
	// event may sit at Start itself.
	atStart bool
	// sentinels counts expectEnd's events, to name them uniquely.
	sentinels int
}

// subscribe opens a subscription that the test closes when it ends.
func (sc *scope) subscribe(from eventstore.Position, filter eventstore.Filter) *reader {
	sc.t.Helper()
	sub, err := sc.s.SubscribeAll(sc.ctx, from, filter)
	if err != nil {
		sc.t.Fatalf("subscribe from %v: %v", from, err)
	}
	sc.t.Cleanup(func() { _ = sub.Close() })
	return &reader{sub: sub, filter: filter, last: from, atStart: from == eventstore.Start}
}

// next returns the next event, passing over checkpoints.
func (r *reader) next(ctx context.Context) (eventstore.RecordedEvent, error) {
	for {
		m, err := r.sub.Next(ctx)
		if err != nil {
			return eventstore.RecordedEvent{}, fmt.Errorf("next after %v: %w", r.last, err)
		}
		if m.Event == nil {
			if m.Checkpoint.Compare(r.last) < 0 {
				return eventstore.RecordedEvent{}, fmt.Errorf("checkpoint %v goes back from %v", m.Checkpoint, r.last)
			}
			r.last = m.Checkpoint
			continue
		}
		e := *m.Event
		if c := e.Position.Compare(r.last); c < 0 || c == 0 && !r.atStart {
			return e, fmt.Errorf("event %v of %s at %v, not after %v", e.ID, e.Stream, e.Position, r.last)
		}
		if !r.filter.Match(e.Stream) {
			return e, fmt.Errorf("event %v of %s passed filter %q", e.ID, e.Stream, r.filter.StreamPrefix)
		}
		r.last, r.atStart = e.Position, false
		return e, nil
	}
}

// collect returns the next n events.
func (r *reader) collect(ctx context.Context, n int) ([]eventstore.RecordedEvent, error) {
	evs := make([]eventstore.RecordedEvent, 0, n)
	for len(evs) < n {
		e, err := r.next(ctx)
		if err != nil {
			return evs, fmt.Errorf("after %d of %d events: %w", len(evs), n, err)
		}
		evs = append(evs, e)
	}
	return evs, nil
}

// until returns the events before the one with ID end, consuming end too.
// When end was appended after every other append finished, these are all
// the events the feed owes: a missing one shows at once, not as a timeout.
func (r *reader) until(ctx context.Context, end uuid.UUID) ([]eventstore.RecordedEvent, error) {
	var evs []eventstore.RecordedEvent
	for {
		e, err := r.next(ctx)
		if err != nil {
			return evs, fmt.Errorf("after %d events: %w", len(evs), err)
		}
		if e.ID == end {
			return evs, nil
		}
		evs = append(evs, e)
	}
}

// collect returns r's next n events and fails the test if they do not come.
func (sc *scope) collect(r *reader, n int) []eventstore.RecordedEvent {
	sc.t.Helper()
	evs, err := r.collect(sc.ctx, n)
	if err != nil {
		sc.t.Fatal(err)
	}
	return evs
}

// expectEnd checks that r has nothing more to deliver: after a fresh event
// is appended to stream name (which r's filter must pass), it is the very
// next event r delivers. Appending rather than waiting keeps the check free
// of timing.
func (sc *scope) expectEnd(r *reader, name string) {
	sc.t.Helper()
	r.sentinels++
	sentinel := sc.event(name, fmt.Sprint("sentinel", r.sentinels))
	sc.mustAppend(sc.stream(name), eventstore.Any(), sentinel)
	got := sc.collect(r, 1)
	if got[0].ID != sentinel.ID {
		sc.t.Fatalf("after the expected events came %v of %s at %v, want the sentinel %v",
			got[0].ID, got[0].Stream, got[0].Position, sentinel.ID)
	}
}
