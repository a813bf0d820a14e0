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

// opList prefixes ListPage's own errors.
const opList = "stripe: list events"

// EventRetention is how far back Stripe lists events: a backfill window
// must start within it (older payments are the reconciler's).
const EventRetention = 30 * 24 * time.Hour

// retentionGrace lets a window computed as "now − EventRetention" a moment
// before ListPage runs through: Stripe's 30 days are not exact either.
const retentionGrace = time.Hour

// listLimit is the largest page GET /v1/events serves.
const listLimit = 100

// Coverage is providers.CoverageChanges: Stripe lists every event of a
// window, whatever the age of the payment it changed.
func (c *StatusClient) Coverage() providers.Coverage { return providers.CoverageChanges }

// ListPage returns one page of the tracked events created in w, newest
// first as Stripe lists them, from GET /v1/events; cursor is the previous
// page's Next ("" for the first). Each event is mapped exactly as Parse maps
// its webhook (same facts, same provider event ID), charge-only events
// resolved through PaymentIntentOf. Its notifications have no
// SignatureHeader: nothing was signed. A caller storing them should set
// eventstore.Metadata's ProviderEventType to the event type as a webhook
// does, leave SignatureHeader empty, and mark the RequestID (for example
// "backfill:<run>") so an auditor can tell a fetched fact from a delivery.
//
// A window that is empty or starts before EventRetention (and an hour's
// grace) ago, an event outside
// it and a malformed page are KindInvalid. HTTP failures are the rest
// client's: 429 and 5xx are retried there; a 401 or 403 is a *rest.Error
// with that Status (KindUnauthorized), for the caller to stop on.
func (c *StatusClient) ListPage(ctx context.Context, w providers.Window, cursor string) (providers.Page, error) {
	gte, lt, err := c.eventWindow(w)
	if err != nil {
		return providers.Page{}, err
	}
	q := url.Values{
		"created[gte]": {strconv.FormatInt(gte, 10)},
		"created[lt]":  {strconv.FormatInt(lt, 10)},
		"limit":        {strconv.Itoa(listLimit)},
		"types[]":      trackedTypes(),
	}
	if cursor != "" {
		if msg := providers.IDProblem("cursor", cursor); msg != "" {
			return providers.Page{}, domain.Invalid(opList, msg, nil)
		}
		q.Set("starting_after", cursor)
	}
	var body json.RawMessage
	label := fmt.Sprintf("events [%d, %d) after %q", gte, lt, cursor)
	if err := c.api.GetJSON(ctx, "v1/events?"+q.Encode(), label, &body); err != nil {
		return providers.Page{}, err
	}
	return mapPage(ctx, body, gte, lt, c)
}

// eventWindow checks w and returns its bounds in Unix seconds, as
// created[gte] and created[lt]: an event's created is a whole second, so
// rounding both bounds up keeps exactly the events inside [Since, Until).
func (c *StatusClient) eventWindow(w providers.Window) (gte, lt int64, err error) {
	switch oldest := c.api.Now().Add(-EventRetention - retentionGrace); {
	case w.Since.IsZero() || w.Until.IsZero() || !w.Until.After(w.Since):
		return 0, 0, domain.Invalid(opList, "the window needs a start before its end", nil)
	case w.Since.Before(oldest):
		return 0, 0, domain.Invalid(opList, fmt.Sprintf("Stripe lists the events of the last 30 days only: %s is before %s",
			w.Since.UTC().Format(time.RFC3339), oldest.UTC().Format(time.RFC3339)), nil)
	}
	return ceilUnix(w.Since), ceilUnix(w.Until), nil
}

func ceilUnix(t time.Time) int64 {
	if t.Nanosecond() > 0 {
		return t.Unix() + 1
	}
	return t.Unix()
}

// eventList is the envelope of a list answer.
type eventList struct {
	Object  string            `json:"object"`
	HasMore *bool             `json:"has_more"`
	Data    []json.RawMessage `json:"data"`
}

// mapPage decodes a GET /v1/events answer and maps each event as Parse
// does, checking that it was created in [gte, lt). Next is the last event's
// ID when Stripe has more (starting_after pages towards older events).
func mapPage(ctx context.Context, body []byte, gte, lt int64, r ChargeResolver) (providers.Page, error) {
	var list eventList
	if err := json.Unmarshal(body, &list); err != nil {
		return providers.Page{}, domain.Invalid(opList, domain.MessageOf(decodeError("page", "", err)), err)
	}
	switch {
	case list.Object != "list":
		return providers.Page{}, domain.Invalid(opList, "malformed page: object "+strconv.Quote(truncate(list.Object))+" is not a list", nil)
	case list.HasMore == nil || list.Data == nil:
		return providers.Page{}, domain.Invalid(opList, "malformed page: has_more or data is missing", nil)
	case *list.HasMore && len(list.Data) == 0:
		return providers.Page{}, domain.Invalid(opList, "malformed page: has_more without events gives no cursor", nil)
	}
	page := providers.Page{Notifications: make([]domain.Notification, 0, len(list.Data))}
	for i, raw := range list.Data {
		n, err := listedEvent(ctx, raw, gte, lt, r)
		if err != nil {
			return providers.Page{}, fmt.Errorf("%s: event %d of %d: %w", opList, i+1, len(list.Data), err)
		}
		page.Notifications = append(page.Notifications, n)
	}
	if *list.HasMore {
		page.Next = page.Notifications[len(page.Notifications)-1].ProviderEventID
	}
	return page, nil
}

// listedEvent maps one listed event through the webhook's decoding and
// mapping, after checking it is inside the window asked for.
func listedEvent(ctx context.Context, raw json.RawMessage, gte, lt int64, r ChargeResolver) (domain.Notification, error) {
	env, occurred, err := decodeEnvelope(raw)
	if err != nil {
		return domain.Notification{}, err
	}
	if s := occurred.Unix(); s < gte || s >= lt {
		// No op: mapPage's wrapping names it.
		return domain.Notification{}, domain.Invalid("", fmt.Sprintf("%s was created at %d, outside the window [%d, %d) asked for",
			env.ID, s, gte, lt), nil)
	}
	return notification(ctx, env, occurred, r)
}
