package mercadopago

import (
	"math"
	"strconv"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// feeSource is the FeeAssessed.Source of a Mercado Pago fee.
const feeSource = "fee_details"

// feeOf returns the fee a payment answer states: the sum of its fee_details
// that the collector (we) pays, in the payment's currency; fees the payer
// pays (financing, for instance) are not ours. An answer without
// fee_details, or with an empty list while no money moved (Mercado Pago
// fills it on approval), states no fee; an approved payment with no
// collector fee states a fee of 0. The event ID derives from the payment
// and the fee, so the same fee fetched again is one fact.
func feeOf(a paymentAnswer, obs *domain.PaymentStatusObserved) (*domain.FeeAssessed, error) {
	if a.FeeDetails == nil || (len(a.FeeDetails) == 0 && !moneyMoved(a.Status)) {
		return nil, nil
	}
	var sum int64
	for _, d := range a.FeeDetails {
		if d.FeePayer != "collector" {
			continue
		}
		v, err := minorUnits("fee_details[].amount", d.Amount, obs.Currency, true)
		if err != nil {
			return nil, err
		}
		if sum > math.MaxInt64-v {
			return nil, invalid("fee_details total is out of range")
		}
		sum += v
	}
	m := obs.Meta
	m.ProviderEventID = providers.ObservationID(m.ProviderPaymentID, "fee", strconv.FormatInt(sum, 10), string(obs.Currency))
	return &domain.FeeAssessed{Meta: m, Amount: sum, Currency: obs.Currency, Source: feeSource}, nil
}
