package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// subtestTimeout bounds every subtest, so a store that stops delivering
// fails the test instead of hanging it.
const subtestTimeout = time.Minute

// conflictRetries is how often a caller retries an append that lost to a
// concurrent one, as the API's command path does.
const conflictRetries = 5

// scope is one subtest's corner of a shared store: a random token in every
// stream name and event ID, so subtests and repeated runs never collide.
// Names look like real Stripe IDs, '_' and '-' included.
type scope struct {
	t     *testing.T
	s     eventstore.Store
	ctx   context.Context
	tok   string
	codec *eventstore.Codec
}

func newScope(t *testing.T, s eventstore.Store) *scope {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), subtestTimeout)
	t.Cleanup(cancel)
	var b [5]byte
	_, _ = rand.Read(b[:])
	return &scope{t: t, s: s, ctx: ctx, tok: hex.EncodeToString(b[:]), codec: eventstore.NewCodec()}
}

// sub returns the scope for a subtest of its test: same names, failures
// reported to t.
func (sc *scope) sub(t *testing.T) *scope {
	c := *sc
	c.t = t
	return &c
}

// prefix starts every stream name of the scope; subscriptions filter on it.
func (sc *scope) prefix() string { return eventstore.PaymentStream("stripe", "pi_3Nk"+sc.tok) }

// paymentID is the provider payment ID of the scope's payment called name.
func (sc *scope) paymentID(name string) string { return "pi_3Nk" + sc.tok + "-x_Y" + name }

// stream is the stream of the scope's payment called name.
func (sc *scope) stream(name string) string {
	return eventstore.PaymentStream("stripe", sc.paymentID(name))
}

// occurredAt is the provider time of the fixtures: facts, not a clock.
func occurredAt() time.Time { return time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC) }

// meta is the origin of event key of payment name.
func (sc *scope) meta(name, key, providerType string) domain.Meta {
	return domain.Meta{
		Provider:          "stripe",
		ProviderEventID:   "evt_1Nk-" + sc.tok + "_" + name + "-" + key,
		ProviderEventType: providerType,
		ProviderPaymentID: sc.paymentID(name),
		OccurredAt:        occurredAt(),
	}
}

// metadata is what the API stores with a delivery; the raw body ends in
// bytes that are not UTF-8, which must survive the store.
func metadata(m domain.Meta) eventstore.Metadata {
	return eventstore.Metadata{
		Provider:          m.Provider,
		ProviderEventType: m.ProviderEventType,
		ReceivedAt:        m.OccurredAt.Add(1500 * time.Millisecond),
		RawBody:           []byte(`{"id":"` + m.ProviderEventID + `","object":"event"}` + "\xff\xfe"),
		SignatureHeader:   "t=1773480413,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
		RequestID:         "req_7Qp-" + m.ProviderEventID[len(m.ProviderEventID)-4:],
	}
}

// encode turns a domain event into what Append takes.
func (sc *scope) encode(e domain.Event) eventstore.EventData {
	sc.t.Helper()
	d, err := sc.codec.Encode(e, metadata(e.EventMeta()))
	if err != nil {
		sc.t.Fatalf("encode %s: %v", e.EventType(), err)
	}
	return d
}

// event is a payment.created event of payment name; key tells its events apart.
func (sc *scope) event(name, key string) eventstore.EventData {
	return sc.encode(&domain.PaymentCreated{
		Meta:     sc.meta(name, key, "payment_intent.created"),
		Amount:   4200,
		Currency: "USD",
	})
}

// events builds one event of payment name per key.
func (sc *scope) events(name string, keys ...string) []eventstore.EventData {
	evs := make([]eventstore.EventData, len(keys))
	for i, k := range keys {
		evs[i] = sc.event(name, k)
	}
	return evs
}

// mustAppend appends and fails the test on error.
func (sc *scope) mustAppend(stream string, expected eventstore.ExpectedRevision, evs ...eventstore.EventData) eventstore.AppendResult {
	sc.t.Helper()
	res, err := sc.s.Append(sc.ctx, stream, expected, evs)
	if err != nil {
		sc.t.Fatalf("append %d events to %s (expected %s): %v", len(evs), stream, expected, err)
	}
	return res
}

// read reads a stream and fails the test on error.
func (sc *scope) read(stream string) []eventstore.RecordedEvent {
	sc.t.Helper()
	evs, err := sc.s.ReadStream(sc.ctx, stream)
	if err != nil {
		sc.t.Fatalf("read %s: %v", stream, err)
	}
	return evs
}

// readIDs returns the IDs of a stream's events in revision order, checking
// that revisions run 0, 1, 2, … on the way.
func (sc *scope) readIDs(stream string) []uuid.UUID {
	sc.t.Helper()
	evs := sc.read(stream)
	ids := make([]uuid.UUID, len(evs))
	for i, e := range evs {
		if e.Revision != uint64(i) {
			sc.t.Fatalf("read %s: event %d has revision %d", stream, i, e.Revision)
		}
		ids[i] = e.ID
	}
	return ids
}

// appendRetrying appends, retrying a bounded number of times on
// domain.ErrConflict as a caller using Any does. Safe to call from any
// goroutine: it reports, never fails the test.
func appendRetrying(ctx context.Context, s eventstore.Store, stream string, evs []eventstore.EventData) (eventstore.AppendResult, error) {
	var err error
	for range conflictRetries {
		var res eventstore.AppendResult
		res, err = s.Append(ctx, stream, eventstore.Any(), evs)
		if !errors.Is(err, domain.ErrConflict) {
			return res, err
		}
	}
	return eventstore.AppendResult{}, fmt.Errorf("still conflicting after %d attempts: %w", conflictRetries, err)
}

func idsOf(evs []eventstore.EventData) []uuid.UUID {
	ids := make([]uuid.UUID, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return ids
}

func recordedIDs(evs []eventstore.RecordedEvent) []uuid.UUID {
	ids := make([]uuid.UUID, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return ids
}

// jsonEqual reports whether two JSON documents are equal as values: stores
// may normalise whitespace and key order.
func jsonEqual(a, b []byte) (bool, error) {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false, fmt.Errorf("%w in %q", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return false, fmt.Errorf("%w in %q", err, b)
	}
	return reflect.DeepEqual(x, y), nil
}
