package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// DeadLetterRecorder keeps what failed for good in the dead-letter queue
// (projections.DeadLetters).
type DeadLetterRecorder interface {
	Record(ctx context.Context, f domain.DeadLetterFailure) (int64, error)
}

// collisionPayload is what a re-check of a collided delivery needs: the
// delivery as received. Only the authenticating header the provider's Parse
// named is kept with the content type, so a static token sent in another
// header (Asaas's) is never stored.
type collisionPayload struct {
	Provider        string    `json:"provider"`
	ContentType     string    `json:"content_type,omitempty"`
	SignatureHeader string    `json:"signature_header,omitempty"`
	Query           string    `json:"query,omitempty"`
	Body            []byte    `json:"body"` // base64 in JSON
	ReceivedAt      time.Time `json:"received_at"`
	RequestID       string    `json:"request_id,omitempty"`
	EventID         string    `json:"event_id"`
	StoredIn        string    `json:"stored_in"`
	// The kept authenticating headers and proof, recorded with the facts
	// when the re-check stores them.
	AuthHeaders map[string]string `json:"auth_headers,omitempty"`
	Proof       *domain.AuthProof `json:"proof,omitempty"`
}

// parkCollisions answers a delivery whose event ID (of one or more of its
// payment streams) is stored in another stream: nothing of those streams was
// appended (the others were), each is kept as a dead letter naming both
// streams, and the answer is 200 "conflict" so that the provider does not
// retry, and pause its queue over, a delivery no retry can store. A
// redelivery updates the same dead letter (its key is the event and the
// stream). If the dead letter cannot be kept, the answer is 503: the
// provider's retry is then the only copy.
func (s *Server) parkCollisions(ctx context.Context, r *http.Request, n domain.Notification, meta eventstore.Metadata,
	res eventstore.Recorded) (webhookResponse, error) {
	del := collisionPayload{Provider: meta.Provider, ContentType: r.Header.Get("Content-Type"), SignatureHeader: n.SignatureHeader,
		Query: meta.Query, Body: meta.RawBody, ReceivedAt: meta.ReceivedAt, RequestID: meta.RequestID,
		AuthHeaders: meta.AuthHeaders, Proof: meta.Proof}
	id, err := keepCollisions(ctx, s.deadLetters, s.log, del, n, res, meta.ReceivedAt)
	if err != nil {
		return webhookResponse{}, err
	}
	c := res.Collisions[0]
	return webhookResponse{Outcome: outcomeConflict, ProviderEventID: n.ProviderEventID, EventID: c.EventID.String(),
		Stream: c.Stream, ConflictingStream: c.StoredIn, DeadLetterID: id}, nil
}

// keepCollisions records each collision of res as a dead letter holding
// del, and returns the first one's ID. The key is the event and the stream,
// so a redelivery, or a re-check that still collides, counts on the same
// entry. An entry that cannot be kept is KindUnavailable.
func keepCollisions(ctx context.Context, dl DeadLetterRecorder, log *slog.Logger, del collisionPayload, n domain.Notification,
	res eventstore.Recorded, now time.Time) (int64, error) {
	var first int64
	for i, c := range res.Collisions {
		del.EventID, del.StoredIn = c.EventID.String(), c.StoredIn
		payload, err := json.Marshal(del)
		if err != nil {
			return 0, fmt.Errorf("api: collision payload: %w", err)
		}
		id, err := dl.Record(ctx, domain.DeadLetterFailure{
			Key: "collision:" + c.EventID.String() + ":" + c.Stream, Kind: domain.DeadLetterCollision,
			Cause: domain.CauseEventIDTaken, Provider: del.Provider, ProviderPaymentID: paymentOfStream(n, c.Stream),
			Streams: []string{c.Stream, c.StoredIn}, At: now, Error: c.Error(), Payload: payload,
		})
		if err != nil {
			return 0, domain.Unavailable("api: webhook "+del.Provider, "could not store the delivery", err)
		}
		log.WarnContext(ctx, "webhook: event ID stored for another payment; delivery kept as a dead letter",
			"provider", del.Provider, "provider_event_id", n.ProviderEventID, "event_id", c.EventID, "stream", c.Stream,
			"stored_in", c.StoredIn, "dead_letter", id)
		if i == 0 {
			first = id
		}
	}
	return first, nil
}

// paymentOfStream is the provider payment ID of n's events in stream.
func paymentOfStream(n domain.Notification, stream string) string {
	for _, e := range n.Events {
		m := e.EventMeta()
		if eventstore.PaymentStream(m.Provider, m.ProviderPaymentID) == stream {
			return m.ProviderPaymentID
		}
	}
	return ""
}
