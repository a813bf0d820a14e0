package jobs

import (
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
)

func TestRetryPolicyBounds(t *testing.T) {
	p := retryPolicy{min: 10 * time.Second, max: time.Hour}
	tests := []struct {
		failure int
		lo, hi  time.Duration
	}{
		{1, 5 * time.Second, 10 * time.Second},
		{2, 10 * time.Second, 20 * time.Second},
		{3, 20 * time.Second, 40 * time.Second},
		{9, 1280 * time.Second, 2560 * time.Second},
		{10, 30 * time.Minute, time.Hour}, // 5120s capped
		{11, 30 * time.Minute, time.Hour},
		{500, 30 * time.Minute, time.Hour}, // no overflow
	}
	for _, tt := range tests {
		for range 200 {
			if d := p.delay(tt.failure); d < tt.lo || d > tt.hi {
				t.Fatalf("delay after failure %d = %s, want within [%s, %s]", tt.failure, d, tt.lo, tt.hi)
			}
		}
	}
}

func TestRetryPolicyNextRetry(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := retryPolicy{min: time.Second, max: time.Minute, now: func() time.Time { return at }}
	tests := []struct {
		name   string
		errors int // failures recorded before this one
		lo, hi time.Duration
	}{
		{"first failure", 0, 500 * time.Millisecond, time.Second},
		{"third failure", 2, 2 * time.Second, 4 * time.Second},
		{"capped", 30, 30 * time.Second, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := &rivertype.JobRow{Errors: make([]rivertype.AttemptError, tt.errors)}
			next := p.NextRetry(job)
			if d := next.Sub(at); d < tt.lo || d > tt.hi {
				t.Errorf("NextRetry in %s, want within [%s, %s]", d, tt.lo, tt.hi)
			}
		})
	}
}
