package eventstore

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Position is a place in the global order of all events, as KurrentDB
// defines it: a commit and a prepare part, compared commit first. The Postgres
// store uses (transaction ID, sequence). The zero Position is the start; a
// subscription from P delivers events strictly after P.
type Position struct {
	Commit  uint64
	Prepare uint64
}

// Start is the position before every event.
var Start = Position{}

// Compare returns -1, 0 or +1 as p is before, equal to or after q.
func (p Position) Compare(q Position) int {
	if c := cmp.Compare(p.Commit, q.Commit); c != 0 {
		return c
	}
	return cmp.Compare(p.Prepare, q.Prepare)
}

// String encodes p as "commit/prepare", the checkpoint format.
func (p Position) String() string {
	return strconv.FormatUint(p.Commit, 10) + "/" + strconv.FormatUint(p.Prepare, 10)
}

// ParsePosition decodes the output of Position.String.
func ParsePosition(s string) (Position, error) {
	c, pr, ok := strings.Cut(s, "/")
	if !ok {
		return Position{}, fmt.Errorf("eventstore: parse position %q: want commit/prepare", s)
	}
	commit, err := strconv.ParseUint(c, 10, 64)
	if err != nil {
		return Position{}, fmt.Errorf("eventstore: parse position %q: %w", s, err)
	}
	prepare, err := strconv.ParseUint(pr, 10, 64)
	if err != nil {
		return Position{}, fmt.Errorf("eventstore: parse position %q: %w", s, err)
	}
	return Position{Commit: commit, Prepare: prepare}, nil
}

// ExpectedRevision is the optimistic-concurrency condition of an append.
type ExpectedRevision struct {
	kind expectKind
	rev  uint64
}

type expectKind uint8

const (
	expectAny expectKind = iota
	expectNoStream
	expectExact
)

// Any appends whatever the stream's revision.
func Any() ExpectedRevision { return ExpectedRevision{kind: expectAny} }

// NoStream requires the stream to have no events.
func NoStream() ExpectedRevision { return ExpectedRevision{kind: expectNoStream} }

// Exact requires the stream's last revision to be rev.
func Exact(rev uint64) ExpectedRevision { return ExpectedRevision{kind: expectExact, rev: rev} }

// IsAny reports whether e is Any.
func (e ExpectedRevision) IsAny() bool { return e.kind == expectAny }

// IsNoStream reports whether e is NoStream.
func (e ExpectedRevision) IsNoStream() bool { return e.kind == expectNoStream }

// Revision returns the exact revision and true, or false for Any/NoStream.
func (e ExpectedRevision) Revision() (uint64, bool) { return e.rev, e.kind == expectExact }

// String describes e for errors and logs.
func (e ExpectedRevision) String() string {
	switch e.kind {
	case expectNoStream:
		return "no-stream"
	case expectExact:
		return strconv.FormatUint(e.rev, 10)
	}
	return "any"
}
