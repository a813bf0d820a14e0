// Package backoff is payledger's one retry timing: an exponential step with
// "equal jitter" and a sleep that ends with its context. Every retry loop
// (the webhook's append, the projector, the KurrentDB adapter, River's job
// policy, the providers' status clients, paysim's pacing and polling) uses it, so they all spread their
// retries the same way. It imports only the standard library.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Exponential bounds a doubling wait: retry n's step is Min·2^(n-1), capped
// at Max.
type Exponential struct {
	Min, Max time.Duration
}

// Delay returns the wait before retry n (1-based): a random point in the
// upper half of its step, so callers that failed together do not retry in
// lockstep while each still waits at least half its step.
func (e Exponential) Delay(n int) time.Duration {
	d, hi := e.Min, max(e.Max, e.Min)
	if d <= 0 {
		return 0
	}
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	half := d / 2
	return half + rand.N(d-half+1)
}

// Sleep waits for d, or until ctx is done and then returns ctx's error. A d
// of zero or less returns at once, without a timer (pacers pass deadlines
// already behind them).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
