package pagarme

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
)

// envelope holds the fields of a Pagar.me webhook that Parse reads; the
// account and everything else are ignored. data stays raw until the type
// says which entity it is.
type envelope struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// Parse maps a verified webhook: a charge.* event to one
// domain.PaymentStatusObserved, an order.* event to one per charge, other
// entities and orders without charges to no events and an IgnoredReason. A
// malformed envelope or tracked entity is KindInvalid; SignatureHeader is the
// header Verify used.
func (p *Provider) Parse(_ context.Context, header http.Header, _ url.Values, body []byte) (domain.Notification, error) {
	env, occurred, err := decodeEnvelope(body)
	if err != nil {
		return domain.Notification{}, err
	}
	n := domain.Notification{
		Provider:          ProviderName,
		ProviderEventID:   env.ID,
		ProviderEventType: env.Type,
		SignatureHeader:   p.signatureHeader(header),
	}
	meta := domain.Meta{Provider: ProviderName, ProviderEventID: env.ID, ProviderEventType: env.Type, OccurredAt: occurred}
	// A type is <entity>.<action>; one without the dot ("order") is not an
	// event of a tracked entity, whatever its data holds.
	entity, _, dotted := strings.Cut(env.Type, ".")
	switch {
	case dotted && (entity == "charge" || entity == "order"):
		if len(env.Data) == 0 || env.Data[0] != '{' {
			return domain.Notification{}, invalid("data is missing or not an object")
		}
	default:
		n.IgnoredReason = "event type " + env.Type + " is not tracked: payledger tracks charge.* and order.* events"
		return n, nil
	}
	if entity == "charge" {
		ev, err := chargeEvent(env.Type, env.Data, meta)
		if err != nil {
			return domain.Notification{}, err
		}
		n.Events = []domain.Event{ev}
		return n, nil
	}
	n.Events, n.IgnoredReason, err = orderEvents(env.Type, env.Data, meta)
	if err != nil {
		return domain.Notification{}, err
	}
	return n, nil
}

// decodeEnvelope decodes and validates the envelope and returns created_at,
// the provider timestamp that orders the fold.
func decodeEnvelope(body []byte) (envelope, time.Time, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return env, time.Time{}, decodeError("webhook JSON", "", err)
	}
	if err := checkID("id", env.ID); err != nil {
		return env, time.Time{}, err
	}
	if err := checkID("type", env.Type); err != nil {
		return env, time.Time{}, err
	}
	created, err := parseTimestamp("created_at", env.CreatedAt)
	if err != nil {
		return env, time.Time{}, err
	}
	return env, created, nil
}
