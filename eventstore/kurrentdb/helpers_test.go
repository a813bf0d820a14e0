package kurrentdb_test

import (
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrentdb"
	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// testOptions keep retries short so fault tests stay fast.
var testOptions = kurrentdb.Options{RetryMin: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond}

// newServer starts an in-memory KurrentDB node that the test closes.
func newServer(t testing.TB, opts ...kurrenttest.Option) *kurrenttest.Server {
	t.Helper()
	srv, err := kurrenttest.NewServer(opts...)
	if err != nil {
		t.Fatalf("start kurrenttest: %v", err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// openStore opens a Store on srv that the test closes.
func openStore(t testing.TB, srv *kurrenttest.Server, opts kurrentdb.Options) *kurrentdb.Store {
	t.Helper()
	s, err := kurrentdb.Open(t.Context(), srv.URL(), opts)
	if err != nil {
		t.Fatalf("open %s: %v", srv.URL(), err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// rawClient is the official client on its own, without the adapter.
func rawClient(t *testing.T, srv *kurrenttest.Server) *esdb.Client {
	t.Helper()
	cfg, err := esdb.ParseConnectionString(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = esdb.NoopLogging()
	c, err := esdb.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// occurredAt is the provider time of the fixtures.
var occurredAt = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// event encodes a payment.created event of payment as the API would; the
// same payment and key always give the same event ID.
func event(t testing.TB, payment, key string) eventstore.EventData {
	t.Helper()
	meta := domain.Meta{
		Provider:          "stripe",
		ProviderEventID:   "evt_1Nk-x_Y" + payment + "-" + key,
		ProviderEventType: "payment_intent.created",
		ProviderPaymentID: payment,
		OccurredAt:        occurredAt,
	}
	d, err := eventstore.NewCodec().Encode(&domain.PaymentCreated{Meta: meta, Amount: 4200, Currency: "USD"},
		eventstore.Metadata{Provider: "stripe", ProviderEventType: meta.ProviderEventType, ReceivedAt: occurredAt})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// stream is payment's stream name.
func stream(payment string) string { return eventstore.PaymentStream("stripe", payment) }

// mustAppend appends and fails the test on error.
func mustAppend(t *testing.T, s eventstore.Store, stream string, expected eventstore.ExpectedRevision, evs ...eventstore.EventData) eventstore.AppendResult {
	t.Helper()
	res, err := s.Append(t.Context(), stream, expected, evs)
	if err != nil {
		t.Fatalf("append to %s (expected %s): %v", stream, expected, err)
	}
	return res
}

// ids reads stream through s and returns its event IDs in order.
func ids(t *testing.T, s eventstore.Store, stream string) []uuid.UUID {
	t.Helper()
	evs, err := s.ReadStream(t.Context(), stream)
	if err != nil {
		t.Fatalf("read %s: %v", stream, err)
	}
	out := make([]uuid.UUID, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// toEsdb converts an event for the raw client.
func toEsdb(e eventstore.EventData) esdb.EventData {
	return esdb.EventData{EventID: e.ID, EventType: e.Type, ContentType: esdb.ContentTypeJson, Data: e.Data, Metadata: e.Metadata}
}
