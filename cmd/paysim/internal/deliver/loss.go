package deliver

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// Loss is what the providers never deliver, for the ledger's reconciliation
// and backfill to recover: the provider state still moves (the fake APIs
// show every step), only the webhooks are missing.
type Loss struct {
	// Drop is the share of payments (0 to 1) whose final webhooks, every
	// webhook after the payment's first, are never sent: the provider gave
	// up on them. The ledger knows the payment exists, not its outcome.
	Drop float64
	// Outage is the length of a window in which every send fails at the
	// provider side and is never retried (lost); 0: no outage.
	Outage time.Duration
	// OutageAt is when the window opens, from the first send; negative:
	// mid-run, once half the planned sends have finished (after the
	// recorded-basis snapshot when that is taken there too).
	OutageAt time.Duration
}

// Withholding reasons, as reported.
const (
	Dropped = "dropped" // a payment's final webhook, never sent (Loss.Drop)
	Lost    = "lost"    // a send that fell in the outage window
)

// Withheld is one send the provider never made.
type Withheld struct {
	Payment    string    `json:"payment"` // provider/id
	EventID    string    `json:"event_id"`
	Type       string    `json:"type"`
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`          // when it would have been sent
	ProviderAt time.Time `json:"provider_at"` // the step's provider time: what a backfill window must cover
}

// DropSet returns which payments (by index) have their final webhooks
// dropped: round(share·eligible) of those with more than one webhook,
// ranked by a per-payment draw from seed, so the choice depends only on the
// seed, the share and the payments, never on the chaos settings.
func DropSet(seed uint64, payments []*truth.Payment, share float64) []bool {
	out := make([]bool, len(payments))
	if share <= 0 {
		return out
	}
	type ranked struct {
		i    int
		draw uint64
	}
	var eligible []ranked
	for i, p := range payments {
		if len(p.Steps) > 1 {
			eligible = append(eligible, ranked{i, rand.New(rand.NewPCG(seed^0xd209, uint64(i)+1)).Uint64()})
		}
	}
	slices.SortFunc(eligible, func(a, b ranked) int {
		switch {
		case a.draw < b.draw:
			return -1
		case a.draw > b.draw:
			return 1
		}
		return a.i - b.i
	})
	k := int(math.Round(share * float64(len(eligible))))
	for _, r := range eligible[:min(k, len(eligible))] {
		out[r.i] = true
	}
	return out
}

// outage is the window of lost sends; it opens once (at a fixed offset or
// mid-run) and its bounds are read by the report.
type outage struct {
	length time.Duration
	start  atomic.Int64 // UnixNano of the opening; 0: not open yet
}

// open starts the window at t unless it already started.
func (o *outage) open(t time.Time) {
	if o.length > 0 {
		o.start.CompareAndSwap(0, t.UnixNano())
	}
}

// covers reports whether a send at t falls in the window.
func (o *outage) covers(t time.Time) bool {
	s := o.start.Load()
	return s != 0 && !t.Before(time.Unix(0, s)) && t.Before(time.Unix(0, s).Add(o.length))
}

// Window is the outage as it happened (zero when none opened).
type Window struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// window returns the outage's bounds.
func (o *outage) window() Window {
	s := o.start.Load()
	if s == 0 {
		return Window{}
	}
	return Window{Start: time.Unix(0, s).UTC(), End: time.Unix(0, s).Add(o.length).UTC()}
}
