package pagarme

import "github.com/payledger/payledger/domain"

// chargeFacts are what the status mapping reads from a charge: its status
// words, its amounts in centavos (paid already defaulted, see paidAmount),
// and the event type that delivered it ("charge.paid", "order.canceled", or
// "" for an API fetch).
type chargeFacts struct {
	typ      string
	status   string // data.status
	txStatus string // data.last_transaction.status
	amount   int64
	paid     int64
	canceled int64
}

// chargeStatus maps a charge to a domain status from its status and amounts,
// with the event type only as a fallback: every delivery carries the whole
// charge, and the type names only what triggered it (a late charge.paid may
// carry a refunded charge). Refunds show up as canceled_amount; "" means
// nothing says the state, and the fold flags the observation for review.
func chargeStatus(f chargeFacts) domain.Status {
	tx := norm(f.txStatus)
	switch norm(f.status) {
	case "chargedback":
		return domain.StatusChargeback
	case "canceled", "cancelled":
		return afterCancel(f)
	case "paid", "overpaid", "underpaid":
		return afterPayment(f)
	case "failed":
		return domain.StatusFailed
	case "pending", "processing", "waitingpayment":
		return beforePayment(tx, true)
	}
	if tx == "chargedback" {
		return domain.StatusChargeback
	}
	switch f.typ {
	case "charge.chargedback":
		return domain.StatusChargeback
	case "charge.refunded":
		if f.canceled == 0 { // the type is all we have
			return domain.StatusRefunded
		}
		return afterPayment(f)
	case "charge.partial_canceled":
		if f.canceled == 0 {
			return domain.StatusPartiallyRefunded
		}
		return afterPayment(f)
	case "charge.canceled", "order.canceled":
		return afterCancel(f)
	case "charge.paid", "charge.overpaid", "charge.underpaid", "order.paid":
		return afterPayment(f)
	case "charge.payment_failed", "charge.antifraud_reproved", "order.payment_failed":
		return domain.StatusFailed
	case "charge.created", "order.created":
		return beforePayment(tx, false)
	case "charge.pending", "charge.processing", "charge.antifraud_pending", "charge.antifraud_manual",
		"charge.antifraud_approved", "order.pending", "order.processing":
		return beforePayment(tx, true)
	}
	if authorizedTx(tx) || waitingTx(tx) {
		return beforePayment(tx, false)
	}
	return ""
}

// afterPayment: the charge was paid; canceled_amount is what was refunded.
func afterPayment(f chargeFacts) domain.Status {
	switch {
	case f.canceled <= 0:
		return domain.StatusConfirmed
	case f.canceled >= f.paid:
		return domain.StatusRefunded
	}
	return domain.StatusPartiallyRefunded
}

// afterCancel: a cancelled charge with nothing paid was cancelled; with
// money paid, the cancellation is a refund (partial if less than was paid).
func afterCancel(f chargeFacts) domain.Status {
	switch {
	case f.paid <= 0:
		return domain.StatusCancelled
	case f.canceled > 0 && f.canceled < f.paid:
		return domain.StatusPartiallyRefunded
	}
	return domain.StatusRefunded
}

// beforePayment: authorized when the last transaction holds funds for a
// later capture; awaiting_confirmation when the charge (waiting) or its last
// transaction says an attempt waits on the payer or Pagar.me; else pending.
func beforePayment(tx string, waiting bool) domain.Status {
	switch {
	case authorizedTx(tx):
		return domain.StatusAuthorized
	case waiting || waitingTx(tx):
		return domain.StatusAwaitingConfirmation
	}
	return domain.StatusPending
}

// waitingTx reports a transaction status that waits on the payer (Pix or
// boleto issued) or on Pagar.me (antifraud).
func waitingTx(tx string) bool {
	switch tx {
	case "waitingpayment", "generated", "pendingreview", "analyzing", "processing":
		return true
	}
	return false
}

// authorizedTx reports a transaction status that holds funds uncaptured.
func authorizedTx(tx string) bool {
	return tx == "authorizedpendingcapture" || tx == "waitingcapture"
}

// paidType reports whether the type says the charge was paid (or money
// moved) at some point; used to default a missing paid_amount.
func paidType(typ string) bool {
	switch typ {
	case "charge.paid", "charge.overpaid", "charge.underpaid", "charge.refunded",
		"charge.partial_canceled", "charge.chargedback", "order.paid":
		return true
	}
	return false
}

// statusDetail is ProviderStatusDetail: "overpaid" or "underpaid" when a
// paid charge received more or less than its amount (by its status, else
// by its amounts, else by the event type), otherwise the last transaction's
// status.
func statusDetail(f chargeFacts, st domain.Status) string {
	if st == domain.StatusConfirmed {
		switch s := norm(f.status); {
		case s == "overpaid" || s == "underpaid":
			return s
		case f.paid > f.amount:
			return "overpaid"
		case f.paid < f.amount:
			return "underpaid"
		case s == "" && (f.typ == "charge.overpaid" || f.typ == "charge.underpaid"):
			return f.typ[len("charge."):]
		}
	}
	return f.txStatus
}
