package kurrenttest_test

import (
	"strings"
	"testing"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// step changes the server between the original append and the retry.
type step func(e *env)

func moveOn(e *env)     { e.mustAppend("S", esdb.Any{}, "C") }
func clearCache(e *env) { e.srv.ClearIdempotencyCache() }
func softDelete(e *env) {
	if _, err := e.c.DeleteStream(e.ctx, "S", esdb.DeleteStreamOptions{ExpectedRevision: esdb.Any{}}); err != nil {
		e.t.Fatalf("delete: %v", err)
	}
}

// restart restarts the node and reconnects, since the old client
// connection dies with it.
func restart(e *env) {
	if err := e.srv.Restart(); err != nil {
		e.t.Fatalf("restart: %v", err)
	}
	e.c = e.newClient()
}

// evictAB pushes A and B out of a two-entry cache with writes elsewhere.
func evictAB(e *env) { e.mustAppend("other", esdb.Any{}, "O1 O2") }

// TestAppendDecisionTable has one case per row of the spec's §1.4: stream S
// at version V0 = 1 (events P0 P1), then an original append of [A B] at
// V0+1 and V0+2 with expected revision V0, then a retry. A case with
// first = true starts S with [A B] written with NoStream instead.
func TestAppendDecisionTable(t *testing.T) {
	const v0 = 1
	tests := []struct {
		name   string
		opts   []kurrenttest.Option
		first  bool // [A B] is the stream's first batch
		before []step
		exp    esdb.ExpectedRevision
		retry  string
		// wantRev is the NextExpectedVersion of a successful retry; wantPos
		// names the event whose position it reports (an original one for an
		// idempotent retry, "" for a retry that writes).
		wantWEV bool
		wantDel bool
		wantRev uint64
		wantPos string
		want    string // the stream afterwards
	}{
		// (a) exact revision used originally
		{name: "a/exact retry", exp: esdb.Revision(v0), retry: "A B",
			wantRev: v0 + 2, wantPos: "B", want: "P0 P1 A B"},
		{name: "a/exact retry after the stream moved on", before: []step{moveOn}, exp: esdb.Revision(v0), retry: "A B",
			wantRev: v0 + 2, wantPos: "B", want: "P0 P1 A B C"},
		{name: "a/exact retry after cache eviction", opts: []kurrenttest.Option{kurrenttest.WithCacheEntries(2)},
			before: []step{evictAB}, exp: esdb.Revision(v0), retry: "A B",
			wantRev: v0 + 2, wantPos: "B", want: "P0 P1 A B"},
		{name: "a/exact retry after restart", before: []step{restart}, exp: esdb.Revision(v0), retry: "A B",
			wantRev: v0 + 2, wantPos: "B", want: "P0 P1 A B"},
		{name: "a/exact retry of a prefix", exp: esdb.Revision(v0), retry: "A",
			wantRev: v0 + 1, wantPos: "A", want: "P0 P1 A B"},
		{name: "a/exact retry with an extra id", exp: esdb.Revision(v0), retry: "A B C",
			wantWEV: true, want: "P0 P1 A B"},
		{name: "a/exact retry starting at the second id", exp: esdb.Revision(v0), retry: "B",
			wantWEV: true, want: "P0 P1 A B"},
		{name: "a/exact retry with a new first id", exp: esdb.Revision(v0), retry: "X A",
			wantWEV: true, want: "P0 P1 A B"},
		{name: "a/retry at the current revision writes duplicates", exp: esdb.Revision(v0 + 2), retry: "A B",
			wantRev: v0 + 4, want: "P0 P1 A B A B"},
		{name: "a/exact revision past the end", exp: esdb.Revision(v0 + 5), retry: "A B",
			wantWEV: true, want: "P0 P1 A B"},

		// (b) Any
		{name: "b/any retry, all cached", exp: esdb.Any{}, retry: "A B",
			wantRev: v0 + 2, wantPos: "B", want: "P0 P1 A B"},
		{name: "b/any retry after the stream moved on", before: []step{moveOn}, exp: esdb.Any{}, retry: "A B",
			wantRev: v0 + 2, wantPos: "B", want: "P0 P1 A B C"},
		{name: "b/any retry, first id new, writes everything", exp: esdb.Any{}, retry: "X A",
			wantRev: v0 + 4, want: "P0 P1 A B X A"},
		{name: "b/any retry, first cached, later new", exp: esdb.Any{}, retry: "A X",
			wantWEV: true, want: "P0 P1 A B"},
		{name: "b/any retry after cache eviction writes duplicates", opts: []kurrenttest.Option{kurrenttest.WithCacheEntries(2)},
			before: []step{evictAB}, exp: esdb.Any{}, retry: "A B",
			wantRev: v0 + 4, want: "P0 P1 A B A B"},
		{name: "b/any retry after ClearIdempotencyCache writes duplicates", before: []step{clearCache}, exp: esdb.Any{}, retry: "A B",
			wantRev: v0 + 4, want: "P0 P1 A B A B"},
		{name: "b/any retry after restart writes duplicates", before: []step{restart}, exp: esdb.Any{}, retry: "A B",
			wantRev: v0 + 4, want: "P0 P1 A B A B"},

		// (c) NoStream and StreamExists
		{name: "c/no-stream retry of the first batch", first: true, exp: esdb.NoStream{}, retry: "A B",
			wantRev: 1, wantPos: "B", want: "A B"},
		{name: "c/no-stream retry of the first batch on a longer stream", first: true, before: []step{moveOn},
			exp: esdb.NoStream{}, retry: "A B", wantRev: 1, wantPos: "B", want: "A B C"},
		{name: "c/no-stream retry of the first batch after restart", first: true, before: []step{restart},
			exp: esdb.NoStream{}, retry: "A B", wantRev: 1, wantPos: "B", want: "A B"},
		{name: "c/no-stream with ids not at revision 0", exp: esdb.NoStream{}, retry: "A B",
			wantWEV: true, want: "P0 P1 A B"},
		{name: "c/no-stream recreates a soft-deleted stream", before: []step{softDelete}, exp: esdb.NoStream{}, retry: "X",
			wantRev: v0 + 3, want: "X"},
		{name: "c/stream-exists retry, all cached", exp: esdb.StreamExists{}, retry: "A B",
			wantRev: v0 + 2, wantPos: "B", want: "P0 P1 A B"},
		{name: "c/stream-exists retry after ClearIdempotencyCache writes duplicates", before: []step{clearCache},
			exp: esdb.StreamExists{}, retry: "A B", wantRev: v0 + 4, want: "P0 P1 A B A B"},
		{name: "c/stream-exists on a soft-deleted stream", before: []step{softDelete}, exp: esdb.StreamExists{}, retry: "A B",
			wantDel: true, want: ""},

		// (d) only some ids match: the weak and strong partial cases are
		// "first id new"/"first cached, later new" above and below.
		{name: "d/stream-exists, first cached, later new", exp: esdb.StreamExists{}, retry: "A X",
			wantWEV: true, want: "P0 P1 A B"},
		{name: "d/exact, matching prefix then a mismatch", exp: esdb.Revision(v0), retry: "A X",
			wantWEV: true, want: "P0 P1 A B"},

		// (e) after eviction: Any duplicates (b), exact stays idempotent (a).
		{name: "e/no-stream retry after eviction", first: true, opts: []kurrenttest.Option{kurrenttest.WithCacheEntries(2)},
			before: []step{evictAB}, exp: esdb.NoStream{}, retry: "A B", wantRev: 1, wantPos: "B", want: "A B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.opts...)
			if tt.first {
				e.mustAppend("S", esdb.NoStream{}, "A B")
			} else {
				e.mustAppend("S", esdb.NoStream{}, "P0 P1")
				e.mustAppend("S", esdb.Revision(v0), "A B")
			}
			pos := positions(e, "S")
			for _, s := range tt.before {
				s(e)
			}

			got, err := e.append("S", tt.exp, tt.retry)
			switch {
			case tt.wantWEV:
				if code(err) != esdb.ErrorCodeWrongExpectedVersion {
					t.Fatalf("retry: got %v, %v; want WrongExpectedVersion", got, err)
				}
			case tt.wantDel:
				if code(err) != esdb.ErrorCodeStreamDeleted {
					t.Fatalf("retry: got %v, %v; want StreamDeleted", got, err)
				}
			case err != nil:
				t.Fatalf("retry: %v", err)
			default:
				if got.NextExpectedVersion != tt.wantRev {
					t.Errorf("revision %d, want %d", got.NextExpectedVersion, tt.wantRev)
				}
				if got.CommitPosition != got.PreparePosition || got.CommitPosition == 0 {
					t.Errorf("position %d/%d, want commit = prepare > 0", got.CommitPosition, got.PreparePosition)
				}
				if p, ok := pos[tt.wantPos]; ok && got.CommitPosition != p.Commit {
					t.Errorf("position %d, want the original position of %s, %d", got.CommitPosition, tt.wantPos, p.Commit)
				}
				if tt.wantPos == "" && got.CommitPosition <= maxPosition(pos) {
					t.Errorf("position %d of a new write, want after %d", got.CommitPosition, maxPosition(pos))
				}
			}
			if got := e.names("S"); got != tt.want {
				t.Errorf("stream %q, want %q", got, tt.want)
			}
		})
	}
}

// positions maps the names of a stream's events to their positions (the
// last occurrence wins).
func positions(e *env, stream string) map[string]esdb.Position {
	e.t.Helper()
	evs, err := e.read(stream, esdb.ReadStreamOptions{}, 1000)
	if err != nil {
		e.t.Fatalf("read %s: %v", stream, err)
	}
	out := make(map[string]esdb.Position)
	for _, ev := range evs {
		out[nameOf(ev.OriginalEvent())] = ev.OriginalEvent().Position
	}
	return out
}

func maxPosition(pos map[string]esdb.Position) uint64 {
	var m uint64
	for _, p := range pos {
		m = max(m, p.Commit)
	}
	return m
}

// TestAppendOther covers the rest of the append surface: IDs are scoped per
// stream (and the cache keeps the first stream an ID was seen in), the
// wrong-expected-version text, tombstoned streams, empty and oversized
// appends.
func TestAppendOther(t *testing.T) {
	t.Run("same id in another stream is a new event, every time", func(t *testing.T) {
		e := newEnv(t)
		e.mustAppend("S", esdb.Any{}, "A")
		e.mustAppend("T", esdb.Any{}, "A")
		e.mustAppend("T", esdb.Any{}, "A") // still mapped to S in the cache
		if got := e.names("T"); got != "A A" {
			t.Fatalf("T = %q, want the duplicate %q", got, "A A")
		}
	})
	t.Run("wrong expected version text", func(t *testing.T) {
		e := newEnv(t)
		e.mustAppend("S", esdb.NoStream{}, "A B")
		tests := []struct {
			exp  esdb.ExpectedRevision
			want string
		}{
			{esdb.Revision(5), "expecting '5' but got '1'"},
			{esdb.NoStream{}, "expecting 'no_stream' but got '1'"},
		}
		for _, tt := range tests {
			_, err := e.append("S", tt.exp, "X")
			if code(err) != esdb.ErrorCodeWrongExpectedVersion || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("append %v: %v, want %q", tt.exp, err, tt.want)
			}
		}
		_, err := e.append("missing", esdb.StreamExists{}, "X")
		if code(err) != esdb.ErrorCodeWrongExpectedVersion || !strings.Contains(err.Error(), "expecting 'stream_exists' but got 'no_stream'") {
			t.Errorf("stream-exists on a missing stream: %v", err)
		}
	})
	t.Run("tombstoned stream refuses every expected revision", func(t *testing.T) {
		e := newEnv(t)
		e.mustAppend("S", esdb.NoStream{}, "A")
		if _, err := e.c.TombstoneStream(e.ctx, "S", esdb.TombstoneStreamOptions{ExpectedRevision: esdb.Any{}}); err != nil {
			t.Fatalf("tombstone: %v", err)
		}
		for _, exp := range []esdb.ExpectedRevision{esdb.Any{}, esdb.NoStream{}, esdb.StreamExists{}, esdb.Revision(0), esdb.Revision(1)} {
			if _, err := e.append("S", exp, "A"); code(err) != esdb.ErrorCodeStreamDeleted {
				t.Errorf("append %T: %v, want StreamDeleted", exp, err)
			}
		}
	})
	t.Run("empty append to a missing stream", func(t *testing.T) {
		e := newEnv(t)
		got, err := e.append("S", esdb.NoStream{}, "")
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		// The server answers no_stream, which the client reports as 1.
		if got.NextExpectedVersion != 1 || got.CommitPosition == 0 {
			t.Errorf("got %+v, want revision 1 (client quirk) and a position", got)
		}
		if got := e.names("S"); got != "" {
			t.Errorf("stream %q, want none", got)
		}
	})
	t.Run("oversized append", func(t *testing.T) {
		e := newEnv(t, kurrenttest.WithMaxAppendSize(1000))
		big := esdb.EventData{EventType: "big", ContentType: esdb.ContentTypeBinary, Data: make([]byte, 1001)}
		_, err := e.c.AppendToStream(e.ctx, "S", esdb.AppendToStreamOptions{}, big)
		if grpcCode(err) != codes.InvalidArgument {
			t.Fatalf("append: %v, want InvalidArgument", err)
		}
		if got := e.names("S"); got != "" {
			t.Errorf("stream %q, want nothing written", got)
		}
	})
}
