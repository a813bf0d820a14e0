package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payledger/payledger/eventstore"
)

// groupSQL appends many single events in one transaction
// (migrations/00005_eventstore_group_append.sql).
const groupSQL = `SELECT ord, revision, commit_tx, prepare_seq, stored_stream, stored_revision
	FROM es_append_group($1, $2, $3, $4, $5)`

// group is the store's group commit. A webhook append is one small event,
// and what bounds their rate is not the row but the transaction around it:
// a round trip, a snapshot, a commit record and its WAL flush, paid once
// per event. group merges the single-event appends with any expected
// revision that are waiting at the same time into one es_append_group call,
// so under load they share all of that; every caller is still answered
// only once the transaction holding its event has committed.
//
// Appends are spread over lanes by stream, and a lane has at most one
// merged call in flight: two calls in flight never share a stream, so they
// never wait for each other's stream locks (lanes are what let merged calls
// overlap at all; a stream in two concurrent calls would chain them).
//
// There is no background goroutine and no timer: a caller that finds its
// lane idle leads, taking itself and whatever is queued (up to size); a
// leader that finishes hands the turn to the oldest queued caller, if any.
// An idle store appends a lone event at once, as before, and a busy one
// merges whatever queued while the lane's previous call was in flight.
type group struct {
	store   *Store
	size    int           // most appends in one call
	timeout time.Duration // bounds one merged call
	lanes   []lane
}

type lane struct {
	mu    sync.Mutex
	queue []*groupEntry
	busy  bool
}

func newGroup(s *Store, size, lanes int, timeout time.Duration) *group {
	return &group{store: s, size: size, timeout: timeout, lanes: make([]lane, lanes)}
}

// groupEntry is one caller's append, waiting for its answer or its turn.
type groupEntry struct {
	ctx  context.Context // the caller's: one that is done is not appended
	call appendCall
	// done receives exactly one message: the answer, or the turn to lead
	// (an entry handed the turn is off the queue and leads with itself).
	done chan groupAnswer
}

type groupAnswer struct {
	res  eventstore.AppendResult
	err  error
	lead bool
}

// append appends c (one event, any revision) through the group.
func (g *group) append(ctx context.Context, c appendCall) (eventstore.AppendResult, error) {
	l := &g.lanes[fnv32(c.stream)%uint32(len(g.lanes))]
	e := &groupEntry{ctx: ctx, call: c, done: make(chan groupAnswer, 1)}
	l.mu.Lock()
	lead := !l.busy
	if lead {
		l.busy = true
	} else {
		l.queue = append(l.queue, e)
	}
	l.mu.Unlock()

	if !lead {
		var a groupAnswer
		select {
		case a = <-e.done:
		case <-ctx.Done():
			if l.withdraw(e) {
				return eventstore.AppendResult{}, fmt.Errorf("%s: %w", c.op, ctx.Err())
			}
			// Taken already: into a call in flight, whose answer comes
			// within g.timeout, or as the next leader, which the entries
			// behind it wait for.
			a = <-e.done
		}
		if !a.lead {
			return a.res, a.err
		}
	}
	return g.lead(ctx, l, e)
}

// fnv32 is FNV-1a: a cheap, stable spread of stream names over lanes.
func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// withdraw takes e off the queue; false if a leader took it first.
func (l *lane) withdraw(e *groupEntry) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.Index(l.queue, e)
	if i < 0 {
		return false
	}
	l.queue = slices.Delete(l.queue, i, i+1)
	return true
}

// lead appends e with what is queued behind it, answers the others, hands
// the turn on and returns e's own answer.
func (g *group) lead(ctx context.Context, l *lane, e *groupEntry) (eventstore.AppendResult, error) {
	l.mu.Lock()
	n := min(len(l.queue), g.size-1)
	batch := make([]*groupEntry, 0, n+1)
	batch = append(batch, e)
	batch = append(batch, l.queue[:n]...)
	l.queue = slices.Delete(l.queue, 0, n)
	l.mu.Unlock()

	// A caller that gave up before its event was sent is not appended.
	answers := make([]groupAnswer, len(batch))
	live := make([]int, 0, len(batch))
	for i, b := range batch {
		if err := b.ctx.Err(); err != nil {
			answers[i].err = fmt.Errorf("%s: %w", b.call.op, err)
			continue
		}
		live = append(live, i)
	}
	if len(live) > 0 {
		// The call belongs to every entry in it, not to the leader alone:
		// the leader's caller going away must not fail the others.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.timeout)
		sent := make([]*groupEntry, len(live))
		for k, i := range live {
			sent[k] = batch[i]
		}
		for k, a := range g.safeFlush(fctx, sent) {
			answers[live[k]] = a
		}
		cancel()
	}
	for i, other := range batch[1:] {
		other.done <- answers[i+1]
	}

	l.mu.Lock()
	if len(l.queue) > 0 {
		next := l.queue[0]
		l.queue = slices.Delete(l.queue, 0, 1)
		next.done <- groupAnswer{lead: true}
	} else {
		l.busy = false
	}
	l.mu.Unlock()
	return answers[0].res, answers[0].err
}

// safeFlush is flush for lead: a panic (a bug) becomes every entry's error,
// so the lane is still handed on and no caller waits forever for an answer
// that would never come.
func (g *group) safeFlush(ctx context.Context, batch []*groupEntry) (answers []groupAnswer) {
	defer func() {
		if p := recover(); p != nil {
			answers = make([]groupAnswer, len(batch))
			for i, e := range batch {
				answers[i].err = fmt.Errorf("%s: group append panicked: %v", e.call.op, p)
			}
		}
	}()
	return g.flush(ctx, batch)
}

// flush appends batch and returns one answer per entry, in order.
func (g *group) flush(ctx context.Context, batch []*groupEntry) []groupAnswer {
	answers := make([]groupAnswer, len(batch))
	if len(batch) == 1 {
		answers[0].res, answers[0].err = g.store.appendDirect(ctx, batch[0].call)
		return answers
	}

	// Each event ID goes to es_append_group once; a repeat within the batch
	// (a provider's duplicate delivered at the same moment) is answered from
	// the first copy's outcome.
	first := make(map[uuid.UUID]int, len(batch))
	var unique []int // indexes into batch
	for i, e := range batch {
		if _, ok := first[e.call.ids[0]]; !ok {
			first[e.call.ids[0]] = i
			unique = append(unique, i)
		}
	}
	calls := make([]appendCall, len(unique))
	for k, i := range unique {
		calls[k] = batch[i].call
	}
	got, err := queryGroup(ctx, g.store.pool, calls)
	if err == nil && len(got) != len(unique) {
		err = fmt.Errorf("es_append_group answered %d rows for %d events", len(got), len(unique))
	}
	if err != nil {
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && fallbackCodes[pgErr.Code] {
			// Rolled back, nothing written: a writer outside the stream
			// locks, or a deadlock. Each entry goes its own way, which
			// classifies every case.
			return g.oneByOne(ctx, batch)
		}
		for i, e := range batch {
			answers[i].err = translate(e.call.op, err)
		}
		return answers
	}

	for _, r := range got {
		i := unique[r.Ord-1]
		answers[i] = r.answer(batch[i].call)
	}
	for i, e := range batch {
		j := first[e.call.ids[0]]
		if j == i {
			continue
		}
		answers[i] = repeatOf(e.call, batch[j].call, answers[j])
	}
	return answers
}

// queryer is a pool or a transaction.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryGroup calls es_append_group on q with calls (one event each, in
// order) and returns its rows.
func queryGroup(ctx context.Context, q queryer, calls []appendCall) ([]groupRow, error) {
	streams := make([]string, len(calls))
	ids := make([]uuid.UUID, len(calls))
	types := make([]string, len(calls))
	data := make([][]byte, len(calls))
	meta := make([][]byte, len(calls))
	for k, c := range calls {
		streams[k], ids[k], types[k], data[k], meta[k] = c.stream, c.ids[0], c.types[0], c.data[0], c.meta[0]
	}
	rows, err := q.Query(ctx, groupSQL, streams, ids, types, data, meta)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[groupRow])
}

// fallbackCodes are es_append_group's rollbacks that one-by-one appends
// resolve: ES004 (a new event could not be inserted), ES005 (a stream head
// younger than the group's transaction), deadlock, serialization failure.
var fallbackCodes = map[string]bool{"ES004": true, "ES005": true, "40P01": true, "40001": true}

// oneByOne appends every entry of batch on its own, in order: the order
// the callers queued in is kept, and this path is rare.
func (g *group) oneByOne(ctx context.Context, batch []*groupEntry) []groupAnswer {
	answers := make([]groupAnswer, len(batch))
	for i, e := range batch {
		answers[i].res, answers[i].err = g.store.appendDirect(ctx, e.call)
	}
	return answers
}

// groupRow is one row of groupSQL.
type groupRow struct {
	Ord            int64
	Revision       *int64
	CommitTx       *int64
	PrepareSeq     *int64
	StoredStream   *string
	StoredRevision *int64
}

func (r groupRow) answer(c appendCall) groupAnswer {
	switch {
	case r.Revision != nil && r.CommitTx != nil && r.PrepareSeq != nil:
		return groupAnswer{res: eventstore.AppendResult{
			Revision: uint64(*r.Revision),
			Position: eventstore.Position{Commit: uint64(*r.CommitTx), Prepare: uint64(*r.PrepareSeq)},
		}}
	case r.StoredStream != nil && r.StoredRevision != nil && *r.StoredStream == c.stream:
		return groupAnswer{res: eventstore.AppendResult{Duplicate: true, Revision: uint64(*r.StoredRevision)}}
	case r.StoredStream != nil:
		return groupAnswer{err: fmt.Errorf("%s: event %s is stored in stream %s", c.op, c.ids[0], *r.StoredStream)}
	}
	return groupAnswer{err: fmt.Errorf("%s: es_append_group gave no outcome for event %s", c.op, c.ids[0])}
}

// repeatOf answers c, a second copy within one batch of the event whose
// first copy (orig) got a.
func repeatOf(c, orig appendCall, a groupAnswer) groupAnswer {
	switch {
	case a.err != nil:
		return groupAnswer{err: a.err}
	case c.stream != orig.stream:
		return groupAnswer{err: fmt.Errorf("%s: event %s is stored in stream %s", c.op, c.ids[0], orig.stream)}
	}
	return groupAnswer{res: eventstore.AppendResult{Duplicate: true, Revision: a.res.Revision}}
}
