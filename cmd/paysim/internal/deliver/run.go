package deliver

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/internal/backoff"
)

// Signer authenticates one attempt at a webhook, as its provider does.
type Signer interface {
	Headers(p *truth.Payment, w *truth.Webhook, now time.Time) (http.Header, error)
}

// Provider is told of every step about to be sent: the provider's state (its
// status API) runs ahead of its webhooks.
type Provider interface {
	Advance(p *truth.Payment, step int)
}

// Sampler is offered every finished send (the lag meter).
type Sampler interface {
	Offer(p *truth.Payment, d Delivery)
}

// Config is how webhooks are sent.
type Config struct {
	Ledger      string // base URL
	Seed        uint64 // the run's seed, from which every payment's plan is drawn
	Chaos       Chaos
	Retry       Retry
	Concurrency int     // attempts in flight at most
	Rate        float64 // sends started per second, open loop; 0: closed loop
	// Pause, when set, runs once the share PauseAt (0 to 1) of the planned
	// sends has finished, with every delivery held back until it returns:
	// nothing is in flight and the providers' states do not move meanwhile
	// (the recorded-basis snapshot).
	Pause   func(ctx context.Context)
	PauseAt float64
	Loss    Loss // webhooks the providers never send
}

// Sender delivers payments' webhooks to the ledger.
type Sender struct {
	cfg        Config
	d          *deliverer
	provider   Provider
	gate       sync.RWMutex // read-held by each group being sent; Pause holds it
	pauseAfter int64        // sends finished before Pause runs
	finished   atomic.Int64 // sends finished
	paused     atomic.Bool  // Pause has run (or is running)
	pauseDone  atomic.Bool  // Pause has returned
	dropped    []bool       // by payment index: final webhooks never sent (Loss.Drop)
	outage     *outage
	outageMid  int64 // sends finished before a mid-run outage opens; 0: fixed offset
}

// New returns a sender using client, signing with signer and telling
// provider of each step sent.
func New(cfg Config, client *http.Client, signer Signer, provider Provider) *Sender {
	d := &deliverer{client: client, ledger: cfg.Ledger, sign: signer, retry: cfg.Retry,
		slots: make(chan struct{}, cfg.Concurrency), now: time.Now}
	return &Sender{cfg: cfg, d: d, provider: provider, outage: &outage{length: cfg.Loss.Outage}}
}

// Outage returns the outage window as it happened (zero when none opened).
func (s *Sender) Outage() Window { return s.outage.window() }

// Pace is what the open-loop clock of --rate achieved (zero without one).
type Pace struct {
	Offered float64 // starts per second
	Late    int     // starts that found --concurrency sends in flight
}

// Run delivers every payment's plan, filing each send in st and offering it
// to lag (nil: no lag measurement).
func (s *Sender) Run(ctx context.Context, payments []*truth.Payment, st *Stats, lag Sampler) Pace {
	pace := s.deliverAll(ctx, payments, st, lag)
	if pace == nil {
		return Pace{}
	}
	return Pace{Offered: pace.offered(), Late: int(pace.late.Load())}
}

// deliverAll walks every payment's plan; a bounded number of payments are
// in flight at once so that a huge run does not start everything at once.
// With --rate, sends start on the pacer's clock (returned); the walkers
// waiting for a start outnumber the in-flight cap, so a start never waits
// for a send to be ready, only for a free slot.
func (s *Sender) deliverAll(ctx context.Context, payments []*truth.Payment, st *Stats, lag Sampler) *pacer {
	plans := make([][][]send, len(payments))
	sends := 0
	for i, p := range payments {
		plans[i] = plan(planRand(s.cfg.Seed, i), p, s.cfg.Chaos)
		for _, g := range plans[i] {
			st.plan(len(g))
			sends += len(g)
		}
	}
	s.pauseAfter = max(1, int64(s.cfg.PauseAt*float64(sends)))
	s.dropped = DropSet(s.cfg.Seed, payments, s.cfg.Loss.Drop)
	if s.cfg.Loss.OutageAt >= 0 {
		s.outage.open(s.d.now().Add(s.cfg.Loss.OutageAt))
	} else {
		s.outageMid = max(1, int64(sends)/2)
	}
	var pace *pacer
	var wg sync.WaitGroup
	defer wg.Wait()
	active := make(chan struct{}, s.cfg.Concurrency*8)
	wave := min(len(payments), cap(active))
	if s.cfg.Rate > 0 {
		pace = newPacer(s.cfg.Rate, s.cfg.Concurrency)
	}
	for i, p := range payments {
		if i == wave && pace != nil {
			startPacer(ctx, &wg, pace, plans[:wave], sends)
		}
		select {
		case active <- struct{}{}:
		case <-ctx.Done():
			return pace
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-active }()
			s.walk(ctx, st, pace, lag, p, plans[i], s.dropped[i])
		}()
	}
	if wave == len(payments) && pace != nil {
		startPacer(ctx, &wg, pace, plans[:wave], sends)
	}
	return pace
}

// startPacer starts the clock once the first wave of walkers (plans) is
// parked: every send of a first group without a delay blocked in acquire.
// Spawning that wave is thousands of goroutines; a clock already running
// would start sends while they take the cores, and the first acks of every
// run, on any target, would measure paysim (20-50 ms, seen in both the
// ledger's and the floor's first 50 ms).
func startPacer(ctx context.Context, wg *sync.WaitGroup, pace *pacer, plans [][][]send, sends int) {
	ready := 0
	for _, groups := range plans {
		if len(groups) > 0 && len(groups[0]) > 0 && groups[0][0].delay <= 0 {
			ready += len(groups[0])
		}
	}
	pace.awaitWaiting(ctx, ready)
	// And collect now what plans, signatures and the wave allocated, as
	// testing.B does before it times: a collection falling in the first
	// sends made them assist it, 20-70 ms on either target in about one
	// run in four.
	runtime.GC()
	wg.Add(1)
	go func() {
		defer wg.Done()
		pace.run(ctx, sends)
	}()
}

// walk sends one payment's groups in order, each group's sends at once
// (with a pacer: each as soon as the pacer starts it). With drop, only the
// first step's sends go out; a send in the outage window is lost. Either
// still takes its start from the pacer, so the pacer's count holds.
func (s *Sender) walk(ctx context.Context, st *Stats, pace *pacer, lag Sampler, p *truth.Payment, groups [][]send, drop bool) {
	for _, g := range groups {
		if backoff.Sleep(ctx, g[0].delay) != nil {
			return
		}
		s.gate.RLock()
		s.maybeOpenOutage()
		for _, sd := range g {
			s.provider.Advance(p, sd.step) // the provider's state runs ahead of its webhooks
		}
		var wg sync.WaitGroup
		for _, sd := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if pace != nil {
					if !pace.acquire(ctx) {
						return
					}
					defer pace.release()
				}
				w := &p.Steps[sd.step].Webhook
				if reason := s.withhold(drop, sd.step); reason != "" {
					st.withhold(p, sd.step, reason, s.d.now())
					return
				}
				rec := s.d.deliver(ctx, p, w)
				st.record(p.Provider+"/"+w.EventID, rec)
				if lag != nil {
					lag.Offer(p, rec)
				}
			}()
		}
		wg.Wait()
		s.gate.RUnlock()
		s.maybePause(ctx, len(g))
	}
}

// maybePause counts n finished sends and, the first time PauseAfter is
// reached, holds every delivery back while Pause runs.
func (s *Sender) maybePause(ctx context.Context, n int) {
	done := s.finished.Add(int64(n))
	if s.cfg.Pause == nil || done < s.pauseAfter || !s.paused.CompareAndSwap(false, true) {
		return
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	s.cfg.Pause(ctx)
	s.pauseDone.Store(true)
}

// maybeOpenOutage opens a mid-run outage once half the sends finished and
// any snapshot due by then has been taken: a window running while
// deliveries are held back would lose nothing.
func (s *Sender) maybeOpenOutage() {
	if s.outageMid == 0 || s.finished.Load() < s.outageMid {
		return
	}
	if s.cfg.Pause == nil || s.pauseAfter > s.outageMid || s.pauseDone.Load() {
		s.outage.open(s.d.now())
	}
}

// withhold says why a send of step is not made ("" when it is).
func (s *Sender) withhold(drop bool, step int) string {
	switch {
	case drop && step > 0:
		return Dropped
	case s.outage.covers(s.d.now()):
		return Lost
	}
	return ""
}
