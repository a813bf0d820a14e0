package stripe

import (
	"encoding/json"

	"github.com/payledger/payledger/domain"
)

// charge holds the Charge fields charge.refunded needs.
type charge struct {
	ID             string       `json:"id"`
	Amount         int64        `json:"amount"`
	AmountCaptured *int64       `json:"amount_captured"`
	AmountRefunded *int64       `json:"amount_refunded"`
	Captured       bool         `json:"captured"`
	Currency       string       `json:"currency"`
	PaymentIntent  expandableID `json:"payment_intent"`
}

// chargeRefunded maps charge.refunded to PaymentRefunded on the charge's
// PaymentIntent. amount_refunded is cumulative, so redelivered and
// reordered refunds fold to the same total.
func chargeRefunded(object json.RawMessage, meta domain.Meta) (domain.Event, string, error) {
	var ch charge
	if err := json.Unmarshal(object, &ch); err != nil {
		return nil, "", decodeError("charge object", "data.object.", err)
	}
	if err := checkID("data.object.id", ch.ID); err != nil {
		return nil, "", err
	}
	if ch.PaymentIntent == "" {
		return nil, "charge " + ch.ID + " has no payment_intent (legacy Charges API); payledger tracks PaymentIntents", nil
	}
	if err := checkID("data.object.payment_intent", string(ch.PaymentIntent)); err != nil {
		return nil, "", err
	}
	refunded, err := required("data.object.amount_refunded", ch.AmountRefunded)
	if err != nil {
		return nil, "", err
	}
	captured := capturedAmount(ch)
	err = checkAmounts(amount{"data.object.amount", ch.Amount},
		amount{"data.object.amount_captured", captured},
		amount{"data.object.amount_refunded", refunded})
	if err != nil {
		return nil, "", err
	}
	cur, err := currency("data.object.currency", ch.Currency)
	if err != nil {
		return nil, "", err
	}
	meta.ProviderPaymentID = string(ch.PaymentIntent)
	return &domain.PaymentRefunded{Meta: meta, AmountRefunded: refunded, AmountCaptured: captured, Currency: cur}, "", nil
}

// capturedAmount is amount_captured, or, in API versions older than that
// field, the whole amount of a captured charge.
func capturedAmount(ch charge) int64 {
	switch {
	case ch.AmountCaptured != nil:
		return *ch.AmountCaptured
	case ch.Captured:
		return ch.Amount
	}
	return 0
}
