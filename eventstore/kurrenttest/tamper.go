package kurrenttest

import (
	"fmt"
	"slices"
	"sort"

	"github.com/google/uuid"
)

// TamperedEvent is the content of a stored event that Tamper may rewrite.
// The stream, event number and log position are not part of it: they say
// where the event sits, which a rewrite behind the client's back keeps.
type TamperedEvent struct {
	ID       uuid.UUID
	Type     string
	JSON     bool // content type application/json rather than octet-stream
	Data     []byte
	Metadata []byte
}

// Tamper is for tests: it models a node whose data was rewritten behind
// the client's back. Event number of stream is replaced, in the stream and
// in $all, by a copy that alter may change; stream reads, $all reads and
// subscriptions that have not yet delivered it serve the copy. The log
// position is kept, and the committed-events cache is left as it was, as a
// node's own memory would be: reads never consult it. No commit is
// signalled, so subscriptions are not woken.
func (s *Server) Tamper(stream string, number int64, alter func(*TamperedEvent)) error {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	old := s.st.event(stream, number)
	if old == nil {
		return fmt.Errorf("kurrenttest: tamper %s@%d: no such event", stream, number)
	}
	te := old.content()
	alter(&te)
	s.st.replace(old.with(te, old.created))
	return nil
}

// Swap is for tests: it models a node whose data was rewritten behind the
// client's back by exchanging the contents (ID, type, data, metadata and
// created date) of events a and b of stream, so the stream serves them in
// the other order while each number keeps its log position.
func (s *Server) Swap(stream string, a, b int64) error {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	ra, rb := s.st.event(stream, a), s.st.event(stream, b)
	if ra == nil || rb == nil {
		return fmt.Errorf("kurrenttest: swap %s@%d and @%d: no such event", stream, a, b)
	}
	s.st.replace(ra.with(rb.content(), rb.created))
	s.st.replace(rb.with(ra.content(), ra.created))
	return nil
}

// content is what Tamper lets a test change, with its byte slices copied so
// that alter cannot reach into the committed record.
func (r *record) content() TamperedEvent {
	return TamperedEvent{ID: r.id, Type: r.typ, JSON: r.json, Data: slices.Clone(r.data), Metadata: slices.Clone(r.meta)}
}

// with returns a new record at r's place holding te: committed records
// never change, since readers may keep pointers to them outside the lock.
func (r *record) with(te TamperedEvent, created int64) *record {
	c := *r
	c.id, c.typ, c.json = te.ID, te.Type, te.JSON
	c.data, c.meta = slices.Clone(te.Data), slices.Clone(te.Metadata)
	c.created = created
	return &c
}

// replace puts r where the record of the same stream and number sits, in
// the stream's index and in the log, by pointer only. The slices are
// rewritten copy-on-write so that no slice handed out before sees the
// change. Call with mu held.
func (st *store) replace(r *record) {
	s := st.streams[r.stream]
	events := slices.Clone(s.events)
	events[r.number] = r
	s.events = events
	i := sort.Search(len(st.log), func(i int) bool { return st.log[i].pos >= r.pos })
	log := slices.Clone(st.log)
	log[i] = r
	st.log = log
}
