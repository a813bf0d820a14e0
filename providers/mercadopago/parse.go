package mercadopago

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/payledger/payledger/domain"
)

const opParse = "mercadopago: parse"

// topicPayment is the only notification topic payledger tracks.
const topicPayment = "payment"

// envelope holds the fields of a notification that Parse reads; the rest
// (live_mode, user_id, api_version, application_id, version, …) is ignored.
// IDs are decoded as any under UseNumber so that a numeric id keeps its
// exact digits (notification and payment IDs exceed 2^53).
type envelope struct {
	ID          any    `json:"id"`
	Type        string `json:"type"`
	Action      string `json:"action"`
	DateCreated string `json:"date_created"`
	Data        *struct {
		ID any `json:"id"`
	} `json:"data"`
}

// Parse maps a verified notification: a "payment" one becomes one
// domain.PaymentNotified named by the URL's signed data.id (the status is
// fetched afterwards), other topics are ignored with a reason. A payment
// notification without data.id or whose body names another payment is
// KindInvalid, as is a malformed envelope.
func (p *Provider) Parse(_ context.Context, header http.Header, query url.Values, body []byte) (domain.Notification, error) {
	env, err := decodeEnvelope(body)
	if err != nil {
		return domain.Notification{}, err
	}
	id, err := idString("id", env.ID)
	if err != nil {
		return domain.Notification{}, err
	}
	if id == "" {
		return domain.Notification{}, invalid("id is missing (a legacy IPN delivery? register the URL with source_news=webhooks)")
	}
	topic, eventType, err := topicOf(env.Type, env.Action)
	if err != nil {
		return domain.Notification{}, err
	}
	n := domain.Notification{
		Provider:          ProviderName,
		ProviderEventID:   id,
		ProviderEventType: eventType,
		SignatureHeader:   header.Get(Header),
	}
	if topic != topicPayment {
		n.IgnoredReason = ignoredReason(topic)
		return n, nil
	}
	paymentID, err := signedPaymentID(query, env)
	if err != nil {
		return domain.Notification{}, err
	}
	occurred, err := parseTime("date_created", env.DateCreated)
	if err != nil {
		return domain.Notification{}, err
	}
	n.Events = []domain.Event{&domain.PaymentNotified{
		Meta: domain.Meta{
			Provider:          ProviderName,
			ProviderEventID:   id,
			ProviderEventType: eventType,
			ProviderPaymentID: paymentID,
			OccurredAt:        occurred,
		},
		Action: env.Action,
	}}
	return n, nil
}

// decodeEnvelope decodes exactly one JSON object, numbers kept as
// json.Number.
func decodeEnvelope(body []byte) (envelope, error) {
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		if errors.Is(err, io.EOF) {
			return env, invalid("the body is empty")
		}
		return env, decodeError(opParse, "notification JSON", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return env, invalid("malformed notification JSON: data after the object")
	}
	return env, nil
}

// topicOf returns the notification's topic and the type to record: type,
// or, when a sender leaves it out, action ("payment.updated") and the topic
// before its first dot.
func topicOf(typ, action string) (topic, eventType string, err error) {
	for _, f := range []struct{ name, v string }{{"type", typ}, {"action", action}} {
		if f.v != "" {
			if err := checkID(f.name, f.v); err != nil {
				return "", "", err
			}
		}
	}
	switch {
	case typ != "":
		return typ, typ, nil
	case action != "":
		topic, _, _ := strings.Cut(action, ".")
		return topic, action, nil
	}
	return "", "", invalid("type and action are both missing")
}

// signedPaymentID returns the payment ID covered by the signature: the URL's
// data.id, which the body's data.id, when present, must equal. The body is
// not signed, so trusting it alone would let anyone holding one authentic
// id-less signature open a stream for any ID.
func signedPaymentID(query url.Values, env envelope) (string, error) {
	qid, err := queryDataID(opParse, query)
	if err != nil {
		return "", err
	}
	var bid string
	if env.Data != nil {
		if bid, err = idString("data.id", env.Data.ID); err != nil {
			return "", err
		}
	}
	switch {
	case qid == "":
		return "", invalid("payment notification without " + QueryDataID + " in the URL (only the URL's " + QueryDataID + " is signed)")
	case bid != "" && bid != qid:
		return "", invalid("data.id " + strconv.Quote(truncate(bid)) + " in the body differs from the signed " +
			QueryDataID + " " + strconv.Quote(truncate(qid)) + " in the URL")
	}
	if err := checkID("data.id", qid); err != nil {
		return "", err
	}
	return qid, nil
}

// ignoredReason says why a topic is not tracked.
func ignoredReason(topic string) string {
	switch topic {
	case "merchant_order", "topic_merchant_order_wh":
		return "merchant orders are not tracked: each of their payments is notified under the payment topic"
	case "chargebacks", "topic_chargebacks_wh":
		return "chargeback notifications are not tracked: the payment's status (in_mediation, charged_back) is fetched when its payment notification arrives"
	case "claims", "topic_claims_integration_wh":
		return "claim notifications are not tracked: a refund or chargeback a claim causes shows in the payment's fetched status"
	case "stop_delivery_op_wh":
		return "fraud alerts are not tracked (Mercado Pago does not retry them): act on them in the Mercado Pago panel"
	case "order":
		return "Orders API notifications are not tracked: payledger follows payments (/v1/payments), not orders"
	}
	return "topic " + strconv.Quote(truncate(topic)) + " is not tracked: only payment notifications are"
}
