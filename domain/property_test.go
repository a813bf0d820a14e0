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
		switch rapid.IntRange(0, 12).Draw(t, "kind") {
		case 12:
			evs = append(evs, actionRequired(id, sec))
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

// TestWaitingMovesOnToItsOutcome: any number of waiting facts (processing,
// action required, awaiting_confirmation snapshots, after a created or not)
// followed by an outcome fold to that outcome in any arrival order, and
// while only waiting facts are known the payment is awaiting_confirmation,
// books nothing and is not final.
func TestWaitingMovesOnToItsOutcome(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var facts []domain.Event
		if rapid.Bool().Draw(t, "created") {
			facts = append(facts, created("c", 0, 2000))
		}
		n := rapid.IntRange(1, 5).Draw(t, "waiting")
		for i := 0; i < n; i++ {
			id, sec := fmt.Sprintf("w%d", i), rapid.IntRange(0, 3).Draw(t, "sec")
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0:
				facts = append(facts, processing(id, sec))
			case 1:
				facts = append(facts, actionRequired(id, sec))
			default:
				facts = append(facts, observed(id, sec, domain.StatusAwaitingConfirmation, 0, 0))
			}
		}
		waiting := domain.Fold(rapid.Permutation(facts).Draw(t, "waiting order")...).State()
		if waiting.Status != domain.StatusAwaitingConfirmation || waiting.Status.Final() ||
			domain.BooksOf(waiting) != (domain.Books{Currency: waiting.Currency}) {
			t.Fatalf("waiting facts fold to %+v", waiting)
		}
		outcomes := []struct {
			e    domain.Event
			want domain.Status
		}{
			{succeeded("o", 4, 2000), domain.StatusConfirmed},
			{failed("o", 4), domain.StatusFailed},
			{cancelled("o", 4), domain.StatusCancelled},
			{authorized("o", 4), domain.StatusAuthorized},
			{observed("o", 4, domain.StatusConfirmed, 2000, 0), domain.StatusConfirmed},
			{observed("o", 4, domain.StatusFailed, 0, 0), domain.StatusFailed},
		}
		o := outcomes[rapid.IntRange(0, len(outcomes)-1).Draw(t, "outcome")]
		all := rapid.Permutation(append(facts, o.e)).Draw(t, "order")
		if got := domain.Fold(all...).State(); got.Status != o.want {
			t.Fatalf("Fold(%d waiting + %s) = %s, want %s", n, o.e.EventType(), got.Status, o.want)
		}
	})
}
