package api

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// RebuildReader says whether a projection is being rebuilt from the start
// (projections.Queries: `ledger projections rebuild NAME`), during which the
// read models are incomplete.
type RebuildReader interface {
	Rebuilding(ctx context.Context) (bool, error)
}

// RebuildingHeader is set to "true" on every /v1 answer while a rebuild is
// under way: the answer may lack payments and entries not replayed yet.
const RebuildingHeader = "Ledger-Projection-Rebuilding"

// rebuildFlag caches RebuildReader for a second, so the read API asks the
// database at most once a second however busy it is.
type rebuildFlag struct {
	reader RebuildReader
	mu     sync.Mutex
	at     time.Time
	value  bool
}

// rebuilding reports the cached flag, refreshed when older than a second. A
// failed read keeps the last answer: the header is advice, and the route's
// own query reports a database that is down.
func (f *rebuildFlag) rebuilding(ctx context.Context, now time.Time) bool {
	if f == nil || f.reader == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Sub(f.at) < time.Second {
		return f.value
	}
	if v, err := f.reader.Rebuilding(ctx); err == nil {
		f.value = v
	}
	f.at = now
	return f.value
}

// withRebuilding sets RebuildingHeader on h's answers while a rebuild runs.
func (s *Server) withRebuilding(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.rebuild.rebuilding(r.Context(), time.Now()) {
			w.Header().Set(RebuildingHeader, "true")
		}
		h(w, r)
	}
}
