package eventstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/payledger/payledger/domain"
)

// ErrUnknownType is returned by Decode for a wire name the catalogue does not
// know (an event written by a newer payledger). Consumers must stop, not skip.
var ErrUnknownType = errors.New("eventstore: unknown event type")

// Metadata travels with every stored event. It keeps what an auditor needs to
// re-verify the delivery: the exact raw body and the signature header.
type Metadata struct {
	// Provider and ProviderEventType repeat the event's origin for tools that
	// read metadata only.
	Provider          string `json:"provider"`
	ProviderEventType string `json:"provider_event_type,omitempty"`
	// ReceivedAt is when payledger received the delivery (our clock).
	ReceivedAt time.Time `json:"received_at"`
	// RawBody is the request body byte for byte (base64 in JSON, so bytes
	// that are not valid UTF-8 survive).
	RawBody []byte `json:"raw_body,omitempty"`
	// SignatureHeader is the provider's signature header as received.
	SignatureHeader string `json:"signature_header,omitempty"`
	// RequestID correlates with our logs.
	RequestID string `json:"request_id,omitempty"`
	// Source is how the fact reached the store (SourceWebhook, SourceAPI,
	// SourceBackfill); absent on facts stored before it was recorded.
	Source string `json:"source,omitempty"`
	// AuthHeaders are the delivery's authenticating headers its provider
	// names as safe to keep (a signature, Mercado Pago's x-request-id; never
	// a static token), Query its raw query string (Mercado Pago signs
	// data.id from it) and Proof how it was verified: with them evidence
	// re-verifies the delivery later. Absent on facts stored before.
	AuthHeaders map[string]string `json:"auth_headers,omitempty"`
	Query       string            `json:"query,omitempty"`
	Proof       *domain.AuthProof `json:"proof,omitempty"`
}

// Codec encodes domain events to EventData and decodes recorded events. Its
// catalogue is the explicit map from domain.Types; there is no registry.
type Codec struct {
	types map[string]func() domain.Event
}

// NewCodec returns a codec over the full domain catalogue.
func NewCodec() *Codec { return &Codec{types: domain.Types()} }

// Encode turns e into EventData with its deterministic ID.
func (c *Codec) Encode(e domain.Event, meta Metadata) (EventData, error) {
	if _, ok := c.types[e.EventType()]; !ok {
		return EventData{}, fmt.Errorf("eventstore: encode %T: %w %q", e, ErrUnknownType, e.EventType())
	}
	data, err := json.Marshal(e)
	if err != nil {
		return EventData{}, fmt.Errorf("eventstore: encode %s: %w", e.EventType(), err)
	}
	md, err := json.Marshal(meta)
	if err != nil {
		return EventData{}, fmt.Errorf("eventstore: encode metadata of %s: %w", e.EventType(), err)
	}
	return EventData{ID: EventID(e.EventMeta()), Type: e.EventType(), Data: data, Metadata: md}, nil
}

// Decode turns a recorded event back into its domain event.
func (c *Codec) Decode(rec RecordedEvent) (domain.Event, error) {
	return c.DecodeData(rec.Type, rec.Data)
}

// DecodeData decodes event data of the given wire type.
func (c *Codec) DecodeData(typ string, data []byte) (domain.Event, error) {
	newEvent, ok := c.types[typ]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownType, typ)
	}
	e := newEvent()
	if err := json.Unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("eventstore: decode %s: %w", typ, err)
	}
	return e, nil
}

// DecodeMetadata decodes a recorded event's metadata.
func DecodeMetadata(raw []byte) (Metadata, error) {
	var m Metadata
	if len(raw) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("eventstore: decode metadata: %w", err)
	}
	return m, nil
}
