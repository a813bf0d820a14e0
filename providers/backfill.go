package providers

import (
	"time"

	"github.com/payledger/payledger/domain"
)

// Window is the time range a backfill asks a provider about: [Since, Until).
type Window struct {
	Since, Until time.Time
}

// Page is one page of what a provider's list API holds for a window, mapped
// exactly as the provider's webhooks (Stripe's events) or its status answers
// (the others) are mapped, so that appending it through the webhook path
// stores only what is missing: a fact already stored has the same event ID.
type Page struct {
	// Notifications holds one entry per listed object, in the provider's
	// order: its facts (Events), or why none (IgnoredReason).
	Notifications []domain.Notification
	// Next is the cursor of the next page; "" after the last.
	Next string
}

// Coverage says what a provider's list API can see of a window.
type Coverage string

const (
	// CoverageChanges: every change in the window (Stripe's events, Mercado
	// Pago's search by date_last_updated).
	CoverageChanges Coverage = "changes"
	// CoverageCreatedOrPaid: payments created or paid in the window (Asaas
	// lists by dateCreated and by paymentDate): a refund or a chargeback of
	// an older payment is left to the reconciler.
	CoverageCreatedOrPaid Coverage = "created_or_paid"
	// CoverageCreated: charges created in the window (Pagar.me): a later
	// change of an older charge is left to the reconciler.
	CoverageCreated Coverage = "created"
)
