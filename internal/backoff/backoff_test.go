package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDelayBounds(t *testing.T) {
	tests := []struct {
		name   string
		e      Exponential
		n      int
		lo, hi time.Duration
	}{
		{"first retry", Exponential{10 * time.Second, time.Hour}, 1, 5 * time.Second, 10 * time.Second},
		{"second doubles", Exponential{10 * time.Second, time.Hour}, 2, 10 * time.Second, 20 * time.Second},
		{"ninth", Exponential{10 * time.Second, time.Hour}, 9, 1280 * time.Second, 2560 * time.Second},
		{"capped", Exponential{10 * time.Second, time.Hour}, 10, 30 * time.Minute, time.Hour},
		{"no overflow", Exponential{10 * time.Second, time.Hour}, 500, 30 * time.Minute, time.Hour},
		{"max below min waits min", Exponential{time.Second, time.Millisecond}, 3, 500 * time.Millisecond, time.Second},
		{"zero min never waits", Exponential{0, time.Second}, 4, 0, 0},
		{"nanosecond step", Exponential{time.Nanosecond, time.Nanosecond}, 1, 0, time.Nanosecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 200 {
				if d := tt.e.Delay(tt.n); d < tt.lo || d > tt.hi {
					t.Fatalf("Delay(%d) = %s, want within [%s, %s]", tt.n, d, tt.lo, tt.hi)
				}
			}
		})
	}
}

// TestDelayEveryRetry walks seventy retries of a KurrentDB-style policy
// (50 ms doubling to 2 s): each lands in the upper half of its capped step.
func TestDelayEveryRetry(t *testing.T) {
	e := Exponential{Min: 50 * time.Millisecond, Max: 2 * time.Second}
	for n := 1; n <= 70; n++ {
		want := e.Max
		if n <= 30 {
			want = min(e.Min<<(n-1), e.Max)
		}
		if d := e.Delay(n); d < want/2 || d > want {
			t.Errorf("Delay(%d) = %v, want within [%v, %v]", n, d, want/2, want)
		}
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep with a live context: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep after cancel = %v, want context.Canceled", err)
	}
	if waited := time.Since(start); waited > time.Minute {
		t.Errorf("Sleep after cancel waited %s", waited)
	}
}
