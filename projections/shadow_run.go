package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/backoff"
)

// errReachedUntil ends a RunUntil session: every event up to the target
// is applied.
var errReachedUntil = errors.New("projections: reached the target position")

// cut keeps, during RunUntil, the messages at or before the target and
// reports whether the target is reached: a later message came (the feed is
// ordered, so nothing at or before it is still to come), or the feed is
// idle (it has delivered everything stored so far, the target included).
func (r *Runner) cut(batch []eventstore.Message, subErr error) ([]eventstore.Message, bool) {
	if r.until == nil {
		return batch, false
	}
	if len(batch) == 0 {
		return batch, subErr == nil
	}
	for i, m := range batch {
		pos := m.Checkpoint
		if m.Event != nil {
			pos = m.Event.Position
		}
		if pos.Compare(*r.until) > 0 {
			return batch[:i], true
		}
	}
	return batch, false
}

// RunUntil projects until every event up to until is applied (or the feed
// has nothing more), then returns the committed checkpoint. It holds the
// runner's lock meanwhile and retries failures with backoff until ctx ends.
// A shadow rebuild catches up with it; it is not for `ledger serve`.
func (r *Runner) RunUntil(ctx context.Context, until eventstore.Position) (eventstore.Position, error) {
	r.until = &until
	defer func() { r.until = nil }()
	lk, err := r.lock(ctx)
	if err != nil {
		return eventstore.Start, fmt.Errorf("projections: run %s until %s: %w", r.cfg.Name, until, err)
	}
	defer lk.release(ctx)
	for attempt := 1; ; attempt++ {
		_, err := r.session(ctx)
		switch {
		case errors.Is(err, errReachedUntil):
			return r.Position(ctx)
		case ctx.Err() != nil:
			return eventstore.Start, fmt.Errorf("projections: run %s until %s: %w", r.cfg.Name, until, ctx.Err())
		}
		r.log.ErrorContext(ctx, "shadow projection stopped; retrying", "err", err, "attempt", attempt)
		if backoff.Sleep(ctx, r.cfg.retries().Delay(attempt)) != nil {
			return eventstore.Start, fmt.Errorf("projections: run %s until %s: %w", r.cfg.Name, until, ctx.Err())
		}
	}
}
