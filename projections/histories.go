package projections

import (
	"cmp"
	"slices"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// recorded is one payment_events row as the projector folds it.
type recorded struct {
	id         string // event_id, on which payment_events is unique
	event      domain.Event
	revision   uint64    // in its stream: histories are kept in revision order
	recordedAt time.Time // the store's: the recorded time of the entries it posts
}

// histories keeps the payment_events rows of the payments the runner touched
// last, so a batch of known (or new: see plan) payments is folded without
// reading its histories back. An entry always equals the table: only the lock
// holder writes it, entries are stored after their batch commits, and the
// cache is dropped after a failed batch and when a session starts
// (ARCHITECTURE.md, "Pipelined, with recent histories in memory"). Not safe
// for concurrent use: one runner, one goroutine.
type histories struct {
	lru *simplelru.LRU[paymentKey, []recorded] // nil: keep nothing
	// readBack makes every history be read back, as without this cache
	// and without fresh payments: the reference the tests compare with.
	readBack bool
}

// newHistories returns a cache of up to size payments; size ≤ 0 keeps none.
func newHistories(size int) *histories {
	if size <= 0 {
		return &histories{}
	}
	lru, _ := simplelru.NewLRU[paymentKey, []recorded](size, nil) // fails only for size ≤ 0
	return &histories{lru: lru}
}

// plan is how a batch gets the full history of every payment it touches.
type plan struct {
	// histories holds the known and the fresh payments' histories, the
	// batch's events included; read-back histories are added to it.
	histories map[paymentKey][]recorded
	// fresh are payments the cache does not know whose stream starts in
	// this batch: their history is the batch's events, which a check in
	// the batch's first round trip confirms against payment_events.
	fresh []paymentKey
	// missing are the others: read back after the history insert.
	missing []paymentKey
}

// plan returns the history of every key it knows, with the batch's events
// for that key added as the history insert adds them (an event ID already
// present is skipped, the first occurrence wins), the keys that are new
// (see plan.fresh), and the keys whose histories must be read back.
func (h *histories) plan(keys []paymentKey, events []decoded) plan {
	pl := plan{histories: make(map[paymentKey][]recorded, len(keys))}
	if h.readBack {
		pl.missing = keys
		return pl
	}
	byKey := make(map[paymentKey][]decoded, len(keys))
	for _, d := range events {
		k := paymentKey{d.meta.Provider, d.meta.ProviderPaymentID}
		byKey[k] = append(byKey[k], d)
	}
	for _, k := range keys {
		var past []recorded
		switch cached, ok := h.get(k); {
		case ok:
			// Clip: appending must never write into the cached array,
			// which stays the committed history if this batch fails.
			past = slices.Clip(cached)
		case startsStream(k, byKey[k]):
			pl.fresh = append(pl.fresh, k)
		default:
			pl.missing = append(pl.missing, k)
			continue
		}
		for _, d := range byKey[k] {
			id := d.rec.ID.String()
			if !slices.ContainsFunc(past, func(r recorded) bool { return r.id == id }) {
				past = append(past, recorded{id: id, event: d.event, revision: d.rec.Revision, recordedAt: d.rec.RecordedAt})
			}
		}
		// Store order, as the read-back's ORDER BY: Journal takes arrivals so.
		slices.SortStableFunc(past, compareRecorded)
		pl.histories[k] = past
	}
	return pl
}

// compareRecorded orders a history as queueLoadHistories reads it back.
func compareRecorded(a, b recorded) int {
	if c := cmp.Compare(a.revision, b.revision); c != 0 {
		return c
	}
	if c := a.recordedAt.Compare(b.recordedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// startsStream reports whether events, a batch's events of payment k,
// include the first event of k's stream and come from that stream only.
// The feed hands out a stream's events in revision order and the
// checkpoint only moves forward, so no earlier batch recorded an event of
// that stream; and every event of a payment is appended to its own stream,
// which the check in the batch (queueCheckFresh) does not take on trust.
func startsStream(k paymentKey, events []decoded) bool {
	stream := eventstore.PaymentStream(k.provider, k.id)
	first := false
	for _, d := range events {
		if d.rec.Stream != stream {
			return false
		}
		first = first || d.rec.Revision == 0
	}
	return first
}

func (h *histories) get(k paymentKey) ([]recorded, bool) {
	if h.lru == nil {
		return nil, false
	}
	return h.lru.Get(k)
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
func fold(keys []paymentKey, hs map[paymentKey][]recorded) []foldedRow {
	rows := make([]foldedRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, foldedRowOf(hs[k]))
	}
	return rows
}
