package kurrentdb

import (
	"context"
	"sync"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
)

// A call that is stuck inside a dead client is abandoned by await and keeps
// running in the background. Its result must therefore never be written to
// a variable the caller reads after retry or attempt returned: that is a
// data race, and a late subscription would leak. Results travel through a
// box instead: the first one is kept, any later one is discarded (a
// subscription is closed).

// box holds one result of possibly abandoned calls.
type box[T any] struct {
	mu      sync.Mutex
	v       T
	full    bool
	sealed  bool // the caller has taken its answer; later results are late
	discard func(T)
}

func (b *box[T]) put(v T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.full || b.sealed {
		if b.discard != nil {
			b.discard(v)
		}
		return
	}
	b.v, b.full = v, true
}

// take seals the box and returns what it holds.
func (b *box[T]) take() (T, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sealed = true
	return b.v, b.full
}

// retryResult is retry for a call that produces a value.
func retryResult[T any](ctx context.Context, s *Store, op string, discard func(T), call func(context.Context, *esdb.Client) (T, error)) (T, error) {
	b := &box[T]{discard: discard}
	err := s.retry(ctx, op, boxed(b, call))
	return unbox(b, err)
}

// attemptResult is attempt for a call that produces a value.
func attemptResult[T any](ctx context.Context, s *Store, discard func(T), call func(context.Context, *esdb.Client) (T, error)) (T, error) {
	b := &box[T]{discard: discard}
	err := s.attempt(ctx, boxed(b, call))
	return unbox(b, err)
}

func boxed[T any](b *box[T], call func(context.Context, *esdb.Client) (T, error)) func(context.Context, *esdb.Client) error {
	return func(ctx context.Context, c *esdb.Client) error {
		v, err := call(ctx, c)
		if err != nil {
			return err
		}
		b.put(v)
		return nil
	}
}

func unbox[T any](b *box[T], err error) (T, error) {
	v, ok := b.take()
	var zero T
	if err != nil {
		if ok && b.discard != nil {
			b.discard(v)
		}
		return zero, err
	}
	return v, nil
}

// closeSubscription discards a subscription that arrived too late.
func closeSubscription(s *esdb.Subscription) {
	if s != nil {
		_ = s.Close()
	}
}
