package domain_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/payledger/payledger/domain"
)

// genEvents draws a set of distinct facts about one payment, with timestamps
// squeezed into a few seconds so that ties (and so the rank rule) are common.
func genEvents(t *rapid.T) []domain.Event {
	n := rapid.IntRange(0, 12).Draw(t, "n")
	evs := make([]domain.Event, 0, n)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("evt_%d", i)
		sec := rapid.IntRange(0, 4).Draw(t, "sec")
		amount := rapid.Int64Range(1, 5000).Draw(t, "amount")
		switch rapid.IntRange(0, 11).Draw(t, "kind") {
		case 10:
			evs = append(evs, notified(id, sec))
		case 11:
			st := rapid.SampledFrom(append(domain.Statuses(), "settling")).Draw(t, "status")
			evs = append(evs, observed(id, sec, st, amount, rapid.Int64Range(0, amount).Draw(t, "refunded")))
		case 0:
			evs = append(evs, created(id, sec, amount))
		case 1:
			evs = append(evs, processing(id, sec))
		case 2:
			evs = append(evs, authorized(id, sec))
		case 3:
			evs = append(evs, failed(id, sec))
		case 4:
			evs = append(evs, cancelled(id, sec))
		case 5:
			evs = append(evs, succeeded(id, sec, amount))
		case 6:
			evs = append(evs, refunded(id, sec, amount))
		case 7:
			evs = append(evs, disputeOpened(id, sec))
		case 8:
			evs = append(evs, disputeClosed(id, sec, domain.DisputeLost))
		default:
			evs = append(evs, disputeClosed(id, sec, domain.DisputeWon))
		}
	}
	return evs
}

// TestFoldIsOrderAndDuplicateIndependent: every permutation and every
// duplication of an event set folds to the same state, whether folded at once
// or evolved one event at a time in arrival order.
func TestFoldIsOrderAndDuplicateIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		facts := genEvents(t)
		want := domain.Fold(facts...).State()

		// Arrival: a permutation with some events delivered several times.
		arrival := rapid.Permutation(facts).Draw(t, "order")
		if len(facts) > 0 {
			dups := rapid.IntRange(0, 6).Draw(t, "dups")
			for i := 0; i < dups; i++ {
				e := facts[rapid.IntRange(0, len(facts)-1).Draw(t, "dup")]
				at := rapid.IntRange(0, len(arrival)).Draw(t, "at")
				arrival = append(arrival[:at], append([]domain.Event{e}, arrival[at:]...)...)
			}
		}

		if got := domain.Fold(arrival...).State(); !equalState(got, want) {
			t.Fatalf("Fold(arrival) = %+v\nwant %+v", got, want)
		}
		var p domain.Payment
		for _, e := range arrival {
			p = domain.Evolve(p, e)
		}
		if got := p.State(); !equalState(got, want) {
			t.Fatalf("Evolve(arrival) = %+v\nwant %+v", got, want)
		}
		if len(facts) > 0 && want.Status == "" {
			t.Fatalf("non-empty fold has no status: %+v", want)
		}
		if want.EventCount != len(facts) {
			t.Fatalf("EventCount = %d, want %d", want.EventCount, len(facts))
		}
	})
}
