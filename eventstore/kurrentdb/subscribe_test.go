package kurrentdb_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// dropCounter counts the subscription's "dropped, resubscribing" warnings,
// so a test can tell that it did exercise resubscription.
type dropCounter struct{ n atomic.Int64 }

func (c *dropCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *dropCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "resubscribing") {
		c.n.Add(1)
	}
	return nil
}
func (c *dropCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *dropCounter) WithGroup(string) slog.Handler      { return c }

// TestSubscriptionSurvivesDrops: while events are appended, the connection
// is cut again and again, resubscriptions are refused now and then, and the
// node restarts once; the subscriber still receives every event exactly
// once, in order.
func TestSubscriptionSurvivesDrops(t *testing.T) {
	const (
		appends = 60
		streams = 3
	)
	srv := newServer(t)
	drops := &dropCounter{}
	opts := testOptions
	opts.CallAttempts, opts.ResubscribeAttempts = 10, 50
	opts.Logger = slog.New(drops)
	s := openFast(t, srv, opts)
	prefix := stream("pi_3Nk-x_Y2eZvKYlo2Cdrops")

	sub, err := s.SubscribeAll(t.Context(), eventstore.Start, eventstore.Filter{StreamPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	var want []uuid.UUID
	for i := range appends {
		payment := fmt.Sprint("pi_3Nk-x_Y2eZvKYlo2Cdrops-", i%streams)
		ev := event(t, payment, fmt.Sprint("e", i))
		mustAppend(t, s, stream(payment), eventstore.Any(), ev)
		want = append(want, ev.ID)
		switch {
		case i == appends/2:
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
		case i%7 == 3:
			srv.InjectFault(kurrenttest.RPCRead, kurrenttest.FaultUnavailable)
			srv.DropConnections()
		case i%5 == 0:
			srv.DropConnections()
		}
	}

	got := collectEvents(t, sub, len(want))
	checkExactlyOnce(t, got, want)
	if drops.n.Load() == 0 {
		t.Fatal("the subscription never dropped: the test did not exercise resubscription")
	}
}

// collectEvents returns the next n events of sub, checking on the way that
// positions only go forward.
func collectEvents(t *testing.T, sub eventstore.Subscription, n int) []eventstore.RecordedEvent {
	t.Helper()
	var got []eventstore.RecordedEvent
	var last eventstore.Position
	for len(got) < n {
		m, err := sub.Next(t.Context())
		if err != nil {
			t.Fatalf("after %d of %d events: %v", len(got), n, err)
		}
		if m.Checkpoint.Compare(last) <= 0 && (m.Event == nil || len(got) > 0) {
			t.Fatalf("message at %v does not follow %v", m.Checkpoint, last)
		}
		last = m.Checkpoint
		if m.Event != nil {
			got = append(got, *m.Event)
		}
	}
	return got
}

// checkExactlyOnce compares the delivered events with the appended IDs:
// same events, same order, each once.
func checkExactlyOnce(t *testing.T, got []eventstore.RecordedEvent, want []uuid.UUID) {
	t.Helper()
	seen := make(map[uuid.UUID]bool, len(got))
	for i, e := range got {
		if seen[e.ID] {
			t.Fatalf("event %v delivered twice", e.ID)
		}
		seen[e.ID] = true
		if e.ID != want[i] {
			t.Fatalf("event %d is %v, want %v", i, e.ID, want[i])
		}
	}
}

// TestSubscriptionGivesUp: with the node gone for good, the subscription
// stops after ResubscribeAttempts failures and Next says why.
func TestSubscriptionGivesUp(t *testing.T) {
	srv := newServer(t)
	opts := testOptions
	opts.ResubscribeAttempts = 2
	s := openFast(t, srv, opts)
	sub, err := s.SubscribeAll(t.Context(), eventstore.Start, eventstore.Filter{StreamPrefix: eventstore.PaymentStreamPrefix})
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if _, err := sub.Next(t.Context()); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("next with the node gone = %v, want an error wrapping domain.ErrUnavailable", err)
	}
	if err := sub.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// TestSubscriptionLifecycle: Next honours its ctx without ending the
// subscription; Close ends it, and a second Close is harmless.
func TestSubscriptionLifecycle(t *testing.T) {
	srv := newServer(t)
	s := openStore(t, srv, testOptions)
	payment := "pi_3Nk-x_Y2eZvKYlo2Clife"
	sub, err := s.SubscribeAll(t.Context(), eventstore.Start, eventstore.Filter{StreamPrefix: stream(payment)})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := sub.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("next with a cancelled ctx = %v, want context.Canceled", err)
	}
	ev := event(t, payment, "created")
	mustAppend(t, s, stream(payment), eventstore.NoStream(), ev)
	if m, err := sub.Next(t.Context()); err != nil || m.Event == nil || m.Event.ID != ev.ID {
		t.Fatalf("next = %+v, %v; want the event", m, err)
	}

	for i := range 2 {
		if err := sub.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
	if _, err := sub.Next(t.Context()); err == nil {
		t.Fatal("next after close succeeded")
	}
}
