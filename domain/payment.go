package domain

import (
	"cmp"
	"slices"
	"time"
)

// Status is a payment's state as finance sees it.
type Status string

// The statuses. A payment is one of these after any non-empty fold.
const (
	StatusPending Status = "pending"
	// StatusAwaitingConfirmation: the outcome depends on the payer or the
	// network and no money has moved yet (Pix or boleto issued and unpaid,
	// bank debit processing, 3-D Secure pending, provider risk analysis).
	StatusAwaitingConfirmation Status = "awaiting_confirmation"
	StatusAuthorized           Status = "authorized"
	StatusConfirmed            Status = "confirmed"
	StatusFailed               Status = "failed"
	StatusCancelled            Status = "cancelled"
	StatusPartiallyRefunded    Status = "partially_refunded"
	StatusRefunded             Status = "refunded"
	StatusDisputed             Status = "disputed"
	StatusChargeback           Status = "chargeback"
)

// Statuses lists every status, for validating filters.
func Statuses() []Status {
	return []Status{StatusPending, StatusAwaitingConfirmation, StatusAuthorized, StatusConfirmed, StatusFailed, StatusCancelled,
		StatusPartiallyRefunded, StatusRefunded, StatusDisputed, StatusChargeback}
}

// Valid reports whether s is one of the statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses() {
		if s == v {
			return true
		}
	}
	return false
}

// Review reasons: sequences a provider should never send. The fold never
// fails on them (events are facts); it records them for a human to look at.
const (
	ReviewForeignEvent          = "foreign_event"           // event of another payment in this stream
	ReviewCurrencyMismatch      = "currency_mismatch"       // an event in another currency
	ReviewFailureAfterSuccess   = "failure_after_success"   // failed reported after money moved
	ReviewCancelAfterSuccess    = "cancel_after_success"    // cancelled reported after money moved
	ReviewSuccessAfterCancel    = "success_after_cancel"    // money moved on a cancelled payment
	ReviewRefundExceedsCapture  = "refund_exceeds_capture"  // more refunded than captured
	ReviewDisputeClosedNotOpen  = "dispute_closed_not_open" // a dispute closed that we never saw open
	ReviewConflictingDuplicates = "conflicting_duplicates"  // one provider event ID with two different contents
	ReviewUnknownStatus         = "unknown_status"          // a provider snapshot with a status we do not know
)

// PaymentState is the folded, read-side view of a payment: a plain value that
// projections store and the API serves.
type PaymentState struct {
	Provider          string
	ProviderPaymentID string
	Status            Status
	Currency          Currency
	Amount            int64    // what the payment asks for
	AmountCaptured    int64    // what money moved in
	AmountRefunded    int64    // cumulative refunds
	AmountDisputed    int64    // the amount of the latest dispute
	Fee               int64    // the provider's latest stated fee, in FeeCurrency
	FeeCurrency       Currency // empty when no fee was stated
	CreatedAt         time.Time
	UpdatedAt         time.Time
	EventCount        int
	ReviewReasons     []string // sorted, unique; empty when nothing looks wrong
	// RequiresReview: some review of the payment is open (Payment.Reviews).
	RequiresReview bool
	// Parked is read-side only, never set by the fold: the projector parked
	// the payment (an event of its stream could not be projected), so the
	// read model may be behind its stream.
	Parked bool
}

// Payment is the aggregate: the deduplicated facts of one payment, kept in
// lifecycle order, and the state they fold to. The zero value is an empty
// payment. Payment is a value: Evolve returns a new one and never mutates.
type Payment struct {
	facts     []Event
	state     PaymentState
	anomalies []Anomaly // each review reason with the fact that raised it
}

// Fold returns the payment the events describe. Order of the arguments does
// not matter, nor do repeats: events are sorted by provider time, then
// lifecycle rank, then key, and an event whose key was already folded is
// skipped. Nil events are ignored.
func Fold(events ...Event) Payment {
	facts := make([]Event, 0, len(events))
	for _, e := range events {
		if e != nil {
			facts = append(facts, e)
		}
	}
	slices.SortStableFunc(facts, compareEvents)
	var p Payment
	var conflicting []string // keys
	for i, e := range facts {
		if i > 0 && e.EventMeta().Key() == facts[i-1].EventMeta().Key() {
			// Same fact twice. compareEvents puts equal keys side by side.
			if k := e.EventMeta().Key(); !sameFact(e, facts[i-1]) && !slices.Contains(conflicting, k) {
				conflicting = append(conflicting, k)
			}
			continue
		}
		p.facts = append(p.facts, e)
	}
	p.state, p.anomalies = replay(p.facts)
	for _, k := range conflicting {
		p.state.ReviewReasons = addReason(p.state.ReviewReasons, ReviewConflictingDuplicates)
		p.anomalies = append(p.anomalies, Anomaly{Reason: ReviewConflictingDuplicates, Cause: k})
	}
	p.state.RequiresReview = p.RequiresReview()
	return p
}

// Evolve returns p with e folded in. Because Payment keeps its facts sorted,
// Evolve(Evolve(p, a), b) equals Evolve(Evolve(p, b), a).
func Evolve(p Payment, e Event) Payment {
	all := make([]Event, 0, len(p.facts)+1)
	all = append(all, p.facts...)
	return Fold(append(all, e)...)
}

// State returns the folded state. The returned value shares nothing with p.
func (p Payment) State() PaymentState {
	s := p.state
	s.ReviewReasons = slices.Clone(s.ReviewReasons)
	return s
}

// Events returns the deduplicated facts in fold order.
func (p Payment) Events() []Event { return slices.Clone(p.facts) }

// Has reports whether a fact with this key (Meta.Key) was folded. This is the
// domain's idempotency rule; it survives restarts because it is rebuilt from
// the stream.
func (p Payment) Has(key string) bool {
	for _, e := range p.facts {
		if e.EventMeta().Key() == key {
			return true
		}
	}
	return false
}

// compareEvents orders facts: provider time, lifecycle rank, key, then wire
// type so that conflicting duplicates still sort deterministically.
func compareEvents(a, b Event) int {
	ma, mb := a.EventMeta(), b.EventMeta()
	if c := ma.OccurredAt.Compare(mb.OccurredAt); c != 0 {
		return c
	}
	if c := cmp.Compare(Rank(a), Rank(b)); c != 0 {
		return c
	}
	if c := cmp.Compare(ma.Key(), mb.Key()); c != 0 {
		return c
	}
	return cmp.Compare(a.EventType(), b.EventType())
}

// sameFact reports whether two events with one key carry the same content.
// Events are flat structs of comparable fields, so == on the dereferenced
// values is exact; differing dynamic types are different facts.
func sameFact(a, b Event) bool {
	if a.EventType() != b.EventType() {
		return false
	}
	return derefEqual(a, b)
}

func addReason(rs []string, r string) []string {
	if slices.Contains(rs, r) {
		return rs
	}
	rs = append(rs, r)
	slices.Sort(rs)
	return rs
}
