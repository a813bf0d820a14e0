package kurrentdb

import (
	"cmp"
	"context"
	"math"
	"strings"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/backoff"
)

// run follows sub and resubscribes whenever it drops, with backoff, until
// ctx is done or ResubscribeAttempts attempts in a row made no progress.
func (r *subscription) run(ctx context.Context, sub *esdb.Subscription) {
	defer close(r.done)
	opts := r.store.opts
	var err error
	failures := 0
	for {
		if sub != nil {
			var progressed bool
			progressed, err = r.follow(ctx, sub)
			_ = sub.Close()
			sub = nil
			if progressed {
				failures = 0
			}
		}
		if ctx.Err() != nil {
			r.err = context.Cause(ctx)
			return
		}
		if failures++; failures > opts.ResubscribeAttempts {
			r.err = translate("kurrentdb: resubscribe after "+r.pos.String(), cmp.Or(err, errDropped))
			return
		}
		opts.Logger.WarnContext(ctx, "kurrentdb: subscription dropped, resubscribing",
			"after", r.pos.String(), "attempt", failures, "err", err)
		if backoff.Sleep(ctx, opts.retries().Delay(failures)) == nil {
			opts := r.options()
			sub, err = attemptResult(ctx, r.store, closeSubscription, func(ctx context.Context, c *esdb.Client) (*esdb.Subscription, error) {
				return c.SubscribeToAll(ctx, opts)
			})
		}
	}
}

// follow delivers sub's messages until it drops or ctx is done, and returns
// why. progressed reports whether the server sent anything at all, which
// resets the count of failed resubscriptions.
func (r *subscription) follow(ctx context.Context, sub *esdb.Subscription) (progressed bool, err error) {
	for {
		ev := sub.Recv()
		if ev.SubscriptionDropped != nil {
			return progressed, ev.SubscriptionDropped.Error
		}
		progressed = true
		m, ok := r.message(ev)
		if !ok {
			continue
		}
		select {
		case r.msgs <- m:
			r.pos, r.fromStart = m.Checkpoint, false
		case <-ctx.Done():
			return progressed, context.Cause(ctx)
		}
	}
}

// message converts what the server sent, and drops what the consumer must
// not see: caught-up notices, system or unmatched streams (the server
// filters them already), anything not after the last delivered position
// (so a resubscription never repeats a message), and the end-of-$all
// sentinel checkpoint a filtered catch-up can send before anything
// matched, which as a stored checkpoint would skip every later event.
func (r *subscription) message(ev *esdb.SubscriptionEvent) (eventstore.Message, bool) {
	switch {
	case ev.EventAppeared != nil:
		rec := ev.EventAppeared.OriginalEvent()
		if rec == nil || strings.HasPrefix(rec.StreamID, "$") || !r.filter.Match(rec.StreamID) {
			return eventstore.Message{}, false
		}
		e := recorded(rec)
		return eventstore.Message{Event: &e, Checkpoint: e.Position}, r.after(e.Position)
	case ev.CheckPointReached != nil:
		p := eventstore.Position{Commit: ev.CheckPointReached.Commit, Prepare: ev.CheckPointReached.Prepare}
		if p.Commit == math.MaxUint64 {
			return eventstore.Message{}, false
		}
		return eventstore.Message{Checkpoint: p}, r.after(p) && p != eventstore.Start
	}
	return eventstore.Message{}, false
}

// after reports whether p follows the last delivered position.
func (r *subscription) after(p eventstore.Position) bool {
	return p.Compare(r.pos) > 0 || r.fromStart
}
