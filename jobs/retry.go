package jobs

import (
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/internal/backoff"
)

// retryPolicy is River's ClientRetryPolicy for payledger's jobs: exponential
// backoff from min, capped at max, with "equal jitter" (a random point in
// the upper half of the step), so that the fetches of many payments failing
// together during a provider outage do not come back in lockstep, while
// each retry still waits at least half its step. River's default (attempt⁴
// seconds) has a fixed shape; this one has the bounds operators configure.
type retryPolicy struct {
	min, max time.Duration
	now      func() time.Time
}

// NextRetry implements river.ClientRetryPolicy.
func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	// job.Errors holds the failures before this one, as in River's default
	// policy; counting errors rather than attempts keeps snoozes out of it.
	return p.now().Add(p.delay(len(job.Errors) + 1))
}

// delay returns the wait after failure number n (1-based).
func (p retryPolicy) delay(n int) time.Duration {
	return backoff.Exponential{Min: p.min, Max: p.max}.Delay(n)
}
