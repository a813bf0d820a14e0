package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/payledger/payledger/eventstore"
)

// handoff is the group commit's turn-taking, without its SQL: appends are
// spread over lanes by stream, a lane has one flush in flight, the caller
// that finds its lane idle leads and hands the turn to the oldest queued
// caller when done (ARCHITECTURE.md, "Group commit").
type handoff struct {
	size    int           // most appends in one flush
	timeout time.Duration // bounds one flush
	send    func(ctx context.Context, batch []*groupEntry) []groupAnswer
	lanes   []lane
}

type lane struct {
	mu    sync.Mutex
	queue []*groupEntry
	busy  bool
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

// append appends c through its lane, leading now or waiting for its answer
// or its turn.
func (h *handoff) append(ctx context.Context, c appendCall) (eventstore.AppendResult, error) {
	l := &h.lanes[fnv32(c.stream)%uint32(len(h.lanes))]
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
			// Taken already: into a flush, answered within h.timeout, or
			// as the next leader, which the entries behind it wait for.
			a = <-e.done
		}
		if !a.lead {
			return a.res, a.err
		}
	}
	return h.lead(ctx, l, e)
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

// lead flushes e with what is queued behind it, answers the others, hands
// the turn on and returns e's own answer.
func (h *handoff) lead(ctx context.Context, l *lane, e *groupEntry) (eventstore.AppendResult, error) {
	l.mu.Lock()
	n := min(len(l.queue), h.size-1)
	batch := make([]*groupEntry, 0, n+1)
	batch = append(batch, e)
	batch = append(batch, l.queue[:n]...)
	l.queue = slices.Delete(l.queue, 0, n)
	l.mu.Unlock()

	answers := h.sendLive(ctx, batch)
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

// sendLive sends the entries of batch whose callers still wait, on a context
// of the batch's own (the leader's caller going away must not fail the
// others), and returns one answer per entry.
func (h *handoff) sendLive(ctx context.Context, batch []*groupEntry) []groupAnswer {
	answers := make([]groupAnswer, len(batch))
	live := make([]int, 0, len(batch))
	sent := make([]*groupEntry, 0, len(batch))
	for i, b := range batch {
		if err := b.ctx.Err(); err != nil {
			answers[i].err = fmt.Errorf("%s: %w", b.call.op, err)
			continue
		}
		live = append(live, i)
		sent = append(sent, b)
	}
	if len(sent) == 0 {
		return answers
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.timeout)
	defer cancel()
	for k, a := range h.safeSend(fctx, sent) {
		answers[live[k]] = a
	}
	return answers
}

// safeSend is send for sendLive: a panic (a bug) becomes every entry's error,
// so the lane is still handed on and no caller waits forever.
func (h *handoff) safeSend(ctx context.Context, batch []*groupEntry) (answers []groupAnswer) {
	defer func() {
		if p := recover(); p != nil {
			answers = make([]groupAnswer, len(batch))
			for i, e := range batch {
				answers[i].err = fmt.Errorf("%s: group append panicked: %v", e.call.op, p)
			}
		}
	}()
	return h.send(ctx, batch)
}
