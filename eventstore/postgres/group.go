package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// groupSQL appends many single events in one transaction
// (migrations/00005_eventstore_group_append.sql) and answers one appendRow
// per event, after its 1-based position in the call.
const groupSQL = `SELECT ord, revision, commit_tx, prepare_seq, stored_stream, stored_revision, NULL::bigint, false
	FROM es_append_group($1, $2, $3, $4, $5)`

// group is the store's group commit: the hand-off protocol (handoff) with
// the merged es_append_group call as what a leader sends.
type group struct {
	handoff
	store *Store
}

func newGroup(s *Store, size, lanes int, timeout time.Duration) *group {
	g := &group{store: s}
	g.handoff = handoff{size: size, timeout: timeout, send: g.flush, lanes: make([]lane, lanes)}
	return g
}

// flush appends batch (one event, any revision, each) and returns one
// answer per entry, in order.
func (g *group) flush(ctx context.Context, batch []*groupEntry) []groupAnswer {
	answers := make([]groupAnswer, len(batch))
	if len(batch) == 1 { // the single-event statement is cheaper (BENCHMARKS.md)
		answers[0].res, answers[0].err = g.store.appendDirect(ctx, batch[0].call)
		return answers
	}
	// Each event ID goes to es_append_group once; a repeat within the batch
	// (a provider's duplicate delivered at the same moment) is answered from
	// the first copy's outcome.
	first := make(map[uuid.UUID]int, len(batch))
	var calls []appendCall
	var unique []int // indexes into batch
	for i, e := range batch {
		if _, ok := first[e.call.events[0].id]; !ok {
			first[e.call.events[0].id] = i
			calls = append(calls, e.call)
			unique = append(unique, i)
		}
	}
	outcomes := queryGroup(ctx, g.store.pool, calls)
	for k, i := range unique {
		if outcomes[k].kind == retry {
			// Rolled back, nothing written: each entry goes its own way.
			return g.oneByOne(ctx, batch)
		}
		answers[i].res, answers[i].err = batch[i].call.answer(outcomes[k])
	}
	for i, e := range batch {
		if j := first[e.call.events[0].id]; j != i {
			answers[i] = repeatOf(e.call, batch[j].call, answers[j])
		}
	}
	return answers
}

// queryer is a pool or a transaction.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryGroup calls es_append_group on q with calls (one event each, each
// event ID once) and returns one outcome per call, in order.
func queryGroup(ctx context.Context, q queryer, calls []appendCall) []outcome {
	streams := make([]string, len(calls))
	var a eventArrays
	for k, c := range calls {
		streams[k] = c.stream
		a.add(c.events[0])
	}
	rows, _ := q.Query(ctx, groupSQL, streams, a.ids, a.types, a.data, a.meta) // CollectRows reports the error
	got, err := pgx.CollectRows(rows, scanGroupRow)
	if err == nil && len(got) != len(calls) {
		err = fmt.Errorf("es_append_group answered %d rows for %d events", len(got), len(calls))
	}
	outcomes := make([]outcome, len(calls))
	for k, c := range calls {
		switch {
		case err != nil:
			outcomes[k] = c.decodeError(err)
		case got[k].ord != int64(k+1):
			outcomes[k] = outcome{kind: failed, err: fmt.Errorf("%s: es_append_group answered row %d in place %d", c.op, got[k].ord, k+1)}
		default:
			outcomes[k] = c.decodeRow(got[k].row)
		}
	}
	return outcomes
}

// groupRow is one row of groupSQL.
type groupRow struct {
	ord int64
	row appendRow
}

func scanGroupRow(row pgx.CollectableRow) (groupRow, error) {
	var r groupRow
	err := row.Scan(append([]any{&r.ord}, r.row.dest()...)...)
	return r, err
}

// oneByOne appends every entry of batch on its own, in order: the order
// the callers queued in is kept, and this path is rare.
func (g *group) oneByOne(ctx context.Context, batch []*groupEntry) []groupAnswer {
	answers := make([]groupAnswer, len(batch))
	for i, e := range batch {
		answers[i].res, answers[i].err = g.store.appendDirect(ctx, e.call)
	}
	return answers
}

// repeatOf answers c, a second copy within one batch of the event whose
// first copy (orig) got a.
func repeatOf(c, orig appendCall, a groupAnswer) groupAnswer {
	if a.err != nil {
		return groupAnswer{err: a.err}
	}
	o := outcome{kind: duplicate, revision: a.res.Revision}
	if c.stream != orig.stream {
		o = outcome{kind: storedElsewhere, stream: orig.stream}
	}
	var r groupAnswer
	r.res, r.err = c.answer(o)
	return r
}
