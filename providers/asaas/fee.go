package asaas

import (
	"math"

	"github.com/payledger/payledger/domain"
)

// Fee facts: the SubKey of the fee a notification (PaymentNotified) states
// beside itself, and the source of every Asaas fee. A lifecycle snapshot
// carries its fee instead (withFee).
const (
	feeSubKey = "fee"
	feeSource = "netValue"
)

// feeOf returns the fee the payment object states, value − netValue in
// centavos (exact decimals), with meta, or nil when there is none to book:
//   - no netValue (null or absent): Asaas states no fee;
//   - a value or netValue that is not an exact decimal of at most two
//     places: nothing is booked from it, and the delivery is not rejected
//     over it (Asaas pauses a queue after 15 failed deliveries); a lifecycle
//     event's own value check still rejects a bad value;
//   - netValue above value: not a fee we pay (odd, not invalid: the status
//     fact is kept, and the difference is not booked as income).
//
// value = netValue is a fee of 0 (a free Pix, say): a statement that
// replaces an earlier fee. Pending payments carry the expected fee already;
// the ledger books a fee only once money moved, so stating it early is
// harmless.
func feeOf(meta domain.Meta, p payment) *domain.FeeAssessed {
	fee, ok := feeAmount(p)
	if !ok {
		return nil
	}
	return &domain.FeeAssessed{Meta: meta, Amount: fee, Currency: brl, Source: feeSource}
}

// feeAmount is value − netValue in centavos; ok is false when the payment
// states no fee we can book (see feeOf).
func feeAmount(p payment) (fee int64, ok bool) {
	if p.NetValue == "" || p.Value == "" {
		return 0, false
	}
	value, err := domain.ParseMinorUnits(string(p.Value), brl)
	if err != nil || value < 0 {
		return 0, false
	}
	// netValue may be negative (a fee above a tiny value); only the
	// difference has to be a fee, and must not overflow.
	net, err := domain.ParseMinorUnits(string(p.NetValue), brl)
	if err != nil || net > value || (net < 0 && value > math.MaxInt64+net) {
		return 0, false
	}
	return value - net, true
}

// withFee makes the snapshot state the fee its payment object states (see
// feeOf), so a delivery or a fetch is one fact, not a status and a fee.
func withFee(obs *domain.PaymentStatusObserved, p payment) {
	if fee, ok := feeAmount(p); ok {
		obs.Fee, obs.FeeCurrency, obs.FeeSource = fee, brl, feeSource
	}
}
