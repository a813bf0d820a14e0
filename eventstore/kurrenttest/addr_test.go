package kurrenttest_test

import (
	"strings"
	"testing"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

func TestNewServerAtRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:2113", "example.com:2113", "127.0.0.1"} {
		if srv, err := kurrenttest.NewServerAt(addr); err == nil {
			srv.Close()
			t.Errorf("NewServerAt(%q) started, want an error", addr)
		}
	}
}

// TestNewServerAt: the node serves at the address given, resolved, and
// comes back there after a restart; OpenConnections counts the client's.
func TestNewServerAt(t *testing.T) {
	srv, err := kurrenttest.NewServerAt("localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL(), "esdb://127.0.0.1:") && !strings.HasPrefix(srv.URL(), "esdb://[::1]:") {
		t.Fatalf("URL %s, want a resolved loopback address", srv.URL())
	}
	c := dial(t, srv.URL())
	ctx := t.Context()
	ev := esdb.EventData{EventType: "e", ContentType: esdb.ContentTypeJson, Data: []byte(`{}`)}
	if _, err := c.AppendToStream(ctx, "S", esdb.AppendToStreamOptions{ExpectedRevision: esdb.NoStream{}}, ev); err != nil {
		t.Fatal(err)
	}
	if got := srv.OpenConnections(); got != 1 {
		t.Errorf("OpenConnections = %d, want 1", got)
	}
	url := srv.URL()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if srv.URL() != url {
		t.Fatalf("URL %s after restart, want %s", srv.URL(), url)
	}
	if _, err := c.AppendToStream(ctx, "S", esdb.AppendToStreamOptions{ExpectedRevision: esdb.StreamRevision{Value: 0}}, ev); err != nil {
		// The first call after a restart may meet the closed connection.
		if _, err := c.AppendToStream(ctx, "S", esdb.AppendToStreamOptions{ExpectedRevision: esdb.StreamRevision{Value: 0}}, ev); err != nil {
			t.Fatalf("append after restart: %v", err)
		}
	}
}

// TestTally: a server restart empties the idempotency cache, so an Any
// retry is stored twice; Tally sees the duplicate, within the prefix only.
func TestTally(t *testing.T) {
	srv, err := kurrenttest.NewServerAt("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c := dial(t, srv.URL())
	appendAny := func(stream, name string) {
		t.Helper()
		ev := esdb.EventData{EventID: id(name), EventType: "e", ContentType: esdb.ContentTypeJson, Data: []byte(`{}`)}
		var err error
		for range 3 { // the first call after a restart may meet the closed connection
			if _, err = c.AppendToStream(t.Context(), stream, esdb.AppendToStreamOptions{ExpectedRevision: esdb.Any{}}, ev); err == nil {
				return
			}
		}
		t.Fatalf("append %s to %s: %v", name, stream, err)
	}
	appendAny("payment-a", "A")
	appendAny("payment-a", "A") // recognised by the cache
	appendAny("payment-b", "B")
	appendAny("other", "C")
	if got, want := srv.Tally("payment-"), (kurrenttest.Tally{Streams: 2, Events: 2}); got != want {
		t.Errorf("Tally before the restart = %+v, want %+v", got, want)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	appendAny("payment-a", "A") // the cache is empty: a second copy
	appendAny("other", "C")
	if got, want := srv.Tally("payment-"), (kurrenttest.Tally{Streams: 2, Events: 3, DuplicateIDs: 1}); got != want {
		t.Errorf("Tally(payment-) = %+v, want %+v", got, want)
	}
	if got := srv.Tally(""); got.DuplicateIDs != 2 || got.Streams < 3 {
		t.Errorf("Tally() = %+v, want 2 duplicates over at least 3 streams", got)
	}
}
