package mercadopago

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/rest"
)

// DefaultAPIBase is Mercado Pago's production API.
const DefaultAPIBase = "https://api.mercadopago.com"

// StatusConfig configures a StatusClient.
type StatusConfig struct {
	// AccessToken is the application's access token ("APP_USR-…", or
	// "TEST-…"; LEDGER_MERCADOPAGO_ACCESS_TOKEN), sent as a Bearer token.
	// Required.
	AccessToken string
	// Options are the HTTP settings; BaseURL (LEDGER_MERCADOPAGO_API_BASE)
	// defaults to DefaultAPIBase, and Now stamps an observation whose answer
	// has no date_last_updated.
	rest.Options
}

// StatusClient fetches Mercado Pago's current view of a payment. It is safe
// for concurrent use.
type StatusClient struct {
	api *rest.Client
}

// NewStatusClient validates cfg and applies defaults. An empty access token,
// or one with surrounding whitespace, is an error that never quotes it.
func NewStatusClient(cfg StatusConfig) (*StatusClient, error) {
	if err := rest.CheckSecret("access token", cfg.AccessToken); err != nil {
		return nil, fmt.Errorf("mercadopago: new status client: %w", err)
	}
	auth := "Bearer " + cfg.AccessToken
	api, err := rest.New(rest.Config{
		Provider:       ProviderName,
		DefaultBaseURL: DefaultAPIBase,
		Options:        cfg.Options,
		Authorize:      func(r *http.Request) { r.Header.Set("Authorization", auth) },
	})
	if err != nil {
		return nil, fmt.Errorf("mercadopago: new status client: %w", err)
	}
	return &StatusClient{api: api}, nil
}

// Name returns "mercadopago".
func (c *StatusClient) Name() string { return ProviderName }

// FetchStatus GETs /v1/payments/{id} and returns what Mercado Pago says as a
// domain.PaymentStatusObserved with a ProviderEventID derived from the
// observed state. Transport and HTTP failures are *rest.Error (404 wraps
// domain.ErrUnknownPayment); an answer that cannot be mapped exactly is
// KindInvalid.
func (c *StatusClient) FetchStatus(ctx context.Context, providerPaymentID string) (*domain.PaymentStatusObserved, error) {
	raw, err := c.fetch(ctx, providerPaymentID)
	if err != nil {
		return nil, err
	}
	obs, err := observe(raw, providerPaymentID, c.api.Now())
	if err != nil {
		return nil, fmt.Errorf("mercadopago: fetch payment %s: %w", providerPaymentID, err)
	}
	return obs, nil
}

// Observe is FetchStatus as the facts the answer states: the observation,
// stating the fee (FeeSource "fee_details") when the answer states one.
func (c *StatusClient) Observe(ctx context.Context, providerPaymentID string) ([]domain.Event, error) {
	raw, err := c.fetch(ctx, providerPaymentID)
	if err != nil {
		return nil, err
	}
	facts, err := observeFacts(raw, providerPaymentID, c.api.Now())
	if err != nil {
		return nil, fmt.Errorf("mercadopago: fetch payment %s: %w", providerPaymentID, err)
	}
	return facts, nil
}

// fetch GETs the payment's answer.
func (c *StatusClient) fetch(ctx context.Context, providerPaymentID string) (json.RawMessage, error) {
	if err := checkID("payment id", providerPaymentID); err != nil {
		return nil, fmt.Errorf("mercadopago: fetch payment %q: %w", truncate(providerPaymentID), err)
	}
	var raw json.RawMessage
	if err := c.api.GetJSON(ctx, "/v1/payments/"+url.PathEscape(providerPaymentID), providerPaymentID, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}
