package domain

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestInsertSortedIsFold: the journal's incremental sort keeps, after every
// arrival, exactly the facts Fold keeps, in Fold's order — repeats of a key
// and conflicting duplicates included — and reports a repeat exactly when
// Fold's facts did not change.
func TestInsertSortedIsFold(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		var sorted, arrived []Event
		prev := Fold()
		for i := range rapid.IntRange(1, 12).Draw(t, "n") {
			m := Meta{Provider: "stripe", ProviderPaymentID: "pi_1",
				ProviderEventID: fmt.Sprintf("evt_%d", rapid.IntRange(0, 4).Draw(t, "key")),
				OccurredAt:      t0.Add(time.Duration(rapid.IntRange(0, 2).Draw(t, "sec")) * time.Second)}
			var e Event = &PaymentSucceeded{Meta: m, Amount: int64(i), AmountReceived: 100, Currency: "USD"}
			if rapid.Bool().Draw(t, "refund") {
				e = &PaymentRefunded{Meta: m, AmountRefunded: int64(i), AmountCaptured: 100, Currency: "USD"}
			}
			arrived = append(arrived, e)
			var repeat bool
			sorted, repeat = insertSorted(sorted, e)
			want := Fold(arrived...)
			got := dedup(sorted)
			if len(got) != len(want.facts) {
				t.Fatalf("after %d arrivals: %d facts, Fold keeps %d", i+1, len(got), len(want.facts))
			}
			for k := range got {
				if got[k] != want.facts[k] {
					t.Fatalf("after %d arrivals: fact %d is %+v, Fold has %+v", i+1, k, got[k], want.facts[k])
				}
			}
			same := len(prev.facts) == len(want.facts)
			for k := 0; same && k < len(want.facts); k++ {
				same = prev.facts[k] == want.facts[k]
			}
			if repeat && !same {
				t.Fatalf("arrival %d reported a repeat but the fold changed", i+1)
			}
			prev = want
		}
	})
}
