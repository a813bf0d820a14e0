package pagarme

import (
	"encoding/json"

	"github.com/payledger/payledger/domain"
)

// defaultCurrency is what a charge without a currency is in: Pagar.me
// charges in reais only.
const defaultCurrency domain.Currency = "BRL"

// charge holds the fields of a Pagar.me v5 charge that the mapping reads,
// from a webhook's data, an order's charges[], or GET /charges/{id}.
// Amounts are integer centavos; a decimal or a string fails the decode.
type charge struct {
	ID              string      `json:"id"`
	Status          string      `json:"status"`
	Amount          *int64      `json:"amount"`
	PaidAmount      *int64      `json:"paid_amount"`
	CanceledAmount  *int64      `json:"canceled_amount"`
	Currency        string      `json:"currency"`
	LastTransaction transaction `json:"last_transaction"`
	UpdatedAt       string      `json:"updated_at"`
}

// transaction is the part of data.last_transaction the mapping reads.
type transaction struct {
	Status string `json:"status"`
}

// observe maps one charge to its observed-status event on the charge's
// stream. typ is the event type that delivered it ("" for an API fetch);
// prefix names the charge in errors ("data.", "data.charges[1].");
// fallback is the currency when the charge has none.
func observe(c charge, typ, prefix string, fallback domain.Currency, meta domain.Meta) (*domain.PaymentStatusObserved, error) {
	if err := checkID(prefix+"id", c.ID); err != nil {
		return nil, err
	}
	if err := checkStatus(prefix+"status", c.Status); err != nil {
		return nil, err
	}
	if err := checkStatus(prefix+"last_transaction.status", c.LastTransaction.Status); err != nil {
		return nil, err
	}
	if c.Amount == nil {
		return nil, invalid(prefix + "amount is missing")
	}
	for _, a := range []struct {
		field string
		v     *int64
	}{{"amount", c.Amount}, {"paid_amount", c.PaidAmount}, {"canceled_amount", c.CanceledAmount}} {
		if a.v != nil && *a.v < 0 {
			return nil, invalid(prefix + a.field + " is negative")
		}
	}
	cur, err := currency(prefix+"currency", c.Currency, fallback)
	if err != nil {
		return nil, err
	}
	f := chargeFacts{typ: typ, status: c.Status, txStatus: c.LastTransaction.Status,
		amount: *c.Amount, paid: paidAmount(c, typ), canceled: value(c.CanceledAmount)}
	st := chargeStatus(f)
	meta.ProviderPaymentID = c.ID
	// Pagar.me reports refunds as cancellations, but a charge cancelled
	// before it was paid also has canceled_amount = amount: only the part of
	// the cancellation that had been paid is money given back.
	return &domain.PaymentStatusObserved{Meta: meta, Status: st, ProviderStatus: c.Status,
		ProviderStatusDetail: statusDetail(f, st), Amount: f.amount, AmountCaptured: f.paid,
		AmountRefunded: min(f.canceled, f.paid), Currency: cur}, nil
}

// paidAmount is paid_amount. When a payload leaves it out, a charge whose
// status (or, without a telling status, whose event type) says it was paid
// is taken to have been paid in full, so the ledger does not book a
// confirmed charge as capturing nothing [UNVERIFIED: Pagar.me's samples
// always carry it].
func paidAmount(c charge, typ string) int64 {
	if c.PaidAmount != nil {
		return *c.PaidAmount
	}
	switch norm(c.Status) {
	case "paid", "overpaid", "underpaid", "chargedback":
		return *c.Amount
	case "pending", "processing", "failed":
		return 0
	}
	if paidType(typ) {
		return *c.Amount
	}
	return 0
}

func value(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// chargeEvent maps a charge.* event: data is the charge.
func chargeEvent(typ string, data json.RawMessage, meta domain.Meta) (domain.Event, error) {
	var c charge
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, decodeError("charge", "data.", err)
	}
	ev, err := observe(c, typ, "data.", defaultCurrency, meta)
	if err != nil {
		return nil, err
	}
	return ev, nil
}
