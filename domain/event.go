package domain

import "time"

// Meta is what every event carries about its origin. The provider's own
// timestamp (OccurredAt), not arrival time, orders the fold.
type Meta struct {
	// Provider is the lower-case provider name ("stripe").
	Provider string `json:"provider"`
	// ProviderEventID is the provider's ID of the notification ("evt_…").
	ProviderEventID string `json:"provider_event_id"`
	// SubKey tells apart several domain events derived from one provider
	// event (empty when the provider event maps to exactly one).
	SubKey string `json:"sub_key,omitempty"`
	// ProviderEventType is the provider's type string ("payment_intent.succeeded").
	ProviderEventType string `json:"provider_event_type"`
	// ProviderPaymentID is the provider's payment ID ("pi_…"); it names the stream.
	ProviderPaymentID string `json:"provider_payment_id"`
	// OccurredAt is when the provider says the fact happened.
	OccurredAt time.Time `json:"occurred_at"`
}

// EventMeta returns m; embedding Meta gives every event this method.
func (m Meta) EventMeta() Meta { return m }

// Key identifies the fact within its payment: two events with the same key
// are the same fact delivered twice.
func (m Meta) Key() string {
	if m.SubKey == "" {
		return m.ProviderEventID
	}
	return m.ProviderEventID + ":" + m.SubKey
}

// Event is a fact a provider reported about a payment. The set of event types
// is closed (see Types); each has a stable, versioned wire name.
type Event interface {
	EventMeta() Meta
	// EventType is the stable wire name, e.g. "payment.succeeded.v1". It is
	// stored with the event and must never change for a given struct shape.
	EventType() string
}

// Wire names of the event catalogue. A change of shape gets a new version
// (".v2") and a new struct; old versions stay decodable forever.
const (
	TypePaymentCreated        = "payment.created.v1"
	TypePaymentProcessing     = "payment.processing.v1"
	TypePaymentActionRequired = "payment.action_required.v1"
	TypePaymentAuthorized     = "payment.authorized.v1"
	TypePaymentFailed         = "payment.failed.v1"
	TypePaymentCancelled      = "payment.cancelled.v1"
	TypePaymentSucceeded      = "payment.succeeded.v1"
	TypePaymentRefunded       = "payment.refunded.v1"
	TypeDisputeOpened         = "dispute.opened.v1"
	TypeDisputeClosed         = "dispute.closed.v1"
	TypePaymentNotified       = "payment.notified.v1"
	TypePaymentStatusObserved = "payment.status_observed.v1"
	TypeFeeAssessed           = "payment.fee_assessed.v1"
	TypeInquiryOpened         = "dispute.inquiry_opened.v1"
)

// Types returns a constructor for every event type, keyed by wire name. The
// event store's codec uses it to decode; it is a function, not a global map,
// so nobody can mutate the catalogue at run time.
func Types() map[string]func() Event {
	return map[string]func() Event{
		TypePaymentCreated:        func() Event { return &PaymentCreated{} },
		TypePaymentProcessing:     func() Event { return &PaymentProcessing{} },
		TypePaymentActionRequired: func() Event { return &PaymentActionRequired{} },
		TypePaymentAuthorized:     func() Event { return &PaymentAuthorized{} },
		TypePaymentFailed:         func() Event { return &PaymentFailed{} },
		TypePaymentCancelled:      func() Event { return &PaymentCancelled{} },
		TypePaymentSucceeded:      func() Event { return &PaymentSucceeded{} },
		TypePaymentRefunded:       func() Event { return &PaymentRefunded{} },
		TypeDisputeOpened:         func() Event { return &DisputeOpened{} },
		TypeDisputeClosed:         func() Event { return &DisputeClosed{} },
		TypePaymentNotified:       func() Event { return &PaymentNotified{} },
		TypePaymentStatusObserved: func() Event { return &PaymentStatusObserved{} },
		TypeFeeAssessed:           func() Event { return &FeeAssessed{} },
		TypeInquiryOpened:         func() Event { return &InquiryOpened{} },
		TypeReconciliationChecked: func() Event { return &ReconciliationChecked{} },
		TypeReviewOpened:          func() Event { return &ReviewOpened{} },
		TypeReviewResolved:        func() Event { return &ReviewResolved{} },
	}
}

// PaymentCreated: the provider created the payment (Stripe
// payment_intent.created). Amount is what is being asked for.
type PaymentCreated struct {
	Meta
	Amount   int64    `json:"amount"`
	Currency Currency `json:"currency"`
}

// PaymentProcessing: the payment method is being processed.
type PaymentProcessing struct {
	Meta
	Amount   int64    `json:"amount"`
	Currency Currency `json:"currency"`
}

// PaymentActionRequired: the customer must act (3-D Secure, a redirect).
type PaymentActionRequired struct {
	Meta
	Amount   int64    `json:"amount"`
	Currency Currency `json:"currency"`
}

// PaymentAuthorized: funds are held and may be captured.
type PaymentAuthorized struct {
	Meta
	Amount           int64    `json:"amount"`
	AmountCapturable int64    `json:"amount_capturable"`
	Currency         Currency `json:"currency"`
}

// PaymentFailed: an attempt failed. The payment may still succeed later with
// another attempt, so this is not terminal.
type PaymentFailed struct {
	Meta
	Amount   int64    `json:"amount"`
	Currency Currency `json:"currency"`
	Code     string   `json:"code,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// PaymentCancelled: the payment was cancelled before money moved.
type PaymentCancelled struct {
	Meta
	Amount   int64    `json:"amount"`
	Currency Currency `json:"currency"`
	Reason   string   `json:"reason,omitempty"`
}

// PaymentSucceeded: money was captured. AmountReceived is what was captured.
type PaymentSucceeded struct {
	Meta
	Amount         int64    `json:"amount"`
	AmountReceived int64    `json:"amount_received"`
	Currency       Currency `json:"currency"`
}

// PaymentRefunded: the provider reports the payment's refunds. AmountRefunded
// is cumulative (the total refunded so far, as Stripe's charge.amount_refunded),
// which makes refunds order-independent: the largest total seen wins.
type PaymentRefunded struct {
	Meta
	AmountRefunded int64    `json:"amount_refunded"`
	AmountCaptured int64    `json:"amount_captured"`
	Currency       Currency `json:"currency"`
}

// DisputeOpened: the cardholder disputed the payment; funds may be withdrawn.
type DisputeOpened struct {
	Meta
	DisputeID string   `json:"dispute_id"`
	Amount    int64    `json:"amount"`
	Currency  Currency `json:"currency"`
	Reason    string   `json:"reason,omitempty"`
}

// DisputeOutcome is how a dispute ended.
type DisputeOutcome string

// Dispute outcomes. Won covers every ending in the merchant's favour
// (won, warning_closed, prevented); Lost means the money is gone.
const (
	DisputeWon  DisputeOutcome = "won"
	DisputeLost DisputeOutcome = "lost"
)

// DisputeClosed: the dispute ended with Outcome.
type DisputeClosed struct {
	Meta
	DisputeID string         `json:"dispute_id"`
	Outcome   DisputeOutcome `json:"outcome"`
	Amount    int64          `json:"amount"`
	Currency  Currency       `json:"currency"`
}

// PaymentNotified: the provider told us something about the payment without
// saying what its state is (Mercado Pago's webhooks carry only the payment
// ID), or told us something that does not change its state (Asaas
// PAYMENT_BANK_SLIP_VIEWED, PAYMENT_UPDATED). It is kept as a fact for the
// audit trail and changes no status; Action is the provider's word for it.
type PaymentNotified struct {
	Meta
	Action string `json:"action,omitempty"`
}

// PaymentStatusObserved is the provider's own view of the payment at
// OccurredAt: from its status API, or from a webhook that carries the whole
// payment object. It is a snapshot, not a delta: the status it states replaces
// the folded one, and its amounts are the provider's running totals. Its
// ProviderEventID is derived from its content when it comes from an API
// fetch, so observing the same state twice is one fact.
//
// A snapshot whose payment object states the provider's fee (Asaas's
// value − netValue, Mercado Pago's collector fee_details) carries it:
// FeeCurrency is set, and the fee folds as a FeeAssessed of the same instant
// would (Fee 0 in a currency is a stated fee of nothing). One delivery is
// then one fact, not a status and a fee appended together (ARCHITECTURE.md,
// "Fees"). FeeCurrency is empty when the snapshot states no fee: the fee
// folded so far stands.
type PaymentStatusObserved struct {
	Meta
	Status               Status   `json:"status"`
	ProviderStatus       string   `json:"provider_status"`
	ProviderStatusDetail string   `json:"provider_status_detail,omitempty"`
	Amount               int64    `json:"amount"`
	AmountCaptured       int64    `json:"amount_captured"`
	AmountRefunded       int64    `json:"amount_refunded"`
	Currency             Currency `json:"currency"`
	Fee                  int64    `json:"fee,omitempty"`
	FeeCurrency          Currency `json:"fee_currency,omitempty"`
	FeeSource            string   `json:"fee_source,omitempty"`
}

// StatesFee reports whether the snapshot states the provider's fee.
func (e *PaymentStatusObserved) StatesFee() bool { return e.FeeCurrency != "" }

// FeeAssessed: the provider states the fee it takes for the payment (Stripe's
// balance transaction fee, Mercado Pago's collector fee_details, Asaas's
// value − netValue). It is a snapshot, like PaymentStatusObserved: the latest
// in fold order is the payment's fee. Currency is the fee's own, which may
// differ from the payment's (a Stripe balance transaction is in the
// settlement currency); the fee is booked in it. Source names where the figure
// came from ("balance_transaction txn_…"), for the audit trail.
type FeeAssessed struct {
	Meta
	Amount   int64    `json:"amount"`
	Currency Currency `json:"currency"`
	Source   string   `json:"source,omitempty"`
}

// InquiryOpened: the cardholder's bank asked about the payment without
// taking the money (a Stripe dispute in warning_needs_response): nothing is
// withheld, so the status and the books do not change. A later DisputeClosed
// of the same dispute ID closes the inquiry.
type InquiryOpened struct {
	Meta
	DisputeID string   `json:"dispute_id"`
	Amount    int64    `json:"amount"`
	Currency  Currency `json:"currency"`
	Reason    string   `json:"reason,omitempty"`
}

// EventType implementations: the wire names above.

func (*PaymentCreated) EventType() string        { return TypePaymentCreated }
func (*PaymentProcessing) EventType() string     { return TypePaymentProcessing }
func (*PaymentActionRequired) EventType() string { return TypePaymentActionRequired }
func (*PaymentAuthorized) EventType() string     { return TypePaymentAuthorized }
func (*PaymentFailed) EventType() string         { return TypePaymentFailed }
func (*PaymentCancelled) EventType() string      { return TypePaymentCancelled }
func (*PaymentSucceeded) EventType() string      { return TypePaymentSucceeded }
func (*PaymentRefunded) EventType() string       { return TypePaymentRefunded }
func (*DisputeOpened) EventType() string         { return TypeDisputeOpened }
func (*DisputeClosed) EventType() string         { return TypeDisputeClosed }
func (*PaymentNotified) EventType() string       { return TypePaymentNotified }
func (*PaymentStatusObserved) EventType() string { return TypePaymentStatusObserved }
func (*FeeAssessed) EventType() string           { return TypeFeeAssessed }
func (*InquiryOpened) EventType() string         { return TypeInquiryOpened }

// Rank is an event's place in the payment lifecycle. It breaks ties between
// events with the same provider timestamp (providers report whole seconds, so
// "failed" and "succeeded" of a retried card often share one): a lower rank
// happened first. The table is documented in ARCHITECTURE.md.
func Rank(e Event) int {
	switch x := e.(type) {
	case *PaymentCreated:
		return 0
	case *PaymentNotified:
		return 5
	case *PaymentProcessing, *PaymentActionRequired:
		return 10
	case *PaymentFailed:
		return 20
	case *PaymentAuthorized:
		return 30
	case *PaymentCancelled:
		return 40
	case *PaymentSucceeded:
		return 50
	case *FeeAssessed:
		// A fee stated at the instant of capture is booked after it.
		return 55
	case *PaymentRefunded:
		return 60
	case *DisputeOpened, *InquiryOpened:
		return 70
	case *DisputeClosed:
		return 80
	case *PaymentStatusObserved:
		// A snapshot taken at the same instant as a fact already includes
		// it. Snapshots of one instant (Asaas sends REFUND_IN_PROGRESS and
		// REFUNDED in the same second) order by the stage they report.
		return 90 + stageOf(x.Status)
	}
	return 110
}

// stageOf orders statuses by how far along the lifecycle they are, for
// breaking ties between snapshots of one instant. Unknown statuses come first.
func stageOf(s Status) int {
	switch s {
	case StatusPending:
		return 1
	case StatusAwaitingConfirmation:
		return 2
	case StatusAuthorized:
		return 3
	case StatusFailed:
		return 4
	case StatusCancelled:
		return 5
	case StatusConfirmed:
		return 6
	case StatusPartiallyRefunded:
		return 7
	case StatusRefunded:
		return 8
	case StatusDisputed:
		return 9
	case StatusChargeback:
		return 10
	}
	return 0
}
