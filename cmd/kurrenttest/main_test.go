package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrentdb"
	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// TestRestartKeepsDataAndDedup drives the node as scripts/chaos.sh does:
// events appended through the adapter survive POST /restart and POST /drop,
// and a redelivery after each is still a duplicate, although the restart
// emptied the server's idempotency cache.
func TestRestartKeepsDataAndDedup(t *testing.T) {
	n, err := start(config{Addr: "127.0.0.1:0", Control: "127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.close)
	store, err := kurrentdb.Open(t.Context(), n.srv.URL(), kurrentdb.Options{RetryMin: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })

	const stream = "payment-stripe-pi_3Nk-x_Y"
	first := eventData(1)
	if res, err := store.Append(t.Context(), stream, eventstore.Any(), []eventstore.EventData{first}); err != nil || res.Duplicate {
		t.Fatalf("first append: %+v, %v", res, err)
	}
	steps := []struct {
		fault string
		want  faultReply
	}{
		{"/restart?down=100ms", faultReply{Fault: "restart", DownMillis: 100, Count: 1}},
		{"/drop", faultReply{Fault: "drop", Count: 1}},
		{"/restart?down=0s", faultReply{Fault: "restart", Count: 2}},
	}
	for i, step := range steps {
		got := post[faultReply](t, n.ctlAddr, step.fault)
		if got.Fault != step.want.Fault || got.DownMillis != step.want.DownMillis || got.Count != step.want.Count {
			t.Fatalf("%s: %+v, want %+v", step.fault, got, step.want)
		}
		res, err := store.Append(t.Context(), stream, eventstore.Any(), []eventstore.EventData{first})
		if err != nil || !res.Duplicate {
			t.Fatalf("after %s: redelivery %+v, %v; want a duplicate", step.fault, res, err)
		}
		if _, err := store.Append(t.Context(), stream, eventstore.Any(), []eventstore.EventData{eventData(i + 2)}); err != nil {
			t.Fatalf("after %s: new event: %v", step.fault, err)
		}
	}
	recs, err := store.ReadStream(t.Context(), stream)
	if err != nil || len(recs) != 1+len(steps) || recs[0].ID != first.ID {
		t.Fatalf("stream after the faults: %d events, %v; want %d, the first one first", len(recs), err, 1+len(steps))
	}
	st := get[statusReply](t, n.ctlAddr, "/status?prefix=payment-")
	want := statusReply{URL: n.srv.URL(), Connections: st.Connections, Restarts: 2, Drops: 1,
		Prefix: "payment-", Tally: kurrenttest.Tally{Streams: 1, Events: 1 + len(steps)}}
	if st != want {
		t.Errorf("status %+v, want %+v", st, want)
	}
}

// TestRestartEmptiesIdempotencyCache: /restart is a real node restart for
// the raw client too: an Any retry of an event written before it is no
// longer recognised (the trap the adapter's read-check exists for).
func TestRestartEmptiesIdempotencyCache(t *testing.T) {
	n, err := start(config{Addr: "127.0.0.1:0", Control: "127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.close)
	cfg, err := esdb.ParseConnectionString(n.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = esdb.NoopLogging()
	client, err := esdb.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	ev := esdb.EventData{EventID: uuid.New(), EventType: "e", ContentType: esdb.ContentTypeJson, Data: []byte(`{}`)}
	appendAny := func() {
		t.Helper()
		for range 3 { // the first call after a restart may meet the closed connection
			if _, err = client.AppendToStream(t.Context(), "raw", esdb.AppendToStreamOptions{ExpectedRevision: esdb.Any{}}, ev); err == nil {
				return
			}
		}
		t.Fatalf("append: %v", err)
	}
	appendAny()
	appendAny() // recognised by the cache: still one copy
	post[faultReply](t, n.ctlAddr, "/restart?down=0s")
	appendAny() // the cache is empty now: a second copy
	rs, err := client.ReadStream(t.Context(), "raw", esdb.ReadStreamOptions{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	copies := 0
	for ; ; copies++ {
		if _, err := rs.Recv(); err != nil {
			break
		}
	}
	if copies != 2 {
		t.Fatalf("%d copies, want 2 (one before the restart, one after)", copies)
	}
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"--addr", "0.0.0.0:2113"}, 2},
		{[]string{"--addr", "10.1.2.3:2113"}, 2},
		{[]string{"--control", "[::]:2114"}, 2},
		{[]string{"--addr", "127.0.0.1"}, 2},
		{[]string{"extra"}, 2},
		{[]string{"--help"}, 0},
	}
	for _, tt := range tests {
		var stderr strings.Builder
		if got := run(t.Context(), tt.args, io.Discard, &stderr); got != tt.want {
			t.Errorf("run %q = %d, want %d (stderr %q)", tt.args, got, tt.want, stderr.String())
		}
	}
}

// TestRunServesUntilCancelled: the URL is printed once the node accepts
// connections, and cancelling (SIGTERM in main) ends run with status 0.
func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--addr", "127.0.0.1:0", "--control", ""}, pw, io.Discard)
		_ = pw.Close()
	}()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(url, "esdb://127.0.0.1:") || !strings.HasSuffix(url, "?tls=false\n") {
		t.Fatalf("first line %q, %v; want the connection string", url, err)
	}
	store, err := kurrentdb.Open(t.Context(), strings.TrimSpace(url), kurrentdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	if err := store.Ping(t.Context()); err != nil {
		t.Fatalf("ping: %v", err)
	}
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if got := <-code; got != 0 {
		t.Fatalf("run = %d after cancel, want 0", got)
	}
}

// eventData is a stand-in event with a fixed ID per i.
func eventData(i int) eventstore.EventData {
	return eventstore.EventData{
		ID:       uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(i)}),
		Type:     "payment.created.v1",
		Data:     []byte(`{}`),
		Metadata: []byte(`{}`),
	}
}

func post[T any](t *testing.T, addr, path string) T {
	t.Helper()
	return call[T](t, http.MethodPost, addr, path)
}

func get[T any](t *testing.T, addr, path string) T {
	t.Helper()
	return call[T](t, http.MethodGet, addr, path)
}

func call[T any](t *testing.T, method, addr, path string) T {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var v T
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %s %s", method, path, resp.Status, body)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return v
}
