package domain

import "slices"

// replay computes the state of sorted, deduplicated facts. It is the only
// state machine in payledger: projections and the audit API call Fold, never
// a copy of these rules.
func replay(facts []Event) (PaymentState, []Anomaly) {
	f := folder{}
	for _, e := range facts {
		f.cur = e.EventMeta().Key()
		f.apply(e)
	}
	if f.s.Status == "" && f.s.EventCount > 0 {
		f.s.Status = StatusPending
	}
	return f.s, f.anomalies
}

type folder struct {
	s             PaymentState
	beforeDispute Status // what a won dispute returns the payment to
	disputeOpen   bool
	inquiry       string // the dispute ID of an open inquiry
	cur           string // the key of the fact being applied
	anomalies     []Anomaly
}

// flag records an anomaly raised by the fact being applied.
func (f *folder) flag(reason string) {
	f.s.ReviewReasons = addReason(f.s.ReviewReasons, reason)
	a := Anomaly{Reason: reason, Cause: f.cur}
	if !slices.Contains(f.anomalies, a) {
		f.anomalies = append(f.anomalies, a)
	}
}

func (f *folder) apply(e Event) {
	if IsOwnFact(e) {
		return // payledger's own record (a check, a review): no state of its own
	}
	m := e.EventMeta()
	if f.s.EventCount == 0 {
		f.s.Provider, f.s.ProviderPaymentID = m.Provider, m.ProviderPaymentID
		f.s.CreatedAt = m.OccurredAt
	} else if m.Provider != f.s.Provider || m.ProviderPaymentID != f.s.ProviderPaymentID {
		f.flag(ReviewForeignEvent)
		return
	}
	f.s.EventCount++
	if m.OccurredAt.After(f.s.UpdatedAt) {
		f.s.UpdatedAt = m.OccurredAt
	}
	switch ev := e.(type) {
	case *PaymentCreated:
		f.amount(ev.Amount, ev.Currency)
		f.move(StatusPending, "")
	case *PaymentProcessing:
		f.amount(ev.Amount, ev.Currency)
		f.awaiting()
	case *PaymentActionRequired:
		f.amount(ev.Amount, ev.Currency)
		f.awaiting()
	case *PaymentAuthorized:
		f.amount(ev.Amount, ev.Currency)
		f.move(StatusAuthorized, "", StatusPending, StatusAwaitingConfirmation, StatusFailed)
	case *PaymentFailed:
		f.amount(ev.Amount, ev.Currency)
		if !f.move(StatusFailed, "", StatusPending, StatusAwaitingConfirmation, StatusAuthorized) && f.moneyMoved() {
			f.flag(ReviewFailureAfterSuccess)
		}
	case *PaymentCancelled:
		f.amount(ev.Amount, ev.Currency)
		if !f.move(StatusCancelled, "", StatusPending, StatusAwaitingConfirmation, StatusFailed, StatusAuthorized) && f.moneyMoved() {
			f.flag(ReviewCancelAfterSuccess)
		}
	case *PaymentSucceeded:
		f.succeeded(ev)
	case *PaymentRefunded:
		f.refunded(ev)
	case *DisputeOpened:
		f.disputeOpened(ev)
	case *DisputeClosed:
		f.disputeClosed(ev)
	case *PaymentNotified:
		// A fact for the audit trail; a payment we heard of is at least pending.
		f.move(StatusPending, "")
	case *PaymentStatusObserved:
		f.observed(ev)
	case *FeeAssessed:
		// A snapshot: the latest stated fee is the fee. Its currency is
		// its own (see FeeAssessed), so it is not checked against ours.
		f.s.Fee, f.s.FeeCurrency = ev.Amount, ev.Currency
	case *InquiryOpened:
		f.inquiry = ev.DisputeID
	}
}

// observed applies a provider snapshot: its status replaces ours (the
// provider is the authority on its own payment), its totals raise ours.
func (f *folder) observed(ev *PaymentStatusObserved) {
	if ev.StatesFee() {
		// As a FeeAssessed would: the fee's currency is its own.
		f.s.Fee, f.s.FeeCurrency = ev.Fee, ev.FeeCurrency
	}
	if !f.currency(ev.Currency) {
		return
	}
	if ev.Amount > 0 {
		f.s.Amount = ev.Amount
	}
	f.s.AmountCaptured = max(f.s.AmountCaptured, ev.AmountCaptured)
	f.s.AmountRefunded = max(f.s.AmountRefunded, ev.AmountRefunded)
	if !ev.Status.Valid() {
		f.flag(ReviewUnknownStatus)
		f.move(StatusPending, "")
		return
	}
	switch ev.Status {
	case StatusDisputed:
		if f.s.Status != StatusDisputed && f.s.Status != StatusChargeback {
			f.beforeDispute = f.s.Status
		}
		f.disputeOpen = true
	default:
		f.disputeOpen = false
	}
	f.s.Status = ev.Status
}

// awaiting moves a payment with no outcome yet (or a failed one, retried)
// to awaiting_confirmation: an attempt is under way and waits on the payer
// or the network (processing, action required).
func (f *folder) awaiting() {
	f.move(StatusAwaitingConfirmation, "", StatusPending, StatusAwaitingConfirmation, StatusFailed)
}

// move sets status to to when the current status is one of from; it reports
// whether it did. An empty from list never matches.
func (f *folder) move(to Status, from ...Status) bool {
	for _, s := range from {
		if f.s.Status == s {
			f.s.Status = to
			return true
		}
	}
	return false
}

// amount records the asked-for amount; a payment's amount may change before
// it is paid, and facts are sorted, so the last one seen is the current one.
func (f *folder) amount(a int64, c Currency) {
	if !f.currency(c) {
		return
	}
	if a > 0 {
		f.s.Amount = a
	}
}

// currency adopts the first currency seen and flags any other; it reports
// whether amounts in c may be used.
func (f *folder) currency(c Currency) bool {
	switch {
	case c == "":
		return true
	case f.s.Currency == "":
		f.s.Currency = c
		return true
	case f.s.Currency == c:
		return true
	}
	f.flag(ReviewCurrencyMismatch)
	return false
}

func (f *folder) moneyMoved() bool { return f.s.AmountCaptured > 0 || f.s.AmountRefunded > 0 }

// moneyStatus is the status a captured payment has from its refunds alone.
func (f *folder) moneyStatus() Status {
	switch {
	case f.s.AmountRefunded > 0 && f.s.AmountRefunded >= f.s.AmountCaptured:
		return StatusRefunded
	case f.s.AmountRefunded > 0:
		return StatusPartiallyRefunded
	}
	return StatusConfirmed
}

func (f *folder) succeeded(ev *PaymentSucceeded) {
	if !f.currency(ev.Currency) {
		return
	}
	if ev.Amount > 0 {
		f.s.Amount = ev.Amount
	}
	received := ev.AmountReceived
	if received == 0 {
		received = ev.Amount
	}
	f.s.AmountCaptured = max(f.s.AmountCaptured, received)
	if f.s.Status == StatusCancelled {
		f.flag(ReviewSuccessAfterCancel)
	}
	f.setMoneyStatus()
}

func (f *folder) refunded(ev *PaymentRefunded) {
	if !f.currency(ev.Currency) {
		return
	}
	f.s.AmountCaptured = max(f.s.AmountCaptured, ev.AmountCaptured)
	f.s.AmountRefunded = max(f.s.AmountRefunded, ev.AmountRefunded)
	if f.s.AmountRefunded > f.s.AmountCaptured {
		f.flag(ReviewRefundExceedsCapture)
	}
	f.setMoneyStatus()
}

// setMoneyStatus applies the refund-derived status, or, while a dispute is
// open or lost, remembers it as what a won dispute returns to.
func (f *folder) setMoneyStatus() {
	if f.s.Status == StatusDisputed || f.s.Status == StatusChargeback {
		f.beforeDispute = f.moneyStatus()
		return
	}
	f.s.Status = f.moneyStatus()
}

func (f *folder) disputeOpened(ev *DisputeOpened) {
	if f.currency(ev.Currency) && ev.Amount > 0 {
		f.s.AmountDisputed = ev.Amount
	}
	if f.s.Status != StatusDisputed && f.s.Status != StatusChargeback {
		f.beforeDispute = f.s.Status
	}
	f.disputeOpen = true
	f.s.Status = StatusDisputed
}

func (f *folder) disputeClosed(ev *DisputeClosed) {
	if f.currency(ev.Currency) && ev.Amount > 0 {
		f.s.AmountDisputed = ev.Amount
	}
	if !f.disputeOpen && ev.DisputeID != "" && ev.DisputeID == f.inquiry {
		// The end of an inquiry that withheld nothing: nothing changes
		// unless it was lost, which takes the money like any dispute.
		f.inquiry = ""
		if ev.Outcome != DisputeLost {
			return
		}
		f.beforeDispute = f.s.Status
	} else if !f.disputeOpen {
		f.flag(ReviewDisputeClosedNotOpen)
		f.beforeDispute = f.s.Status
	}
	f.disputeOpen = false
	if ev.Outcome == DisputeLost {
		f.s.Status = StatusChargeback
		return
	}
	f.s.Status = f.beforeDispute
	if f.s.Status == "" || f.s.Status == StatusDisputed {
		f.s.Status = f.moneyStatus()
	}
}
