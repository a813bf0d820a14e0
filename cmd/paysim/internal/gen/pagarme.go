package gen

import (
	"fmt"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/domain"
)

const pagarmeTimeLayout = "2006-01-02T15:04:05.000Z"

// genPagarme builds a Pagar.me charge: every charge.* webhook carries the
// whole charge (integer centavos; refunds appear as canceled_amount), and
// the ledger's payment is the charge.
func genPagarme(g *gen, lifecycle string) *truth.Payment {
	suffix := g.token(8) + g.uniq(8)
	s := &pagarmeSteps{g: g, id: "ch_" + suffix, order: "or_" + suffix, amount: g.amount(), method: "credit_card", created: g.clock.t.UTC()}
	a := s.amount
	t := func(st domain.Status, refunded int64) truth.State { return state(st, a, refunded, "BRL") }
	waiting := t(domain.StatusAwaitingConfirmation, 0)
	switch lifecycle {
	case "paid":
		s.charge("charge.pending", "pending", "pending", 0, 0, 0, waiting)
		s.charge("charge.paid", "paid", "captured", a, 0, g.between(time.Second, time.Minute), t(domain.StatusConfirmed, 0))
	case "failed_then_paid":
		s.charge("charge.pending", "pending", "pending", 0, 0, 0, waiting)
		s.charge("charge.payment_failed", "failed", "not_authorized", 0, 0, g.between(time.Second, time.Minute), t(domain.StatusFailed, 0))
		s.charge("charge.paid", "paid", "captured", a, 0, g.between(time.Minute, time.Hour), t(domain.StatusConfirmed, 0))
	case "canceled":
		s.method = "pix"
		s.charge("charge.pending", "pending", "waiting_payment", 0, 0, 0, waiting)
		// Pagar.me reports a charge cancelled unpaid with canceled_amount
		// equal to its amount; no money moved, so nothing was refunded.
		s.charge("charge.canceled", "canceled", "canceled", 0, a, g.between(time.Hour, 24*time.Hour), t(domain.StatusCancelled, 0))
	case "authorized_captured":
		s.charge("charge.pending", "pending", "authorized_pending_capture", 0, 0, 0, t(domain.StatusAuthorized, 0))
		s.charge("charge.paid", "paid", "captured", a, 0, g.between(time.Minute, 48*time.Hour), t(domain.StatusConfirmed, 0))
	case "boleto_paid_late":
		s.method = "boleto"
		s.charge("charge.pending", "pending", "generated", 0, 0, 0, waiting)
		s.charge("charge.paid", "paid", "paid", a, 0, g.between(48*time.Hour, 96*time.Hour), t(domain.StatusConfirmed, 0)).Late = true
	case "refund_partial":
		s.charge("charge.pending", "pending", "pending", 0, 0, 0, waiting)
		s.charge("charge.paid", "paid", "captured", a, 0, g.between(time.Second, time.Minute), t(domain.StatusConfirmed, 0))
		r := g.part(a)
		s.charge("charge.partial_canceled", "paid", "partial_refunded", a, r, g.between(time.Hour, 240*time.Hour), t(domain.StatusPartiallyRefunded, r))
	case "refund_full":
		s.charge("charge.pending", "pending", "pending", 0, 0, 0, waiting)
		s.charge("charge.paid", "paid", "captured", a, 0, g.between(time.Second, time.Minute), t(domain.StatusConfirmed, 0))
		s.charge("charge.refunded", "canceled", "refunded", a, a, g.between(time.Hour, 240*time.Hour), t(domain.StatusRefunded, a))
	case "chargedback":
		s.charge("charge.pending", "pending", "pending", 0, 0, 0, waiting)
		s.charge("charge.paid", "paid", "captured", a, 0, g.between(time.Second, time.Minute), t(domain.StatusConfirmed, 0))
		s.charge("charge.chargedback", "chargedback", "chargedback", a, 0, g.between(24*time.Hour, 600*time.Hour), t(domain.StatusChargeback, 0))
	default:
		panic("paysim: unknown pagarme lifecycle " + lifecycle)
	}
	return &truth.Payment{Provider: truth.Pagarme, ID: s.id, Lifecycle: lifecycle, Steps: g.steps, Events: len(g.steps)}
}

// pagarmeSteps appends Pagar.me webhooks of one charge.
type pagarmeSteps struct {
	g       *gen
	id      string
	order   string
	amount  int64
	method  string
	created time.Time
}

// charge appends a webhook of typ with the charge in status, after d.
func (s *pagarmeSteps) charge(typ, status, txStatus string, paid, canceled int64, d time.Duration, t truth.State) *truth.Step {
	at := s.g.clock.next(d).UTC()
	orderStatus := map[string]string{"paid": "paid", "canceled": "canceled", "failed": "failed"}[status]
	if orderStatus == "" {
		orderStatus = "pending"
	}
	charge := fmt.Sprintf(`{"id":%q,"code":"PED-%s","gateway_id":"%d","amount":%d,"paid_amount":%d,"canceled_amount":%d,"status":%q,"currency":"BRL","payment_method":%q,"created_at":%q,"updated_at":%q,"customer":{"id":"cus_paysim","name":"Cliente Paysim"},"order":{"id":%q,"code":"PED-%s","status":%q},"last_transaction":{"id":"tran_%s%d","transaction_type":%q,"status":%q,"success":%t,"amount":%d}}`,
		s.id, s.id[3:], 1000000+s.g.index, s.amount, paid, canceled, status, s.method,
		s.created.Format(pagarmeTimeLayout), at.Format(pagarmeTimeLayout),
		s.order, s.id[3:], orderStatus, s.id[3:], len(s.g.steps)+1, s.method, txStatus, status != "failed", s.amount)
	hook := fmt.Sprintf("hook_%s%02d", s.id[3:], len(s.g.steps)+1)
	body := fmt.Appendf(nil, `{"id":%q,"account":{"id":"acc_paysim","name":"Loja Paysim"},"type":%q,"created_at":%q,"data":%s}`,
		hook, typ, at.Format(pagarmeTimeLayout), charge)
	return s.g.add(truth.Webhook{EventID: hook, Type: typ, Body: body}, t, []byte(charge))
}
