package asaas

import "github.com/payledger/payledger/domain"

// Status details: what the domain status alone does not say. A confirmed
// Asaas payment is CONFIRMED (paid, balance not yet available) or RECEIVED
// (settled); a refund may be pending while the payment still counts as paid.
const (
	DetailReceived         = "received"
	DetailReceivedInCash   = "received_in_cash"
	DetailRefundRequested  = "refund_requested"
	DetailRefundInProgress = "refund_in_progress"
	DetailDunningRequested = "dunning_requested"
	DetailDunningReceived  = "dunning_received"
	DetailDeleted          = "deleted"
)

// unknownStatusPrefix marks a payment.status this package does not know.
// "asaas:FOO" is not a valid domain.Status, so the fold flags the snapshot
// unknown_status instead of guessing, and the raw value survives for review.
const unknownStatusPrefix = "asaas:"

// statusOf maps an Asaas payment.status (the enum of the API's payment
// object) to a domain status and a detail. An unknown status is passed
// through as the invalid status "asaas:<STATUS>".
func statusOf(s string) (domain.Status, string) {
	switch s {
	case "PENDING", "AWAITING_RISK_ANALYSIS", "OVERDUE":
		// Whatever the billing type, an Asaas charge is issued to the
		// payer (or in risk analysis) when it exists. OVERDUE is not
		// final: a boleto or Pix may still be paid late.
		return domain.StatusAwaitingConfirmation, ""
	case "DUNNING_REQUESTED":
		// Sent to credit-bureau collection; still unpaid, up to the payer.
		return domain.StatusAwaitingConfirmation, DetailDunningRequested
	case "AUTHORIZED":
		return domain.StatusAuthorized, ""
	case "CONFIRMED":
		return domain.StatusConfirmed, ""
	case "RECEIVED":
		return domain.StatusConfirmed, DetailReceived
	case "RECEIVED_IN_CASH":
		return domain.StatusConfirmed, DetailReceivedInCash
	case "DUNNING_RECEIVED":
		// Recovered through collection [UNVERIFIED: read as "Recuperada"].
		return domain.StatusConfirmed, DetailDunningReceived
	case "REFUND_REQUESTED":
		// The money is still with the merchant until the refund is done.
		return domain.StatusConfirmed, DetailRefundRequested
	case "REFUND_IN_PROGRESS":
		return domain.StatusConfirmed, DetailRefundInProgress
	case "REFUNDED":
		return domain.StatusRefunded, ""
	case "CHARGEBACK_REQUESTED":
		// Funds are blocked: treated as lost until a dispute says otherwise.
		return domain.StatusChargeback, ""
	case "CHARGEBACK_DISPUTE", "AWAITING_CHARGEBACK_REVERSAL":
		return domain.StatusDisputed, ""
	}
	return domain.Status(unknownStatusPrefix + s), ""
}

// lifecycle is what a PAYMENT_* webhook event says about the payment.
type lifecycle struct {
	status domain.Status
	detail string
	// fromPayment: the event implies no status of its own; take it from
	// payment.status (PAYMENT_REFUND_IN_PROGRESS).
	fromPayment bool
}

// lifecycleOf maps a PAYMENT_* event that changes the payment's state. It
// reports false for informational events (PAYMENT_UPDATED, *_VIEWED,
// PAYMENT_DUNNING_*, PAYMENT_SPLIT_*, PAYMENT_REFUND_DENIED, …) and for
// unknown ones, which become PaymentNotified facts.
func lifecycleOf(event string) (lifecycle, bool) {
	switch event {
	case "PAYMENT_CREATED", "PAYMENT_AWAITING_RISK_ANALYSIS", "PAYMENT_APPROVED_BY_RISK_ANALYSIS",
		"PAYMENT_RESTORED", "PAYMENT_RECEIVED_IN_CASH_UNDONE", "PAYMENT_OVERDUE":
		// The charge's payment.status is PENDING, OVERDUE or
		// AWAITING_RISK_ANALYSIS: as statusOf says, awaiting the payer or
		// Asaas, so a later fetch agrees with the webhook.
		return lifecycle{status: domain.StatusAwaitingConfirmation}, true
	case "PAYMENT_AUTHORIZED":
		return lifecycle{status: domain.StatusAuthorized}, true
	case "PAYMENT_CONFIRMED":
		return lifecycle{status: domain.StatusConfirmed}, true
	case "PAYMENT_RECEIVED":
		return lifecycle{status: domain.StatusConfirmed, detail: DetailReceived}, true
	case "PAYMENT_RECEIVED_IN_CASH":
		return lifecycle{status: domain.StatusConfirmed, detail: DetailReceivedInCash}, true
	case "PAYMENT_REPROVED_BY_RISK_ANALYSIS", "PAYMENT_CREDIT_CARD_CAPTURE_REFUSED":
		return lifecycle{status: domain.StatusFailed}, true
	case "PAYMENT_DELETED":
		return lifecycle{status: domain.StatusCancelled, detail: DetailDeleted}, true
	case "PAYMENT_REFUNDED":
		return lifecycle{status: domain.StatusRefunded}, true
	case "PAYMENT_PARTIALLY_REFUNDED":
		return lifecycle{status: domain.StatusPartiallyRefunded}, true
	case "PAYMENT_REFUND_IN_PROGRESS":
		return lifecycle{detail: DetailRefundInProgress, fromPayment: true}, true
	case "PAYMENT_CHARGEBACK_REQUESTED":
		return lifecycle{status: domain.StatusChargeback}, true
	case "PAYMENT_CHARGEBACK_DISPUTE", "PAYMENT_AWAITING_CHARGEBACK_REVERSAL":
		return lifecycle{status: domain.StatusDisputed}, true
	}
	return lifecycle{}, false
}

// moneyMoved reports whether a payment in status s has been paid, so its
// value counts as captured.
func moneyMoved(s domain.Status) bool {
	switch s {
	case domain.StatusConfirmed, domain.StatusPartiallyRefunded, domain.StatusRefunded,
		domain.StatusChargeback, domain.StatusDisputed:
		return true
	}
	return false
}
