package projections

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff returns the wait before retry number attempt (0-based): an
// exponential step from lo capped at hi, with jitter over its upper half so
// that several processes failing together do not retry in lockstep.
func backoff(lo, hi time.Duration, attempt int) time.Duration {
	d := lo
	for i := 0; i < attempt && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	half := d / 2
	return half + rand.N(d-half+1)
}

// sleep waits for d or until ctx is done; it reports whether the full wait
// elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
