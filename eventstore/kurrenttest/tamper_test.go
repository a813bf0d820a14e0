package kurrenttest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// TestTamper rewrites stored events through the server and reads them back
// through the official client: a stream read and an $all read both serve
// the rewritten content at the original number and position.
func TestTamper(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(*kurrenttest.Server) error
		want   string // S as read back, one event per line
	}{
		{"data", func(s *kurrenttest.Server) error {
			return s.Tamper("S", 1, func(e *kurrenttest.TamperedEvent) { e.Data = []byte(`{"name":"z"}`) })
		}, "0 e0 test.event {} e0 | 1 e1 test.event {} z | 2 e2 test.event {} e2"},
		{"metadata", func(s *kurrenttest.Server) error {
			return s.Tamper("S", 1, func(e *kurrenttest.TamperedEvent) { e.Metadata = []byte(`{"x":1}`) })
		}, `0 e0 test.event {} e0 | 1 e1 test.event {"x":1} e1 | 2 e2 test.event {} e2`},
		{"type", func(s *kurrenttest.Server) error {
			return s.Tamper("S", 1, func(e *kurrenttest.TamperedEvent) { e.Type = "other" })
		}, "0 e0 test.event {} e0 | 1 e1 other {} e1 | 2 e2 test.event {} e2"},
		{"order", func(s *kurrenttest.Server) error { return s.Swap("S", 1, 2) },
			"0 e0 test.event {} e0 | 1 e2 test.event {} e2 | 2 e1 test.event {} e1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, kurrenttest.WithoutSystemEvents())
			for _, n := range []string{"e0", "e1", "e2"} {
				ev := events(n)[0]
				ev.Metadata = []byte(`{}`)
				if _, err := e.c.AppendToStream(e.ctx, "S", esdb.AppendToStreamOptions{}, ev); err != nil {
					t.Fatalf("append %s: %v", n, err)
				}
			}
			e.mustAppend("T", esdb.NoStream{}, "t0")
			before := e.readAll(esdb.ReadAllOptions{}, 100)
			if err := tt.tamper(e.srv); err != nil {
				t.Fatalf("tamper: %v", err)
			}
			evs, err := e.read("S", esdb.ReadStreamOptions{}, 100)
			if err != nil {
				t.Fatalf("read S: %v", err)
			}
			if got := tampered(evs); got != tt.want {
				t.Errorf("stream read:\n got %s\nwant %s", got, tt.want)
			}
			after := e.readAll(esdb.ReadAllOptions{}, 100)
			if got := tampered(after[:3]); got != tt.want {
				t.Errorf("$all read:\n got %s\nwant %s", got, tt.want)
			}
			for i := range after {
				if a, b := after[i].OriginalEvent(), before[i].OriginalEvent(); a.Position != b.Position || a.StreamID != b.StreamID {
					t.Errorf("$all[%d] at %s %v, was %s %v", i, a.StreamID, a.Position, b.StreamID, b.Position)
				}
			}
		})
	}
}

// tampered describes events as number, ID name, type, metadata and data
// name, so a table can show what a rewrite changed.
func tampered(evs []*esdb.ResolvedEvent) string {
	var out []string
	for _, r := range evs {
		ev := r.OriginalEvent()
		var idName string
		for _, n := range []string{"e0", "e1", "e2"} {
			if id(n) == ev.EventID {
				idName = n
			}
		}
		var data string
		_, _ = fmt.Sscanf(string(ev.Data), `{"name":%q}`, &data)
		out = append(out, strings.TrimSpace(fmt.Sprintf("%d %s %s %s %s", ev.EventNumber, idName, ev.EventType, ev.UserMetadata, data)))
	}
	return strings.Join(out, " | ")
}

func TestTamperMissingEvent(t *testing.T) {
	e := newEnv(t)
	e.mustAppend("S", esdb.NoStream{}, "e0")
	if err := e.srv.Tamper("S", 1, func(*kurrenttest.TamperedEvent) {}); err == nil {
		t.Error("Tamper S@1 of a one-event stream: no error")
	}
	if err := e.srv.Swap("nope", 0, 1); err == nil {
		t.Error("Swap on a missing stream: no error")
	}
}
