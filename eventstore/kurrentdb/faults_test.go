package kurrentdb_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrentdb"
	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// fastFail makes the client give up on discovery after one quick attempt
// and time calls out after half a second, so outages are seen fast.
const fastFail = "&maxDiscoverAttempts=1&discoveryInterval=10&defaultDeadline=500"

// openFast opens a store whose client fails fast (see fastFail).
func openFast(t *testing.T, srv *kurrenttest.Server, opts kurrentdb.Options) *kurrentdb.Store {
	t.Helper()
	s, err := kurrentdb.Open(t.Context(), srv.URL()+fastFail, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestAppendRetriesSafely: a call that gets no answer is retried with the
// expected revision it first used. When the first try was committed (its
// reply lost, or never sent as on a busy cluster), the retry is the server's
// idempotent success, never a second copy.
func TestAppendRetriesSafely(t *testing.T) {
	tests := []struct {
		name   string
		rpc    kurrenttest.RPC
		faults []kurrenttest.Fault
	}{
		{name: "append-lost-reply", rpc: kurrenttest.RPCAppend, faults: []kurrenttest.Fault{kurrenttest.FaultLoseReply}},
		{name: "append-hang", rpc: kurrenttest.RPCAppend, faults: []kurrenttest.Fault{kurrenttest.FaultHang}},
		{name: "append-lost-twice", rpc: kurrenttest.RPCAppend, faults: []kurrenttest.Fault{kurrenttest.FaultLoseReply, kurrenttest.FaultHang}},
		{name: "append-unavailable", rpc: kurrenttest.RPCAppend, faults: []kurrenttest.Fault{kurrenttest.FaultUnavailable}},
		{name: "append-dropped", rpc: kurrenttest.RPCAppend, faults: []kurrenttest.Fault{kurrenttest.FaultDropConnection}},
		{name: "read-unavailable", rpc: kurrenttest.RPCRead, faults: []kurrenttest.Fault{kurrenttest.FaultUnavailable}},
		{name: "read-lost-reply", rpc: kurrenttest.RPCRead, faults: []kurrenttest.Fault{kurrenttest.FaultLoseReply, kurrenttest.FaultDropConnection}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			s := openFast(t, srv, testOptions)
			payment := "pi_3Nk-x_Y2eZvKYlo2C" + tt.name
			name := stream(payment)
			mustAppend(t, s, name, eventstore.NoStream(), event(t, payment, "created"))
			ev := event(t, payment, "succeeded")
			for _, f := range tt.faults {
				srv.InjectFault(tt.rpc, f)
			}
			res := mustAppend(t, s, name, eventstore.Any(), ev)
			if res.Duplicate || res.Revision != 1 {
				t.Fatalf("append = %+v, want appended at 1", res)
			}
			stored, err := s.ReadStream(t.Context(), name)
			if err != nil {
				t.Fatal(err)
			}
			if len(stored) != 2 || stored[1].ID != ev.ID {
				t.Fatalf("stream holds %d events, want the event once at 1", len(stored))
			}
			if stored[1].Position != res.Position {
				t.Fatalf("append reported position %v, the event is at %v", res.Position, stored[1].Position)
			}
		})
	}
}

// TestAppendGivesUp: a server that never answers makes Append fail with
// domain.ErrUnavailable after CallAttempts tries, with nothing written, and
// the caller's own deadline ends the wait with a context error.
func TestAppendGivesUp(t *testing.T) {
	srv := newServer(t)
	s := openFast(t, srv, testOptions)
	payment := "pi_3Nk-x_Y2eZvKYlo2Cgiveup"
	for range kurrentdb.DefaultCallAttempts {
		srv.InjectFault(kurrenttest.RPCAppend, kurrenttest.FaultUnavailable)
	}
	_, err := s.Append(t.Context(), stream(payment), eventstore.Any(), []eventstore.EventData{event(t, payment, "created")})
	if !errors.Is(err, domain.ErrUnavailable) || domain.KindOf(err) != domain.KindUnavailable {
		t.Fatalf("append = %v, want an error wrapping domain.ErrUnavailable", err)
	}
	if got := ids(t, s, stream(payment)); len(got) != 0 {
		t.Fatalf("stream holds %v, want nothing", got)
	}

	srv.InjectFault(kurrenttest.RPCAppend, kurrenttest.FaultHang)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = s.Append(ctx, stream(payment), eventstore.Any(), []eventstore.EventData{event(t, payment, "created")})
	if !errors.Is(err, context.Canceled) || errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("append with a cancelled ctx = %v, want context.Canceled", err)
	}
}

// TestOutage: while the server is down (connections refused, so the client
// also gives up on discovery and closes itself) or up but not ready, each
// operation fails with an error wrapping domain.ErrUnavailable; when the
// server is back, the same operation on the same Store works again. Each
// operation is tried on its own, because they reach the client's
// reconnection logic by different paths.
func TestOutage(t *testing.T) {
	outages := []struct {
		name       string
		down, back func(t *testing.T, srv *kurrenttest.Server)
	}{
		{
			name: "stopped",
			down: func(_ *testing.T, srv *kurrenttest.Server) { srv.Stop() },
			back: func(t *testing.T, srv *kurrenttest.Server) {
				if err := srv.Start(); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "not-ready",
			down: func(_ *testing.T, srv *kurrenttest.Server) { srv.SetUnavailable(true) },
			back: func(_ *testing.T, srv *kurrenttest.Server) { srv.SetUnavailable(false) },
		},
	}
	ops := []struct {
		name string
		call func(t *testing.T, s eventstore.Store, payment string) error
	}{
		{"ping", func(t *testing.T, s eventstore.Store, _ string) error { return s.Ping(t.Context()) }},
		{"append", func(t *testing.T, s eventstore.Store, payment string) error {
			_, err := s.Append(t.Context(), stream(payment), eventstore.Any(), []eventstore.EventData{event(t, payment, "succeeded")})
			return err
		}},
		{"read", func(t *testing.T, s eventstore.Store, payment string) error {
			_, err := s.ReadStream(t.Context(), stream(payment))
			return err
		}},
		{"subscribe", func(t *testing.T, s eventstore.Store, _ string) error {
			sub, err := s.SubscribeAll(t.Context(), eventstore.Start, eventstore.Filter{})
			if err == nil {
				_ = sub.Close()
			}
			return err
		}},
	}
	for _, o := range outages {
		for _, op := range ops {
			t.Run(o.name+"/"+op.name, func(t *testing.T) {
				srv := newServer(t)
				s := openFast(t, srv, testOptions)
				payment := "pi_3Nk-x_Y2eZvKYlo2C" + o.name + "-" + op.name
				mustAppend(t, s, stream(payment), eventstore.NoStream(), event(t, payment, "created"))

				o.down(t, srv)
				if err := op.call(t, s, payment); !errors.Is(err, domain.ErrUnavailable) {
					t.Fatalf("%s during the outage = %v, want an error wrapping domain.ErrUnavailable", op.name, err)
				}
				o.back(t, srv)
				if err := op.call(t, s, payment); err != nil {
					t.Fatalf("%s after the outage: %v", op.name, err)
				}
				if got := ids(t, s, stream(payment)); len(got) > 2 {
					t.Fatalf("stream holds %d events, want at most 2", len(got))
				}
			})
		}
	}
}

// TestReadErrorIsNotEndOfStream: a read whose connection drops after the
// server started answering fails; it never returns the events so far (or
// none) as if the stream had ended there.
func TestReadErrorIsNotEndOfStream(t *testing.T) {
	tests := []struct {
		name    string
		drops   int
		wantErr bool
	}{
		{name: "retried", drops: 1},
		{name: "every-attempt", drops: kurrentdb.DefaultCallAttempts, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			s := openFast(t, srv, testOptions)
			payment := "pi_3Nk-x_Y2eZvKYlo2C" + tt.name
			name := stream(payment)
			mustAppend(t, s, name, eventstore.NoStream(), event(t, payment, "created"), event(t, payment, "succeeded"))
			for range tt.drops {
				srv.InjectFault(kurrenttest.RPCRead, kurrenttest.FaultLoseReply)
			}
			evs, err := s.ReadStream(t.Context(), name)
			switch {
			case tt.wantErr && (!errors.Is(err, domain.ErrUnavailable) || evs != nil):
				t.Fatalf("read = %d events, %v; want no events and an error wrapping domain.ErrUnavailable", len(evs), err)
			case !tt.wantErr && (err != nil || len(evs) != 2):
				t.Fatalf("read = %d events, %v; want both events", len(evs), err)
			}
		})
	}
}

// TestConcurrentCallsDuringOutage: many calls fail together while the node
// is down. The client gives up on discovery with some of them still queued
// inside it, where they would wait for ever; they must all return an
// ErrUnavailable error, the store must recover when the node is back, and
// closing it must not crash the process.
func TestConcurrentCallsDuringOutage(t *testing.T) {
	const callers = 24
	srv := newServer(t)
	s := openFast(t, srv, testOptions)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { errs[i] = s.Ping(t.Context()) })
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, domain.ErrUnavailable) {
			t.Errorf("ping %d during the outage = %v, want an error wrapping domain.ErrUnavailable", i, err)
		}
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("ping after the outage: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// TestCloseWithACallInFlight: a call whose ctx ends returns at once, but
// its goroutine goes on into the client, which sends on a channel that
// Client.Close closes, unlocked (a data race, or a panic on the closed
// channel). Close must leave a busy client to the last call out.
func TestCloseWithACallInFlight(t *testing.T) {
	srv := newServer(t)
	for i := range 30 {
		s, err := kurrentdb.Open(t.Context(), srv.URL()+fastFail, testOptions)
		if err != nil {
			t.Fatal(err)
		}
		payment := fmt.Sprintf("pi_3Nk-closing_%d", i)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := s.Append(ctx, stream(payment), eventstore.Any(),
			[]eventstore.EventData{event(t, payment, "created")}); !errors.Is(err, context.Canceled) {
			t.Fatalf("append with a cancelled ctx = %v, want context.Canceled", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		if _, err := s.ReadStream(t.Context(), stream(payment)); err == nil {
			t.Fatal("read after close: no error")
		}
	}
}
