package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// RedeliveryConfig configures a Redelivery.
type RedeliveryConfig struct {
	Providers   []Provider
	Store       eventstore.Appender
	DeadLetters DeadLetterRecorder
	Logger      *slog.Logger
	// AppendAttempts bounds the appends of one stream on a revision
	// conflict (0: DefaultAppendAttempts).
	AppendAttempts int
}

// Redelivery re-checks a collision's dead letter: it parses the delivery
// kept in the entry's payload again and records it as the webhook would.
// It does not verify again: the delivery was verified when it arrived, and
// a provider's replay tolerance has long passed. A re-check is worth a retry
// after the cause is fixed: an adapter that derived the wrong payment, or a
// stored event that was moved by hand.
type Redelivery struct {
	providers   map[string]Provider
	recorder    *eventstore.Recorder
	deadLetters DeadLetterRecorder
	log         *slog.Logger
}

// NewRedelivery returns a Redelivery; every field but Logger is required.
func NewRedelivery(cfg RedeliveryConfig) (*Redelivery, error) {
	if cfg.Store == nil || cfg.DeadLetters == nil {
		return nil, errors.New("api: new redelivery: a store and a dead-letter queue are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.AppendAttempts <= 0 {
		cfg.AppendAttempts = DefaultAppendAttempts
	}
	d := &Redelivery{providers: make(map[string]Provider, len(cfg.Providers)), deadLetters: cfg.DeadLetters, log: cfg.Logger,
		recorder: eventstore.NewRecorder(cfg.Store, eventstore.NewCodec(), cfg.AppendAttempts, nil)}
	for _, p := range cfg.Providers {
		d.providers[p.Name()] = p
	}
	return d, nil
}

// Redeliver records the delivery of a collision's payload again. The
// outcome is the webhook's: "accepted" or "duplicate" once it is stored,
// "ignored" when the adapter no longer tracks it, "conflict" when it still
// collides (its dead letter then counts one more attempt). A payload that
// is not a delivery is KindInvalid; a provider this process does not
// configure is KindConflict.
func (d *Redelivery) Redeliver(ctx context.Context, payload json.RawMessage) (string, error) {
	const op = "api: redeliver"
	del, p, err := d.delivery(payload)
	if err != nil {
		return "", err
	}
	query, err := url.ParseQuery(del.Query)
	if err != nil {
		return "", domain.Invalid(op, "the delivery's query does not parse", err)
	}
	header := http.Header{}
	if del.ContentType != "" {
		header.Set("Content-Type", del.ContentType)
	}
	for k, v := range del.AuthHeaders {
		header.Set(k, v)
	}
	n, err := p.Parse(ctx, header, query, del.Body)
	if err != nil {
		return "", clientError(op+" "+del.Provider, "the delivery no longer parses", err)
	}
	if len(n.Events) == 0 {
		return outcomeIgnored, nil
	}
	n.SignatureHeader = del.SignatureHeader
	res, err := d.recorder.Record(ctx, n, eventstore.Metadata{Provider: del.Provider, ProviderEventType: n.ProviderEventType,
		ReceivedAt: del.ReceivedAt, RawBody: del.Body, SignatureHeader: del.SignatureHeader, RequestID: del.RequestID,
		Source: eventstore.SourceWebhook, AuthHeaders: del.AuthHeaders, Query: del.Query, Proof: del.Proof})
	if errors.Is(err, eventstore.ErrStoredElsewhere) && len(res.Collisions) > 0 {
		if _, err := keepCollisions(ctx, d.deadLetters, d.log, del, n, res, time.Now()); err != nil {
			return "", err
		}
		return outcomeConflict, nil
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", op, del.Provider, err)
	}
	if res.Duplicate() {
		return outcomeDuplicate, nil
	}
	return outcomeAccepted, nil
}

// CheckRedelivery refuses a payload Redeliver would refuse before parsing:
// not a delivery, or of a provider this process does not configure.
func (d *Redelivery) CheckRedelivery(payload json.RawMessage) error {
	_, _, err := d.delivery(payload)
	return err
}

func (d *Redelivery) delivery(payload json.RawMessage) (collisionPayload, Provider, error) {
	const op = "api: redeliver"
	var del collisionPayload
	if err := json.Unmarshal(payload, &del); err != nil || del.Provider == "" || len(del.Body) == 0 {
		return del, nil, domain.Invalid(op, "the dead letter holds no delivery", err)
	}
	p, ok := d.providers[del.Provider]
	if !ok {
		return del, nil, &domain.Error{Kind: domain.KindConflict, Op: op,
			Msg: fmt.Sprintf("provider %q is not configured in this process", del.Provider)}
	}
	return del, p, nil
}
