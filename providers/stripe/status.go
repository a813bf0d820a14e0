package stripe

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/rest"
)

// Defaults of StatusConfig.
const (
	// DefaultAPIBase is Stripe's production API.
	DefaultAPIBase = "https://api.stripe.com"
	// DefaultAPIVersion pins the shape of API answers (Stripe-Version
	// header) whatever the account's default version is: latest_charge
	// exists only from 2022-11-15 on. It is the version stripe-go v82 pins.
	DefaultAPIVersion = "2025-08-27.basil"
)

// opStatus prefixes the status client's own errors.
const opStatus = "stripe: fetch status"

// StatusConfig configures a StatusClient. Zero fields take the defaults.
type StatusConfig struct {
	// SecretKey is the API key ("sk_…" or a restricted "rk_…" with read
	// access to PaymentIntents and Disputes), sent as a Bearer token. Required.
	SecretKey string
	// APIVersion is sent as Stripe-Version (default DefaultAPIVersion).
	APIVersion string
	// Options are the HTTP settings; BaseURL defaults to DefaultAPIBase, and
	// Now stamps observations, which carry no provider time.
	rest.Options
}

// StatusClient fetches Stripe's current view of a PaymentIntent, lists
// events for a backfill (ListPage) and finds a charge's PaymentIntent
// (PaymentIntentOf). It is safe for concurrent use.
type StatusClient struct {
	api     *rest.Client
	charges *chargeCache // PaymentIntentOf's answers
}

// NewStatusClient validates cfg and returns a client. Errors never include
// the secret key.
func NewStatusClient(cfg StatusConfig) (*StatusClient, error) {
	if err := rest.CheckSecret("secret key", cfg.SecretKey); err != nil {
		return nil, fmt.Errorf("stripe: status client: %w", err)
	}
	key, version := cfg.SecretKey, cmp.Or(cfg.APIVersion, DefaultAPIVersion)
	api, err := rest.New(rest.Config{
		Provider: ProviderName, DefaultBaseURL: DefaultAPIBase, Options: cfg.Options,
		Authorize: func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+key)
			r.Header.Set("Stripe-Version", version)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("stripe: status client: %w", err)
	}
	return &StatusClient{api: api, charges: newChargeCache(chargeCacheSize)}, nil
}

// Name returns "stripe".
func (c *StatusClient) Name() string { return ProviderName }

// FetchStatus returns Stripe's view of PaymentIntent id as an observation,
// from GET /v1/payment_intents/{id}?expand[]=latest_charge and, for a disputed
// charge, GET /v1/disputes (the charge does not say who won). PaymentIntents
// carry no last-updated time, so the ProviderEventID derives from the state
// alone and OccurredAt is the fetch time: a state seen again later is the same
// fact, not recorded twice. An unknown PaymentIntent wraps
// domain.ErrUnknownPayment.
func (c *StatusClient) FetchStatus(ctx context.Context, id string) (*domain.PaymentStatusObserved, error) {
	if err := checkID("payment intent ID", id); err != nil {
		return nil, domain.Invalid(opStatus, domain.MessageOf(err), nil)
	}
	var pi fetchedIntent
	path := "v1/payment_intents/" + url.PathEscape(id) + "?expand%5B%5D=latest_charge"
	if err := c.api.GetJSON(ctx, path, id, &pi); err != nil {
		return nil, err
	}
	if pi.ID != id {
		return nil, domain.Invalid(opStatus, fmt.Sprintf("asked for payment intent %s, got %q", id, truncate(pi.ID)), nil)
	}
	disputeStatus := ""
	if ch := pi.LatestCharge.charge; ch != nil && ch.Disputed {
		var err error
		if disputeStatus, err = c.latestDisputeStatus(ctx, id); err != nil {
			return nil, err
		}
	}
	return c.observation(pi, disputeStatus)
}

// latestDisputeStatus returns the status of the PaymentIntent's newest
// dispute (Stripe lists newest first), or "" when the list is empty.
func (c *StatusClient) latestDisputeStatus(ctx context.Context, id string) (string, error) {
	var list struct {
		Data []struct {
			Status string `json:"status"`
		} `json:"data"`
	}
	path := "v1/disputes?payment_intent=" + url.QueryEscape(id) + "&limit=1"
	if err := c.api.GetJSON(ctx, path, id, &list); err != nil {
		return "", err
	}
	if len(list.Data) == 0 {
		return "", nil
	}
	return list.Data[0].Status, nil
}

// fetchedIntent holds the PaymentIntent fields the status mapping reads.
type fetchedIntent struct {
	ID               string `json:"id"`
	Status           string `json:"status"`
	Amount           *int64 `json:"amount"`
	AmountReceived   int64  `json:"amount_received"`
	Currency         string `json:"currency"`
	LastPaymentError *struct {
		Code string `json:"code"`
	} `json:"last_payment_error"`
	LatestCharge latestCharge `json:"latest_charge"`
}

// fetchedCharge is the expanded latest_charge.
type fetchedCharge struct {
	charge
	Refunded bool `json:"refunded"`
	Disputed bool `json:"disputed"`
}

// latestCharge is latest_charge: null, an ID (not expanded) or the charge.
type latestCharge struct {
	id     string
	charge *fetchedCharge
}

// UnmarshalJSON accepts null, "ch_…" or the expanded charge object.
func (l *latestCharge) UnmarshalJSON(b []byte) error {
	*l = latestCharge{}
	if len(b) > 0 && b[0] == '{' {
		var ch fetchedCharge
		if err := json.Unmarshal(b, &ch); err != nil {
			return err
		}
		l.id, l.charge = ch.ID, &ch
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	return json.Unmarshal(b, &l.id)
}

// observation maps a fetched PaymentIntent to PaymentStatusObserved.
func (c *StatusClient) observation(pi fetchedIntent, disputeStatus string) (*domain.PaymentStatusObserved, error) {
	if pi.Amount == nil {
		return nil, domain.Invalid(opStatus, "payment intent "+pi.ID+" has no amount", nil)
	}
	var refunded, captured int64
	if ch := pi.LatestCharge.charge; ch != nil {
		refunded, captured = deref(ch.AmountRefunded), capturedAmount(ch.charge)
	}
	for _, a := range []int64{*pi.Amount, pi.AmountReceived, refunded, captured} {
		if a < 0 {
			return nil, domain.Invalid(opStatus, "payment intent "+pi.ID+" has a negative amount", nil)
		}
	}
	cur, err := domain.NewCurrency(pi.Currency)
	if err != nil {
		return nil, domain.Invalid(opStatus, "payment intent "+pi.ID+": "+domain.MessageOf(err), nil)
	}
	status, detail := intentStatus(pi, disputeStatus, refunded, max(captured, pi.AmountReceived))
	return &domain.PaymentStatusObserved{
		Meta: domain.Meta{
			Provider: ProviderName,
			ProviderEventID: providers.ObservationID(pi.ID, pi.Status, detail, strconv.FormatInt(refunded, 10),
				strconv.FormatInt(pi.AmountReceived, 10), pi.LatestCharge.id, ""),
			ProviderEventType: "api.payment_intent",
			ProviderPaymentID: pi.ID,
			OccurredAt:        c.api.Now().UTC(),
		},
		Status: status, ProviderStatus: pi.Status, ProviderStatusDetail: detail,
		Amount: *pi.Amount, AmountCaptured: pi.AmountReceived, AmountRefunded: refunded, Currency: cur,
	}, nil
}

// intentStatus maps a PaymentIntent's status, its latest charge's refunds
// and its newest dispute to a domain status and a status detail. An unknown
// Stripe status maps to "" so that the fold flags the payment for review
// instead of guessing.
func intentStatus(pi fetchedIntent, disputeStatus string, refunded, captured int64) (domain.Status, string) {
	switch pi.Status {
	case "requires_payment_method":
		// A PaymentIntent goes back to requires_payment_method after a
		// failed attempt; only the error tells that from a fresh one.
		if e := pi.LastPaymentError; e != nil {
			return domain.StatusFailed, cmp.Or(e.Code, "payment_error")
		}
		return domain.StatusPending, ""
	case "requires_confirmation":
		// Waiting for a confirm call: no attempt yet.
		return domain.StatusPending, ""
	case "requires_action", "processing":
		// 3-D Secure, a Pix QR or boleto voucher shown, a bank debit
		// under way: the payer or the network decides.
		return domain.StatusAwaitingConfirmation, ""
	case "requires_capture":
		return domain.StatusAuthorized, ""
	case "canceled":
		return domain.StatusCancelled, ""
	case "succeeded":
		return succeededStatus(pi, disputeStatus, refunded, captured)
	}
	return "", ""
}

// succeededStatus refines "succeeded" with the latest charge's dispute and
// refunds. A dispute that ended in the merchant's favour (won,
// warning_closed, prevented), or an inquiry that withholds nothing
// (warning_needs_response, warning_under_review), leaves the payment as its
// refunds say.
func succeededStatus(pi fetchedIntent, disputeStatus string, refunded, captured int64) (domain.Status, string) {
	ch := pi.LatestCharge.charge
	detail := ""
	if ch != nil && ch.Disputed {
		detail = "dispute_" + cmp.Or(disputeStatus, "unknown")
		switch disputeStatus {
		case "lost":
			return domain.StatusChargeback, detail
		case "won", "warning_closed", "prevented", "warning_needs_response", "warning_under_review":
		default:
			return domain.StatusDisputed, detail
		}
	}
	switch {
	case refunded <= 0:
		return domain.StatusConfirmed, detail
	case ch.Refunded || refunded >= captured:
		return domain.StatusRefunded, detail
	}
	return domain.StatusPartiallyRefunded, detail
}

func deref(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

// Observe returns FetchStatus's observation as the facts jobs record. The
// fee is not among them: it is on the balance transaction, which FetchFee
// reads when it exists.
func (c *StatusClient) Observe(ctx context.Context, id string) ([]domain.Event, error) {
	obs, err := c.FetchStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	return []domain.Event{obs}, nil
}
