package deliver

import (
	"math/rand/v2"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// Chaos is how badly deliveries are mangled, the way providers do at
// least once: copies, arrival order and delays.
type Chaos struct {
	Dup       float64       // share of webhooks delivered twice
	Reorder   float64       // share of payments whose deliveries are shuffled
	MaxDelay  time.Duration // random wait before each delivery
	LateDelay time.Duration // extra wait before a late Pix/boleto confirmation
}

// send is one delivery of a payment's plan: a step's webhook, sent after a
// wait, and alone or together with the other sends of its group.
type send struct {
	step  int
	delay time.Duration
}

// plan returns a payment's deliveries as groups sent one after the other;
// the sends of a group go out at the same time (a duplicate racing its
// original). Deterministic from rng.
func plan(rng *rand.Rand, p *truth.Payment, c Chaos) [][]send {
	delay := func(step int) time.Duration {
		d := time.Duration(0)
		if c.MaxDelay > 0 {
			d = time.Duration(rng.Int64N(int64(c.MaxDelay) + 1))
		}
		if p.Steps[step].Late {
			d += c.LateDelay
		}
		return d
	}
	var groups [][]send
	var later []int // duplicates sent at a random later point
	for i := range p.Steps {
		g := []send{{step: i, delay: delay(i)}}
		if rng.Float64() < c.Dup {
			if rng.IntN(2) == 0 {
				g = append(g, send{step: i}) // concurrently with the original
			} else {
				later = append(later, i)
			}
		}
		groups = append(groups, g)
	}
	for _, i := range later {
		at := i + 1 + rng.IntN(len(groups)-i) // somewhere after the original
		groups = append(groups[:at], append([][]send{{{step: i, delay: delay(i)}}}, groups[at:]...)...)
	}
	if rng.Float64() < c.Reorder {
		rng.Shuffle(len(groups), func(a, b int) { groups[a], groups[b] = groups[b], groups[a] })
	}
	return groups
}

// planRand is the random stream of payment i's plan in a run with seed:
// apart from the generator's, so chaos settings never change the payments.
func planRand(seed uint64, i int) *rand.Rand { return rand.New(rand.NewPCG(seed^0x5eed, uint64(i)+1)) }
