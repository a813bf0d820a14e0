package stripe

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/payledger/payledger/domain"
)

const opParse = "stripe: parse"

// maxCreated is the last second of year 9999: domain events are stored as
// JSON, and time.Time cannot marshal a later instant, so a larger created
// would fail at the store instead of here.
const maxCreated = 253402300799

// envelope holds the fields of a Stripe event that Parse reads; everything
// else, api_version included, is ignored, so any API version decodes. The
// resource stays raw until the type says which fields to read from it.
type envelope struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Type    string          `json:"type"`
	Created json.RawMessage `json:"created"`
	Data    eventData       `json:"data"`
}

// eventData is an event's data: the resource, and for *.updated events the
// previous values of the fields that changed.
type eventData struct {
	Object             json.RawMessage `json:"object"`
	PreviousAttributes json.RawMessage `json:"previous_attributes"`
}

// Parse maps a verified Stripe event to a Notification. Malformed JSON, a
// missing or invalid envelope field, or an invalid field of a tracked type is
// a domain.KindInvalid error. A well-formed event of a type payledger does not
// track, or a tracked type with no PaymentIntent (legacy Charges API), yields
// no events and an IgnoredReason. An event that names only a charge is
// resolved through Config.Resolver with ctx; a failed lookup is
// KindUnavailable, so the delivery is not acknowledged and Stripe retries it.
// The query is unused.
func (p *Provider) Parse(ctx context.Context, header http.Header, _ url.Values, body []byte) (domain.Notification, error) {
	env, occurred, err := decodeEnvelope(body)
	if err != nil {
		return domain.Notification{}, err
	}
	n, err := notification(ctx, env, occurred, p.resolver)
	if err != nil {
		return domain.Notification{}, err
	}
	n.SignatureHeader = header.Get(Header)
	return n, nil
}

// notification maps a decoded event to its Notification. Parse and ListPage
// both call it, so a listed event yields the same facts, with the same
// provider event ID, as its webhook: the store dedups one against the other.
func notification(ctx context.Context, env envelope, occurred time.Time, r ChargeResolver) (domain.Notification, error) {
	n := domain.Notification{
		Provider:          ProviderName,
		ProviderEventID:   env.ID,
		ProviderEventType: env.Type,
	}
	meta := domain.Meta{
		Provider:          ProviderName,
		ProviderEventID:   env.ID,
		ProviderEventType: env.Type,
		OccurredAt:        occurred,
	}
	ev, ignored, err := mapEvent(ctx, env.Type, env.Data, meta, r)
	if err != nil {
		return domain.Notification{}, err
	}
	if ev == nil {
		n.IgnoredReason = ignored
		return n, nil
	}
	n.Events = []domain.Event{ev}
	return n, nil
}

// decodeEnvelope decodes and validates the envelope and returns the event's
// creation time, the provider timestamp that orders the fold.
func decodeEnvelope(body []byte) (envelope, time.Time, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return env, time.Time{}, decodeError("event JSON", "", err)
	}
	switch env.Object {
	case "event", "": // old payloads are all "event"; absence is tolerated
	case "v2.core.event":
		return env, time.Time{}, invalid("thin events (object v2.core.event) are not supported; send snapshot events to this endpoint")
	default:
		return env, time.Time{}, invalid("object " + strconv.Quote(truncate(env.Object)) + " is not a Stripe event")
	}
	if err := checkID("id", env.ID); err != nil {
		return env, time.Time{}, err
	}
	if err := checkID("type", env.Type); err != nil {
		return env, time.Time{}, err
	}
	created, err := parseCreated(env.Created)
	if err != nil {
		return env, time.Time{}, err
	}
	if len(env.Data.Object) == 0 || env.Data.Object[0] != '{' {
		return env, time.Time{}, invalid("data.object is missing or not an object")
	}
	return env, time.Unix(created, 0).UTC(), nil
}

// parseCreated reads created. The envelope keeps it raw so that a thin
// event's string timestamp does not fail the decode before decodeEnvelope
// can say what the payload really is.
func parseCreated(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return 0, invalid("created is missing")
	}
	created, err := strconv.ParseInt(string(raw), 10, 64)
	switch {
	case err != nil || created <= 0:
		return 0, invalid("created is not a positive Unix timestamp in seconds")
	case created > maxCreated:
		return 0, invalid("created is after the year 9999")
	}
	return created, nil
}

// mapEvent maps one tracked event type (trackedTypes) to its domain event.
// It returns a nil event and a reason when the event is to be ignored; r
// (nil: none) finds the PaymentIntent of an event that names only a charge.
func mapEvent(ctx context.Context, typ string, data eventData, meta domain.Meta, r ChargeResolver) (domain.Event, string, error) {
	object := data.Object
	switch typ {
	case "payment_intent.created", "payment_intent.processing", "payment_intent.requires_action",
		"payment_intent.amount_capturable_updated", "payment_intent.succeeded",
		"payment_intent.payment_failed", "payment_intent.canceled":
		ev, err := paymentIntentEvent(typ, object, meta)
		return ev, "", err
	case "charge.refunded":
		return chargeRefunded(ctx, object, meta, r)
	case "charge.updated":
		return chargeUpdated(object, data.PreviousAttributes, meta)
	case "charge.dispute.created", "charge.dispute.closed":
		return disputeEvent(ctx, typ, object, meta, r)
	}
	return nil, "event type " + typ + " is not tracked", nil
}

// trackedTypes are the event types mapEvent maps, which ListPage asks
// Stripe for (types[] takes at most 20).
func trackedTypes() []string {
	return []string{
		"payment_intent.created", "payment_intent.processing", "payment_intent.requires_action",
		"payment_intent.amount_capturable_updated", "payment_intent.succeeded",
		"payment_intent.payment_failed", "payment_intent.canceled",
		"charge.refunded", "charge.updated", "charge.dispute.created", "charge.dispute.closed",
	}
}
