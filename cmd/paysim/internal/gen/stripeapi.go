package gen

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
)

// settlement is the balance transaction of a Stripe payment's charge: its
// amount and fee in the settlement currency, which for some EUR payments
// is USD (the fee is then booked in USD).
type settlement struct {
	currency domain.Currency
	amount   int64
	rate     float64 // exchange rate; 0 when the currency is the payment's
	fee      int64
	late     bool // null on the first fetch: asynchronous capture
}

// stripeSettlement draws the payment's settlement: 2.9% + 30 minor units
// of the settled amount, half the EUR payments settled in USD at 1.08, a
// third of all with the balance transaction late.
func stripeSettlement(g *gen, a int64, cur domain.Currency) settlement {
	s := settlement{currency: cur, amount: a}
	if cur == "EUR" && g.rng.IntN(2) == 0 {
		s.currency, s.amount, s.rate = "USD", (a*108+50)/100, 1.08
	}
	s.fee = (s.amount*29+500)/1000 + 30
	s.late = g.rng.IntN(3) == 0
	return s
}

// intentState is a PaymentIntent and its latest charge as Stripe's API
// shows them after a step.
type intentState struct {
	status     string
	received   int64
	capturable int64
	failed     bool // last_payment_error set
	charge     string
	captured   bool
	capturedAt time.Time
	refunded   int64
	disputed   bool
	dispute    string // the newest dispute's status
}

// follow updates the intent's state with the event typ about object.
func (s *stripeSteps) follow(typ string, object map[string]any, at time.Time) {
	st := &s.intent
	switch typ {
	case "charge.refunded":
		st.refunded, _ = object["amount_refunded"].(int64)
		return
	case "charge.dispute.created", "charge.dispute.closed":
		st.disputed, st.dispute = true, object["status"].(string)
		return
	}
	st.status, _ = object["status"].(string)
	st.received, _ = object["amount_received"].(int64)
	st.capturable, _ = object["amount_capturable"].(int64)
	st.failed = typ == "payment_intent.payment_failed"
	switch typ {
	case "payment_intent.payment_failed":
		st.charge = "ch_3P" + s.suffix // a failed attempt's own charge
	case "payment_intent.amount_capturable_updated", "payment_intent.processing":
		st.charge = "ch_3Q" + s.suffix
	case "payment_intent.succeeded":
		st.charge, st.captured, st.capturedAt = "ch_3Q"+s.suffix, true, at
	}
}

// apiBody is GET /v1/payment_intents/{id} with latest_charge and its
// balance transaction expanded; the fake API collapses what the request
// does not expand.
func (s *stripeSteps) apiBody() []byte {
	st := s.intent
	cur := strings.ToLower(string(s.cur))
	pi := map[string]any{"id": s.id, "object": "payment_intent", "amount": s.amount, "amount_received": st.received,
		"amount_capturable": st.capturable, "currency": cur, "status": st.status, "livemode": false,
		"last_payment_error": nil, "latest_charge": nil}
	if st.failed {
		pi["last_payment_error"] = map[string]any{"code": "card_declined", "decline_code": "insufficient_funds",
			"type": "card_error"}
	}
	if st.charge != "" {
		pi["latest_charge"] = s.chargeBody()
	}
	body, err := json.Marshal(pi)
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	return body
}

// chargeBody is the latest charge, its balance transaction once captured.
func (s *stripeSteps) chargeBody() map[string]any {
	st := s.intent
	status, captured := "pending", int64(0)
	switch {
	case st.failed:
		status = "failed"
	case st.captured:
		status, captured = "succeeded", s.amount
	case st.status == "requires_capture":
		status = "succeeded" // authorized, not captured
	}
	ch := map[string]any{"id": st.charge, "object": "charge", "amount": s.amount, "amount_captured": captured,
		"amount_refunded": st.refunded, "captured": st.captured, "refunded": st.captured && st.refunded == s.amount,
		"disputed": st.disputed, "currency": strings.ToLower(string(s.cur)), "status": status,
		"payment_intent": s.id, "balance_transaction": nil}
	if st.captured {
		ch["balance_transaction"] = s.balanceTransaction()
	}
	return ch
}

// balanceTransaction is the charge's balance transaction (§1.3 of the
// provider API notes).
func (s *stripeSteps) balanceTransaction() map[string]any {
	b, cur := s.bt, strings.ToLower(string(s.bt.currency))
	var rate any
	if b.rate != 0 {
		rate = b.rate
	}
	created := s.intent.capturedAt.Unix()
	return map[string]any{"id": "txn_3Q" + s.suffix, "object": "balance_transaction", "amount": b.amount,
		"currency": cur, "exchange_rate": rate, "fee": b.fee, "net": b.amount - b.fee,
		"fee_details": []any{map[string]any{"amount": b.fee, "application": nil, "currency": cur,
			"description": "Stripe processing fees", "type": "stripe_fee"}},
		"created": created, "available_on": created + 2*86400, "reporting_category": "charge",
		"source": "ch_3Q" + s.suffix, "status": "pending", "type": "charge", "balance_type": "payments"}
}
