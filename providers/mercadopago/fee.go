package mercadopago

import (
	"math"
	"strconv"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// feeSource is the source of a Mercado Pago fee (FeeSource).
const feeSource = "fee_details"

// withFee makes the observation state the fee the payment answer states:
// the sum of its fee_details that the collector (we) pays, in the payment's
// currency; fees the payer pays (financing, for instance) are not ours. An
// answer without fee_details, or with an empty list while no money moved
// (Mercado Pago fills it on approval), states no fee; an approved payment
// with no collector fee states a fee of 0. The fee is part of the observed
// state: the observation's ID derives from it too, so the same answer
// fetched again is one fact and a new fee is a new one.
func withFee(a paymentAnswer, obs *domain.PaymentStatusObserved) error {
	if a.FeeDetails == nil || (len(a.FeeDetails) == 0 && !moneyMoved(a.Status)) {
		return nil
	}
	var sum int64
	for _, d := range a.FeeDetails {
		if d.FeePayer != "collector" {
			continue
		}
		v, err := minorUnits("fee_details[].amount", d.Amount, obs.Currency, true)
		if err != nil {
			return err
		}
		if sum > math.MaxInt64-v {
			return invalid("fee_details total is out of range")
		}
		sum += v
	}
	obs.Fee, obs.FeeCurrency, obs.FeeSource = sum, obs.Currency, feeSource
	obs.ProviderEventID = providers.ObservationID(obs.ProviderEventID, "fee", strconv.FormatInt(sum, 10), string(obs.Currency))
	return nil
}
