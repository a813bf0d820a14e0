// Package pause waits without outliving a context: the one sleep paysim's
// pacing, polling and lag sampling share.
//
// It imports the standard library only.
package pause

import (
	"context"
	"time"
)

// For waits d (nothing when d ≤ 0) and reports whether ctx is still live.
func For(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
