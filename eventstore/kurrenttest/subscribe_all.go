package kurrenttest

import (
	"context"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
)

// allSub is the state of one $all subscription (Enumerator.AllSubscription
// and AllSubscriptionFiltered, v24.10.14).
type allSub struct {
	*reader
	filter *eventFilter // nil: unfiltered, and then no checkpoints are sent
	// checkpoint is the position of the last event or checkpoint sent on
	// (HeadOfTf before anything): events after it are still due.
	checkpoint tfpos
	sentAny    bool  // a checkpoint message has been sent
	sent       tfpos // the last checkpoint message sent
}

// subscribeAll serves a $all subscription: confirmation, catch-up from the
// start point (exclusive) in pages, caught_up, then live events. Filtered
// subscriptions also get checkpoints: during catch-up every interval
// records considered and once on reaching the end, and live after every
// interval-th record committed since the subscription started, matched or
// not. Checkpoints that are not newer than the last one are suppressed.
func (r *reader) subscribeAll(ctx context.Context, ao *streams.ReadReq_Options_AllOptions, f *eventFilter) error {
	r.st.mu.Lock()
	tail := r.st.tail()
	cursor := len(r.st.log) // records committed from here on are live
	r.st.mu.Unlock()
	if err := r.out.Send(confirmationResp(uuid.NewString())); err != nil {
		return err
	}
	a := &allSub{reader: r, filter: f, checkpoint: headOfLog}
	switch pos := ao.GetAllOption().(type) {
	case *streams.ReadReq_Options_AllOptions_End:
		a.checkpoint = tail
	case *streams.ReadReq_Options_AllOptions_Position:
		a.checkpoint = fromWire(pos.Position.GetCommitPosition(), pos.Position.GetPreparePosition())
		if a.checkpoint == headOfLog { // 2^64-1 is Position.End
			a.checkpoint = tail
		}
	}
	if a.checkpoint.less(tail) {
		if err := a.catchUp(); err != nil {
			return err
		}
	}
	if err := r.out.Send(caughtUpResp()); err != nil {
		return err
	}
	return a.live(ctx, cursor)
}

// catchUp pages through the log from the checkpoint to its end.
func (a *allSub) catchUp() error {
	window, interval := readBatchSize, 0
	if a.filter != nil {
		window, interval = a.filter.window, a.filter.interval
	}
	from := a.checkpoint
	if from == headOfLog {
		from = tfpos{}
	}
	counter := 0
	for {
		a.st.mu.Lock()
		page, next, considered, end := a.st.scan(from, readBatchSize, window, a.filter.allows)
		a.st.mu.Unlock()
		for _, rec := range page {
			if !a.checkpoint.less(rec.position()) {
				continue // at or before the start point
			}
			if err := a.sendEvent(rec); err != nil {
				return err
			}
		}
		if a.filter == nil {
			if end {
				return nil
			}
			from = next
			continue
		}
		// Everything before this page's start has been considered.
		if a.checkpoint.less(from) && from.less(next) {
			a.checkpoint = from
		}
		counter += considered
		if end {
			if a.checkpoint.less(tfpos{}) && (tfpos{}).less(next) {
				a.checkpoint = tfpos{}
			}
			return a.sendCheckpoint(a.checkpoint)
		}
		if counter >= interval {
			counter %= interval
			if err := a.sendCheckpoint(a.checkpoint); err != nil {
				return err
			}
		}
		from = next
	}
}

// live sends the records committed from log index cursor on. It never falls
// behind: the fake reads the log itself instead of a bounded live queue.
func (a *allSub) live(ctx context.Context, cursor int) error {
	counter := 0
	for {
		recs, err := a.st.await(ctx, func() []*record { return a.st.since(cursor) })
		if err != nil {
			return err
		}
		cursor += len(recs)
		for _, rec := range recs {
			if err := a.liveRecord(rec, &counter); err != nil {
				return err
			}
		}
	}
}

func (a *allSub) liveRecord(rec *record, counter *int) error {
	allowed := defaultAllows(rec)
	if a.filter != nil {
		allowed = a.filter.allows(rec)
	}
	if allowed && a.checkpoint.less(rec.position()) {
		if err := a.sendEvent(rec); err != nil {
			return err
		}
	}
	if a.filter == nil {
		return nil
	}
	if *counter++; *counter < a.filter.interval {
		return nil
	}
	*counter = 0
	if p := rec.position(); !p.less(a.checkpoint) {
		a.checkpoint = p
		return a.sendCheckpoint(p)
	}
	return nil
}

func (a *allSub) sendEvent(rec *record) error {
	a.checkpoint = rec.position()
	return a.send(rec)
}

// sendCheckpoint sends p unless it is the head of the log (nothing to
// report yet) or not newer than the last checkpoint sent.
func (a *allSub) sendCheckpoint(p tfpos) error {
	if p == headOfLog || a.sentAny && !a.sent.less(p) {
		return nil
	}
	a.sentAny, a.sent = true, p
	return a.out.Send(checkpointResp(p))
}
