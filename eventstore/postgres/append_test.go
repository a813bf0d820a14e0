package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// countingConn counts writes to the server: pgx sends a statement's
// messages in one write and then waits, so one write is one round trip.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// countingPool is a one-connection pool on a fresh database whose writes to
// the server are counted.
func countingPool(t *testing.T) (*pgxpool.Pool, *atomic.Int64) {
	t.Helper()
	cfg := newPool(t, 1).Config()
	writes := new(atomic.Int64)
	var dialer net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		return countingConn{Conn: c, writes: writes}, err
	}
	return newPoolWith(t, cfg), writes
}

// TestAppendOneRoundTrip: once pgx has prepared the append statements on a
// connection (a single event and a batch take different ones), an append
// costs one round trip, batch or not.
func TestAppendOneRoundTrip(t *testing.T) {
	ctx := t.Context()
	pool, writes := countingPool(t)
	s := New(pool, Options{})
	const stream = "payment-stripe-pi_3Nk-x_Yround"
	for _, warm := range [][]eventstore.EventData{
		{testEvent(t, stream, "warm")},
		{testEvent(t, stream, "warm-x"), testEvent(t, stream, "warm-y")},
	} {
		if _, err := s.Append(ctx, stream, eventstore.Any(), warm); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		expected eventstore.ExpectedRevision
		keys     []string
	}{
		{"single", eventstore.Exact(2), []string{"a"}},
		{"batch", eventstore.Any(), []string{"b", "c", "d"}},
		{"duplicate", eventstore.Any(), []string{"a"}},
		{"duplicate-batch", eventstore.Exact(0), []string{"b", "c"}},
		{"conflict", eventstore.Exact(0), []string{"e"}},
	}
	for _, tt := range tests {
		var evs []eventstore.EventData
		for _, k := range tt.keys {
			evs = append(evs, testEvent(t, stream, k))
		}
		before := writes.Load()
		if _, err := s.Append(ctx, stream, tt.expected, evs); err != nil && !errors.Is(err, domain.ErrConflict) {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if n := writes.Load() - before; n != 1 {
			t.Errorf("%s: append took %d round trips, want 1", tt.name, n)
		}
	}
}

// TestAppendRetriesWhenHeadIsYounger: es_append refuses to put an event
// after a head written by a younger transaction (the feed, ordered by
// transaction ID, would deliver it before its predecessor) and asks for a
// new transaction; Store.Append then appends in order.
func TestAppendRetriesWhenHeadIsYounger(t *testing.T) {
	ctx := t.Context()
	pool := newPool(t, 4)
	s := New(pool, Options{})
	const stream = "payment-stripe-pi_3Nk-x_Yyounger"
	a, b := testEvent(t, stream, "a"), testEvent(t, stream, "b")

	old, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback(context.Background())
	if _, err := old.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil { // takes its ID now
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, stream, eventstore.NoStream(), []eventstore.EventData{a}); err != nil {
		t.Fatal(err)
	}
	if out, err := appendIn(ctx, old, stream, b); err != nil || out != "retry" {
		t.Fatalf("es_append in the older transaction = %q, %v; want retry", out, err)
	}
	if err := old.Commit(ctx); err != nil { // it wrote nothing
		t.Fatal(err)
	}
	res, err := s.Append(ctx, stream, eventstore.Any(), []eventstore.EventData{b})
	if err != nil || res.Revision != 1 {
		t.Fatalf("append = %+v, %v; want revision 1", res, err)
	}
	evs, err := s.ReadStream(ctx, stream)
	if err != nil || len(evs) != 2 || evs[0].Position.Compare(evs[1].Position) >= 0 {
		t.Fatalf("stream = %+v, %v; want a then b, in feed order", evs, err)
	}
}

// TestAppendLosesRace: an append whose first revision is taken by a
// transaction that commits while the append waits on it is never stored in
// part; with Any it is then appended after the winner, with an exact
// revision it is a conflict. A winner appending through es_append holds
// the stream lock, so the loser waits for its turn and reads the new head.
// A winner that skips the lock (a plain INSERT) makes the loser collide on
// the revision itself: a batch then inserts its later revisions, must roll
// back whole (ES002), and a single event's statement must hand over to
// es_append rather than report anything.
func TestAppendLosesRace(t *testing.T) {
	tests := []struct {
		name     string
		winner   func(ctx context.Context, tx pgx.Tx, stream string, ev eventstore.EventData) error
		keys     []string
		expected eventstore.ExpectedRevision
		wantErr  error
	}{
		{"locked-batch-exact", appendWinner, []string{"b", "c"}, eventstore.Exact(0), domain.ErrConflict},
		{"locked-batch-any", appendWinner, []string{"b", "c"}, eventstore.Any(), nil},
		{"locked-single-exact", appendWinner, []string{"b"}, eventstore.Exact(0), domain.ErrConflict},
		{"locked-single-any", appendWinner, []string{"b"}, eventstore.Any(), nil},
		{"unlocked-batch-exact", insertWinner, []string{"b", "c"}, eventstore.Exact(0), domain.ErrConflict},
		{"unlocked-batch-any", insertWinner, []string{"b", "c"}, eventstore.Any(), nil},
		{"unlocked-single-exact", insertWinner, []string{"b"}, eventstore.Exact(0), domain.ErrConflict},
		{"unlocked-single-any", insertWinner, []string{"b"}, eventstore.Any(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			pool := newPool(t, 4)
			s := New(pool, Options{})
			const stream = "payment-stripe-pi_3Nk-x_Yrace"
			if _, err := s.Append(ctx, stream, eventstore.NoStream(), []eventstore.EventData{testEvent(t, stream, "a")}); err != nil {
				t.Fatal(err)
			}
			winner, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer winner.Rollback(context.Background())
			if err := tt.winner(ctx, winner, stream, testEvent(t, stream, "x")); err != nil {
				t.Fatalf("winner: %v", err)
			}

			var batch []eventstore.EventData
			for _, k := range tt.keys {
				batch = append(batch, testEvent(t, stream, k))
			}
			done := make(chan error, 1)
			go func() {
				_, err := s.Append(ctx, stream, tt.expected, batch)
				done <- err
			}()
			waitForLockWait(t, pool)
			if err := winner.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-done; !errors.Is(err, tt.wantErr) {
				t.Fatalf("append = %v, want %v", err, tt.wantErr)
			}
			wantLen := 2
			if tt.wantErr == nil {
				wantLen += len(batch)
			}
			evs, err := s.ReadStream(ctx, stream)
			if err != nil || len(evs) != wantLen {
				t.Fatalf("stream has %d events (%v), want %d", len(evs), err, wantLen)
			}
			for i, e := range evs {
				if e.Revision != uint64(i) || i > 0 && evs[i-1].Position.Compare(e.Position) >= 0 {
					t.Fatalf("event %d at revision %d, position %v: want revision order = feed order", i, e.Revision, e.Position)
				}
			}
		})
	}
}

// appendWinner appends ev at the stream's next revision through es_append.
func appendWinner(ctx context.Context, tx pgx.Tx, stream string, ev eventstore.EventData) error {
	out, err := appendIn(ctx, tx, stream, ev)
	if err == nil && out != "appended" {
		err = fmt.Errorf("outcome %q", out)
	}
	return err
}

// insertWinner inserts ev at revision 1 without taking the stream lock.
func insertWinner(ctx context.Context, tx pgx.Tx, stream string, ev eventstore.EventData) error {
	_, err := tx.Exec(ctx, `INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
		VALUES ($1, 1, $2, $3, $4, $5)`, stream, ev.ID, ev.Type, ev.Data, ev.Metadata)
	return err
}

// waitForLockWait returns once some session's append waits on a lock.
func waitForLockWait(t *testing.T, q rowQuerier) {
	t.Helper()
	for {
		var waiting bool
		err := q.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'
			  AND (query LIKE '%es_append%' OR query LIKE '%es_lock_stream%' OR query LIKE '%INTO es_events%'))`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAppendEventOfAnotherStream: an event ID stored in another stream is
// an error (the same provider event about two payments), not a duplicate
// that would silently drop the fact, and not a retryable conflict; it names
// the event and both streams, whether the single-event statement or
// es_append (a batch) found it, and nothing of the batch is written.
func TestAppendEventOfAnotherStream(t *testing.T) {
	ctx := t.Context()
	s := New(newPool(t, 4), Options{})
	ev := testEvent(t, "pi_3Nk-x_Ya", "a")
	if _, err := s.Append(ctx, "payment-stripe-pi_3Nk-x_Ya", eventstore.Any(), []eventstore.EventData{ev}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		events []eventstore.EventData
	}{
		{"single", []eventstore.EventData{ev}},
		{"batch", []eventstore.EventData{testEvent(t, "pi_3Nk-x_Yb", "new"), ev}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := "payment-stripe-pi_3Nk-x_Yb" + tt.name
			res, err := s.Append(ctx, stream, eventstore.Any(), tt.events)
			if err == nil || errors.Is(err, domain.ErrConflict) || domain.KindOf(err) != domain.KindInternal ||
				!errors.Is(err, eventstore.ErrStoredElsewhere) {
				t.Fatalf("append = %+v, %v; want an internal error wrapping ErrStoredElsewhere", res, err)
			}
			se, ok := errors.AsType[*eventstore.StoredElsewhereError](err)
			want := eventstore.StoredElsewhereError{EventID: ev.ID, Stream: stream, StoredIn: "payment-stripe-pi_3Nk-x_Ya"}
			if !ok || *se != want {
				t.Fatalf("error = %v, want %+v", err, want)
			}
			if evs, err := s.ReadStream(ctx, stream); err != nil || len(evs) != 0 {
				t.Fatalf("stream = %v, %v; want empty", evs, err)
			}
		})
	}
}

func TestAppendRejectsInvalidEvents(t *testing.T) {
	ctx := t.Context()
	s := New(newPool(t, 4), Options{})
	valid := testEvent(t, "pi_3Nk-x_Yinvalid", "a")
	tests := []struct {
		name   string
		mangle func(*eventstore.EventData)
	}{
		{"no-id", func(e *eventstore.EventData) { e.ID = uuid.Nil }},
		{"no-type", func(e *eventstore.EventData) { e.Type = "" }},
		{"no-data", func(e *eventstore.EventData) { e.Data = nil }},
		{"data-not-json", func(e *eventstore.EventData) { e.Data = []byte(`{"amount":`) }},
		{"metadata-not-json", func(e *eventstore.EventData) { e.Metadata = []byte(`not json`) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := valid
			tt.mangle(&ev)
			stream := "payment-stripe-pi_3Nk-x_Y" + tt.name
			_, err := s.Append(ctx, stream, eventstore.Any(), []eventstore.EventData{ev})
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("append = %v, want a KindInvalid error", err)
			}
			if evs, err := s.ReadStream(ctx, stream); err != nil || len(evs) != 0 {
				t.Fatalf("stream = %v, %v; want empty", evs, err)
			}
		})
	}
}
