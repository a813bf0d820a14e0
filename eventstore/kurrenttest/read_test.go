package kurrenttest_test

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

func TestReadStream(t *testing.T) {
	e := newEnv(t)
	e.mustAppend("S", esdb.NoStream{}, "e0 e1 e2 e3 e4")
	tests := []struct {
		name  string
		opts  esdb.ReadStreamOptions
		count uint64
		want  string
	}{
		{"forwards from start", esdb.ReadStreamOptions{}, 100, "e0 e1 e2 e3 e4"},
		{"forwards with a count", esdb.ReadStreamOptions{}, 2, "e0 e1"},
		{"forwards from a revision, inclusive", esdb.ReadStreamOptions{From: esdb.Revision(3)}, 100, "e3 e4"},
		{"forwards past the end is empty", esdb.ReadStreamOptions{From: esdb.Revision(9)}, 100, ""},
		{"backwards from end", esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.End{}}, 100, "e4 e3 e2 e1 e0"},
		{"backwards with a count", esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.End{}}, 2, "e4 e3"},
		{"backwards from a revision, inclusive", esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.Revision(1)}, 100, "e1 e0"},
		{"backwards from past the end", esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.Revision(50)}, 2, "e4 e3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := e.read("S", tt.opts, tt.count)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if got := namesOf(evs); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("missing stream", func(t *testing.T) {
		_, err := e.read("nope", esdb.ReadStreamOptions{}, 10)
		if code(err) != esdb.ErrorCodeResourceNotFound {
			t.Fatalf("read: %v, want ResourceNotFound", err)
		}
	})
}

// TestRecordedEvent checks every field the client decodes.
func TestRecordedEvent(t *testing.T) {
	clk := newClock()
	e := newEnv(t, kurrenttest.WithClock(clk.now))
	in := esdb.EventData{
		EventID:     id("bin"),
		EventType:   "blob",
		ContentType: esdb.ContentTypeBinary,
		Data:        []byte{0, 1, 2},
		Metadata:    []byte(`{"corr":"x"}`),
	}
	w, err := e.c.AppendToStream(e.ctx, "S", esdb.AppendToStreamOptions{ExpectedRevision: esdb.NoStream{}}, in)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	evs, err := e.read("S", esdb.ReadStreamOptions{}, 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("read: %v, %d events", err, len(evs))
	}
	got := evs[0].OriginalEvent()
	checks := []struct {
		name      string
		got, want any
	}{
		{"id", got.EventID, in.EventID},
		{"type", got.EventType, "blob"},
		{"content type", got.ContentType, "application/octet-stream"},
		{"stream", got.StreamID, "S"},
		{"number", got.EventNumber, uint64(0)},
		{"created", got.CreatedDate.Equal(clk.now()), true},
		{"commit", got.Position.Commit, w.CommitPosition},
		{"prepare", got.Position.Prepare, w.PreparePosition},
		{"data", string(got.Data), string(in.Data)},
		{"metadata", string(got.UserMetadata), string(in.Metadata)},
		{"system metadata keys", len(got.SystemMetadata), 3},
		{"resolved commit", *evs[0].Commit, w.CommitPosition},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if want := strconv.FormatInt(clk.now().UnixNano()/100, 10); got.SystemMetadata["created"] != want {
		t.Errorf("created = %q ticks, want %q", got.SystemMetadata["created"], want)
	}
}

// endPosition is how the server spells the end of $all.
var endPosition = esdb.Position{Commit: math.MaxUint64, Prepare: math.MaxUint64}

func TestReadAll(t *testing.T) {
	e := newEnv(t)
	e.mustAppend("a", esdb.NoStream{}, "a0 a1")
	e.mustAppend("b", esdb.NoStream{}, "b0")
	e.mustAppend("a", esdb.Revision(1), "a2")

	all := e.readAll(esdb.ReadAllOptions{}, 100)
	if got, want := namesOf(all), "$epoch-information a0 a1 b0 a2"; got != want {
		t.Fatalf("$all = %q, want %q (a node starts with its epoch event)", got, want)
	}
	var prev uint64
	for _, ev := range all {
		p := ev.OriginalEvent().Position
		if p.Commit != p.Prepare || p.Commit <= prev {
			t.Fatalf("position %+v after %d: want commit = prepare, strictly increasing", p, prev)
		}
		prev = p.Commit
	}
	at := func(i int) esdb.Position { return all[i].OriginalEvent().Position }
	tests := []struct {
		name  string
		opts  esdb.ReadAllOptions
		count uint64
		want  string
	}{
		{"forwards with a count", esdb.ReadAllOptions{}, 2, "$epoch-information a0"},
		{"forwards from a position is inclusive", esdb.ReadAllOptions{From: at(2)}, 100, "a1 b0 a2"},
		{"forwards from end is empty", esdb.ReadAllOptions{From: esdb.End{}}, 100, ""},
		{"backwards from end", esdb.ReadAllOptions{Direction: esdb.Backwards, From: esdb.End{}}, 3, "a2 b0 a1"},
		{"backwards from a position is exclusive", esdb.ReadAllOptions{Direction: esdb.Backwards, From: at(3)}, 100, "a1 a0 $epoch-information"},
		{"backwards from start is empty", esdb.ReadAllOptions{Direction: esdb.Backwards, From: esdb.Start{}}, 100, ""},
		{"forwards from position 2^64-1 (end) is empty", esdb.ReadAllOptions{From: endPosition}, 100, ""},
		{"backwards from position 2^64-1 (end)", esdb.ReadAllOptions{Direction: esdb.Backwards, From: endPosition}, 1, "a2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := namesOf(e.readAll(tt.opts, tt.count)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("stream positions match $all positions", func(t *testing.T) {
		evs, err := e.read("a", esdb.ReadStreamOptions{}, 10)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if evs[2].OriginalEvent().Position != at(4) {
			t.Errorf("a2 at %+v in its stream, %+v in $all", evs[2].OriginalEvent().Position, at(4))
		}
	})
}

// TestMetadata: $maxCount, $tb and $maxAge hide events from stream reads
// (not from $all), and a metastream keeps only its latest event.
func TestMetadata(t *testing.T) {
	clk := newClock()
	e := newEnv(t, kurrenttest.WithClock(clk.now))
	e.mustAppend("S", esdb.NoStream{}, "e0 e1 e2 e3")
	setMeta := func(m esdb.StreamMetadata) {
		t.Helper()
		if _, err := e.c.SetStreamMetadata(e.ctx, "S", esdb.AppendToStreamOptions{}, m); err != nil {
			t.Fatalf("set metadata: %v", err)
		}
	}
	var m esdb.StreamMetadata
	m.SetMaxCount(2)
	setMeta(m)
	if got := e.names("S"); got != "e2 e3" {
		t.Errorf("$maxCount 2: %q, want %q", got, "e2 e3")
	}
	m = esdb.StreamMetadata{}
	m.SetTruncateBefore(1)
	setMeta(m)
	if got := e.names("S"); got != "e1 e2 e3" {
		t.Errorf("$tb 1 (replacing $maxCount): %q", got)
	}
	got, err := e.c.GetStreamMetadata(e.ctx, "S", esdb.ReadStreamOptions{})
	if err != nil || got.TruncateBefore() == nil || *got.TruncateBefore() != 1 || got.MaxCount() != nil {
		t.Errorf("get metadata: %+v, %v; want only the latest ($tb 1)", got, err)
	}

	m = esdb.StreamMetadata{}
	m.SetMaxAge(time.Hour)
	setMeta(m)
	clk.advance(30 * time.Minute)
	e.mustAppend("S", esdb.Any{}, "e4")
	clk.advance(45 * time.Minute)
	if got := e.names("S"); got != "e4" {
		t.Errorf("$maxAge 1h, 75 min later: %q, want the young event only", got)
	}
	clk.advance(time.Hour)
	evs, err := e.read("S", esdb.ReadStreamOptions{}, 10)
	if err != nil || len(evs) != 0 {
		t.Errorf("all events too old: %d events, %v; want an empty success", len(evs), err)
	}
	if n := len(e.readAll(esdb.ReadAllOptions{}, 100)); n != 9 { // epoch, 5 events, 3 metadata
		t.Errorf("$all has %d events, want 9: metadata does not apply to $all", n)
	}
	if _, err := e.c.GetStreamMetadata(e.ctx, "none", esdb.ReadStreamOptions{}); code(err) != esdb.ErrorCodeResourceNotFound {
		t.Errorf("metadata of a stream without any: %v, want ResourceNotFound", err)
	}
}
