package eventstore_test

import (
	"cmp"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/payledger/payledger/eventstore"
)

func TestPositionString(t *testing.T) {
	tests := []struct {
		pos  eventstore.Position
		want string
	}{
		{eventstore.Start, "0/0"},
		{eventstore.Position{Commit: 1, Prepare: 2}, "1/2"},
		{eventstore.Position{Commit: 4868, Prepare: 0}, "4868/0"},
		{eventstore.Position{Commit: math.MaxUint64, Prepare: math.MaxUint64}, "18446744073709551615/18446744073709551615"},
	}
	for _, tt := range tests {
		if got := tt.pos.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.pos, got, tt.want)
		}
		got, err := eventstore.ParsePosition(tt.want)
		if err != nil || got != tt.pos {
			t.Errorf("ParsePosition(%q) = %v, %v; want %#v", tt.want, got, err, tt.pos)
		}
	}
}

// TestPositionRoundTrip: every position survives being stored as a
// checkpoint string, and the order of positions is (commit, prepare).
func TestPositionRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := eventstore.Position{Commit: rapid.Uint64().Draw(t, "commit"), Prepare: rapid.Uint64().Draw(t, "prepare")}
		q := eventstore.Position{Commit: rapid.Uint64().Draw(t, "commit2"), Prepare: rapid.Uint64().Draw(t, "prepare2")}
		got, err := eventstore.ParsePosition(p.String())
		if err != nil || got != p {
			t.Fatalf("ParsePosition(%q) = %v, %v", p.String(), got, err)
		}
		want := cmp.Or(cmp.Compare(p.Commit, q.Commit), cmp.Compare(p.Prepare, q.Prepare))
		if c := p.Compare(q); c != want || q.Compare(p) != -want {
			t.Fatalf("%v.Compare(%v) = %d, want %d", p, q, c, want)
		}
	})
}

func TestParsePositionRejects(t *testing.T) {
	for _, s := range []string{
		"", "1", "/", "1/", "/2", "a/1", "1/b", "-1/2", "1/-2", "+1/2", "0x1/2", "1_000/2",
		"1/2/3", " 1/2", "1/2 ", "1 /2", "1.5/2", "18446744073709551616/0", "0/18446744073709551616",
	} {
		if p, err := eventstore.ParsePosition(s); err == nil {
			t.Errorf("ParsePosition(%q) = %v, want an error", s, p)
		}
	}
}

func TestExpectedRevision(t *testing.T) {
	tests := []struct {
		name     string
		e        eventstore.ExpectedRevision
		any, no  bool
		rev      uint64
		exact    bool
		wantText string
	}{
		{"any", eventstore.Any(), true, false, 0, false, "any"},
		{"no-stream", eventstore.NoStream(), false, true, 0, false, "no-stream"},
		{"exact-0", eventstore.Exact(0), false, false, 0, true, "0"},
		{"exact-41", eventstore.Exact(41), false, false, 41, true, "41"},
		{"zero-value", eventstore.ExpectedRevision{}, true, false, 0, false, "any"},
	}
	for _, tt := range tests {
		rev, exact := tt.e.Revision()
		if tt.e.IsAny() != tt.any || tt.e.IsNoStream() != tt.no || rev != tt.rev || exact != tt.exact || tt.e.String() != tt.wantText {
			t.Errorf("%s: any %t no-stream %t revision %d,%t string %q", tt.name, tt.e.IsAny(), tt.e.IsNoStream(), rev, exact, tt.e.String())
		}
	}
}
