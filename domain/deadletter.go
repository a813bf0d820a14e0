package domain

import (
	"encoding/json"
	"slices"
	"time"
)

// DeadLetterKind is where a dead letter came from.
type DeadLetterKind string

// The kinds: one queue for all of them.
const (
	// DeadLetterJob: a background job (status fetch, fee fetch,
	// reconciliation check) whose attempts ran out. Cause is its job kind.
	DeadLetterJob DeadLetterKind = "job"
	// DeadLetterProjection: an event the projector cannot decode or apply
	// for reasons of that event. Its payment is parked.
	DeadLetterProjection DeadLetterKind = "projection"
	// DeadLetterCollision: a delivery whose event ID is stored already in
	// another payment's stream. Nothing was appended.
	DeadLetterCollision DeadLetterKind = "collision"
)

// DeadLetterKinds lists every kind.
func DeadLetterKinds() []DeadLetterKind {
	return []DeadLetterKind{DeadLetterJob, DeadLetterProjection, DeadLetterCollision}
}

// Valid reports whether k is one of the kinds.
func (k DeadLetterKind) Valid() bool { return slices.Contains(DeadLetterKinds(), k) }

// Causes of the projection and collision kinds (a job's cause is its job
// kind, e.g. "enrich").
const (
	CauseUndecodable     = "undecodable"        // the event's type or data does not decode into a payment event
	CauseUnapplicable    = "unapplicable"       // it decodes, but its payment's read model cannot be written with it
	CauseEventIDTaken    = "event_id_collision" // its event ID is stored in another payment's stream
	DeadLetterStreamHead = "deadletter-"        // stream prefix of the retry facts: deadletter-{id}
)

// DeadLetterState says whether a dead letter waits for a person.
type DeadLetterState string

// The states. An entry is never deleted: a retry sets it retried, a new
// failure of the same thing sets it open again.
const (
	DeadLetterOpen    DeadLetterState = "open"
	DeadLetterRetried DeadLetterState = "retried"
)

// Valid reports whether s is one of the states.
func (s DeadLetterState) Valid() bool { return s == DeadLetterOpen || s == DeadLetterRetried }

// DeadLetterFailure is one failure to record. Key identifies the thing that
// failed ("job:123", "projection:<stream>", "collision:<event>:<stream>"): a
// failure with a key already recorded updates that entry (attempts, last
// failure, last error; state open again) instead of adding one.
type DeadLetterFailure struct {
	Key               string
	Kind              DeadLetterKind
	Cause             string
	Provider          string
	ProviderPaymentID string
	Streams           []string
	// Attempts, when > 0, is the entry's attempt count (a River job knows
	// its own); 0 adds one to the stored count (1 for a new entry).
	Attempts int
	At       time.Time
	Error    string
	// Payload is what a retry needs (job kind and args, the delivery).
	Payload json.RawMessage
}

// DeadLetter is one entry of the queue (read side).
type DeadLetter struct {
	ID                int64
	Kind              DeadLetterKind
	Cause             string
	Provider          string
	ProviderPaymentID string
	Streams           []string
	Attempts          int
	FirstFailedAt     time.Time
	LastFailedAt      time.Time
	LastError         string
	State             DeadLetterState
	Payload           json.RawMessage
	Retries           int
	RetriedAt         time.Time // zero when never retried
	RetriedBy         string
}

// DeadLetterFilter selects entries; empty fields match anything.
type DeadLetterFilter struct {
	Kind     DeadLetterKind
	Cause    string
	Provider string
	State    DeadLetterState
}

// DeadLetterQuery is one page of the queue, oldest first.
type DeadLetterQuery struct {
	DeadLetterFilter
	Limit  int    // 1..MaxPageSize; 0 means DefaultPageSize
	Cursor string // opaque, from a previous page
}

// DeadLetterPage is one page of the queue.
type DeadLetterPage struct {
	DeadLetters []DeadLetter
	NextCursor  string
}

// DeadLetterRetry is the fact a person's retry of a dead letter appends,
// to stream DeadLetterStreamHead+ID: who retried what, when, and as the
// how-manyth retry (Retry, from 1). A bulk retry names its filter.
type DeadLetterRetry struct {
	DeadLetterID      int64             `json:"dead_letter_id"`
	Retry             int               `json:"retry"`
	Kind              DeadLetterKind    `json:"kind"`
	Cause             string            `json:"cause"`
	Provider          string            `json:"provider,omitempty"`
	ProviderPaymentID string            `json:"provider_payment_id,omitempty"`
	Streams           []string          `json:"streams,omitempty"`
	RetriedBy         string            `json:"retried_by"`
	RetriedAt         time.Time         `json:"retried_at"`
	Bulk              *DeadLetterFilter `json:"bulk,omitempty"`
}

// TypeDeadLetterRetried is the wire name of DeadLetterRetry.
const TypeDeadLetterRetried = "deadletter.retried.v1"

// ReviewQuery selects reviews, oldest first.
type ReviewQuery struct {
	State    string // "open", "resolved" or empty: any
	Provider string
	Reason   string
	Limit    int    // 1..MaxPageSize; 0 means DefaultPageSize
	Cursor   string // opaque, from a previous page
}

// ReviewRow is one review with its payment's current status and money (read
// side, GET /v1/reviews).
type ReviewRow struct {
	Review
	PaymentStatus Status
	Amount        int64
	Currency      Currency
}

// ReviewPage is one page of reviews.
type ReviewPage struct {
	Reviews    []ReviewRow
	NextCursor string
}
