package projections

import (
	"slices"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/payledger/payledger/domain"
)

// recorded is one payment_events row as the projector folds it.
type recorded struct {
	id    string // event_id, on which payment_events is unique
	event domain.Event
}

// histories keeps the payment_events rows of the payments the runner touched
// last, so that a batch whose payments are all known is folded without
// reading its histories back: that read was the projector's costliest
// statement, and without it the whole batch goes out in one round trip.
//
// An entry is exactly what payment_events holds for its payment, because
// only the runner holding the projection's lock writes that table, entries
// are stored only after their batch committed, and the whole cache is
// dropped after any failed batch (its commit may or may not have happened)
// and when a session starts. A Reset empties the table behind the runner's
// back; the checkpoint's compare-and-set then fails the next batch, which
// drops the cache with it.
//
// Not safe for concurrent use: one runner, one goroutine.
type histories struct {
	lru *simplelru.LRU[paymentKey, []recorded] // nil: keep nothing
}

// newHistories returns a cache of up to size payments; size ≤ 0 keeps none.
func newHistories(size int) *histories {
	if size <= 0 {
		return &histories{}
	}
	lru, _ := simplelru.NewLRU[paymentKey, []recorded](size, nil) // fails only for size ≤ 0
	return &histories{lru: lru}
}

// merge returns the full history of every key it knows, with the batch's
// events for that key added as the history insert will add them (an event
// ID already present is skipped, the first occurrence wins), and the keys it
// does not know, whose histories must be read back after the insert.
func (h *histories) merge(keys []paymentKey, events []decoded) (known map[paymentKey][]recorded, missing []paymentKey) {
	known = make(map[paymentKey][]recorded, len(keys))
	if h.lru == nil {
		return known, keys
	}
	for _, k := range keys {
		if past, ok := h.lru.Get(k); ok {
			// Clip: appending must never write into the cached array,
			// which stays the committed history if this batch fails.
			known[k] = slices.Clip(past)
		} else {
			missing = append(missing, k)
		}
	}
	for _, d := range events {
		k := paymentKey{d.meta.Provider, d.meta.ProviderPaymentID}
		past, ok := known[k]
		if !ok {
			continue
		}
		id := d.rec.ID.String()
		if !slices.ContainsFunc(past, func(r recorded) bool { return r.id == id }) {
			known[k] = append(past, recorded{id: id, event: d.event})
		}
	}
	return known, missing
}

// store remembers committed histories.
func (h *histories) store(committed map[paymentKey][]recorded) {
	if h.lru == nil {
		return
	}
	for k, rs := range committed {
		h.lru.Add(k, rs)
	}
}

// purge forgets everything.
func (h *histories) purge() {
	if h.lru != nil {
		h.lru.Purge()
	}
}

// fold returns the state of every key from its history.
func fold(keys []paymentKey, hs map[paymentKey][]recorded) []domain.PaymentState {
	states := make([]domain.PaymentState, 0, len(keys))
	for _, k := range keys {
		evs := make([]domain.Event, len(hs[k]))
		for i, r := range hs[k] {
			evs[i] = r.event
		}
		// The one state machine: the same fold the command path uses.
		states = append(states, domain.Fold(evs...).State())
	}
	return states
}
