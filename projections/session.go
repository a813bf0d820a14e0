package projections

import (
	"context"
	"fmt"
	"time"

	"github.com/payledger/payledger/eventstore"
)

// pumped is one result of Subscription.Next.
type pumped struct {
	msg eventstore.Message
	err error
}

// session subscribes from the committed checkpoint and applies batches until
// something fails. progressed reports whether any batch was committed, so the
// caller can reset its backoff. The returned error is never nil unless ctx
// is done.
func (r *Runner) session(ctx context.Context) (progressed bool, err error) {
	// While no session ran, a Reset may have emptied payment_events.
	r.histories.purge()
	pos, rebuilding, err := r.begin(ctx)
	if err != nil {
		return false, err
	}
	r.log.InfoContext(ctx, "projecting", "from", pos.String())
	sub, err := r.sub.SubscribeAll(ctx, pos, eventstore.Filter{StreamPrefix: eventstore.PaymentStreamPrefix})
	if err != nil {
		return false, fmt.Errorf("projections: subscribe from %s: %w", pos, err)
	}
	defer sub.Close()
	ctx, cancel := context.WithCancel(ctx)
	msgs := make(chan pumped, r.cfg.BatchSize)
	done := make(chan struct{})
	go pump(ctx, sub, msgs, done)
	// Stop the pump before Close runs (defers run last first): a
	// Subscription need not support Close concurrently with Next.
	defer func() { cancel(); <-done }()

	var retried time.Time
	for {
		// Between batches, polled: retries of parked streams run under
		// this session's lease, never concurrently with a batch.
		if time.Since(retried) >= retryPoll {
			if err := r.reprojectRequested(ctx); err != nil {
				return progressed, err
			}
			retried = time.Now()
		}
		batch, subErr := gather(ctx, msgs, r.cfg.BatchSize, retryPoll)
		batch, reached := r.cut(batch, subErr)
		if len(batch) == 0 && subErr == nil {
			if rebuilding, err = r.idle(ctx, pos, rebuilding); err != nil {
				return progressed, err
			}
		}
		if len(batch) > 0 {
			next, err := r.apply(ctx, pos, batch)
			if next != pos {
				progressed = true
				pos = next
			}
			if err != nil {
				return progressed, err
			}
		}
		if reached || r.until != nil && pos.Compare(*r.until) >= 0 {
			return progressed, errReachedUntil
		}
		if subErr != nil {
			return progressed, fmt.Errorf("projections: subscription after %s: %w", pos, subErr)
		}
	}
}

// begin claims the checkpoint and loads the parked streams: where the
// session starts, and whether a rebuild is under way.
func (r *Runner) begin(ctx context.Context) (eventstore.Position, bool, error) {
	pos, rebuilding, err := claimCheckpoint(ctx, r.pool, r.cfg.Name)
	if err != nil {
		return pos, false, err
	}
	if r.until != nil && pos.Compare(*r.until) >= 0 {
		return pos, false, errReachedUntil
	}
	return pos, rebuilding, r.loadParked(ctx)
}

// idle runs when the feed has delivered everything stored so far: a
// rebuild may have moved the checkpoint (no batch finds out while nothing
// arrives), and a rebuild under way has caught up. It returns whether one
// still is.
func (r *Runner) idle(ctx context.Context, pos eventstore.Position, rebuilding bool) (bool, error) {
	if err := r.checkUnmoved(ctx, pos); err != nil {
		return rebuilding, err
	}
	if !rebuilding {
		return false, nil
	}
	if err := clearRebuilding(ctx, r.pool, r.cfg.Name); err != nil {
		return true, err
	}
	r.log.InfoContext(ctx, "rebuild caught up with the store", "at", pos.String())
	return false, nil
}

// pump feeds the subscription into msgs so that gather can take what is
// ready without blocking. It stops after the first error or when ctx is done.
func pump(ctx context.Context, sub eventstore.Subscription, msgs chan<- pumped, done chan<- struct{}) {
	defer close(done)
	for {
		m, err := sub.Next(ctx)
		select {
		case msgs <- pumped{msg: m, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// gather blocks for the first message, then takes whatever else is already
// waiting, up to limit messages; after idle with none it returns none. A subscription error ends the batch; it is
// returned alongside the messages before it so those still get applied.
func gather(ctx context.Context, msgs <-chan pumped, limit int, idle time.Duration) ([]eventstore.Message, error) {
	var batch []eventstore.Message
	timer := time.NewTimer(idle)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil, nil // idle: let the caller poll
	case p := <-msgs:
		if p.err != nil {
			return nil, p.err
		}
		batch = append(batch, p.msg)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for len(batch) < limit {
		select {
		case p := <-msgs:
			if p.err != nil {
				return batch, p.err
			}
			batch = append(batch, p.msg)
		default:
			return batch, nil
		}
	}
	return batch, nil
}
