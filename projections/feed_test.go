package projections

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// memFeed is an in-memory global feed: a Subscriber serving recorded events
// and checkpoint messages in order, with positions 1, 2, 3... It stands in
// for an event store, not for the database under test.
type memFeed struct {
	t     testing.TB
	codec *eventstore.Codec

	mu         sync.Mutex
	msgs       []eventstore.Message
	wake       chan struct{} // closed and replaced whenever msgs or failGen change
	failGen    int
	failErr    error
	subscribed []eventstore.Position // from of every SubscribeAll call
	revs       map[string]uint64
	next       uint64
}

var _ Subscriber = (*memFeed)(nil)

func newMemFeed(t testing.TB) *memFeed {
	return &memFeed{t: t, codec: eventstore.NewCodec(), wake: make(chan struct{}), revs: map[string]uint64{}}
}

// SubscribeAll implements Subscriber.
func (f *memFeed) SubscribeAll(_ context.Context, from eventstore.Position, filter eventstore.Filter) (eventstore.Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subscribed = append(f.subscribed, from)
	return &memSub{f: f, from: from, filter: filter, failGen: f.failGen}, nil
}

// add encodes and appends events; it returns the last one's position.
func (f *memFeed) add(events ...domain.Event) eventstore.Position {
	f.t.Helper()
	return f.addAt(time.Time{}, events...)
}

// addAt is add with every event recorded at at (zero: the feed's clock).
func (f *memFeed) addAt(at time.Time, events ...domain.Event) eventstore.Position {
	f.t.Helper()
	var last eventstore.Position
	for _, e := range events {
		d, err := f.codec.Encode(e, eventstore.Metadata{Provider: e.EventMeta().Provider})
		if err != nil {
			f.t.Fatalf("encode: %v", err)
		}
		m := e.EventMeta()
		last = f.addRecorded(eventstore.RecordedEvent{
			ID: d.ID, Stream: eventstore.PaymentStream(m.Provider, m.ProviderPaymentID),
			Type: d.Type, Data: d.Data, Metadata: d.Metadata, RecordedAt: at,
		})
	}
	return last
}

// addRecorded appends rec, assigning its revision, position and, unless
// set, record time.
func (f *memFeed) addRecorded(rec eventstore.RecordedEvent) eventstore.Position {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	rec.Position = eventstore.Position{Commit: f.next, Prepare: f.next}
	rec.Revision = f.revs[rec.Stream]
	f.revs[rec.Stream]++
	if rec.RecordedAt.IsZero() {
		rec.RecordedAt = time.Date(2025, 3, 2, 0, 0, 0, int(f.next)*1000, time.UTC)
	}
	f.msgs = append(f.msgs, eventstore.Message{Event: &rec})
	f.broadcast()
	return rec.Position
}

// recordedAt returns the record time of the event at pos.
func (f *memFeed) recordedAt(pos eventstore.Position) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.msgs {
		if m.Event != nil && m.Event.Position == pos {
			return m.Event.RecordedAt
		}
	}
	f.t.Fatalf("no event at %s", pos)
	return time.Time{}
}

// checkpoint appends a checkpoint-only message and returns its position.
func (f *memFeed) checkpoint() eventstore.Position {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	p := eventstore.Position{Commit: f.next, Prepare: f.next}
	f.msgs = append(f.msgs, eventstore.Message{Checkpoint: p})
	f.broadcast()
	return p
}

// fail makes every open subscription's next Next return err.
func (f *memFeed) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failGen++
	f.failErr = err
	f.broadcast()
}

func (f *memFeed) subscriptions() []eventstore.Position {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]eventstore.Position(nil), f.subscribed...)
}

func (f *memFeed) broadcast() {
	close(f.wake)
	f.wake = make(chan struct{})
}

type memSub struct {
	f       *memFeed
	from    eventstore.Position
	filter  eventstore.Filter
	i       int
	failGen int
}

func (s *memSub) Next(ctx context.Context) (eventstore.Message, error) {
	for {
		m, wake, ok, err := s.poll()
		if ok || err != nil {
			return m, err
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return eventstore.Message{}, ctx.Err()
		}
	}
}

// poll returns the next message after s.from, or the channel to wait on.
func (s *memSub) poll() (eventstore.Message, <-chan struct{}, bool, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.failGen != f.failGen {
		s.failGen = f.failGen
		return eventstore.Message{}, nil, false, f.failErr
	}
	for s.i < len(f.msgs) {
		m := f.msgs[s.i]
		s.i++
		pos := m.Checkpoint
		if m.Event != nil {
			pos = m.Event.Position
			if !s.filter.Match(m.Event.Stream) {
				continue
			}
		}
		if pos.Compare(s.from) > 0 {
			return m, nil, true, nil
		}
	}
	return eventstore.Message{}, f.wake, false, nil
}

func (s *memSub) Close() error { return nil }
