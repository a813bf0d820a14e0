package asaas

import (
	"encoding/json"
	"math"

	"github.com/payledger/payledger/domain"
)

// brl is the only currency Asaas handles; its payloads carry no currency.
const brl domain.Currency = "BRL"

// payment holds the fields of an Asaas payment object that payledger reads,
// in webhooks and API answers alike. Amounts stay json.Number so that the
// decimals are converted exactly, never through float64.
type payment struct {
	ID     string      `json:"id"`
	Status string      `json:"status"`
	Value  json.Number `json:"value"`
	// NetValue is what Asaas credits after its fee; empty when absent.
	NetValue json.Number `json:"netValue"`
	Deleted  bool        `json:"deleted"`
	Refunds  []refund    `json:"refunds"`
}

// refund is one entry of payment.refunds.
type refund struct {
	Status string      `json:"status"` // PENDING, CANCELLED or DONE
	Value  json.Number `json:"value"`
}

// centavos converts a decimal BRL amount to centavos exactly. Negative
// amounts and more than two significant decimals are errors.
func centavos(op, field string, n json.Number) (int64, error) {
	if n == "" {
		return 0, domain.Invalid(op, field+" is missing", nil)
	}
	v, err := domain.ParseMinorUnits(string(n), brl)
	if err != nil {
		return 0, domain.Invalid(op, field+": "+domain.MessageOf(err), err)
	}
	if v < 0 {
		return 0, domain.Invalid(op, field+" is negative", nil)
	}
	return v, nil
}

// refundedDone is the sum of the refunds Asaas reports as DONE; pending and
// cancelled refunds have not moved money.
func refundedDone(op string, refunds []refund) (int64, error) {
	var sum int64
	for _, r := range refunds {
		if r.Status != "DONE" {
			continue
		}
		v, err := centavos(op, "payment.refunds[].value", r.Value)
		if err != nil {
			return 0, err
		}
		if sum > math.MaxInt64-v {
			return 0, domain.Invalid(op, "payment.refunds total is out of range", nil)
		}
		sum += v
	}
	return sum, nil
}

// snapshot builds the observed state of p in status st: Amount is the value,
// AmountCaptured the value once money moved, AmountRefunded the value when
// fully refunded or else the DONE refunds. A "paid" payment with DONE refunds
// is reported partially refunded (or refunded), so status and totals agree.
func snapshot(op string, meta domain.Meta, p payment, st domain.Status, providerStatus, detail string) (*domain.PaymentStatusObserved, error) {
	value, err := centavos(op, "payment.value", p.Value)
	if err != nil {
		return nil, err
	}
	done, err := refundedDone(op, p.Refunds)
	if err != nil {
		return nil, err
	}
	obs := &domain.PaymentStatusObserved{Meta: meta, Status: st, ProviderStatus: providerStatus,
		ProviderStatusDetail: detail, Amount: value, AmountRefunded: done, Currency: brl}
	switch {
	case st == domain.StatusRefunded:
		obs.AmountRefunded = value
	case st == domain.StatusConfirmed && done >= value && done > 0:
		obs.Status = domain.StatusRefunded
	case st == domain.StatusConfirmed && done > 0:
		obs.Status = domain.StatusPartiallyRefunded
	}
	if moneyMoved(obs.Status) {
		obs.AmountCaptured = value
	}
	return obs, nil
}
