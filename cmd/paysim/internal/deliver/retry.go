package deliver

import (
	"math/rand/v2"
	"time"
)

// Retry is the redelivery policy: exponential backoff with jitter on any
// non-2xx answer or timeout, like providers do, until the webhook is
// acknowledged or the budget (attempts or time since the first attempt) is
// spent.
type Retry struct {
	Attempts int           // attempts at most, the first included
	Budget   time.Duration // no attempt starts later than this after the first
	Base     time.Duration // first backoff
	Max      time.Duration // backoff cap
	Timeout  time.Duration // per attempt
}

// backoff is the wait before attempt n+1 (n ≥ 1): base·2^(n-1) capped at
// max, of which a random half is jitter, so copies failing together do not
// come back together.
func (r Retry) backoff(n int) time.Duration {
	d := r.Base
	for i := 1; i < n && d < r.Max; i++ {
		d *= 2
	}
	d = min(d, r.Max)
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}
