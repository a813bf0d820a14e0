package kurrenttest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// describe renders a subscription message for comparison: an event's name,
// "caught-up", "cp commit/prepare", or "dropped <gRPC code>".
func describe(m *esdb.SubscriptionEvent) string {
	switch {
	case m.EventAppeared != nil:
		return nameOf(m.EventAppeared.OriginalEvent())
	case m.CaughtUp != nil:
		return "caught-up"
	case m.CheckPointReached != nil:
		return fmt.Sprintf("cp %d/%d", m.CheckPointReached.Commit, m.CheckPointReached.Prepare)
	case m.SubscriptionDropped != nil:
		return "dropped " + grpcCode(m.SubscriptionDropped.Error).String()
	}
	return "fell-behind"
}

// expect reads len(want) messages and compares them with want.
func expect(t *testing.T, sub *esdb.Subscription, want ...string) {
	t.Helper()
	var got []string
	for range want {
		got = append(got, describe(sub.Recv()))
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("subscription sent\n  %s\nwant\n  %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
}

func (e *env) subscribeStream(stream string, from esdb.StreamPosition) *esdb.Subscription {
	e.t.Helper()
	sub, err := e.c.SubscribeToStream(e.ctx, stream, esdb.SubscribeToStreamOptions{From: from})
	if err != nil {
		e.t.Fatalf("subscribe to %s: %v", stream, err)
	}
	e.t.Cleanup(func() { _ = sub.Close() })
	return sub
}

func (e *env) subscribeAll(opts esdb.SubscribeToAllOptions) *esdb.Subscription {
	e.t.Helper()
	sub, err := e.c.SubscribeToAll(e.ctx, opts)
	if err != nil {
		e.t.Fatalf("subscribe to $all: %v", err)
	}
	e.t.Cleanup(func() { _ = sub.Close() })
	return sub
}

func TestSubscribeStream(t *testing.T) {
	tests := []struct {
		name    string
		from    esdb.StreamPosition
		catchUp []string
	}{
		{"from start", esdb.Start{}, []string{"e0", "e1", "e2"}},
		{"from a revision, exclusive", esdb.Revision(0), []string{"e1", "e2"}},
		{"from end", esdb.End{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.mustAppend("S", esdb.NoStream{}, "e0 e1 e2")
			e.mustAppend("other", esdb.NoStream{}, "o0")
			sub := e.subscribeStream("S", tt.from)
			expect(t, sub, append(tt.catchUp, "caught-up")...)
			e.mustAppend("other", esdb.Any{}, "o1")
			e.mustAppend("S", esdb.Any{}, "e3")
			expect(t, sub, "e3")
		})
	}
	t.Run("missing stream waits for its first event", func(t *testing.T) {
		e := newEnv(t)
		sub := e.subscribeStream("S", esdb.Start{})
		expect(t, sub, "caught-up")
		e.mustAppend("S", esdb.NoStream{}, "e0")
		expect(t, sub, "e0")
	})
	t.Run("tombstoned stream is refused", func(t *testing.T) {
		e := newEnv(t)
		e.mustAppend("S", esdb.NoStream{}, "e0")
		if _, err := e.c.TombstoneStream(e.ctx, "S", esdb.TombstoneStreamOptions{ExpectedRevision: esdb.Any{}}); err != nil {
			t.Fatalf("tombstone: %v", err)
		}
		_, err := e.c.SubscribeToStream(e.ctx, "S", esdb.SubscribeToStreamOptions{From: esdb.Start{}})
		if code(err) != esdb.ErrorCodeStreamDeleted {
			t.Fatalf("subscribe: %v, want StreamDeleted", err)
		}
	})
	t.Run("live tombstone is delivered, then the subscription ends", func(t *testing.T) {
		e := newEnv(t)
		e.mustAppend("S", esdb.NoStream{}, "e0")
		sub := e.subscribeStream("S", esdb.End{})
		expect(t, sub, "caught-up")
		if _, err := e.c.TombstoneStream(e.ctx, "S", esdb.TombstoneStreamOptions{ExpectedRevision: esdb.Any{}}); err != nil {
			t.Fatalf("tombstone: %v", err)
		}
		expect(t, sub, "$streamDeleted", "dropped "+codes.FailedPrecondition.String())
	})
}

func TestSubscribeAll(t *testing.T) {
	setup := func(t *testing.T) (*env, map[string]esdb.Position) {
		e := newEnv(t)
		e.mustAppend("a", esdb.NoStream{}, "a0")
		e.mustAppend("b", esdb.NoStream{}, "b0")
		pos := make(map[string]esdb.Position)
		for _, ev := range e.readAll(esdb.ReadAllOptions{}, 100) {
			pos[nameOf(ev.OriginalEvent())] = ev.OriginalEvent().Position
		}
		return e, pos
	}
	t.Run("from start", func(t *testing.T) {
		e, _ := setup(t)
		sub := e.subscribeAll(esdb.SubscribeToAllOptions{From: esdb.Start{}})
		expect(t, sub, "$epoch-information", "a0", "b0", "caught-up")
		e.mustAppend("a", esdb.Any{}, "a1")
		expect(t, sub, "a1")
	})
	t.Run("from a position, exclusive", func(t *testing.T) {
		e, pos := setup(t)
		sub := e.subscribeAll(esdb.SubscribeToAllOptions{From: pos["a0"]})
		expect(t, sub, "b0", "caught-up")
	})
	for _, from := range []esdb.AllPosition{esdb.End{}, endPosition} {
		t.Run(fmt.Sprintf("from end %v", from), func(t *testing.T) {
			e, _ := setup(t)
			sub := e.subscribeAll(esdb.SubscribeToAllOptions{From: from})
			expect(t, sub, "caught-up")
			e.mustAppend("b", esdb.Any{}, "b1")
			expect(t, sub, "b1")
		})
	}
	filters := []struct {
		name   string
		filter *esdb.SubscriptionFilter
		want   []string
	}{
		{"stream prefix", &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Prefixes: []string{"b", "c"}}, []string{"b0", "b1"}},
		// Unanchored: "a|b" also matches the metastream "$$a".
		{"stream regex, unanchored", &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Regex: "a|b"}, []string{"a0", "b0", "$metadata", "a1", "b1"}},
		{"event type", esdb.ExcludeSystemEventsFilter(), []string{"a0", "b0", "a1", "b1"}},
		// The default $all rule hides the epoch stream even from a filter
		// that matches it.
		{"system streams", &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Prefixes: []string{"$"}}, []string{"$metadata"}},
	}
	for _, tt := range filters {
		t.Run("filter/"+tt.name, func(t *testing.T) {
			e, _ := setup(t)
			var m esdb.StreamMetadata
			m.SetMaxCount(10)
			if _, err := e.c.SetStreamMetadata(e.ctx, "a", esdb.AppendToStreamOptions{}, m); err != nil {
				t.Fatalf("set metadata: %v", err)
			}
			e.mustAppend("a", esdb.Any{}, "a1")
			e.mustAppend("b", esdb.Any{}, "b1")
			sub := e.subscribeAll(esdb.SubscribeToAllOptions{From: esdb.Start{}, Filter: tt.filter})
			var got []string
			for {
				m := describe(sub.Recv())
				if m == "caught-up" {
					break
				}
				if !strings.HasPrefix(m, "cp ") {
					got = append(got, m)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCheckpoints follows the server's cadence exactly, with a window of 4
// and a multiplier of 1 (interval 4): during catch-up a checkpoint every 4
// records considered, at the later of the last event sent and the page
// start, and one on reaching the end; live, one at every 4th record
// committed after the subscription started, matched or not.
func TestCheckpoints(t *testing.T) {
	filter := &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Prefixes: []string{"m-"}}
	opts := func(from esdb.AllPosition) esdb.SubscribeToAllOptions {
		return esdb.SubscribeToAllOptions{From: from, Filter: filter, MaxSearchWindow: 4, CheckpointInterval: 1}
	}
	at := func(e *env) map[string]esdb.Position {
		pos := make(map[string]esdb.Position)
		for _, ev := range e.readAll(esdb.ReadAllOptions{}, 1000) {
			pos[nameOf(ev.OriginalEvent())] = ev.OriginalEvent().Position
		}
		return pos
	}
	cp := func(p esdb.Position) string { return fmt.Sprintf("cp %d/%d", p.Commit, p.Prepare) }
	// pageStart is the position a catch-up page starts from: the commit
	// part only, as the server's read reports it.
	pageStart := func(p esdb.Position) string { return fmt.Sprintf("cp %d/0", p.Commit) }

	t.Run("catch-up with nothing matching, then live", func(t *testing.T) {
		e := newEnv(t, kurrenttest.WithoutSystemEvents())
		e.mustAppend("x-1", esdb.NoStream{}, "x0 x1 x2 x3 x4 x5 x6 x7 x8 x9")
		pos := at(e)
		sub := e.subscribeAll(opts(esdb.Start{}))
		expect(t, sub, "cp 0/0", pageStart(pos["x4"]), pageStart(pos["x8"]), "caught-up")
		e.mustAppend("x-1", esdb.Any{}, "x10")
		e.mustAppend("m-1", esdb.Any{}, "m0")
		e.mustAppend("x-1", esdb.Any{}, "x11 x12")
		expect(t, sub, "m0", cp(at(e)["x12"]))
	})
	t.Run("catch-up with matches", func(t *testing.T) {
		e := newEnv(t, kurrenttest.WithoutSystemEvents())
		for _, n := range strings.Fields("x0 m1 x2 x3 x4 m5") {
			e.mustAppend(n[:1]+"-1", esdb.Any{}, n)
		}
		pos := at(e)
		sub := e.subscribeAll(opts(esdb.Start{}))
		expect(t, sub, "m1", cp(pos["m1"]), "m5", cp(pos["m5"]), "caught-up")
	})
	t.Run("live only", func(t *testing.T) {
		e := newEnv(t)
		sub := e.subscribeAll(opts(esdb.End{}))
		expect(t, sub, "caught-up")
		e.mustAppend("x-1", esdb.Any{}, "x0 x1 x2 x3 x4 x5 x6 x7 x8")
		pos := at(e)
		expect(t, sub, cp(pos["x3"]), cp(pos["x7"]))
		e.mustAppend("m-1", esdb.Any{}, "m0")
		expect(t, sub, "m0")
	})
}
