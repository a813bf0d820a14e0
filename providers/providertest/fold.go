package providertest

import (
	"reflect"
	"testing"

	"github.com/payledger/payledger/domain"
)

// FoldsInEveryOrder checks that facts fold to want, and to one and the same
// state in every arrival order with a duplicate of the first: the fold's
// promise for a provider's mapping (the waiting statuses moving on to a final
// one, for instance). facts is permuted in place and restored.
func FoldsInEveryOrder(t testing.TB, facts []domain.Event, want domain.Status) {
	t.Helper()
	first := domain.Fold(facts...).State()
	if first.Status != want {
		t.Fatalf("fold = %s %v, want %s", first.Status, first.ReviewReasons, want)
	}
	everyOrder(facts, 0, func(order []domain.Event) {
		got := domain.Fold(append(append([]domain.Event(nil), order...), order[0])...).State()
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("an order folds to %+v, want %+v", got, first)
		}
	})
}

// everyOrder calls f with every permutation of es (in place).
func everyOrder(es []domain.Event, i int, f func([]domain.Event)) {
	if i == len(es) {
		f(es)
		return
	}
	for j := i; j < len(es); j++ {
		es[i], es[j] = es[j], es[i]
		everyOrder(es, i+1, f)
		es[i], es[j] = es[j], es[i]
	}
}
