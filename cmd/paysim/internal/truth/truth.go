package truth

import (
	"time"

	"github.com/payledger/payledger/domain"
)

// Provider names, as in the ledger's routes and streams.
const (
	Stripe      = "stripe"
	MercadoPago = "mercadopago"
	Asaas       = "asaas"
	Pagarme     = "pagarme"
)

// Providers lists every simulated provider: the default --providers.
func Providers() []string { return []string{Stripe, MercadoPago, Asaas, Pagarme} }

// State is what the ledger's read API must show for a payment at some point
// of its life, written by hand per lifecycle step from the mapping rules in
// ARCHITECTURE.md, never computed by the ledger's own code.
type State struct {
	Status   domain.Status   `json:"status"`
	Amount   int64           `json:"amount"`
	Refunded int64           `json:"amount_refunded"`
	Currency domain.Currency `json:"currency"`
}

// Webhook is one delivery's content as the provider builds it; the headers
// that depend on the moment of sending (signatures with timestamps, request
// IDs) are added per attempt by the signer.
type Webhook struct {
	EventID string // the provider's event (notification) ID, for reports
	Type    string // the provider's event type or action
	Body    []byte
	Query   string // raw query string appended to the URL (Mercado Pago)
}

// Step is one thing that happens to a payment at the provider: the webhook
// it sends, the state after it, and the provider API's view after it.
type Step struct {
	Webhook Webhook
	Truth   State
	// API is the body the provider's status API answers after this step
	// (nil: the provider has no API view paysim serves).
	API []byte
	// Late marks the step that confirms a Pix/boleto paid late: its
	// deliveries wait longer.
	Late bool
	// Dispute is the status of the payment's newest dispute after this
	// step ("" when none), for Stripe's GET /v1/disputes.
	Dispute string
	// At is the provider's time of the step (a Stripe event's created, a
	// Mercado Pago date_last_updated, ...): what a backfill window is in.
	At time.Time
}

// Payment is one simulated payment: its provider ID, the lifecycle it
// follows and the steps of that lifecycle in the order they happen.
type Payment struct {
	Provider  string
	ID        string
	Lifecycle string
	Steps     []Step
	// Events is how many events the ledger must store for the payment, or
	// 0 when that is not known in advance (Mercado Pago: the observations
	// depend on when the ledger fetched).
	Events int
	// FeeFacts is how many fee facts the ledger may store on top of Events
	// at most (a fee stated in every Asaas webhook, a Stripe fee fetched by
	// a job): the event count is then a range.
	FeeFacts int
	// Fee is the fee the provider states for the payment (zero: none). It
	// is booked only if money moved.
	Fee Fee
	// FeeLate: Stripe's balance transaction is still null on the first
	// fetch (asynchronous capture), so the ledger must fetch again.
	FeeLate bool
}

// Fee is a fee the provider states and we pay, in minor units of Currency
// (a Stripe balance transaction's settlement currency may differ from the
// payment's).
type Fee struct {
	Amount   int64           `json:"amount"`
	Currency domain.Currency `json:"currency"`
}

// Final is the state after the last step: what the read model must end in.
func (p *Payment) Final() State { return p.Steps[len(p.Steps)-1].Truth }

// Key names the payment in reports: provider/id.
func (p *Payment) Key() string { return p.Provider + "/" + p.ID }
