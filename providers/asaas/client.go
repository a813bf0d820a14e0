package asaas

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/rest"
)

// DefaultBaseURL is Asaas's production API (the sandbox is
// https://api-sandbox.asaas.com).
const DefaultBaseURL = "https://api.asaas.com"

// DefaultUserAgent is sent when StatusConfig.UserAgent is empty: Asaas
// rejects calls without a User-Agent for accounts created since 2024-06-13.
const DefaultUserAgent = "payledger"

// EventTypeAPIPayment is the ProviderEventType of a fetched observation.
const EventTypeAPIPayment = "api.payment"

// StatusConfig configures a StatusClient.
type StatusConfig struct {
	// BaseURL is the API root; empty means DefaultBaseURL.
	BaseURL string
	// APIKey is the account's API key ("$aact_…"), sent as access_token.
	APIKey string
	// UserAgent is the mandatory User-Agent; empty means DefaultUserAgent.
	UserAgent string
	// Timeout bounds one attempt; MaxAttempts bounds the attempts of one
	// fetch (retries on network errors, 408, 429 and 5xx, honouring
	// Retry-After). Zero means the providers/rest defaults.
	Timeout     time.Duration
	MaxAttempts int
	// Now dates observations (Asaas has no last-updated time); nil means time.Now.
	Now func() time.Time
	// HTTPClient is the transport; nil means a default client.
	HTTPClient *http.Client
}

// StatusClient fetches Asaas's current view of a payment. It is safe for
// concurrent use. Asaas warns that excessive GETs can get an API key
// blocked, so callers should fetch on events and reconcile sparingly.
type StatusClient struct {
	api *rest.Client
	now func() time.Time
}

// NewStatusClient returns a client for cfg. It fails without an API key, on
// an API key or User-Agent with surrounding whitespace, or on a bad base URL.
func NewStatusClient(cfg StatusConfig) (*StatusClient, error) {
	const op = "asaas: new status client"
	if err := rest.CheckSecret("API key", cfg.APIKey); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	switch {
	case strings.TrimSpace(cfg.UserAgent) != cfg.UserAgent:
		return nil, errors.New(op + ": User-Agent has leading or trailing whitespace")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	key := cfg.APIKey
	api, err := rest.New(rest.Config{Provider: ProviderName, BaseURL: cfg.BaseURL, Timeout: cfg.Timeout,
		MaxAttempts: cfg.MaxAttempts, UserAgent: cfg.UserAgent, HTTPClient: cfg.HTTPClient,
		Authorize: func(r *http.Request) { r.Header.Set("access_token", key) }})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return &StatusClient{api: api, now: cfg.Now}, nil
}

// Name returns "asaas".
func (c *StatusClient) Name() string { return ProviderName }

// FetchStatus GETs /v3/payments/{id} and returns what Asaas says as an
// observation. Its ProviderEventID is derived from the observed content
// (payment ID, status, detail, refunded and asked-for amounts), so fetching
// the same state twice yields one stored fact; it is dated now, because the
// payment object has no last-updated time. Errors name the provider and the
// payment: a *rest.Error for transport and HTTP failures (404 wraps
// domain.ErrUnknownPayment), KindInvalid for an ID or an answer we cannot use.
func (c *StatusClient) FetchStatus(ctx context.Context, providerPaymentID string) (*domain.PaymentStatusObserved, error) {
	op := "asaas: fetch payment " + strconv.Quote(truncate(providerPaymentID))
	if err := checkID("payment id", providerPaymentID); err != nil {
		return nil, domain.Invalid(op, domain.MessageOf(err), nil)
	}
	var pay payment
	if err := c.api.GetJSON(ctx, "/v3/payments/"+url.PathEscape(providerPaymentID), providerPaymentID, &pay); err != nil {
		return nil, err
	}
	if pay.ID != providerPaymentID {
		return nil, domain.Invalid(op, "the answer is about payment "+strconv.Quote(truncate(pay.ID)), nil)
	}
	if pay.Status == "" {
		return nil, domain.Invalid(op, "the answer has no status", nil)
	}
	return c.observe(op, pay)
}

// observe maps a fetched payment to an observation.
func (c *StatusClient) observe(op string, pay payment) (*domain.PaymentStatusObserved, error) {
	st, detail := statusOf(pay.Status)
	if pay.Deleted {
		// The status enum has no DELETED; a deleted charge keeps its last status.
		st, detail = domain.StatusCancelled, DetailDeleted
	}
	meta := domain.Meta{Provider: ProviderName, ProviderEventType: EventTypeAPIPayment,
		ProviderPaymentID: pay.ID, OccurredAt: c.now().UTC()}
	obs, err := snapshot(op, meta, pay, st, pay.Status, detail)
	if err != nil {
		return nil, err
	}
	// The value is part of the state: PAYMENT_UPDATED may change it without
	// changing the status, and that must be a new fact, not a duplicate.
	obs.ProviderEventID = providers.ObservationID(pay.ID, pay.Status, detail,
		strconv.FormatInt(obs.AmountRefunded, 10), "", strconv.FormatInt(obs.Amount, 10))
	return obs, nil
}
