package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// opFee prefixes the fee client's own errors.
const opFee = "stripe: fetch fee"

// EventTypeAPIBalanceTransaction is the ProviderEventType of a fee fetched
// from a charge's balance transaction.
const EventTypeAPIBalanceTransaction = "api.balance_transaction"

// feeIntent is the PaymentIntent fields FetchFee reads, with the latest
// charge and its balance transaction expanded.
type feeIntent struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	LatestCharge *struct {
		ID                 string          `json:"id"`
		BalanceTransaction json.RawMessage `json:"balance_transaction"`
	} `json:"latest_charge"`
}

// balanceTransaction is the expanded balance transaction of a charge.
type balanceTransaction struct {
	ID       string `json:"id"`
	Fee      *int64 `json:"fee"`
	Currency string `json:"currency"`
	Created  int64  `json:"created"`
}

// FetchFee returns the fee of PaymentIntent id's latest charge, from GET
// /v1/payment_intents/{id}?expand[]=latest_charge.balance_transaction: the
// balance transaction's fee (the sum of its fee_details: Stripe's, an
// application's, taxes) in its currency, the settlement currency, which may
// differ from the PaymentIntent's. It returns nil and no error while there is
// no balance transaction yet (not captured, or captured asynchronously,
// Stripe's default since 2024-04-10, for up to an hour). The event ID derives
// from the balance transaction, so fetching it again stores nothing new.
func (c *StatusClient) FetchFee(ctx context.Context, id string) (*domain.FeeAssessed, error) {
	if err := checkID("payment intent ID", id); err != nil {
		return nil, domain.Invalid(opFee, domain.MessageOf(err), nil)
	}
	var pi feeIntent
	path := "v1/payment_intents/" + url.PathEscape(id) + "?expand%5B%5D=latest_charge.balance_transaction"
	if err := c.api.GetJSON(ctx, path, id, &pi); err != nil {
		return nil, err
	}
	if pi.ID != id {
		return nil, domain.Invalid(opFee, fmt.Sprintf("asked for payment intent %s, got %q", id, truncate(pi.ID)), nil)
	}
	ch := pi.LatestCharge
	if ch == nil || len(ch.BalanceTransaction) == 0 || string(ch.BalanceTransaction) == "null" {
		return nil, nil
	}
	return feeOf(pi.ID, ch.BalanceTransaction)
}

// feeOf maps an expanded balance transaction to the fee of PaymentIntent pi.
func feeOf(pi string, raw json.RawMessage) (*domain.FeeAssessed, error) {
	if raw[0] != '{' {
		return nil, domain.Invalid(opFee, "payment intent "+pi+": latest_charge.balance_transaction is not expanded", nil)
	}
	var bt balanceTransaction
	if err := json.Unmarshal(raw, &bt); err != nil {
		return nil, domain.Invalid(opFee, "payment intent "+pi+": malformed balance transaction", err)
	}
	if msg := providers.IDProblem("balance transaction id", bt.ID); msg != "" {
		return nil, domain.Invalid(opFee, "payment intent "+pi+": "+msg, nil)
	}
	switch {
	case bt.Fee == nil:
		return nil, domain.Invalid(opFee, "balance transaction "+bt.ID+" has no fee", nil)
	case *bt.Fee < 0:
		return nil, domain.Invalid(opFee, "balance transaction "+bt.ID+" has a negative fee", nil)
	case bt.Created <= 0 || bt.Created > maxCreated:
		return nil, domain.Invalid(opFee, "balance transaction "+bt.ID+" has no valid created time", nil)
	}
	cur, err := domain.NewCurrency(bt.Currency)
	if err != nil {
		return nil, domain.Invalid(opFee, "balance transaction "+bt.ID+": "+domain.MessageOf(err), nil)
	}
	fee := strconv.FormatInt(*bt.Fee, 10)
	return &domain.FeeAssessed{
		Meta: domain.Meta{
			Provider:          ProviderName,
			ProviderEventID:   providers.ObservationID(pi, "fee", bt.ID, fee, string(cur)),
			ProviderEventType: EventTypeAPIBalanceTransaction,
			ProviderPaymentID: pi,
			OccurredAt:        time.Unix(bt.Created, 0).UTC(),
		},
		Amount: *bt.Fee, Currency: cur, Source: "balance_transaction " + bt.ID,
	}, nil
}
