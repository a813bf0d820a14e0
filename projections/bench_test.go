package projections

import (
	"fmt"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgtest"
)

// BenchmarkApplyBatch measures the runner's apply path on real Postgres:
// decode, record history, re-fold every affected payment from its full
// history, upsert, and advance the checkpoint, in one transaction per batch.
//   - new: every event of the batch belongs to a payment not seen before
//     (lifecycle mix, about 2.5 events per payment);
//   - late: each event of the batch is the 4th of its payment, whose first
//     three the runner applied in the batch before: every payment is
//     re-folded from the history the runner kept in memory;
//   - late-cold: the same, with the runner's memory emptied before the
//     batch (as after a restart or when more payments are live than it
//     keeps), so every history is read back from payment_events.
func BenchmarkApplyBatch(b *testing.B) {
	for _, size := range []int{100, 500} {
		b.Run(fmt.Sprintf("new/batch=%d", size), func(b *testing.B) {
			benchApply(b, nil, func(batch int) []domain.Event {
				var evs []domain.Event
				for n := 0; len(evs) < size; n++ {
					evs = append(evs, lifecycle(fmt.Sprintf("p%d", batch), n)...)
				}
				return evs[:size]
			}, false)
		})
		late := func(batch, n int) pay { return pay{"stripe", fmt.Sprintf("pi_late_%d_%d", batch, n)} }
		seedLate := func(batch int) []domain.Event {
			evs := make([]domain.Event, 0, 3*size)
			for n := range size {
				p := late(batch, n)
				evs = append(evs, p.created("evt_1", 0, 5000), p.succeeded("evt_2", time.Minute, 5000),
					p.refunded("evt_3", time.Hour, 5000, 1000))
			}
			return evs
		}
		timedLate := func(batch int) []domain.Event {
			evs := make([]domain.Event, size)
			for n := range size {
				evs[n] = late(batch, n).refunded("evt_4", 2*time.Hour, 5000, 2000)
			}
			return evs
		}
		for _, cold := range []bool{false, true} {
			name := "late"
			if cold {
				name = "late-cold"
			}
			b.Run(fmt.Sprintf("%s/batch=%d", name, size), func(b *testing.B) {
				benchApply(b, seedLate, timedLate, cold)
			})
		}
	}
}

// benchApply times applying timed(i) for batch i; seed(i), when set, is
// applied first with the timer stopped, and cold empties the runner's
// memory of histories after it.
func benchApply(b *testing.B, seed, timed func(batch int) []domain.Event, cold bool) {
	pool := pgtest.NewPool(b)
	a := newApplier(b, pool)
	var applied int
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		if seed != nil {
			a.apply(a.messages(seed(i)...))
		}
		if cold {
			a.r.histories.purge()
		}
		msgs := a.messages(timed(i)...)
		b.StartTimer()
		a.apply(msgs)
		applied += len(msgs)
	}
	b.ReportMetric(float64(applied)/b.Elapsed().Seconds(), "events/s")
}
