package gen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/domain"
)

// genEpoch is the provider time of the first payment. Fixed, so a seed
// always produces the same payloads byte for byte.
func genEpoch() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) }

// gen builds one payment: its own random stream (seeded from the run's seed
// and the payment's index, so payment i is the same whatever n is) and a
// clock for its steps.
type gen struct {
	rng   *rand.Rand
	index int
	tag   uint64 // per-run component of IDs, from the seed
	clock clock
	steps []truth.Step
}

// Lifecycles lists every lifecycle the provider's generator can build (nil:
// unknown provider). A function, not a package variable, so nothing can
// change the table at run time.
func Lifecycles(provider string) []string {
	return map[string][]string{
		truth.Stripe: {"succeeded", "processing_succeeded", "failed_then_succeeded", "failed", "canceled",
			"authorized_captured", "refund_partial", "refund_full", "dispute_open", "dispute_won", "dispute_lost"},
		truth.MercadoPago: {"approved", "pix_paid_late", "rejected", "rejected_then_approved", "cancelled",
			"refund_partial", "refund_full", "charged_back"},
		truth.Asaas: {"pix_received", "boleto_paid_late", "card_confirmed_received", "card_refused_then_confirmed",
			"deleted", "refund_partial", "refund_full", "chargeback"},
		truth.Pagarme: {"paid", "failed_then_paid", "canceled", "authorized_captured", "boleto_paid_late",
			"refund_partial", "refund_full", "chargedback"},
	}[provider]
}

// builder returns the provider's generator.
func builder(provider string) func(g *gen, lifecycle string) *truth.Payment {
	switch provider {
	case truth.Stripe:
		return genStripe
	case truth.MercadoPago:
		return genMercadoPago
	case truth.Asaas:
		return genAsaas
	case truth.Pagarme:
		return genPagarme
	}
	return nil
}

// Epoch is when the first generated payment starts (provider time) unless
// GenerateAt is told otherwise.
func Epoch() time.Time { return genEpoch() }

// Generate returns n payments spread round-robin over providers, each
// following a lifecycle drawn uniformly from its provider's list less the
// skipped ones ("provider/lifecycle"). The result depends only on the
// arguments.
func Generate(seed uint64, n int, providers []string, skip []string) ([]*truth.Payment, error) {
	return GenerateAt(genEpoch(), seed, n, providers, skip)
}

// GenerateAt is Generate with the first payment starting at epoch: a
// backfill from Stripe, which keeps 30 days of events, needs provider times
// near today's.
func GenerateAt(epoch time.Time, seed uint64, n int, providers []string, skip []string) ([]*truth.Payment, error) {
	if len(providers) == 0 {
		return nil, fmt.Errorf("paysim: generate: no provider")
	}
	for _, p := range providers {
		if builder(p) == nil {
			return nil, fmt.Errorf("paysim: generate: unknown provider %q (want %s)", p, strings.Join(truth.Providers(), ", "))
		}
	}
	choices := map[string][]string{}
	for _, p := range providers {
		for _, lc := range Lifecycles(p) {
			if !slices.Contains(skip, p+"/"+lc) {
				choices[p] = append(choices[p], lc)
			}
		}
		if len(choices[p]) == 0 {
			return nil, fmt.Errorf("paysim: generate: every lifecycle of %s is skipped", p)
		}
	}
	tag := rand.New(rand.NewPCG(seed, 0x9a75)).Uint64()
	out := make([]*truth.Payment, 0, n)
	for i := range n {
		prov := providers[i%len(providers)]
		g := &gen{rng: rand.New(rand.NewPCG(seed, uint64(i)+1)), index: i, tag: tag,
			clock: clock{t: epoch.UTC().Add(time.Duration(i) * 7 * time.Second)}}
		lcs := choices[prov]
		p := builder(prov)(g, lcs[g.rng.IntN(len(lcs))])
		out = append(out, p)
	}
	return out, nil
}

const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// token returns n random alphanumerics.
func (g *gen) token(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[g.rng.IntN(len(alnum))]
	}
	return string(b)
}

// uniq is a fixed-width decimal unique within the run (the index) and
// likely distinct across seeds (the tag): IDs of two runs with different
// seeds do not collide in one ledger.
func (g *gen) uniq(width int) string {
	return fmt.Sprintf("%0*d%06d", width-6, g.tag%pow10(width-6), g.index)
}

func pow10(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}

// amount is a random amount in minor units, 1.00 to 2,000.00.
func (g *gen) amount() int64 { return 100 + g.rng.Int64N(199_901) }

// part is a random partial amount of a: 1 to a-1.
func (g *gen) part(a int64) int64 { return 1 + g.rng.Int64N(a-1) }

// between is a random duration in [lo, hi].
func (g *gen) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(g.rng.Int64N(int64(hi-lo)+1))
}

// add appends a step at the clock's current time (every builder advances
// the clock to the step's moment just before).
func (g *gen) add(w truth.Webhook, t truth.State, api []byte) *truth.Step {
	g.steps = append(g.steps, truth.Step{Webhook: w, Truth: t, API: api, At: g.clock.t})
	return &g.steps[len(g.steps)-1]
}

// decimal writes minor units as the shortest JSON number in major units, as
// a JavaScript-minded API serialises 150.10 ("150.1").
func decimal(minor int64) string {
	s := strconv.FormatInt(minor/100, 10)
	c := minor % 100
	switch {
	case c == 0:
		return s
	case c%10 == 0:
		return s + "." + strconv.FormatInt(c/10, 10)
	}
	return fmt.Sprintf("%s.%02d", s, c)
}

// state is a shorthand for a truth.State.
func state(st domain.Status, amount, refunded int64, cur domain.Currency) truth.State {
	return truth.State{Status: st, Amount: amount, Refunded: refunded, Currency: cur}
}

// clock hands out increasing provider timestamps for one payment's steps.
type clock struct{ t time.Time }

// next advances by d and returns the new time.
func (c *clock) next(d time.Duration) time.Time {
	c.t = c.t.Add(d)
	return c.t
}
