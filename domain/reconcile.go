package domain

import "time"

// TypeReconciliationChecked is the wire name of ReconciliationChecked.
const TypeReconciliationChecked = "payment.reconciliation_checked.v1"

// ReconciliationEventType is the ProviderEventType of every
// ReconciliationChecked: the fact is payledger's, not the provider's.
const ReconciliationEventType = "payledger.reconciliation_check"

// CheckOutcome is what a reconciliation check found.
type CheckOutcome string

// The outcomes.
const (
	OutcomeUnchanged CheckOutcome = "unchanged" // the provider's answer changed nothing we hold
	OutcomeCorrected CheckOutcome = "corrected" // the provider's answer changed the payment (see CorrectionCause)
	OutcomeNotFound  CheckOutcome = "not_found" // the provider does not know the payment
	OutcomeFailed    CheckOutcome = "failed"    // the provider could not be asked (Error says why)
)

// CheckOutcomes lists every outcome, for filters and summaries.
func CheckOutcomes() []CheckOutcome {
	return []CheckOutcome{OutcomeUnchanged, OutcomeCorrected, OutcomeNotFound, OutcomeFailed}
}

// Valid reports whether o is one of the outcomes.
func (o CheckOutcome) Valid() bool {
	for _, v := range CheckOutcomes() {
		if o == v {
			return true
		}
	}
	return false
}

// CorrectionCause says why a check corrected a payment.
type CorrectionCause string

// The causes.
const (
	// CauseMissingWebhook: the provider is ahead of what its webhooks told
	// us (a payment not final was moved on, or one we knew only from
	// notifications got its state).
	CauseMissingWebhook CorrectionCause = "missing_webhook"
	// CauseDiverged: the provider disagrees with a state we thought final
	// (a missed refund or dispute of a confirmed payment).
	CauseDiverged CorrectionCause = "diverged"
)

// CorrectionCauses lists every cause, for filters.
func CorrectionCauses() []CorrectionCause {
	return []CorrectionCause{CauseMissingWebhook, CauseDiverged}
}

// Valid reports whether c is one of the causes.
func (c CorrectionCause) Valid() bool { return c == CauseMissingWebhook || c == CauseDiverged }

// Triggers: why a payment was checked.
const (
	TriggerInDoubt  = "in_doubt"  // not final (or known only from notifications) and quiet for too long
	TriggerSample   = "sample"    // finished recently, drawn at random: a missed refund or dispute leaves a payment looking final
	TriggerOnDemand = "on_demand" // asked for by name: POST …/reconcile or `ledger reconcile --payment`
)

// Final reports whether a payment in s waits on nothing from the provider.
// Pending, awaiting_confirmation, authorized and disputed payments are not
// final: the reconciler asks the provider about them when they stay quiet.
func (s Status) Final() bool {
	switch s {
	case StatusPending, StatusAwaitingConfirmation, StatusAuthorized, StatusDisputed:
		return false
	}
	return s.Valid()
}

// ReconciliationChecked: payledger asked the provider for a payment's state
// and compared it with what it held. It is payledger's own fact, kept in the
// payment's stream beside the provider's so that the audit trail shows when
// the provider was asked and what it said; the fold skips it (it changes no
// state, no event count and no journal entry), and the reconciliation log is
// projected from it.
//
// Meta: ProviderEventID is CheckEventID(Run, payment), ProviderEventType is
// ReconciliationEventType, OccurredAt is when the provider answered (our
// clock, set by the job: the domain has none).
type ReconciliationChecked struct {
	Meta
	// Run names the pass (or on-demand job attempt) that made the check; one
	// run checks a payment at most once.
	Run     string `json:"run"`
	Trigger string `json:"trigger"`
	// StatusBefore and StatusAfter are the folded status of the stream
	// without and with what the provider said. StatusObserved is the
	// provider's status normalised to ours and ProviderStatus its own word
	// (both empty when it was not reached or does not know the payment).
	StatusBefore   Status          `json:"status_before"`
	StatusObserved Status          `json:"status_observed,omitempty"`
	ProviderStatus string          `json:"provider_status,omitempty"`
	StatusAfter    Status          `json:"status_after"`
	Outcome        CheckOutcome    `json:"outcome"`
	Cause          CorrectionCause `json:"cause,omitempty"`
	// EventID is the stored ID of the status observation the check
	// recorded (new, or already held: same content, same ID).
	EventID string `json:"event_id,omitempty"`
	// Error is why the check failed.
	Error string `json:"error,omitempty"`
}

// EventType implements Event.
func (*ReconciliationChecked) EventType() string { return TypeReconciliationChecked }

// CheckEventID is the ProviderEventID of the check of one payment in one
// run. Stored IDs derive from provider and key only, so the payment is part
// of it: every payment of a run gets its own.
func CheckEventID(run, providerPaymentID string) string {
	return "reconciliation:" + run + ":" + providerPaymentID
}

// IsCheck reports whether e is payledger's reconciliation check rather than
// a provider's fact.
func IsCheck(e Event) bool {
	_, ok := e.(*ReconciliationChecked)
	return ok
}

// ClassifyCheck compares the payment before and after the provider's answer
// was folded in. Any change of status or money is a correction: of a final
// payment it diverged, of any other the webhooks that would have told us
// were missing.
func ClassifyCheck(before, after PaymentState) (CheckOutcome, CorrectionCause) {
	if material(before) == material(after) {
		return OutcomeUnchanged, ""
	}
	if before.Status.Final() {
		return OutcomeCorrected, CauseDiverged
	}
	return OutcomeCorrected, CauseMissingWebhook
}

// materialState is what a check compares: status and money, not counts,
// times or review reasons.
type materialState struct {
	status                                    Status
	currency, feeCurrency                     Currency
	amount, captured, refunded, disputed, fee int64
}

func material(s PaymentState) materialState {
	return materialState{status: s.Status, currency: s.Currency, feeCurrency: s.FeeCurrency, amount: s.Amount,
		captured: s.AmountCaptured, refunded: s.AmountRefunded, disputed: s.AmountDisputed, fee: s.Fee}
}

// ReconciliationCheck is one row of the reconciliation log (read side).
type ReconciliationCheck struct {
	ID                string // the stored event ID of the check
	Provider          string
	ProviderPaymentID string
	CheckedAt         time.Time
	Run               string
	Trigger           string
	StatusBefore      Status
	StatusObserved    Status
	ProviderStatus    string
	StatusAfter       Status
	Outcome           CheckOutcome
	Cause             CorrectionCause
	EventID           string
	Error             string
}

// CheckQuery selects reconciliation log rows, newest first.
type CheckQuery struct {
	Provider string          // empty: any
	Outcome  CheckOutcome    // empty: any
	Cause    CorrectionCause // empty: any
	Since    time.Time       // zero: from the start; else checked at or after
	Limit    int             // 1..MaxPageSize; 0 means DefaultPageSize
	Cursor   string          // opaque, from a previous page
}

// CheckPage is one page of the reconciliation log.
type CheckPage struct {
	Checks     []ReconciliationCheck
	NextCursor string
}

// DoubtQuery selects the payments in doubt: not final (or known only from
// notifications) and with no fact recorded (the provider's or a check)
// since QuietSince. Oldest doubt first.
type DoubtQuery struct {
	Provider   string    // empty: any
	QuietSince time.Time // now − LEDGER_RECONCILE_AFTER
	Limit      int       // 0: no limit
}

// SampleQuery draws a share of the payments that became final (their newest
// provider fact was recorded) since FinishedSince and have been quiet (no
// fact, checks included) since QuietSince: a payment just finished, or just
// checked, is not asked about again before LEDGER_RECONCILE_AFTER.
type SampleQuery struct {
	Provider      string
	FinishedSince time.Time
	QuietSince    time.Time // zero: no quietness asked
	Share         float64   // in [0, 1]
}

// Candidate is a payment the reconciler is to check.
type Candidate struct {
	Provider          string
	ProviderPaymentID string
	Status            Status
	Currency          Currency
	Amount            int64
	LastRecordedAt    time.Time // newest fact, checks included
	Trigger           string
}

// DoubtTotal is the money in doubt of one provider in one currency.
type DoubtTotal struct {
	Currency Currency
	Payments int64
	Amount   int64 // minor units of Currency
	// Oldest is the LastRecordedAt of the longest-quiet payment.
	Oldest time.Time
}

// ProviderReconciliation is one provider's line of the summary.
type ProviderReconciliation struct {
	Provider string
	Checks   map[CheckOutcome]int64 // every outcome present, zeros included
	InDoubt  []DoubtTotal           // by currency
}

// ReconciliationSummary counts checks since Since and the money in doubt now.
type ReconciliationSummary struct {
	Since     time.Time
	Providers []ProviderReconciliation // by provider name
}
