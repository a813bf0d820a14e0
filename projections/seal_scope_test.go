package projections

import "testing"

// TestVerifyChainsOfChecksOnlyTheSlice: a slice sees its own streams only,
// so a break outside it does not fail it and one inside it does; a named
// stream with events and no seal is its unsealed tail, never a break.
func TestVerifyChainsOfChecksOnlyTheSlice(t *testing.T) {
	f := newSealFixture(t)
	f.populate(t)
	broken, clean := sealStreams[1], sealStreams[0]
	if _, err := f.pool.Exec(t.Context(),
		`UPDATE es_events SET data = jsonb_set(data, '{amount}', '1') WHERE stream = $1 AND revision = 2`, broken); err != nil {
		t.Fatal(err)
	}
	var done, total int
	rep, err := VerifyChainsOf(t.Context(), f.store, f.pool, []string{clean, clean}, func(d, n int) { done, total = d, n })
	if err != nil || !rep.OK() || rep.Streams != 1 || rep.Events != 4 || done != 4 || total != 4 {
		t.Fatalf("clean slice: %+v, %v, progress %d/%d; want 1 intact stream of 4", rep, err, done, total)
	}
	rep, err = VerifyChainsOf(t.Context(), f.store, f.pool, []string{clean, broken}, nil)
	if err != nil || rep.OK() || rep.BrokenStreams != 1 || rep.Broken[0].Stream != broken || rep.Broken[0].Revision != 2 {
		t.Fatalf("slice with the altered stream: %+v, %v; want %s@2 broken", rep, err, broken)
	}
	unsealed := "payment-stripe-pi_scope_unsealed"
	f.appendEvents(t, unsealed, 3)
	rep, err = VerifyChainsOf(t.Context(), f.store, f.pool, []string{unsealed, "payment-stripe-pi_absent"}, nil)
	if err != nil || !rep.OK() || rep.Streams != 0 || rep.UnsealedStreams != 1 {
		t.Fatalf("unsealed slice: %+v, %v; want one unsealed tail and nothing broken", rep, err)
	}
	if got := rep.Unsealed[0]; got.Stream != unsealed || got.Revision != 0 || got.Events != 3 {
		t.Errorf("unsealed finding %+v, want %s from revision 0, 3 events", got, unsealed)
	}
}
