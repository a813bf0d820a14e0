package domain

import "time"

// AttentionCount is how many things of one group wait for a person and
// since when the oldest of them waits.
type AttentionCount struct {
	Count  int64
	Oldest time.Time // zero when Count is 0
}

// Attention is what needs a human now: the open reviews, the open dead
// letters, the parked payments and the payments awaiting confirmation. It
// feeds the alert metrics and `ledger doctor`.
type Attention struct {
	// Reviews: open reviews by provider and reason; Oldest is opened_at.
	Reviews map[[2]string]AttentionCount
	// DeadLetters: open dead letters by kind and cause; Oldest is the
	// first failure.
	DeadLetters map[[2]string]AttentionCount
	// Parked: payments the projector parked; Oldest is when.
	Parked AttentionCount
	// Awaiting: payments awaiting confirmation by provider; Oldest is the
	// provider time of the payment's first fact (what its review deadline
	// counts from).
	Awaiting map[string]AttentionCount
}
