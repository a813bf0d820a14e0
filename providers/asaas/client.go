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
	// APIKey is the account's API key ("$aact_…"), sent as access_token.
	APIKey string
	// Options are the HTTP settings; BaseURL defaults to DefaultBaseURL,
	// UserAgent (mandatory for Asaas) to DefaultUserAgent, and Now dates
	// observations (Asaas has no last-updated time).
	rest.Options
	// Location is the zone of the calendar days ListPage asks for; nil
	// means DefaultLocation, the zone Asaas writes its dates in.
	Location *time.Location
}

// StatusClient fetches Asaas's current view of a payment. It is safe for
// concurrent use. Asaas warns that excessive GETs can get an API key
// blocked, so callers should fetch on events and reconcile sparingly.
type StatusClient struct {
	api *rest.Client
	loc *time.Location
}

// NewStatusClient returns a client for cfg. It fails without an API key, on
// an API key or User-Agent with surrounding whitespace, or on a bad base URL.
func NewStatusClient(cfg StatusConfig) (*StatusClient, error) {
	const op = "asaas: new status client"
	if err := rest.CheckSecret("API key", cfg.APIKey); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if strings.TrimSpace(cfg.UserAgent) != cfg.UserAgent {
		return nil, errors.New(op + ": User-Agent has leading or trailing whitespace")
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	loc := cfg.Location
	if loc == nil {
		var err error
		if loc, err = time.LoadLocation(DefaultLocation); err != nil {
			return nil, fmt.Errorf("%s: load %s: %w", op, DefaultLocation, err)
		}
	}
	key := cfg.APIKey
	api, err := rest.New(rest.Config{Provider: ProviderName, DefaultBaseURL: DefaultBaseURL, Options: cfg.Options,
		Authorize: func(r *http.Request) { r.Header.Set("access_token", key) }})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return &StatusClient{api: api, loc: loc}, nil
}

// Name returns "asaas".
func (c *StatusClient) Name() string { return ProviderName }

// FetchStatus GETs /v3/payments/{id} and returns what Asaas says as an
// observation, dated now (the payment has no last-updated time) and with a
// ProviderEventID derived from the observed content, so the same state
// fetched twice is one fact. Transport and HTTP failures are *rest.Error (404
// wraps domain.ErrUnknownPayment); an ID or answer we cannot use is KindInvalid.
func (c *StatusClient) FetchStatus(ctx context.Context, providerPaymentID string) (*domain.PaymentStatusObserved, error) {
	op, pay, err := c.fetch(ctx, providerPaymentID)
	if err != nil {
		return nil, err
	}
	return c.observe(op, pay)
}

// Observe is FetchStatus as the facts the answer states: the observation,
// which states the fee (value − netValue, see feeOf) when it has a netValue.
func (c *StatusClient) Observe(ctx context.Context, providerPaymentID string) ([]domain.Event, error) {
	op, pay, err := c.fetch(ctx, providerPaymentID)
	if err != nil {
		return nil, err
	}
	obs, err := c.observe(op, pay)
	if err != nil {
		return nil, err
	}
	return []domain.Event{obs}, nil
}

// fetch GETs the payment and checks that it is the one asked for; op names
// the fetch in errors.
func (c *StatusClient) fetch(ctx context.Context, providerPaymentID string) (string, payment, error) {
	op := "asaas: fetch payment " + strconv.Quote(truncate(providerPaymentID))
	if err := checkID("payment id", providerPaymentID); err != nil {
		return op, payment{}, domain.Invalid(op, domain.MessageOf(err), nil)
	}
	var pay payment
	if err := c.api.GetJSON(ctx, "/v3/payments/"+url.PathEscape(providerPaymentID), providerPaymentID, &pay); err != nil {
		return op, pay, err
	}
	if pay.ID != providerPaymentID {
		return op, pay, domain.Invalid(op, "the answer is about payment "+strconv.Quote(truncate(pay.ID)), nil)
	}
	return op, pay, checkAnswer(op, pay)
}

// checkAnswer rejects a payment object observe cannot map: one without a
// usable ID or without a status.
func checkAnswer(op string, pay payment) error {
	if err := checkID("id", pay.ID); err != nil {
		return domain.Invalid(op, domain.MessageOf(err), nil)
	}
	if pay.Status == "" {
		return domain.Invalid(op, "the answer has no status", nil)
	}
	return nil
}

// observe maps a fetched payment to an observation.
func (c *StatusClient) observe(op string, pay payment) (*domain.PaymentStatusObserved, error) {
	st, detail := statusOf(pay.Status)
	if pay.Deleted {
		// The status enum has no DELETED; a deleted charge keeps its last status.
		st, detail = domain.StatusCancelled, DetailDeleted
	}
	meta := domain.Meta{Provider: ProviderName, ProviderEventType: EventTypeAPIPayment,
		ProviderPaymentID: pay.ID, OccurredAt: c.api.Now().UTC()}
	obs, err := snapshot(op, meta, pay, st, pay.Status, detail)
	if err != nil {
		return nil, err
	}
	// The value is part of the state: PAYMENT_UPDATED may change it without
	// changing the status, and that must be a new fact, not a duplicate. So
	// is the fee the snapshot states.
	withFee(obs, pay)
	parts := []string{pay.ID, pay.Status, detail, strconv.FormatInt(obs.AmountRefunded, 10), "", strconv.FormatInt(obs.Amount, 10)}
	if obs.StatesFee() {
		parts = append(parts, "fee", strconv.FormatInt(obs.Fee, 10))
	}
	obs.ProviderEventID = providers.ObservationID(parts...)
	return obs, nil
}
