package gen

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/domain"
)

// genStripe builds a PaymentIntent's lifecycle as Stripe reports it:
// snapshot events (payment_intent.*, charge.refunded with the cumulative
// amount_refunded, charge.dispute.*), each a fact the ledger stores.
func genStripe(g *gen, lifecycle string) *truth.Payment {
	suffix := g.token(8) + g.uniq(10)
	id := "pi_3Q" + suffix
	cur := domain.Currency("USD")
	if g.rng.IntN(3) == 0 {
		cur = "EUR"
	}
	a := g.amount()
	s := &stripeSteps{g: g, id: id, suffix: suffix, amount: a, cur: cur, bt: stripeSettlement(g, a, cur)}
	t := func(st domain.Status, refunded int64) truth.State { return state(st, a, refunded, cur) }
	s.pi("payment_intent.created", g.between(0, 0), t(domain.StatusPending, 0))
	switch lifecycle {
	case "succeeded":
		s.pi("payment_intent.succeeded", g.between(time.Second, 20*time.Second), t(domain.StatusConfirmed, 0))
	case "processing_succeeded":
		s.pi("payment_intent.processing", g.between(time.Second, 5*time.Second), t(domain.StatusAwaitingConfirmation, 0))
		s.pi("payment_intent.succeeded", g.between(time.Hour, 72*time.Hour), t(domain.StatusConfirmed, 0))
	case "failed_then_succeeded":
		s.pi("payment_intent.payment_failed", g.between(time.Second, 30*time.Second), t(domain.StatusFailed, 0))
		// Half the time in the same second: the ledger's rank puts the failure first.
		s.pi("payment_intent.succeeded", time.Duration(g.rng.IntN(2))*g.between(time.Second, time.Minute), t(domain.StatusConfirmed, 0))
	case "failed":
		s.pi("payment_intent.requires_action", g.between(time.Second, 5*time.Second), t(domain.StatusAwaitingConfirmation, 0))
		s.pi("payment_intent.payment_failed", g.between(time.Minute, 10*time.Minute), t(domain.StatusFailed, 0))
	case "canceled":
		s.pi("payment_intent.canceled", g.between(time.Minute, 24*time.Hour), t(domain.StatusCancelled, 0))
	case "authorized_captured":
		s.pi("payment_intent.amount_capturable_updated", g.between(time.Second, 10*time.Second), t(domain.StatusAuthorized, 0))
		s.pi("payment_intent.succeeded", g.between(time.Minute, 48*time.Hour), t(domain.StatusConfirmed, 0))
	case "refund_partial":
		s.pi("payment_intent.succeeded", g.between(time.Second, 20*time.Second), t(domain.StatusConfirmed, 0))
		r := g.part(a)
		s.refund(r, g.between(time.Hour, 240*time.Hour), t(domain.StatusPartiallyRefunded, r))
	case "refund_full":
		s.pi("payment_intent.succeeded", g.between(time.Second, 20*time.Second), t(domain.StatusConfirmed, 0))
		r := g.part(a)
		s.refund(r, g.between(time.Hour, 48*time.Hour), t(domain.StatusPartiallyRefunded, r))
		s.refund(a, g.between(time.Hour, 48*time.Hour), t(domain.StatusRefunded, a))
	case "dispute_open":
		s.pi("payment_intent.succeeded", g.between(time.Second, 20*time.Second), t(domain.StatusConfirmed, 0))
		s.dispute("charge.dispute.created", "needs_response", g.between(24*time.Hour, 240*time.Hour), t(domain.StatusDisputed, 0))
	case "dispute_won", "dispute_lost":
		s.pi("payment_intent.succeeded", g.between(time.Second, 20*time.Second), t(domain.StatusConfirmed, 0))
		s.dispute("charge.dispute.created", "needs_response", g.between(24*time.Hour, 240*time.Hour), t(domain.StatusDisputed, 0))
		if lifecycle == "dispute_won" {
			s.dispute("charge.dispute.closed", "won", g.between(24*time.Hour, 600*time.Hour), t(domain.StatusConfirmed, 0))
		} else {
			s.dispute("charge.dispute.closed", "lost", g.between(24*time.Hour, 600*time.Hour), t(domain.StatusChargeback, 0))
		}
	default:
		panic("paysim: unknown stripe lifecycle " + lifecycle)
	}
	p := &truth.Payment{Provider: truth.Stripe, ID: id, Lifecycle: lifecycle, Steps: g.steps, Events: len(g.steps),
		Fee: truth.Fee{Amount: s.bt.fee, Currency: s.bt.currency}, FeeLate: s.bt.late}
	if s.intent.captured {
		// The fee fact, and the status observation the same fetch may record.
		p.FeeFacts = 2
	}
	return p
}

// stripeSteps appends Stripe events to one PaymentIntent's steps, and
// follows the intent's state for the fake API (stripeapi.go).
type stripeSteps struct {
	g      *gen
	id     string
	suffix string
	amount int64
	cur    domain.Currency
	bt     settlement
	intent intentState
}

// event appends an event of typ about object, after d.
func (s *stripeSteps) event(typ string, object map[string]any, d time.Duration, t truth.State) {
	created := s.g.clock.next(d)
	evt := fmt.Sprintf("evt_3Q%s%02d", s.suffix, len(s.g.steps)+1)
	body, err := json.Marshal(map[string]any{
		"id": evt, "object": "event", "api_version": "2026-02-25.clover", "created": created.Unix(),
		"livemode": false, "pending_webhooks": 1, "type": typ,
		"request": map[string]any{"id": nil, "idempotency_key": nil},
		"data":    map[string]any{"object": object},
	})
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	s.follow(typ, object, created)
	step := s.g.add(truth.Webhook{EventID: evt, Type: typ, Body: body}, t, s.apiBody())
	step.Dispute = s.intent.dispute
}

// pi appends a payment_intent.* event carrying the intent in the state typ
// says.
func (s *stripeSteps) pi(typ string, d time.Duration, t truth.State) {
	status := strings.TrimPrefix(typ, "payment_intent.")
	obj := map[string]any{"id": s.id, "object": "payment_intent", "amount": s.amount, "amount_received": 0,
		"amount_capturable": 0, "currency": strings.ToLower(string(s.cur)), "capture_method": "automatic",
		"livemode": false, "metadata": map[string]any{"order_id": "ord_" + s.suffix}}
	switch typ {
	case "payment_intent.created":
		status = "requires_payment_method"
	case "payment_intent.succeeded":
		obj["amount_received"] = s.amount
	case "payment_intent.payment_failed":
		status = "requires_payment_method"
		obj["last_payment_error"] = map[string]any{"code": "card_declined", "decline_code": "insufficient_funds",
			"message": "Your card has insufficient funds.", "type": "card_error"}
	case "payment_intent.amount_capturable_updated":
		status = "requires_capture"
		obj["amount_capturable"] = s.amount
		obj["capture_method"] = "manual"
	case "payment_intent.canceled":
		obj["cancellation_reason"] = "abandoned"
	}
	obj["status"] = status
	s.event(typ, obj, d, t)
}

// refund appends charge.refunded with the cumulative amount refunded.
func (s *stripeSteps) refund(total int64, d time.Duration, t truth.State) {
	s.event("charge.refunded", map[string]any{"id": "ch_3Q" + s.suffix, "object": "charge", "payment_intent": s.id,
		"amount": s.amount, "amount_captured": s.amount, "amount_refunded": total, "captured": true,
		"refunded": total == s.amount, "currency": strings.ToLower(string(s.cur)), "status": "succeeded"}, d, t)
}

// dispute appends a charge.dispute.* event.
func (s *stripeSteps) dispute(typ, status string, d time.Duration, t truth.State) {
	s.event(typ, map[string]any{"id": "dp_1Q" + s.suffix, "object": "dispute", "payment_intent": s.id,
		"charge": "ch_3Q" + s.suffix, "amount": s.amount, "currency": strings.ToLower(string(s.cur)),
		"status": status, "reason": "fraudulent"}, d, t)
}
