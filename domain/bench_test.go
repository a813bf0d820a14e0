package domain_test

import (
	"fmt"
	"testing"

	"github.com/payledger/payledger/domain"
)

// lifecycle returns a realistic n-event history: creation, a failed attempt,
// success, then refunds and a dispute, delivered in reverse order.
func lifecycle(n int) []domain.Event {
	evs := []domain.Event{created("e0", 0, 2000), failed("e1", 1), succeeded("e2", 2, 2000)}
	for i := len(evs); i < n; i++ {
		switch i % 3 {
		case 0:
			evs = append(evs, refunded(fmt.Sprintf("e%d", i), i, int64(i)))
		case 1:
			evs = append(evs, disputeOpened(fmt.Sprintf("e%d", i), i))
		default:
			evs = append(evs, disputeClosed(fmt.Sprintf("e%d", i), i, domain.DisputeWon))
		}
	}
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	return evs[:n]
}

func BenchmarkFold(b *testing.B) {
	for _, n := range []int{4, 16, 64} {
		evs := lifecycle(n)
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = domain.Fold(evs...).State()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
