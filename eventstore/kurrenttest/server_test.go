package kurrenttest_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// TestStopStart: the node goes away and comes back at the same URL with its
// data, and the same client carries on, provided it made no more than one
// call during the outage (see TestLongOutageClosesClient).
func TestStopStart(t *testing.T) {
	e := newEnv(t)
	url := e.srv.URL()
	e.mustAppend("S", esdb.NoStream{}, "e0")
	sub := e.subscribeStream("S", esdb.End{})
	expect(t, sub, "caught-up")

	e.srv.Stop()
	expect(t, sub, "dropped "+codes.Unavailable.String())
	if _, err := e.append("S", esdb.Any{}, "e1"); code(err) != esdb.ErrorUnavailable {
		t.Fatalf("append while stopped: %v, want Unavailable", err)
	}
	if err := e.srv.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	if e.srv.URL() != url {
		t.Fatalf("URL %s after restart, want %s", e.srv.URL(), url)
	}
	e.mustAppend("S", esdb.Any{}, "e1")
	// The restart emptied the committed-events cache: an Any retry of an
	// event written before it is a duplicate. e1, written after, is not.
	e.mustAppend("S", esdb.Any{}, "e0")
	e.mustAppend("S", esdb.Any{}, "e1")
	if got := e.names("S"); got != "e0 e1 e0" {
		t.Errorf("stream %q, want %q", got, "e0 e1 e0")
	}
	evs, err := e.read("$epoch-information", esdb.ReadStreamOptions{}, 10)
	if err != nil || len(evs) != 2 {
		t.Errorf("epochs: %d, %v; want one per start", len(evs), err)
	}
}

// TestLongOutageClosesClient documents a client trap the fake reproduces:
// a call after a failed one runs discovery, which gives up after 10
// attempts 100 ms apart and closes the client for good.
func TestLongOutageClosesClient(t *testing.T) {
	e := newEnv(t)
	e.mustAppend("S", esdb.NoStream{}, "e0")
	e.srv.Stop()
	// The first call may race the closing connection and fail with the
	// client's unclassified EOF instead; the trap starts at the first
	// Unavailable.
	for attempt := 1; ; attempt++ {
		_, err := e.append("S", esdb.Any{}, "e1")
		if code(err) == esdb.ErrorUnavailable {
			break
		}
		if err == nil || attempt == 3 {
			t.Fatalf("append %d after the stop: %v, want Unavailable", attempt, err)
		}
	}
	if _, err := e.append("S", esdb.Any{}, "e1"); code(err) != esdb.ErrorUnavailable {
		t.Fatalf("second append: %v, want Unavailable (discovery failed)", err)
	}
	if err := e.srv.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	if _, err := e.append("S", esdb.Any{}, "e1"); code(err) != esdb.ErrorCodeConnectionClosed {
		t.Fatalf("append after the outage: %v, want ConnectionClosed", err)
	}
	e.c = e.newClient() // only a new client recovers
	e.mustAppend("S", esdb.Any{}, "e1")
}

func TestGossip(t *testing.T) {
	srv, err := kurrenttest.NewServer()
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	t.Cleanup(srv.Close)
	// Two seeds put the client in cluster mode: it reads gossip first.
	c := dial(t, "esdb://"+srv.Addr()+","+srv.Addr()+"?tls=false")
	if _, err := c.AppendToStream(t.Context(), "S", esdb.AppendToStreamOptions{}, events("e0")...); err != nil {
		t.Fatalf("append through gossip discovery: %v", err)
	}
}

// TestCloseStopsEverything closes the server under a live subscription and
// a hanging append, then checks that no server goroutine is left.
func TestCloseStopsEverything(t *testing.T) {
	e := newEnv(t, kurrenttest.WithFault(kurrenttest.RPCAppend, kurrenttest.FaultHang))
	sub := e.subscribeAll(esdb.SubscribeToAllOptions{From: esdb.Start{}})
	expect(t, sub, "$epoch-information", "caught-up")
	done := make(chan error)
	go func() {
		_, err := e.append("S", esdb.Any{}, "e0")
		done <- err
	}()
	expect(t, sub, "e0") // committed, reply withheld

	e.srv.Close()
	if err := <-done; code(err) != esdb.ErrorUnavailable {
		t.Errorf("hanging append: %v, want Unavailable", err)
	}
	expect(t, sub, "dropped "+codes.Unavailable.String())
	e.srv.Close() // idempotent
	if err := e.srv.Start(); err == nil {
		t.Errorf("start after close succeeded")
	}
	if left := serverGoroutines(); left != "" {
		t.Fatalf("goroutines left after Close:\n%s", left)
	}
}

// serverGoroutines waits, as goleak does, for the server's goroutines to
// finish exiting and returns the stacks of any that remain.
func serverGoroutines() string {
	markers := []string{"eventstore/kurrenttest.(*", "grpc.(*Server)", "transport.(*http2Server)", "transport.NewServerTransport"}
	var left string
	for range 200 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		left = ""
		for _, g := range strings.Split(string(buf), "\n\n") {
			for _, m := range markers {
				if strings.Contains(g, m) {
					left += g + "\n\n"
					break
				}
			}
		}
		if left == "" {
			return ""
		}
		time.Sleep(10 * time.Millisecond)
	}
	return left
}
