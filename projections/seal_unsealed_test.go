package projections

import (
	"testing"
)

// TestVerifyChainsListsWhollyUnsealedStreams: with the Postgres store's
// es_events at hand, a stream without a single seal is listed: as unsealed
// when the sealer has not reached it (never sealed), as a break
// (seal_missing) when it lies before the sealer's checkpoint, which commits
// with its seals, so its seals were deleted; so is a sealed stream whose
// last seal was deleted. Left alone, the store passes with nothing unsealed.
func TestVerifyChainsListsWhollyUnsealedStreams(t *testing.T) {
	target := sealStreams[1]
	const fresh = "payment-stripe-pi_never-sealed"
	tests := []struct {
		name     string
		sql      string
		appended int // events appended to fresh, not sealed
		checked  int // sealed streams checked
		unsealed []ChainFinding
		broken   []ChainFinding
	}{
		{"untouched", "", 0, 3, nil, nil},
		{"seals deleted", `DELETE FROM event_seals WHERE stream = $1`, 0, 2,
			nil, []ChainFinding{{Kind: ChainSealMissing, Stream: target, Revision: 0, Events: 4}}},
		{"last seal deleted", `DELETE FROM event_seals WHERE stream = $1 AND revision = 3`, 0, 3,
			nil, []ChainFinding{{Kind: ChainSealMissing, Stream: target, Revision: 3, Events: 1}}},
		{"never sealed", "", 3, 3,
			[]ChainFinding{{Kind: ChainUnsealed, Stream: fresh, Revision: 0, Events: 3}}, nil},
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
			rep, err := VerifyChains(t.Context(), f.store, f.pool, nil, WithEventTable(f.pool))
			if err != nil {
				t.Fatalf("VerifyChains: %v", err)
			}
			if rep.Streams != tt.checked {
				t.Errorf("%d sealed streams checked, want %d", rep.Streams, tt.checked)
			}
			checkFindings(t, "unsealed", rep.Unsealed, rep.UnsealedStreams, tt.unsealed)
			checkFindings(t, "broken", rep.Broken, rep.BrokenStreams, tt.broken)
			// Pages of 1 and 2 streams (full and short last pages) see the
			// wholly unsealed streams alike.
			for _, page := range []int{1, 2} {
				rep, err := newChainReport(t.Context(), f.pool)
				if err == nil {
					err = rep.addUnsealedStreams(t.Context(), f.pool, f.pool, page)
				}
				if err != nil {
					t.Fatalf("page %d: %v", page, err)
				}
				checkFindings(t, "page unsealed", rep.Unsealed, rep.UnsealedStreams, tt.unsealed)
			}
		})
	}
}

// checkFindings compares findings with want, ignoring their positions
// (which differ run to run).
func checkFindings(t *testing.T, what string, got []ChainFinding, count int, want []ChainFinding) {
	t.Helper()
	if count != len(want) || len(got) != len(want) {
		t.Fatalf("%s: %d (%+v), want %+v", what, count, got, want)
	}
	for i := range want {
		g := got[i]
		g.Position = want[i].Position
		if g != want[i] {
			t.Errorf("%s: %+v, want %+v", what, got[i], want[i])
		}
	}
}
