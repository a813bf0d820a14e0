package projections

import (
	"testing"
)

// TestVerifyChainsListsWhollyUnsealedStreams: with the Postgres store's
// es_events at hand, a stream without a single seal (never sealed, or its
// seals deleted by SQL) is listed as unsealed with its event count; left
// alone, the store passes with nothing unsealed.
func TestVerifyChainsListsWhollyUnsealedStreams(t *testing.T) {
	target := sealStreams[1]
	const fresh = "payment-stripe-pi_never-sealed"
	tests := []struct {
		name     string
		sql      string
		appended int // events appended to fresh, not sealed
		checked  int // sealed streams checked
		unsealed []ChainFinding
	}{
		{"untouched", "", 0, 3, nil},
		{"seals deleted", `DELETE FROM event_seals WHERE stream = $1`, 0, 2,
			[]ChainFinding{{Kind: ChainUnsealed, Stream: target, Revision: 0, Events: 4}}},
		{"never sealed", "", 3, 3,
			[]ChainFinding{{Kind: ChainUnsealed, Stream: fresh, Revision: 0, Events: 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSealFixture(t)
			f.populate(t)
			if tt.sql != "" {
				if _, err := f.pool.Exec(t.Context(), tt.sql, target); err != nil {
					t.Fatalf("%s: %v", tt.sql, err)
				}
			}
			if tt.appended > 0 {
				f.appendEvents(t, fresh, tt.appended)
			}
			// Without the event table the stream is invisible.
			if rep := f.verify(t); !rep.OK() || rep.UnsealedStreams != 0 {
				t.Errorf("without the event table: %+v, want intact and nothing unsealed", rep)
			}
			rep, err := VerifyChains(t.Context(), f.store, f.pool, nil, WithEventTable(f.pool))
			if err != nil {
				t.Fatalf("VerifyChains: %v", err)
			}
			checkUnsealed(t, "VerifyChains", rep, tt.checked, tt.unsealed)
			// Pages of 1 and 2 streams (full and short last pages) see the same.
			for _, page := range []int{1, 2} {
				var rep ChainReport
				if err := rep.addUnsealedStreams(t.Context(), f.pool, f.pool, page); err != nil {
					t.Fatalf("page %d: %v", page, err)
				}
				checkUnsealed(t, "page", rep, 0, tt.unsealed)
			}
		})
	}
}

func checkUnsealed(t *testing.T, what string, rep ChainReport, streams int, want []ChainFinding) {
	t.Helper()
	if !rep.OK() || rep.Streams != streams || rep.UnsealedStreams != len(want) || len(rep.Unsealed) != len(want) {
		t.Fatalf("%s: %+v, want intact, %d streams checked, unsealed %+v", what, rep, streams, want)
	}
	for i := range want {
		if rep.Unsealed[i] != want[i] {
			t.Errorf("%s: unsealed %+v, want %+v", what, rep.Unsealed[i], want[i])
		}
	}
}
