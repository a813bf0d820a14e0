package projections

import (
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/pgtest"
)

// TestShadowRebuildOnKurrentDB: the shadow's runner follows a KurrentDB
// store (the official client against the in-memory server) as the live one
// does, stops at the live checkpoint, diffs empty and switches.
func TestShadowRebuildOnKurrentDB(t *testing.T) {
	_, store := kurrentStore(t)
	pool := pgtest.NewPool(t)
	codec := eventstore.NewCodec()
	var last eventstore.Position
	for n := range 12 {
		for _, e := range lifecycle("stripe", n) {
			d, err := codec.Encode(e, eventstore.Metadata{Provider: "stripe", ReceivedAt: t0})
			if err != nil {
				t.Fatal(err)
			}
			m := e.EventMeta()
			res, err := store.Append(t.Context(), eventstore.PaymentStream(m.Provider, m.ProviderPaymentID), eventstore.Any(), []eventstore.EventData{d})
			if err != nil {
				t.Fatal(err)
			}
			last = res.Position
		}
	}
	live := NewRunner(testConfig(DefaultName, nil), pool, store)
	start(t, live)
	waitPosition(t, live, last)
	before := dumpPayments(t, pool)
	sh, err := NewShadow(t.Context(), pool, store, DefaultName, testConfig("", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	res, err := sh.Switch(t.Context(), false)
	if err != nil || !res.Switched || len(res.Diff) != 0 || res.Position != last {
		t.Fatalf("Switch: %+v, %v; want a switch at %s with an empty diff", res, err, last)
	}
	diffDumps(t, "payments", dumpPayments(t, pool), before)
	p := pay{"stripe", "pi_kurrent_after"}
	appendOne := func(e domain.Event) {
		d, _ := codec.Encode(e, eventstore.Metadata{Provider: "stripe", ReceivedAt: t0})
		if _, err := store.Append(t.Context(), eventstore.PaymentStream("stripe", p.id), eventstore.Any(), []eventstore.EventData{d}); err != nil {
			t.Fatal(err)
		}
	}
	appendOne(p.created("evt_after", 0, 500))
	eventually(t, "a payment projected after the switch", func() bool { return dumpPayments(t, pool)["stripe/pi_kurrent_after"] != "" })
}
