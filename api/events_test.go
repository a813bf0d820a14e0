package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

func delivery(id, kind string, amount int64, at time.Time) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"type":"payment_intent.%s","events":[{"kind":%q,"payment":"pi_ev-1_x","amount":%d,"currency":"usd","at":%d}]}`,
		id, kind, kind, amount, at.Unix()))
}

func TestPaymentEvents(t *testing.T) {
	env := newEnv(t)
	srv := env.server(t)
	t0 := time.Date(2025, 2, 28, 9, 0, 0, 0, time.UTC)
	// Arrival order differs from provider order: succeeded arrives first.
	bodies := [][]byte{
		delivery("evt_b", "succeeded", 5000, t0.Add(time.Minute)),
		delivery("evt_a", "created", 5000, t0),
		delivery("evt_c", "refunded", 1500, t0.Add(time.Hour)),
	}
	var sigs []string
	for _, b := range bodies {
		req := signedWebhook(b, testNow)
		sigs = append(sigs, req.Header.Get(fakeSigHeader))
		if res := serve(t, srv, req); res.status != 200 {
			t.Fatalf("deliver: %d %s", res.status, res.raw)
		}
	}

	res := serve(t, srv, get("/v1/payments/fakepay/pi_ev-1_x/events", readToken))
	if res.status != 200 {
		t.Fatalf("status %d: %s", res.status, res.raw)
	}
	var body struct {
		Stream string `json:"stream"`
		Events []struct {
			EventID         string          `json:"event_id"`
			ProviderEventID string          `json:"provider_event_id"`
			Type            string          `json:"type"`
			OccurredAt      string          `json:"occurred_at"`
			RecordedAt      string          `json:"recorded_at"`
			Revision        uint64          `json:"revision"`
			Data            json.RawMessage `json:"data"`
			Metadata        metadataView    `json:"metadata"`
			StateAfter      paymentView     `json:"state_after"`
		} `json:"events"`
	}
	if err := json.Unmarshal(res.raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Stream != "payment-fakepay-pi_ev-1_x" || len(body.Events) != 3 {
		t.Fatalf("body = %s", res.raw)
	}
	stored := env.store.streams[body.Stream]
	want := []struct {
		evt, typ, occurred string
		status             domain.Status
		count              int
		refunded           int64
		created            string
	}{
		{"evt_b", domain.TypePaymentSucceeded, "2025-02-28T09:01:00Z", domain.StatusConfirmed, 1, 0, "2025-02-28T09:01:00Z"},
		{"evt_a", domain.TypePaymentCreated, "2025-02-28T09:00:00Z", domain.StatusConfirmed, 2, 0, "2025-02-28T09:00:00Z"},
		{"evt_c", domain.TypePaymentRefunded, "2025-02-28T10:00:00Z", domain.StatusPartiallyRefunded, 3, 1500, "2025-02-28T09:00:00Z"},
	}
	for i, e := range body.Events {
		w := want[i]
		if e.ProviderEventID != w.evt || e.Type != w.typ || e.OccurredAt != w.occurred || e.Revision != uint64(i) ||
			e.EventID != stored[i].ID.String() || e.RecordedAt != "2025-03-01T12:00:01Z" {
			t.Errorf("event %d = %+v", i, e)
		}
		if !bytes.Equal(e.Data, stored[i].Data) {
			t.Errorf("event %d data = %s, want the stored %s", i, e.Data, stored[i].Data)
		}
		raw, err := base64.StdEncoding.DecodeString(e.Metadata.RawBody)
		if err != nil || !bytes.Equal(raw, bodies[i]) || e.Metadata.SignatureHeader != sigs[i] ||
			e.Metadata.ReceivedAt != "2025-03-01T12:00:00Z" || e.Metadata.RequestID == "" {
			t.Errorf("event %d metadata = %+v", i, e.Metadata)
		}
		s := e.StateAfter
		if s.Status != w.status || s.EventCount != w.count || s.AmountRefunded != w.refunded || s.CreatedAt != w.created ||
			s.Amount != 5000 || s.AmountCaptured != 5000 || s.Currency != "USD" || s.ReviewReasons == nil {
			t.Errorf("event %d state_after = %+v", i, s)
		}
	}
}

func TestPaymentEventsErrors(t *testing.T) {
	unknownType := []eventstore.RecordedEvent{{ID: uuid.New(), Stream: "payment-fakepay-pi_1", Type: "payment.teleported.v9", Data: []byte(`{}`)}}
	tests := []struct {
		name       string
		read       func(context.Context, string) ([]eventstore.RecordedEvent, error)
		wantStatus int
		wantCode   string
	}{
		{"empty stream", func(context.Context, string) ([]eventstore.RecordedEvent, error) { return nil, nil }, 404, "not_found"},
		{"store down", func(context.Context, string) ([]eventstore.RecordedEvent, error) {
			return nil, fmt.Errorf("postgres: read: %w", domain.ErrUnavailable)
		}, 503, "unavailable"},
		{"event from a newer build", func(context.Context, string) ([]eventstore.RecordedEvent, error) { return unknownType, nil }, 500, "internal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			var stream string
			env.store.ReadStreamFn = func(ctx context.Context, s string) ([]eventstore.RecordedEvent, error) {
				stream = s
				return tc.read(ctx, s)
			}
			res := serve(t, env.server(t), get("/v1/payments/fakepay/pi_1/events", adminToken))
			if res.status != tc.wantStatus || res.errorCode() != tc.wantCode || stream != "payment-fakepay-pi_1" {
				t.Errorf("got %d %s (stream %q)", res.status, res.raw, stream)
			}
		})
	}
}
