// Package domain is payledger's vocabulary: payment events (facts a provider
// reported), the payment aggregate that folds them, money, and the error kinds
// every adapter maps to.
//
// It imports the standard library only. No clock, randomness or I/O lives here:
// time arrives as data on the events, and the fold is a pure function, so the
// same set of events folds to the same Payment on every machine, in any order.
package domain
