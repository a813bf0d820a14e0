package kurrenttest_test

import (
	"math"
	"strings"
	"testing"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"
)

func TestSoftDelete(t *testing.T) {
	e := newEnv(t)
	e.mustAppend("S", esdb.NoStream{}, "e0 e1")
	res, err := e.c.DeleteStream(e.ctx, "S", esdb.DeleteStreamOptions{ExpectedRevision: esdb.Revision(1)})
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := e.read("S", esdb.ReadStreamOptions{}, 10); code(err) != esdb.ErrorCodeResourceNotFound {
		t.Fatalf("read after delete: %v, want ResourceNotFound", err)
	}
	all := e.readAll(esdb.ReadAllOptions{Direction: esdb.Backwards, From: esdb.End{}}, 1)
	last := all[0].OriginalEvent()
	if last.StreamID != "$$S" || last.EventType != "$metadata" || string(last.Data) != `{"$tb":9223372036854775807}` {
		t.Errorf("last $all event %s %s %s, want $tb = DeletedStream in $$S", last.StreamID, last.EventType, last.Data)
	}
	if res.Position != last.Position || res.Position.Commit == 0 {
		t.Errorf("delete position %+v, want the metadata event's %+v", res.Position, last.Position)
	}
	if got := namesOf(e.readAll(esdb.ReadAllOptions{}, 100)); !strings.Contains(got, "e0 e1") {
		t.Errorf("$all %q: deleted events stay until a scavenge", got)
	}

	// An append recreates the stream: numbering goes on, old events stay hidden.
	w := e.mustAppend("S", esdb.Any{}, "e2")
	if w.NextExpectedVersion != 2 {
		t.Errorf("recreating append at revision %d, want 2", w.NextExpectedVersion)
	}
	if got := e.names("S"); got != "e2" {
		t.Errorf("recreated stream %q, want %q", got, "e2")
	}
	meta, err := e.c.GetStreamMetadata(e.ctx, "S", esdb.ReadStreamOptions{})
	if err != nil || meta.TruncateBefore() == nil || *meta.TruncateBefore() != 2 {
		t.Errorf("metadata after recreation: %+v, %v; want $tb 2", meta, err)
	}
}

func TestDeleteErrors(t *testing.T) {
	e := newEnv(t)
	e.mustAppend("S", esdb.NoStream{}, "e0 e1")
	tests := []struct {
		name   string
		stream string
		exp    esdb.ExpectedRevision
	}{
		{"stale revision", "S", esdb.Revision(0)},
		{"no stream on an existing one", "S", esdb.NoStream{}},
		{"missing stream, any", "missing", esdb.Any{}},
		{"missing stream, no stream", "missing", esdb.NoStream{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.c.DeleteStream(e.ctx, tt.stream, esdb.DeleteStreamOptions{ExpectedRevision: tt.exp})
			// The client does not map FailedPrecondition: Unknown, with the
			// server's message inside.
			if code(err) != esdb.ErrorCodeUnknown || grpcCode(err) != codes.FailedPrecondition ||
				!strings.Contains(err.Error(), "WrongExpectedVersion") {
				t.Fatalf("delete: %v, want FailedPrecondition wrong-expected-version", err)
			}
		})
	}
	if got := e.names("S"); got != "e0 e1" {
		t.Errorf("stream %q after failed deletes", got)
	}
}

func TestTombstone(t *testing.T) {
	e := newEnv(t)
	e.mustAppend("S", esdb.NoStream{}, "e0")
	res, err := e.c.TombstoneStream(e.ctx, "S", esdb.TombstoneStreamOptions{ExpectedRevision: esdb.Revision(0)})
	if err != nil {
		t.Fatalf("tombstone: %v", err)
	}
	all := e.readAll(esdb.ReadAllOptions{Direction: esdb.Backwards, From: esdb.End{}}, 1)
	ts := all[0].OriginalEvent()
	if ts.EventType != "$streamDeleted" || ts.EventNumber != math.MaxInt64 || ts.Position != res.Position {
		t.Errorf("last $all event %s #%d at %+v, want $streamDeleted #2^63-1 at %+v", ts.EventType, ts.EventNumber, ts.Position, res.Position)
	}
	checks := []struct {
		name string
		err  error
	}{
		{"read", func() error { _, err := e.read("S", esdb.ReadStreamOptions{}, 10); return err }()},
		{"read metastream", func() error { _, err := e.read("$$S", esdb.ReadStreamOptions{}, 10); return err }()},
		{"delete", func() error {
			_, err := e.c.DeleteStream(e.ctx, "S", esdb.DeleteStreamOptions{ExpectedRevision: esdb.Any{}})
			return err
		}()},
		{"tombstone again", func() error {
			_, err := e.c.TombstoneStream(e.ctx, "S", esdb.TombstoneStreamOptions{ExpectedRevision: esdb.Any{}})
			return err
		}()},
		{"set metadata", func() error {
			_, err := e.c.SetStreamMetadata(e.ctx, "S", esdb.AppendToStreamOptions{}, esdb.StreamMetadata{})
			return err
		}()},
	}
	for _, c := range checks {
		if code(c.err) != esdb.ErrorCodeStreamDeleted {
			t.Errorf("%s: %v, want StreamDeleted", c.name, c.err)
		}
	}
	// Any is fine on a missing stream.
	if _, err := e.c.TombstoneStream(e.ctx, "never", esdb.TombstoneStreamOptions{ExpectedRevision: esdb.Any{}}); err != nil {
		t.Errorf("tombstone a missing stream: %v", err)
	}
}
