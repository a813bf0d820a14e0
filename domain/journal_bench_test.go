package domain_test

import (
	"testing"

	"github.com/payledger/payledger/domain"
)

// BenchmarkJournal derives the journal of a usual payment's arrivals, as the
// projector does once per touched payment and batch.
func BenchmarkJournal(b *testing.B) {
	cases := map[string][]domain.Event{
		"created, succeeded, fee": {created("c", 0, 2000), succeeded("s", 1, 2000), fee("f", 2, 88, "USD")},
		"refund first, 5 facts":   {refunded("r", 9, 500), created("c", 0, 2000), succeeded("s", 1, 2000), fee("f", 2, 88, "USD"), disputeOpened("d", 12)},
	}
	for name, evs := range cases {
		arrivals := arrive(evs...)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				domain.Journal(arrivals)
			}
		})
	}
}
