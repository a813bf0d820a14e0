package kurrenttest

import (
	"math"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

const (
	// noStream is the last event number of a stream that has no events.
	noStream int64 = -1
	// deletedStream is the last event number of a tombstoned stream, and the
	// $tb value that marks a soft-deleted one (EventNumber.DeletedStream).
	deletedStream int64 = math.MaxInt64
	// firstPosition is where the first record lands, so that no event ever
	// sits at position 0, which the client reads as "start".
	firstPosition int64 = 128
	// recordOverhead approximates the fixed part of a prepare record, so
	// that positions grow like the byte offsets of a real transaction log.
	recordOverhead = 64
)

// record is one committed event (or tombstone) in the log. Records never
// change after commit, so readers may keep pointers to them outside the lock.
type record struct {
	pos, end int64 // log position and the position just after the record
	stream   string
	number   int64 // event number; deletedStream for a tombstone
	id       uuid.UUID
	typ      string
	json     bool
	data     []byte
	meta     []byte
	created  int64 // 100 ns ticks since the Unix epoch, as the server sends them
}

func (r *record) tombstone() bool { return r.number == deletedStream }

// streamState indexes one stream's records.
type streamState struct {
	events    []*record // by event number
	tombstone *record
}

// proposed is an event of an append request, already validated.
type proposed struct {
	id   uuid.UUID
	typ  string
	json bool
	data []byte
	meta []byte
	// system records (the node's own bookkeeping) bypass the
	// committed-events cache, so they never count against a test's budget.
	system bool
}

// store is the whole database: one log, per-stream indexes and the
// committed-events cache, all guarded by one mutex. Writes are applied one at
// a time, so the server never reaches the cluster-only IdempotentNotReady path.
type store struct {
	mu      sync.Mutex
	log     []*record
	streams map[string]*streamState
	next    int64 // position of the next record
	cache   *idCache
	now     func() time.Time
	// wake is closed and replaced on every commit, so waiting subscriptions
	// see each commit without polling.
	wake chan struct{}
}

func newStore(cache *idCache, now func() time.Time) *store {
	return &store{
		streams: make(map[string]*streamState),
		next:    firstPosition,
		cache:   cache,
		now:     now,
		wake:    make(chan struct{}),
	}
}

// changed returns a channel closed at the next commit. Call with mu held.
func (st *store) changed() <-chan struct{} { return st.wake }

// notify wakes every waiting reader. Call with mu held, after a commit.
func (st *store) notify() {
	close(st.wake)
	st.wake = make(chan struct{})
}

// tail is the position of the last record (LastIndexedPosition), or the
// head of the log when it is empty. Call with mu held.
func (st *store) tail() tfpos {
	if len(st.log) == 0 {
		return headOfLog
	}
	return st.log[len(st.log)-1].position()
}

// lastNumber is the stream's last event number: noStream when it has none,
// deletedStream when it (or, for a metastream, its stream) is tombstoned.
// A soft-deleted stream keeps its real last number. Call with mu held.
func (st *store) lastNumber(name string) int64 {
	if orig, ok := originalOf(name); ok && st.lastNumber(orig) == deletedStream {
		return deletedStream
	}
	s := st.streams[name]
	switch {
	case s == nil:
		return noStream
	case s.tombstone != nil:
		return deletedStream
	}
	return int64(len(s.events)) - 1
}

// event returns the stored event at number, ignoring metadata, as the
// strong idempotency check's index lookup does. Call with mu held.
func (st *store) event(name string, number int64) *record {
	s := st.streams[name]
	if s == nil || number < 0 || number >= int64(len(s.events)) {
		return nil
	}
	return s.events[number]
}

// commit appends one record to the log and its stream. Call with mu held.
func (st *store) commit(name string, number int64, p proposed) *record {
	r := &record{
		pos:     st.next,
		stream:  name,
		number:  number,
		id:      p.id,
		typ:     p.typ,
		json:    p.json,
		data:    p.data,
		meta:    p.meta,
		created: ticks(st.now()),
	}
	r.end = r.pos + int64(recordOverhead+len(name)+len(p.typ)+len(p.data)+len(p.meta))
	st.next = r.end
	st.log = append(st.log, r)
	s := st.streams[name]
	if s == nil {
		s = &streamState{}
		st.streams[name] = s
	}
	if r.tombstone() {
		s.tombstone = r
	} else {
		s.events = append(s.events, r)
	}
	if !p.system {
		st.cache.put(p.id, name, number)
	}
	return r
}

// skipEmpty accounts for the empty prepare an empty append writes and
// returns its position. Call with mu held.
func (st *store) skipEmpty() int64 {
	pos := st.next
	st.next += recordOverhead
	return pos
}

// since returns the records committed to the log from index i on. Call with
// mu held; the copy may be used after unlocking.
func (st *store) since(i int) []*record {
	if i >= len(st.log) {
		return nil
	}
	return append([]*record(nil), st.log[i:]...)
}

// streamSince returns the stream's records from index i on in append order,
// the tombstone last. Call with mu held.
func (st *store) streamSince(name string, i int) []*record {
	s := st.streams[name]
	if s == nil {
		return nil
	}
	var out []*record
	if i < len(s.events) {
		out = append(out, s.events[i:]...)
	}
	if s.tombstone != nil && i <= len(s.events) {
		out = append(out, s.tombstone)
	}
	return out
}

// streamLen is how many records the stream holds, tombstone included.
// Call with mu held.
func (st *store) streamLen(name string) int {
	s := st.streams[name]
	if s == nil {
		return 0
	}
	if s.tombstone != nil {
		return len(s.events) + 1
	}
	return len(s.events)
}

// metastreamOf names the stream holding name's metadata.
func metastreamOf(name string) string { return "$$" + name }

// originalOf returns the stream a metastream describes.
func originalOf(name string) (string, bool) { return strings.CutPrefix(name, "$$") }

// ticks converts t to .NET ticks since the Unix epoch, the unit of the
// "created" metadata key.
func ticks(t time.Time) int64 { return t.UnixNano() / 100 }
