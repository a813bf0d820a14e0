package kurrenttest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// env is one server and a client of it, both closed when the test ends.
type env struct {
	t   *testing.T
	ctx context.Context
	srv *kurrenttest.Server
	c   *esdb.Client
}

func newEnv(t *testing.T, opts ...kurrenttest.Option) *env {
	t.Helper()
	srv, err := kurrenttest.NewServer(opts...)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	t.Cleanup(srv.Close)
	e := &env{t: t, ctx: t.Context(), srv: srv}
	e.c = e.newClient()
	return e
}

// newClient connects a new official client to the server.
func (e *env) newClient() *esdb.Client {
	e.t.Helper()
	return dial(e.t, e.srv.URL())
}

func dial(t *testing.T, url string) *esdb.Client {
	t.Helper()
	cfg, err := esdb.ParseConnectionString(url)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	cfg.Logger = esdb.NoopLogging()
	c, err := esdb.NewClient(cfg)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// id derives a stable event ID from a short name, so tables can say "A".
func id(name string) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte("kurrenttest:"+name))
}

// events builds JSON events from space-separated names.
func events(names string) []esdb.EventData {
	var out []esdb.EventData
	for _, n := range strings.Fields(names) {
		out = append(out, esdb.EventData{
			EventID:     id(n),
			EventType:   "test.event",
			ContentType: esdb.ContentTypeJson,
			Data:        []byte(fmt.Sprintf(`{"name":%q}`, n)),
		})
	}
	return out
}

func (e *env) append(stream string, exp esdb.ExpectedRevision, names string) (*esdb.WriteResult, error) {
	return e.c.AppendToStream(e.ctx, stream, esdb.AppendToStreamOptions{ExpectedRevision: exp}, events(names)...)
}

func (e *env) mustAppend(stream string, exp esdb.ExpectedRevision, names string) *esdb.WriteResult {
	e.t.Helper()
	r, err := e.append(stream, exp, names)
	if err != nil {
		e.t.Fatalf("append %q to %s: %v", names, stream, err)
	}
	return r
}

// read returns a stream read to the end, or the error of the first Recv
// that fails with something else than io.EOF.
func (e *env) read(stream string, opts esdb.ReadStreamOptions, count uint64) ([]*esdb.ResolvedEvent, error) {
	rs, err := e.c.ReadStream(e.ctx, stream, opts, count)
	if err != nil {
		return nil, err
	}
	return drain(rs)
}

func (e *env) readAll(opts esdb.ReadAllOptions, count uint64) []*esdb.ResolvedEvent {
	e.t.Helper()
	rs, err := e.c.ReadAll(e.ctx, opts, count)
	if err != nil {
		e.t.Fatalf("read $all: %v", err)
	}
	evs, err := drain(rs)
	if err != nil {
		e.t.Fatalf("read $all: %v", err)
	}
	return evs
}

func drain(rs *esdb.ReadStream) ([]*esdb.ResolvedEvent, error) {
	defer rs.Close()
	var out []*esdb.ResolvedEvent
	for {
		ev, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// names returns the stream's events as the names they were built from,
// in stream order.
func (e *env) names(stream string) string {
	e.t.Helper()
	evs, err := e.read(stream, esdb.ReadStreamOptions{}, 1000)
	if code(err) == esdb.ErrorCodeResourceNotFound {
		return ""
	}
	if err != nil {
		e.t.Fatalf("read %s: %v", stream, err)
	}
	return namesOf(evs)
}

func namesOf(evs []*esdb.ResolvedEvent) string {
	var out []string
	for _, ev := range evs {
		out = append(out, nameOf(ev.OriginalEvent()))
	}
	return strings.Join(out, " ")
}

func nameOf(ev *esdb.RecordedEvent) string {
	if ev.EventType != "test.event" {
		return ev.EventType
	}
	var n string
	_, _ = fmt.Sscanf(string(ev.Data), `{"name":%q}`, &n)
	return n
}

// code is the client's classification of err (errors.As, because the
// client wraps some errors with fmt.Errorf).
func code(err error) esdb.ErrorCode {
	var e *esdb.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return -1
}

// grpcCode digs the gRPC status out of an error.
func grpcCode(err error) codes.Code {
	s, _ := status.FromError(err)
	return s.Code()
}

// clock is a settable clock for WithClock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
