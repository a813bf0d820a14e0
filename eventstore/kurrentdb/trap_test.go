package kurrentdb_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// forget empties the server's committed-events cache, as eviction or a node
// restart does.
type forget struct {
	name string
	do   func(t *testing.T, srv *kurrenttest.Server)
}

var forgets = []forget{
	{"cache-cleared", func(_ *testing.T, srv *kurrenttest.Server) { srv.ClearIdempotencyCache() }},
	{"restart", func(t *testing.T, srv *kurrenttest.Server) {
		if err := srv.Restart(); err != nil {
			t.Fatalf("restart: %v", err)
		}
	}},
}

// TestAnyTrapIsReal shows what the adapter protects against, on the raw
// client: an Any retry is deduplicated only while the server still caches
// the event ID. Once the cache forgot it, the same event is written again.
func TestAnyTrapIsReal(t *testing.T) {
	for _, f := range forgets {
		t.Run(f.name, func(t *testing.T) {
			srv := newServer(t)
			raw := rawClient(t, srv)
			name := stream("pi_3Nk-x_Y2eZvKYlo2Ctrap")
			ev := toEsdb(event(t, "pi_3Nk-x_Y2eZvKYlo2Ctrap", "succeeded"))

			for i := range 2 { // the second is a retry the warm cache absorbs
				if _, err := raw.AppendToStream(t.Context(), name, esdb.AppendToStreamOptions{ExpectedRevision: esdb.Any{}}, ev); err != nil {
					t.Fatalf("raw append %d: %v", i, err)
				}
			}
			if n := len(rawIDs(t, raw, name)); n != 1 {
				t.Fatalf("with the cache warm the stream holds %d copies, want 1", n)
			}
			f.do(t, srv)
			if err := rawRetryAny(t, raw, name, ev); err != nil {
				t.Fatalf("raw append after the cache forgot: %v", err)
			}
			if n := len(rawIDs(t, raw, name)); n != 2 {
				t.Fatalf("after the cache forgot, Any wrote %d copies in all, want the trap's 2", n)
			}
		})
	}
}

// TestRedeliveryAfterCacheForgot is the trap test: a delivery stored before
// the server's cache was emptied (eviction or restart) comes again, with
// every kind of expected revision the API may use, and is a Duplicate with
// exactly one copy in the stream.
func TestRedeliveryAfterCacheForgot(t *testing.T) {
	tests := []struct {
		name     string
		first    eventstore.ExpectedRevision // of the original delivery, the stream holding one older event
		again    eventstore.ExpectedRevision // of the redelivery
		wantRev  uint64
		wantSize int
	}{
		{name: "any", first: eventstore.Any(), again: eventstore.Any(), wantRev: 1, wantSize: 2},
		{name: "original-exact", first: eventstore.Exact(0), again: eventstore.Exact(0), wantRev: 1, wantSize: 2},
		{name: "current-exact", first: eventstore.Exact(0), again: eventstore.Exact(1), wantRev: 1, wantSize: 2},
		{name: "stale-nostream", first: eventstore.Any(), again: eventstore.NoStream(), wantRev: 1, wantSize: 2},
	}
	for _, f := range forgets {
		t.Run(f.name, func(t *testing.T) {
			srv := newServer(t)
			s := openStore(t, srv, testOptions)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					payment := "pi_3Nk-x_Y2eZvKYlo2C" + f.name + "-" + tt.name
					name := stream(payment)
					mustAppend(t, s, name, eventstore.NoStream(), event(t, payment, "created"))
					ev := event(t, payment, "succeeded")
					if res := mustAppend(t, s, name, tt.first, ev); res.Duplicate || res.Revision != 1 {
						t.Fatalf("first delivery = %+v, want appended at 1", res)
					}

					f.do(t, srv)

					res := mustAppend(t, s, name, tt.again, ev)
					if want := (eventstore.AppendResult{Duplicate: true, Revision: tt.wantRev}); res != want {
						t.Fatalf("redelivery = %+v, want %+v", res, want)
					}
					if got := ids(t, s, name); len(got) != tt.wantSize || got[1] != ev.ID {
						t.Fatalf("stream holds %v, want %d events with %v once, at 1", got, tt.wantSize, ev.ID)
					}
				})
			}
		})
	}
}

// rawRetryAny appends with Any as a naive caller does, retrying while the
// client reconnects (after a restart the first call fails with Unavailable).
func rawRetryAny(t *testing.T, c *esdb.Client, name string, ev esdb.EventData) error {
	var err error
	for range 5 {
		_, err = c.AppendToStream(t.Context(), name, esdb.AppendToStreamOptions{ExpectedRevision: esdb.Any{}}, ev)
		// The first call after a restart may also race the closing
		// connection and fail with the client's unclassified EOF.
		esErr, ok := errors.AsType[*esdb.Error](err)
		if !ok || (esErr.Code() != esdb.ErrorUnavailable && !(esErr.Code() == esdb.ErrorCodeUnknown && errors.Is(err, io.EOF))) {
			return err
		}
	}
	return err
}

// rawIDs reads a stream with the raw client.
func rawIDs(t *testing.T, c *esdb.Client, name string) []string {
	t.Helper()
	rs, err := c.ReadStream(t.Context(), name, esdb.ReadStreamOptions{From: esdb.Start{}}, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []string
	for {
		ev, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("raw read %s: %v", name, err)
		}
		out = append(out, ev.OriginalEvent().EventID.String())
	}
}

// TestRetryAfterCacheForgot is the trap on the retry path: an append is
// committed but its reply never comes (a hung call, as on a busy cluster),
// and the server forgets the event ID before the adapter retries. The retry
// carries the expected revision of the first try, so the server checks the
// stored events and answers idempotently; an Any retry would write a copy.
func TestRetryAfterCacheForgot(t *testing.T) {
	for _, f := range forgets {
		t.Run(f.name, func(t *testing.T) {
			srv := newServer(t)
			opts := testOptions
			opts.CallAttempts = 20 // the restart case retries while the node is down
			s := openFast(t, srv, opts)
			raw := rawClient(t, srv)
			payment := "pi_3Nk-x_Y2eZvKYlo2Cretry-" + f.name
			name := stream(payment)
			mustAppend(t, s, name, eventstore.NoStream(), event(t, payment, "created"))
			ev := event(t, payment, "succeeded")

			srv.InjectFault(kurrenttest.RPCAppend, kurrenttest.FaultHang)
			type result struct {
				res eventstore.AppendResult
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := s.Append(t.Context(), name, eventstore.Any(), []eventstore.EventData{ev})
				done <- result{res, err}
			}()
			waitForEvents(t, raw, name, 2) // committed; the reply hangs
			f.do(t, srv)

			r := <-done
			if r.err != nil || r.res.Duplicate || r.res.Revision != 1 {
				t.Fatalf("append = %+v, %v; want appended at 1", r.res, r.err)
			}
			if got := ids(t, s, name); len(got) != 2 || got[1] != ev.ID {
				t.Fatalf("stream holds %v, want %v once, at 1", got, ev.ID)
			}
		})
	}
}

// waitForEvents polls until stream holds n events.
func waitForEvents(t *testing.T, c *esdb.Client, name string, n int) {
	t.Helper()
	for len(rawIDs(t, c, name)) < n {
		if !sleepCtx(t.Context(), 5*time.Millisecond) {
			t.Fatalf("%s never reached %d events", name, n)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
