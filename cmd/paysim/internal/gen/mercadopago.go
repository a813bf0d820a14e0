package gen

import (
	"fmt"
	"strconv"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/domain"
)

// mpZone is the offset Mercado Pago Brazil writes its times in.
func mpZone() *time.Location { return time.FixedZone("BRT", -3*3600) }

const mpTimeLayout = "2006-01-02T15:04:05.000-07:00"

// genMercadoPago builds a Mercado Pago payment: each step changes the
// payment at the provider (what GET /v1/payments/{id} answers from then on)
// and sends a notification that carries no status, signed over the
// manifest of the URL's data.id.
func genMercadoPago(g *gen, lifecycle string) *truth.Payment {
	n, _ := strconv.ParseInt("1"+g.uniq(12), 10, 64)
	id := strconv.FormatInt(n, 10)
	a := g.amount()
	created := g.clock.next(0)
	s := &mpSteps{g: g, id: id, num: n, amount: a, created: created, fee: (a*499 + 5000) / 10000}
	if g.rng.IntN(3) == 0 {
		s.payerFee = (a*3 + 50) / 100 // installments the buyer pays for: not our fee
	}
	t := func(st domain.Status, refunded int64) truth.State { return state(st, a, refunded, "BRL") }
	switch lifecycle {
	case "approved":
		s.state("in_process", "pending_contingency", 0, 0, t(domain.StatusAwaitingConfirmation, 0))
		s.state("approved", "accredited", 0, g.between(time.Second, 30*time.Second), t(domain.StatusConfirmed, 0))
	case "pix_paid_late":
		s.state("pending", "pending_waiting_transfer", 0, 0, t(domain.StatusAwaitingConfirmation, 0))
		s.state("approved", "accredited", 0, g.between(time.Hour, 20*time.Hour), t(domain.StatusConfirmed, 0)).Late = true
	case "rejected":
		s.state("in_process", "pending_review_manual", 0, 0, t(domain.StatusAwaitingConfirmation, 0))
		s.state("rejected", "cc_rejected_high_risk", 0, g.between(time.Minute, time.Hour), t(domain.StatusFailed, 0))
	case "rejected_then_approved":
		s.state("rejected", "cc_rejected_insufficient_amount", 0, 0, t(domain.StatusFailed, 0))
		s.state("approved", "accredited", 0, g.between(time.Minute, time.Hour), t(domain.StatusConfirmed, 0))
	case "cancelled":
		s.state("pending", "pending_waiting_transfer", 0, 0, t(domain.StatusAwaitingConfirmation, 0))
		s.state("cancelled", "expired", 0, g.between(24*time.Hour, 72*time.Hour), t(domain.StatusCancelled, 0))
	case "refund_partial":
		s.state("approved", "accredited", 0, 0, t(domain.StatusConfirmed, 0))
		r := g.part(a)
		s.state("approved", "partially_refunded", r, g.between(time.Hour, 240*time.Hour), t(domain.StatusPartiallyRefunded, r))
	case "refund_full":
		s.state("approved", "accredited", 0, 0, t(domain.StatusConfirmed, 0))
		r := g.part(a)
		s.state("approved", "partially_refunded", r, g.between(time.Hour, 48*time.Hour), t(domain.StatusPartiallyRefunded, r))
		s.state("refunded", "refunded", a, g.between(time.Hour, 48*time.Hour), t(domain.StatusRefunded, a))
	case "charged_back":
		s.state("approved", "accredited", 0, 0, t(domain.StatusConfirmed, 0))
		s.state("in_mediation", "in_process", 0, g.between(24*time.Hour, 240*time.Hour), t(domain.StatusDisputed, 0))
		s.state("charged_back", "settled", 0, g.between(24*time.Hour, 600*time.Hour), t(domain.StatusChargeback, 0))
	default:
		panic("paysim: unknown mercadopago lifecycle " + lifecycle)
	}
	return &truth.Payment{Provider: truth.MercadoPago, ID: id, Lifecycle: lifecycle, Steps: g.steps,
		Fee: truth.Fee{Amount: s.fee, Currency: "BRL"}}
}

// mpSteps appends Mercado Pago states and their notifications.
type mpSteps struct {
	g       *gen
	id      string
	num     int64
	amount  int64
	created time.Time
	// fee is Mercado Pago's fee (fee_payer collector), payerFee a fee the
	// buyer pays (fee_payer payer, 0: none); both stated once approved.
	fee, payerFee int64
}

// state moves the payment to status/detail with refunded (minor units)
// after d, and appends the notification Mercado Pago sends about it.
func (s *mpSteps) state(status, detail string, refunded int64, d time.Duration, t truth.State) *truth.Step {
	at := s.g.clock.next(d)
	k := len(s.g.steps) + 1
	action := "payment.updated"
	if k == 1 {
		action = "payment.created"
	}
	notification := s.num*100 + int64(k)
	// The notification is stamped a moment after the change it reports.
	body := fmt.Appendf(nil, `{"id":%d,"live_mode":true,"type":"payment","date_created":%q,"user_id":449871235,"api_version":"v1","action":%q,"data":{"id":%q}}`,
		notification, at.Add(250*time.Millisecond).In(mpZone()).Format(mpTimeLayout), action, s.id)
	approved := "null"
	paid := status == "approved" || status == "refunded" || status == "in_mediation" || status == "charged_back"
	if paid {
		approved = strconv.Quote(s.created.Add(2 * time.Second).In(mpZone()).Format(mpTimeLayout))
	}
	api := fmt.Appendf(nil, `{"id":%d,"status":%q,"status_detail":%q,"transaction_amount":%s,"transaction_amount_refunded":%s,"currency_id":"BRL","payment_method_id":"pix","payment_type_id":"bank_transfer","date_created":%q,"date_approved":%s,"date_last_updated":%q,"external_reference":"order-%s","installments":1,"live_mode":true,%s}`,
		s.num, status, detail, decimal(s.amount), decimal(refunded), s.created.In(mpZone()).Format(mpTimeLayout),
		approved, at.In(mpZone()).Format(mpTimeLayout), s.id, s.fees(paid))
	return s.g.add(truth.Webhook{EventID: strconv.FormatInt(notification, 10), Type: action, Body: body,
		Query: "data.id=" + s.id + "&type=payment"}, t, api)
}

// fees are the fee_details and transaction_details of the payment: empty
// and zero until it is paid, as Mercado Pago shows a pending Pix (§2.2 of
// the provider API notes).
func (s *mpSteps) fees(paid bool) string {
	if !paid {
		return fmt.Sprintf(`"fee_details":[],"transaction_details":{"net_received_amount":0,"total_paid_amount":%s,"installment_amount":0}`,
			decimal(s.amount))
	}
	details := fmt.Sprintf(`{"amount":%s,"fee_payer":"collector","type":"mercadopago_fee"}`, decimal(s.fee))
	if s.payerFee > 0 {
		details += fmt.Sprintf(`,{"amount":%s,"fee_payer":"payer","type":"financing_fee"}`, decimal(s.payerFee))
	}
	total := decimal(s.amount + s.payerFee)
	return fmt.Sprintf(`"fee_details":[%s],"transaction_details":{"net_received_amount":%s,"total_paid_amount":%s,"installment_amount":%s}`,
		details, decimal(s.amount-s.fee), total, total)
}
