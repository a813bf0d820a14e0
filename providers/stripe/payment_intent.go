package stripe

import (
	"encoding/json"
	"fmt"

	"github.com/payledger/payledger/domain"
)

// paymentIntent holds the PaymentIntent fields payledger reads. amount and
// currency exist in every API version; the others default to zero when an old
// version lacks them, and the fold treats zero as "not reported".
type paymentIntent struct {
	ID                 string `json:"id"`
	Amount             *int64 `json:"amount"`
	AmountCapturable   int64  `json:"amount_capturable"`
	AmountReceived     int64  `json:"amount_received"`
	Currency           string `json:"currency"`
	CancellationReason string `json:"cancellation_reason"`
	LastPaymentError   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"last_payment_error"`
}

// paymentIntentEvent maps a payment_intent.* event; the payment is the
// PaymentIntent itself.
func paymentIntentEvent(typ string, object json.RawMessage, meta domain.Meta) (domain.Event, error) {
	var pi paymentIntent
	if err := json.Unmarshal(object, &pi); err != nil {
		return nil, decodeError("payment_intent object", "data.object.", err)
	}
	if err := checkID("data.object.id", pi.ID); err != nil {
		return nil, err
	}
	amt, err := required("data.object.amount", pi.Amount)
	if err != nil {
		return nil, err
	}
	err = checkAmounts(amount{"data.object.amount", amt},
		amount{"data.object.amount_capturable", pi.AmountCapturable},
		amount{"data.object.amount_received", pi.AmountReceived})
	if err != nil {
		return nil, err
	}
	cur, err := currency("data.object.currency", pi.Currency)
	if err != nil {
		return nil, err
	}
	meta.ProviderPaymentID = pi.ID
	switch typ {
	case "payment_intent.created":
		return &domain.PaymentCreated{Meta: meta, Amount: amt, Currency: cur}, nil
	case "payment_intent.processing":
		return &domain.PaymentProcessing{Meta: meta, Amount: amt, Currency: cur}, nil
	case "payment_intent.requires_action":
		return &domain.PaymentActionRequired{Meta: meta, Amount: amt, Currency: cur}, nil
	case "payment_intent.amount_capturable_updated":
		return &domain.PaymentAuthorized{Meta: meta, Amount: amt, AmountCapturable: pi.AmountCapturable, Currency: cur}, nil
	case "payment_intent.succeeded":
		return &domain.PaymentSucceeded{Meta: meta, Amount: amt, AmountReceived: pi.AmountReceived, Currency: cur}, nil
	case "payment_intent.payment_failed":
		ev := &domain.PaymentFailed{Meta: meta, Amount: amt, Currency: cur}
		if e := pi.LastPaymentError; e != nil {
			ev.Code, ev.Message = e.Code, e.Message
		}
		return ev, nil
	case "payment_intent.canceled":
		return &domain.PaymentCancelled{Meta: meta, Amount: amt, Currency: cur, Reason: pi.CancellationReason}, nil
	}
	// mapEvent passes only the types above; reaching this is a bug (500).
	return nil, fmt.Errorf("%s: unhandled payment_intent event type %s", opParse, typ)
}
