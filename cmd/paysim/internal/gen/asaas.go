package gen

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/domain"
)

// asaasZone is where Asaas's zone-less dateCreated is written.
func asaasZone() *time.Location {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		return time.FixedZone("BRT", -3*3600) // no DST since 2019: the same offset
	}
	return loc
}

// genAsaas builds an Asaas payment: every PAYMENT_* webhook carries the
// whole payment object, and the ledger takes its state from it.
func genAsaas(g *gen, lifecycle string) *truth.Payment {
	id := "pay_" + g.uniq(12)
	a := g.amount()
	billing := "PIX"
	s := &asaasSteps{g: g, id: id, amount: a, day: g.clock.t.In(asaasZone()).Format(time.DateOnly)}
	t := func(st domain.Status, refunded int64) truth.State { return state(st, a, refunded, "BRL") }
	waiting := t(domain.StatusAwaitingConfirmation, 0)
	switch lifecycle {
	case "pix_received":
		s.event("PAYMENT_CREATED", "PENDING", billing, nil, 0, waiting)
		s.event("PAYMENT_RECEIVED", "RECEIVED", billing, nil, g.between(time.Minute, 30*time.Minute), t(domain.StatusConfirmed, 0))
	case "boleto_paid_late":
		billing = "BOLETO"
		s.event("PAYMENT_CREATED", "PENDING", billing, nil, 0, waiting)
		s.event("PAYMENT_BANK_SLIP_VIEWED", "PENDING", billing, nil, g.between(time.Hour, 24*time.Hour), waiting)
		s.event("PAYMENT_OVERDUE", "OVERDUE", billing, nil, g.between(72*time.Hour, 96*time.Hour), waiting)
		s.event("PAYMENT_RECEIVED", "RECEIVED", billing, nil, g.between(24*time.Hour, 72*time.Hour), t(domain.StatusConfirmed, 0)).Late = true
	case "card_confirmed_received":
		billing = "CREDIT_CARD"
		s.event("PAYMENT_CREATED", "PENDING", billing, nil, 0, waiting)
		s.event("PAYMENT_CONFIRMED", "CONFIRMED", billing, nil, g.between(time.Second, time.Minute), t(domain.StatusConfirmed, 0))
		s.event("PAYMENT_RECEIVED", "RECEIVED", billing, nil, g.between(24*time.Hour, 30*24*time.Hour), t(domain.StatusConfirmed, 0))
	case "card_refused_then_confirmed":
		billing = "CREDIT_CARD"
		s.event("PAYMENT_CREATED", "PENDING", billing, nil, 0, waiting)
		s.event("PAYMENT_CREDIT_CARD_CAPTURE_REFUSED", "PENDING", billing, nil, g.between(time.Second, time.Minute), t(domain.StatusFailed, 0))
		s.event("PAYMENT_CONFIRMED", "CONFIRMED", billing, nil, g.between(time.Minute, time.Hour), t(domain.StatusConfirmed, 0))
	case "deleted":
		billing = "BOLETO"
		s.event("PAYMENT_CREATED", "PENDING", billing, nil, 0, waiting)
		s.event("PAYMENT_UPDATED", "PENDING", billing, nil, g.between(time.Minute, time.Hour), waiting)
		s.deleted = true
		s.event("PAYMENT_DELETED", "PENDING", billing, nil, g.between(time.Hour, 48*time.Hour), t(domain.StatusCancelled, 0))
	case "refund_partial":
		s.event("PAYMENT_CREATED", "PENDING", billing, nil, 0, waiting)
		s.event("PAYMENT_RECEIVED", "RECEIVED", billing, nil, g.between(time.Minute, 30*time.Minute), t(domain.StatusConfirmed, 0))
		r := g.part(a)
		// A refund Asaas cancelled moved no money: only DONE counts.
		refunds := []asaasRefund{{"CANCELLED", g.part(a)}, {"DONE", r}}
		s.event("PAYMENT_PARTIALLY_REFUNDED", "RECEIVED", billing, refunds, g.between(time.Hour, 240*time.Hour), t(domain.StatusPartiallyRefunded, r))
	case "refund_full":
		s.event("PAYMENT_CREATED", "PENDING", billing, nil, 0, waiting)
		s.event("PAYMENT_RECEIVED", "RECEIVED", billing, nil, g.between(time.Minute, 30*time.Minute), t(domain.StatusConfirmed, 0))
		refunds := []asaasRefund{{"PENDING", a}}
		s.event("PAYMENT_REFUND_IN_PROGRESS", "REFUND_IN_PROGRESS", billing, refunds, g.between(time.Hour, 48*time.Hour), t(domain.StatusConfirmed, 0))
		refunds = []asaasRefund{{"DONE", a}}
		s.event("PAYMENT_REFUNDED", "REFUNDED", billing, refunds, g.between(time.Hour, 24*time.Hour), t(domain.StatusRefunded, a))
	case "chargeback":
		billing = "CREDIT_CARD"
		s.event("PAYMENT_CREATED", "PENDING", billing, nil, 0, waiting)
		s.event("PAYMENT_CONFIRMED", "CONFIRMED", billing, nil, g.between(time.Second, time.Minute), t(domain.StatusConfirmed, 0))
		s.event("PAYMENT_CHARGEBACK_REQUESTED", "CHARGEBACK_REQUESTED", billing, nil, g.between(24*time.Hour, 240*time.Hour), t(domain.StatusChargeback, 0))
	default:
		panic("paysim: unknown asaas lifecycle " + lifecycle)
	}
	// Every webhook states the fee (netValue): a lifecycle snapshot carries
	// it, an informational event is followed by a fee fact.
	return &truth.Payment{Provider: truth.Asaas, ID: id, Lifecycle: lifecycle, Steps: g.steps, Events: len(g.steps),
		FeeFacts: asaasInformational(g.steps), Fee: truth.Fee{Amount: asaasFee(billing, a), Currency: "BRL"}}
}

// asaasInformational counts the steps whose webhook changes no status
// (PAYMENT_BANK_SLIP_VIEWED, PAYMENT_UPDATED): the ledger stores a fee fact
// beside each.
func asaasInformational(steps []truth.Step) int {
	n := 0
	for _, s := range steps {
		switch s.Webhook.Type {
		case "PAYMENT_BANK_SLIP_VIEWED", "PAYMENT_UPDATED":
			n++
		}
	}
	return n
}

// asaasFee is Asaas's fee for the billing type, below the amount: netValue
// is value − fee on every webhook, pending ones included (§3.2 of the
// provider API notes).
func asaasFee(billing string, a int64) int64 {
	switch billing {
	case "CREDIT_CARD":
		return (a*299+5000)/10000 + 49
	case "BOLETO":
		return min(199, a/2)
	}
	return min(99, a/2) // PIX
}

// asaasRefund is one entry of payment.refunds.
type asaasRefund struct {
	status string
	value  int64
}

// asaasSteps appends Asaas webhooks of one payment.
type asaasSteps struct {
	g       *gen
	id      string
	amount  int64
	day     string
	paidOn  string // paymentDate once paid (CONFIRMED or RECEIVED), "" before
	deleted bool
}

// event appends a webhook of event with the payment in status, after d.
func (s *asaasSteps) event(event, status, billing string, refunds []asaasRefund, d time.Duration, t truth.State) *truth.Step {
	at := s.g.clock.next(d).In(asaasZone())
	rs := "null"
	if len(refunds) > 0 {
		parts := make([]string, len(refunds))
		for i, r := range refunds {
			parts[i] = fmt.Sprintf(`{"dateCreated":%q,"status":%q,"value":%s,"description":null,"transactionReceiptUrl":null}`,
				at.Add(-time.Minute).Format(time.DateTime), r.status, decimal(r.value))
		}
		rs = "[" + strings.Join(parts, ",") + "]"
	}
	if s.paidOn == "" && (status == "CONFIRMED" || status == "RECEIVED") {
		s.paidOn = at.Format(time.DateOnly)
	}
	paid := "null"
	if s.paidOn != "" {
		paid = strconv.Quote(s.paidOn) // what GET /v3/payments?paymentDate[ge]= filters on
	}
	payment := fmt.Sprintf(`{"object":"payment","id":%q,"dateCreated":%q,"customer":"cus_000005219613","value":%s,"netValue":%s,"billingType":%q,"status":%q,"dueDate":%q,"paymentDate":%s,"description":"Pedido paysim","externalReference":"order-%s","deleted":%t,"refunds":%s}`,
		s.id, s.day, decimal(s.amount), decimal(s.amount-asaasFee(billing, s.amount)), billing, status, s.day, paid, s.id, s.deleted, rs)
	evt := fmt.Sprintf("evt_%s&%d", s.g.token(32), 368604920+s.g.index*10+len(s.g.steps))
	body := fmt.Appendf(nil, `{"id":%q,"event":%q,"dateCreated":%q,"payment":%s}`, evt, event, at.Format(time.DateTime), payment)
	return s.g.add(truth.Webhook{EventID: evt, Type: event, Body: body}, t, []byte(payment))
}
