package stripe

import (
	"context"
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
func chargeRefunded(ctx context.Context, object json.RawMessage, meta domain.Meta, r ChargeResolver) (domain.Event, string, error) {
	var ch charge
	if err := json.Unmarshal(object, &ch); err != nil {
		return nil, "", decodeError("charge object", "data.object.", err)
	}
	if err := checkID("data.object.id", ch.ID); err != nil {
		return nil, "", err
	}
	pi, ignored, err := intentOf(ctx, r, "charge "+ch.ID, string(ch.PaymentIntent), ch.ID)
	if pi == "" {
		return nil, ignored, err
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
	meta.ProviderPaymentID = pi
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

// chargeUpdated maps a charge.updated whose charge has a balance transaction
// to PaymentNotified on its PaymentIntent, Action "balance_transaction
// txn_…": with asynchronous capture this is how Stripe says the fee can now
// be read (the webhook carries only the transaction's ID). The fact changes
// no status; it triggers the fee fetch (jobs.FeeArgs) when an API key is
// configured. An update whose previous_attributes do not name
// balance_transaction (a description, metadata) is ignored; without
// previous_attributes (a replay of a fetched event) a charge with a balance
// transaction is enough.
func chargeUpdated(object, previous json.RawMessage, meta domain.Meta) (domain.Event, string, error) {
	var ch struct {
		ID                 string       `json:"id"`
		PaymentIntent      expandableID `json:"payment_intent"`
		BalanceTransaction expandableID `json:"balance_transaction"`
	}
	if err := json.Unmarshal(object, &ch); err != nil {
		return nil, "", decodeError("charge object", "data.object.", err)
	}
	if err := checkID("data.object.id", ch.ID); err != nil {
		return nil, "", err
	}
	if ch.PaymentIntent == "" {
		return nil, "charge " + ch.ID + " has no payment_intent (legacy Charges API); payledger tracks PaymentIntents", nil
	}
	if ch.BalanceTransaction == "" {
		return nil, "charge " + ch.ID + " has no balance transaction yet; only its appearance (the fee) is tracked", nil
	}
	if changed, known := changedFields(previous); known && !changed["balance_transaction"] {
		return nil, "charge.updated of " + ch.ID + " did not change its balance transaction; only its appearance (the fee) is tracked", nil
	}
	if err := checkID("data.object.payment_intent", string(ch.PaymentIntent)); err != nil {
		return nil, "", err
	}
	if err := checkID("data.object.balance_transaction", string(ch.BalanceTransaction)); err != nil {
		return nil, "", err
	}
	meta.ProviderPaymentID = string(ch.PaymentIntent)
	return &domain.PaymentNotified{Meta: meta, Action: "balance_transaction " + string(ch.BalanceTransaction)}, "", nil
}

// changedFields reads previous_attributes: the fields an update changed.
// known is false when there is no readable object to say.
func changedFields(previous json.RawMessage) (changed map[string]bool, known bool) {
	var fields map[string]json.RawMessage
	if len(previous) == 0 || previous[0] != '{' || json.Unmarshal(previous, &fields) != nil {
		return nil, false
	}
	changed = make(map[string]bool, len(fields))
	for k := range fields {
		changed[k] = true
	}
	return changed, true
}
