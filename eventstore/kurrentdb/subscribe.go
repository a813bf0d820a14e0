package kurrentdb

import (
	"context"
	"errors"
	"strings"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// errSubscriptionClosed is what Next returns after Close.
var errSubscriptionClosed = errors.New("kurrentdb: subscription closed")

// errDropped stands in for a drop the client reported without a cause.
var errDropped = errors.New("kurrentdb: subscription dropped")

// notSystem is the server-side filter of the zero Filter: every stream but
// the system ones ($-prefixed), which payledger never consumes.
const notSystem = `^[^$]`

// SubscribeAll follows $all from after from, filtered on the server by
// stream prefix; system streams are never delivered. The first subscription
// is made before it returns; when it drops, the subscription resubscribes by
// itself from the last message Next returned. It ends when ctx is done or
// on Close.
func (s *Store) SubscribeAll(ctx context.Context, from eventstore.Position, filter eventstore.Filter) (eventstore.Subscription, error) {
	op := "kurrentdb: subscribe after " + from.String()
	if strings.HasPrefix(filter.StreamPrefix, "$") {
		return nil, domain.Invalid(op, "system streams are not delivered", nil)
	}
	life, cancel := context.WithCancelCause(ctx)
	sub := &subscription{
		store:     s,
		filter:    filter,
		pos:       from,
		fromStart: from == eventstore.Start,
		msgs:      make(chan eventstore.Message),
		done:      make(chan struct{}),
		cancel:    cancel,
	}
	opts := sub.options()
	first, err := retryResult(life, s, op, closeSubscription, func(ctx context.Context, c *esdb.Client) (*esdb.Subscription, error) {
		return c.SubscribeToAll(ctx, opts)
	})
	if err != nil {
		cancel(err)
		return nil, err
	}
	go sub.run(life, first)
	return sub, nil
}

// subscription hands the messages of a run goroutine to Next. The channel
// is unbuffered, so a message counts as delivered only once Next has taken
// it, and a resubscription starts exactly after the last one taken: nothing
// is lost and nothing repeated.
type subscription struct {
	store  *Store
	filter eventstore.Filter
	msgs   chan eventstore.Message
	done   chan struct{} // closed when run returns; err is set then
	err    error
	cancel context.CancelCauseFunc

	// Owned by run (and by SubscribeAll before run starts).
	pos       eventstore.Position // of the last message delivered, or from
	fromStart bool                // nothing delivered yet, and from is Start
}

// Next returns the next event or checkpoint. It blocks until one is
// available, ctx is done (ctx.Err()), or the subscription has ended: closed,
// its SubscribeAll ctx done, or resubscribing failed ResubscribeAttempts
// times in a row (an error wrapping domain.ErrUnavailable, typically).
func (r *subscription) Next(ctx context.Context) (eventstore.Message, error) {
	select {
	case m := <-r.msgs:
		return m, nil
	case <-r.done:
		return eventstore.Message{}, r.err
	case <-ctx.Done():
		return eventstore.Message{}, ctx.Err()
	}
}

// Close ends the subscription and waits for its goroutine. It is
// idempotent.
func (r *subscription) Close() error {
	r.cancel(errSubscriptionClosed)
	<-r.done
	return nil
}

// options are the subscription's options from after the last delivered
// message. They are computed by the goroutine that owns pos, never inside a
// call that may be abandoned and run on concurrently.
func (r *subscription) options() esdb.SubscribeToAllOptions {
	opts := esdb.SubscribeToAllOptions{From: esdb.Start{}, Filter: serverFilter(r.filter)}
	if !r.fromStart {
		// The server delivers strictly after a position, as Store promises.
		opts.From = esdb.Position{Commit: r.pos.Commit, Prepare: r.pos.Prepare}
	}
	return opts
}

func serverFilter(f eventstore.Filter) *esdb.SubscriptionFilter {
	if f.StreamPrefix == "" {
		return &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Regex: notSystem}
	}
	return &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Prefixes: []string{f.StreamPrefix}}
}
