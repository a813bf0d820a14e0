package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"
)

// Wire names of the review facts.
const (
	TypeReviewOpened   = "payment.review_opened.v1"
	TypeReviewResolved = "payment.review_resolved.v1"
)

// ReviewEventType is the ProviderEventType of every review fact: the fact is
// payledger's (a job's or a person's), not the provider's.
const ReviewEventType = "payledger.review"

// ReviewConfirmationTimeout is the reason of a review opened because a
// payment stayed pending, awaiting_confirmation or authorized past its
// deadline and the reconciler's check still had no final answer. The other
// reasons are the fold's anomalies (Review* in payment.go).
const ReviewConfirmationTimeout = "confirmation_timeout"

// Resolution is how a person closed a review.
type Resolution string

// The resolutions.
const (
	ResolutionAccepted         Resolution = "accepted"          // the payment is right as it is
	ResolutionWrittenOff       Resolution = "written_off"       // the money is given up
	ResolutionRefundedManually Resolution = "refunded_manually" // refunded outside the provider's API
	ResolutionDuplicate        Resolution = "duplicate"         // the same question as another review
	ResolutionOther            Resolution = "other"             // the note says
)

// Resolutions lists every resolution, for validation and the API document.
func Resolutions() []Resolution {
	return []Resolution{ResolutionAccepted, ResolutionWrittenOff, ResolutionRefundedManually, ResolutionDuplicate, ResolutionOther}
}

// Valid reports whether r is one of the resolutions.
func (r Resolution) Valid() bool { return slices.Contains(Resolutions(), r) }

// MaxReviewNote bounds a resolution's note, in bytes.
const MaxReviewNote = 4096

// ReviewOpened: payledger asks a person to look at a payment. A job appends
// it (the domain has no clock): the reconciler after a check past the
// payment's deadline, or the review sweep for an anomaly the fold found.
//
// Meta: ProviderEventID is the ReviewID (so a review is appended once
// however often the check runs), ProviderEventType is ReviewEventType,
// OccurredAt is when the job opened it.
type ReviewOpened struct {
	Meta
	ReviewID string `json:"review_id"`
	Reason   string `json:"reason"`
	// Cause is what made it: "status:<status>" for a confirmation timeout
	// (a later wait in another status is a new cause), the anomalous fact's
	// key (Meta.Key) for an anomaly.
	Cause string `json:"cause"`
	// Status is the payment's folded status when the review was opened.
	Status Status `json:"status"`
	// Deadline is when the payment's wait became too long (timeouts only).
	Deadline time.Time `json:"deadline,omitzero"`
}

// ReviewResolved: a person closed a review. Meta.ProviderEventID is
// ResolvedEventID(ReviewID): a review is resolved once.
type ReviewResolved struct {
	Meta
	ReviewID   string     `json:"review_id"`
	Resolution Resolution `json:"resolution"`
	Note       string     `json:"note,omitempty"`
	// ResolvedBy is the name of the API token that resolved it.
	ResolvedBy string `json:"resolved_by"`
}

// EventType implements Event.
func (*ReviewOpened) EventType() string { return TypeReviewOpened }

// EventType implements Event.
func (*ReviewResolved) EventType() string { return TypeReviewResolved }

// ReviewID names the review of one payment for one reason and cause. It is
// globally unique (the API resolves reviews by it alone) and stable: the
// same question asked twice is the same review.
func ReviewID(provider, providerPaymentID, reason, cause string) string {
	h := sha256.Sum256([]byte(provider + "\x00" + providerPaymentID + "\x00" + reason + "\x00" + cause))
	return "rev_" + hex.EncodeToString(h[:12])
}

// ResolvedEventID is the ProviderEventID of a review's resolution.
func ResolvedEventID(reviewID string) string { return reviewID + ":resolved" }

// TimeoutCause is the cause of a confirmation timeout in status s.
func TimeoutCause(s Status) string { return "status:" + string(s) }

// IsOwnFact reports whether e is payledger's own fact (a reconciliation
// check, a review opened or resolved) rather than a provider's. The fold
// skips them: they change no status, event count, update time or journal.
func IsOwnFact(e Event) bool {
	switch e.(type) {
	case *ReconciliationChecked, *ReviewOpened, *ReviewResolved:
		return true
	}
	return false
}

// Waiting reports whether a payment in s waits on the payer, the network or
// a capture: the statuses a review deadline applies to.
func (s Status) Waiting() bool {
	return s == StatusPending || s == StatusAwaitingConfirmation || s == StatusAuthorized
}

// Anomaly is one review reason the fold found and the fact that raised it.
type Anomaly struct {
	Reason string
	Cause  string // the fact's Meta.Key
}

// Review is one review of a payment, folded from its review facts.
type Review struct {
	ID                string
	Provider          string
	ProviderPaymentID string
	Reason            string
	Cause             string
	Status            Status // at opening
	Deadline          time.Time
	OpenedAt          time.Time
	Resolved          bool
	ResolvedAt        time.Time
	Resolution        Resolution
	Note              string
	ResolvedBy        string
}

// Reviews returns the payment's reviews, oldest first. A resolution of a
// review never opened is ignored (it cannot happen through the API).
func (p Payment) Reviews() []Review {
	var out []Review
	idx := map[string]int{}
	for _, e := range p.facts {
		if o, ok := e.(*ReviewOpened); ok {
			if _, seen := idx[o.ReviewID]; seen {
				continue
			}
			idx[o.ReviewID] = len(out)
			out = append(out, Review{ID: o.ReviewID, Provider: o.Provider, ProviderPaymentID: o.ProviderPaymentID,
				Reason: o.Reason, Cause: o.Cause, Status: o.Status, Deadline: o.Deadline, OpenedAt: o.OccurredAt})
		}
	}
	for _, e := range p.facts {
		if r, ok := e.(*ReviewResolved); ok {
			i, found := idx[r.ReviewID]
			if !found || out[i].Resolved {
				continue
			}
			out[i].Resolved, out[i].ResolvedAt = true, r.OccurredAt
			out[i].Resolution, out[i].Note, out[i].ResolvedBy = r.Resolution, r.Note, r.ResolvedBy
		}
	}
	return out
}

// RequiresReview reports whether any review of the payment is open.
func (p Payment) RequiresReview() bool {
	for _, r := range p.Reviews() {
		if !r.Resolved {
			return true
		}
	}
	return false
}

// Anomalies returns each review reason the fold found with the fact that
// raised it, in fold order. The same reason raised by two facts is two
// anomalies: each is a question of its own.
func (p Payment) Anomalies() []Anomaly { return slices.Clone(p.anomalies) }

// hasReview reports whether a review with this ID was ever opened.
func (p Payment) hasReview(id string) bool {
	for _, e := range p.facts {
		if o, ok := e.(*ReviewOpened); ok && o.ReviewID == id {
			return true
		}
	}
	return false
}

// AnomalyReviews returns the reviews to open, at now, for the anomalies no
// review was opened for yet (open or resolved: a resolved question is not
// asked again; a new anomalous fact is a new question).
func AnomalyReviews(p Payment, now time.Time) []*ReviewOpened {
	var out []*ReviewOpened
	s := p.state
	for _, a := range p.anomalies {
		id := ReviewID(s.Provider, s.ProviderPaymentID, a.Reason, a.Cause)
		if p.hasReview(id) || slices.ContainsFunc(out, func(o *ReviewOpened) bool { return o.ReviewID == id }) {
			continue
		}
		out = append(out, &ReviewOpened{Meta: reviewMeta(s, id, now), ReviewID: id, Reason: a.Reason, Cause: a.Cause, Status: s.Status})
	}
	return out
}

// TimeoutReview returns the review to open, at now, for a payment still
// waiting (Status.Waiting) at least after past its first fact's provider
// time, or nil when it is not due or was opened already for this status.
// The caller asks only after the reconciler's check gave no final answer.
func TimeoutReview(p Payment, now time.Time, after time.Duration) *ReviewOpened {
	s := p.state
	if !s.Status.Waiting() || s.CreatedAt.IsZero() || after <= 0 {
		return nil
	}
	deadline := s.CreatedAt.Add(after)
	if now.Before(deadline) {
		return nil
	}
	cause := TimeoutCause(s.Status)
	id := ReviewID(s.Provider, s.ProviderPaymentID, ReviewConfirmationTimeout, cause)
	if p.hasReview(id) {
		return nil
	}
	return &ReviewOpened{Meta: reviewMeta(s, id, now), ReviewID: id, Reason: ReviewConfirmationTimeout,
		Cause: cause, Status: s.Status, Deadline: deadline.UTC()}
}

// ResolveReview returns the fact that resolves review id of p, or an error
// (KindNotFound: no such review; KindConflict: resolved already, differently;
// KindInvalid: a bad resolution or note). A resolution equal to the stored
// one is returned again, so a retried request is answered the same.
func ResolveReview(p Payment, id string, res Resolution, note, by string, now time.Time) (*ReviewResolved, error) {
	const op = "domain: resolve review"
	if !res.Valid() {
		return nil, Invalid(op, "resolution must be one of accepted, written_off, refunded_manually, duplicate, other", nil)
	}
	if len(note) > MaxReviewNote {
		return nil, Invalid(op, "note is longer than 4096 bytes", nil)
	}
	for _, r := range p.Reviews() {
		if r.ID != id {
			continue
		}
		if r.Resolved {
			if r.Resolution == res && r.Note == note && r.ResolvedBy == by {
				return &ReviewResolved{Meta: reviewMeta(p.state, ResolvedEventID(id), r.ResolvedAt), ReviewID: id,
					Resolution: res, Note: note, ResolvedBy: by}, nil
			}
			return nil, &Error{Kind: KindConflict, Op: op, Msg: "review is resolved already"}
		}
		return &ReviewResolved{Meta: reviewMeta(p.state, ResolvedEventID(id), now), ReviewID: id,
			Resolution: res, Note: note, ResolvedBy: by}, nil
	}
	return nil, &Error{Kind: KindNotFound, Op: op, Msg: "no such review"}
}

// reviewMeta keeps the time at the microsecond, what Postgres keeps, so the
// fact's own answer and the review queue's show the same instant.
func reviewMeta(s PaymentState, eventID string, at time.Time) Meta {
	return Meta{Provider: s.Provider, ProviderPaymentID: s.ProviderPaymentID, ProviderEventID: eventID,
		ProviderEventType: ReviewEventType, OccurredAt: at.UTC().Truncate(time.Microsecond)}
}
