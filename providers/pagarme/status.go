package pagarme

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/rest"
)

// DefaultAPIBase is Pagar.me's core v5 API root.
const DefaultAPIBase = "https://api.pagar.me/core/v5"

// EventTypeAPICharge is the ProviderEventType of observations fetched from
// the charges API.
const EventTypeAPICharge = "api.charge"

// StatusConfig configures a StatusClient.
type StatusConfig struct {
	// SecretKey ("sk_…") authenticates as the HTTP Basic user with an empty
	// password, as Pagar.me's API requires. Required.
	SecretKey string
	// Options are the HTTP settings; BaseURL defaults to DefaultAPIBase, and
	// Now dates an observation of a charge without updated_at.
	rest.Options
}

// StatusClient fetches a charge's current state from Pagar.me's API. It is
// safe for concurrent use.
type StatusClient struct {
	api *rest.Client
}

// NewStatusClient validates cfg and applies defaults. The error never
// contains the secret key.
func NewStatusClient(cfg StatusConfig) (*StatusClient, error) {
	if err := rest.CheckSecret("secret key", cfg.SecretKey); err != nil {
		return nil, fmt.Errorf("pagarme: new status client: %w", err)
	}
	key := cfg.SecretKey
	api, err := rest.New(rest.Config{Provider: ProviderName, DefaultBaseURL: DefaultAPIBase, Options: cfg.Options,
		Authorize: func(r *http.Request) { r.SetBasicAuth(key, "") }})
	if err != nil {
		return nil, fmt.Errorf("pagarme: new status client: %w", err)
	}
	return &StatusClient{api: api}, nil
}

// Name returns "pagarme".
func (c *StatusClient) Name() string { return ProviderName }

// FetchStatus GETs /charges/{chargeID} and maps the charge as a webhook's is,
// with an event ID derived from what was observed and OccurredAt = updated_at
// (the clock when missing or unreadable). Errors are *rest.Error naming the
// charge (404 wraps domain.ErrUnknownPayment); an invalid charge ID is
// KindInvalid without a request.
func (c *StatusClient) FetchStatus(ctx context.Context, chargeID string) (*domain.PaymentStatusObserved, error) {
	const op = "pagarme: fetch status"
	if err := checkID("charge id", chargeID); err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, quote(chargeID), err)
	}
	var ch charge
	if err := c.api.GetJSON(ctx, "charges/"+url.PathEscape(chargeID), chargeID, &ch); err != nil {
		return nil, err
	}
	if ch.ID != chargeID {
		return nil, fmt.Errorf("%s %s: %w", op, chargeID, invalid("the API answered with charge "+quote(ch.ID)))
	}
	ev, err := c.observeFetched(ch, "")
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, chargeID, err)
	}
	return ev, nil
}

// observeFetched maps a charge the API answered with, fetched alone or
// listed (prefix names it in errors), so both give the same fact.
func (c *StatusClient) observeFetched(ch charge, prefix string) (*domain.PaymentStatusObserved, error) {
	// An updated_at we cannot read is not worth failing the fetch over: it
	// still goes into the ID, so the observation stays deduplicated.
	occurred, err := parseTimestamp("updated_at", ch.UpdatedAt)
	if err != nil {
		occurred = c.api.Now().UTC()
	}
	meta := domain.Meta{Provider: ProviderName, ProviderEventType: EventTypeAPICharge, OccurredAt: occurred,
		ProviderEventID: providers.ObservationID(ch.ID, ch.Status, ch.LastTransaction.Status,
			strconv.FormatInt(value(ch.CanceledAmount), 10), ch.UpdatedAt)}
	return observe(ch, "", prefix, defaultCurrency, meta)
}

// Observe returns FetchStatus's observation as the facts jobs record. A
// charge states no fee (Pagar.me's fees are on its payables, which payledger
// does not read), so there is no domain.FeeAssessed.
func (c *StatusClient) Observe(ctx context.Context, chargeID string) ([]domain.Event, error) {
	obs, err := c.FetchStatus(ctx, chargeID)
	if err != nil {
		return nil, err
	}
	return []domain.Event{obs}, nil
}
