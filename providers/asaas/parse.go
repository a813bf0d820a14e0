package asaas

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
)

// dateLayout is how Asaas writes an event's dateCreated: wall time, no zone.
const dateLayout = "2006-01-02 15:04:05"

// maxOccurred is the last second of year 9999 in Unix time: domain events
// are stored as JSON, and time.Time cannot marshal a later instant.
const maxOccurred = 253402300799

// envelope holds the fields of an Asaas webhook that Parse reads. The payment
// stays raw until the event says it is a payment event: other families
// (TRANSFER_*, INVOICE_*) carry other objects and are ignored unread.
type envelope struct {
	ID          string          `json:"id"`
	Event       string          `json:"event"`
	DateCreated string          `json:"dateCreated"`
	Payment     json.RawMessage `json:"payment"`
}

// Parse maps a verified webhook to its events: a PaymentStatusObserved for a
// lifecycle event, stating the fee its payment's netValue states (see
// feeOf), a PaymentNotified for an informational or unknown PAYMENT_* event,
// followed by that fee as a FeeAssessed, none for other families. A malformed envelope, payment ID
// or lifecycle amount is KindInvalid. SignatureHeader stays empty because the
// Asaas header is a bearer token, which must not be stored.
func (p *Provider) Parse(_ context.Context, _ http.Header, _ url.Values, body []byte) (domain.Notification, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return domain.Notification{}, decodeError("webhook JSON", err)
	}
	if env.ID == "" {
		// Webhook configurations created before Asaas added event IDs
		// (2024-03-25) send none. Rejecting them would fail every delivery
		// until Asaas pauses the merchant's queue (after 15 failures), so
		// the ID is derived from the delivery itself: a retry of the same
		// event carries the same bytes and gets the same ID.
		env.ID = bodyID(body)
	}
	if err := checkID("id", env.ID); err != nil {
		return domain.Notification{}, err
	}
	if err := checkID("event", env.Event); err != nil {
		return domain.Notification{}, err
	}
	n := domain.Notification{Provider: ProviderName, ProviderEventID: env.ID, ProviderEventType: env.Event}
	if !strings.HasPrefix(env.Event, "PAYMENT_") {
		n.IgnoredReason = "event " + env.Event + " is not a payment event"
		return n, nil
	}
	evs, err := p.paymentEvents(env)
	if err != nil {
		return domain.Notification{}, err
	}
	n.Events = evs
	return n, nil
}

// bodyID derives an event ID from the raw delivery, for deliveries without one.
func bodyID(body []byte) string {
	sum := sha256.Sum256(body)
	return "body_" + hex.EncodeToString(sum[:16])
}

// paymentEvents maps a PAYMENT_* event to its domain event, stating the fee
// the payment object's netValue states: a lifecycle snapshot carries it, a
// notification is followed by a FeeAssessed (SubKey "fee").
func (p *Provider) paymentEvents(env envelope) ([]domain.Event, error) {
	ev, pay, err := p.paymentEvent(env)
	if err != nil {
		return nil, err
	}
	if obs, ok := ev.(*domain.PaymentStatusObserved); ok {
		withFee(obs, pay)
		return []domain.Event{obs}, nil
	}
	meta := ev.EventMeta()
	meta.SubKey = feeSubKey
	if fee := feeOf(meta, pay); fee != nil {
		return []domain.Event{ev, fee}, nil
	}
	return []domain.Event{ev}, nil
}

// paymentEvent maps a PAYMENT_* event to its domain event.
func (p *Provider) paymentEvent(env envelope) (domain.Event, payment, error) {
	occurred, err := p.occurredAt(env.DateCreated)
	if err != nil {
		return nil, payment{}, err
	}
	pay, err := decodePayment(env.Payment)
	if err != nil {
		return nil, pay, err
	}
	meta := domain.Meta{Provider: ProviderName, ProviderEventID: env.ID, ProviderEventType: env.Event,
		ProviderPaymentID: pay.ID, OccurredAt: occurred}
	lc, ok := lifecycleOf(env.Event)
	if !ok {
		return &domain.PaymentNotified{Meta: meta, Action: env.Event}, pay, nil
	}
	st := lc.status
	if lc.fromPayment {
		// A refund in progress does not change what was paid.
		st = domain.StatusConfirmed
		if pay.Status != "" {
			st, _ = statusOf(pay.Status)
		}
	}
	providerStatus := pay.Status
	if providerStatus == "" {
		providerStatus = strings.TrimPrefix(env.Event, "PAYMENT_")
	}
	obs, err := snapshot(opParse, meta, pay, st, providerStatus, lc.detail)
	if err != nil {
		return nil, pay, err
	}
	return obs, pay, nil
}

// decodePayment decodes and validates the payment object of a PAYMENT_*
// event, with numbers kept as json.Number.
func decodePayment(raw json.RawMessage) (payment, error) {
	var pay payment
	if len(raw) == 0 || raw[0] != '{' {
		return pay, invalid("payment is missing or not an object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&pay); err != nil {
		return pay, decodeError("payment", err)
	}
	if err := checkID("payment.id", pay.ID); err != nil {
		return pay, err
	}
	return pay, nil
}

// occurredAt reads dateCreated as wall time in the provider's location and
// returns it in UTC; an explicit RFC 3339 offset is honoured. Around a DST
// change Go takes the later offset for a skipped wall time and the first
// occurrence of a repeated one; Brazil has had no DST since 2019, so only
// old events can be an hour off.
func (p *Provider) occurredAt(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, invalid("dateCreated is missing")
	}
	t, err := time.ParseInLocation(dateLayout, s, p.loc)
	if err != nil {
		var rerr error
		if t, rerr = time.Parse(time.RFC3339, s); rerr != nil {
			return time.Time{}, invalid("dateCreated " + strconv.Quote(truncate(s)) + " is not YYYY-MM-DD HH:MM:SS")
		}
	}
	t = t.UTC()
	if t.Unix() <= 0 || t.Unix() > maxOccurred {
		return time.Time{}, invalid("dateCreated " + strconv.Quote(s) + " is out of range")
	}
	return t, nil
}
