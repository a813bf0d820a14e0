package postgres

import (
	"slices"
	"testing"
	"time"

	"github.com/payledger/payledger/eventstore"
)

// TestAudit appends to three payment streams and a foreign one, then checks
// Audit and Lag at the start, in the middle and at the end of the feed, and
// once the unique constraint is dropped and an event ID stored twice.
func TestAudit(t *testing.T) {
	s := New(newPool(t, 4), Options{GroupSize: 1})
	ctx := t.Context()
	var at []eventstore.Position // the position of each append below
	for _, a := range []struct{ stream, pid, key string }{
		{"payment-stripe-pi_3QvA-x_1", "pi_3QvA-x_1", "a"},
		{"payment-stripe-pi_3QvB-x_2", "pi_3QvB-x_2", "a"},
		{"customer-cus_Q1-a", "cus_Q1-a", "a"},
		{"payment-stripe-pi_3QvB-x_2", "pi_3QvB-x_2", "b"},
		{"payment-stripe-pi_3QvC-x_3", "pi_3QvC-x_3", "a"},
	} {
		res, err := s.Append(ctx, a.stream, eventstore.Any(), []eventstore.EventData{testEvent(t, a.pid, a.key)})
		if err != nil {
			t.Fatal(err)
		}
		at = append(at, res.Position)
	}
	head := at[len(at)-1]
	waitHead(t, s, head)
	tests := []struct {
		name    string
		at      eventstore.Position
		streams []string
		after   int64
	}{
		{"start", eventstore.Start, nil, 4},
		{"after the second", at[1], []string{"payment-stripe-pi_3QvA-x_1", "payment-stripe-pi_3QvB-x_2"}, 2},
		{"at the foreign event", at[2], []string{"payment-stripe-pi_3QvA-x_1", "payment-stripe-pi_3QvB-x_2"}, 2},
		{"head", head, []string{"payment-stripe-pi_3QvA-x_1", "payment-stripe-pi_3QvB-x_2", "payment-stripe-pi_3QvC-x_3"}, 0},
	}
	for _, tt := range tests {
		a, err := s.Audit(ctx, eventstore.PaymentStreamPrefix, tt.at)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !a.UniqueEventID || len(a.Duplicates) != 0 || !slices.Equal(a.Streams, tt.streams) || a.Head != head || a.After != tt.after {
			t.Errorf("%s: Audit = %+v; want streams %v, head %s, %d after", tt.name, a, tt.streams, head, tt.after)
		}
		if h, n, err := s.Lag(ctx, eventstore.PaymentStreamPrefix, tt.at); err != nil || h != head || n != tt.after {
			t.Errorf("%s: Lag = %s, %d, %v; want %s, %d", tt.name, h, n, err, head, tt.after)
		}
	}

	for _, q := range []string{
		`ALTER TABLE es_events DROP CONSTRAINT es_events_event_id_key`,
		`INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
		 SELECT 'payment-stripe-pi_copy', 0, event_id, type, data, metadata FROM es_events ORDER BY tx_id LIMIT 1`,
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	a, err := s.Audit(ctx, eventstore.PaymentStreamPrefix, head)
	if err != nil {
		t.Fatal(err)
	}
	if a.UniqueEventID || len(a.Duplicates) != 1 || a.Duplicates[0].Count != 2 || a.After != 1 {
		t.Errorf("after the copy: Audit = %+v; want one ID stored twice, no constraint, 1 after", a)
	}
}

// waitHead waits until the store's head is want: the head stays below any
// transaction still running on the server, and other tests run beside us.
func waitHead(t *testing.T, s *Store, want eventstore.Position) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		h, _, err := s.Lag(t.Context(), eventstore.PaymentStreamPrefix, want)
		if err != nil {
			t.Fatal(err)
		}
		if h == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("head %s, want %s within 60s", h, want)
		}
	}
}

// TestLagEmpty: an empty store has head Start and nothing after it.
func TestLagEmpty(t *testing.T) {
	s := New(newPool(t, 2), Options{GroupSize: 1})
	if h, n, err := s.Lag(t.Context(), eventstore.PaymentStreamPrefix, eventstore.Start); err != nil || h != eventstore.Start || n != 0 {
		t.Errorf("Lag = %s, %d, %v; want Start, 0", h, n, err)
	}
}
