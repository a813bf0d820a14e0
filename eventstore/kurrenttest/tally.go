package kurrenttest

import (
	"strings"

	"github.com/google/uuid"
)

// Tally is what the log holds in the streams a prefix selects.
type Tally struct {
	Streams int `json:"streams"` // streams with at least one event in the log
	Events  int `json:"events"`
	// DuplicateIDs counts event IDs stored more than once, in one stream or
	// across streams: what a store that deduplicates must never show.
	DuplicateIDs int `json:"duplicate_ids"`
}

// Tally counts the events of the streams whose names start with prefix
// (every stream for ""), over the whole log as $all delivers it, including
// events hidden by a deletion or by stream metadata. It lets a test or
// cmd/kurrenttest audit the store from the server's side, which a client
// cannot do cheaply: KurrentDB has no list of streams and no lookup by
// event ID.
func (s *Server) Tally(prefix string) Tally {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	var t Tally
	streams := make(map[string]bool)
	seen := make(map[uuid.UUID]int)
	for _, r := range s.st.log {
		if r.tombstone() || !strings.HasPrefix(r.stream, prefix) {
			continue
		}
		t.Events++
		streams[r.stream] = true
		if seen[r.id]++; seen[r.id] == 2 {
			t.DuplicateIDs++
		}
	}
	t.Streams = len(streams)
	return t
}
