package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"
)

// sim is one simulation: the generated payments, the fake provider APIs
// (listening from newSim on, so the ledger can be configured before the
// run) and the signer.
type sim struct {
	cfg      Config
	payments []*Payment
	api      *providerAPI
	sign     *signer
	srv      *http.Server
	apiBase  string
	served   chan error
}

// newSim generates the payments and starts the provider API server.
func newSim(cfg Config) (*sim, error) {
	payments, err := Generate(cfg.Seed, cfg.Payments, cfg.Providers, cfg.Skip)
	if err != nil {
		return nil, err
	}
	key, err := signingKey(cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	kid := keyID(&key.PublicKey)
	api, err := newProviderAPI(cfg.Creds, kid, &key.PublicKey, payments)
	if err != nil {
		return nil, fmt.Errorf("paysim: jwks: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.APIAddr)
	if err != nil {
		return nil, fmt.Errorf("paysim: provider API: %w", err)
	}
	s := &sim{cfg: cfg, payments: payments, api: api, sign: &signer{creds: cfg.Creds, key: key, kid: kid},
		srv: &http.Server{Handler: api.handler(), ReadHeaderTimeout: 10 * time.Second}, apiBase: "http://" + ln.Addr().String(),
		served: make(chan error, 1)}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s, nil
}

// env is the ledger configuration that matches this simulation.
func (s *sim) env() [][2]string { return s.cfg.env(s.apiBase) }

// close stops the provider API server.
func (s *sim) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.served
}

// run delivers every payment's webhooks to the ledger at base, waits for
// convergence and returns the report. With --ack-only it reports the
// acknowledgements alone: the target has no read API to verify against.
func (s *sim) run(ctx context.Context, ledger string, progress io.Writer) (*Report, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.cfg.Concurrency * 2, MaxConnsPerHost: 0}}
	defer client.CloseIdleConnections()
	if err := waitReady(ctx, client, ledger, s.cfg.ReadyWait); err != nil {
		return nil, err
	}
	st := newStats()
	d := &deliverer{client: client, ledger: ledger, sign: s.sign, retry: s.cfg.Retry,
		slots: make(chan struct{}, s.cfg.Concurrency), now: time.Now}
	r := &reader{client: client, ledger: ledger, token: s.cfg.Token}
	var lag *lagMeter
	if !s.cfg.AckOnly {
		lag = newLagMeter(ctx, s.cfg.Lag, r, s.cfg.Retry.Timeout, time.Now)
	}
	if err := s.sign.presign(s.payments); err != nil {
		return nil, err
	}
	start := time.Now()
	stopProgress := startProgress(progress, st, start)
	pace := s.deliverAll(ctx, d, st, lag)
	delivered := time.Since(start)
	stopProgress()
	if err := ctx.Err(); err != nil {
		lag.finish(time.Now())
		return nil, fmt.Errorf("paysim: interrupted: %w", err)
	}
	var checks map[*Payment]check
	settleStart := time.Now()
	if !s.cfg.AckOnly {
		// The samples still in flight end while the read models converge.
		lagDone := make(chan struct{})
		go func() {
			defer close(lagDone)
			lag.finish(settleStart.Add(s.cfg.Settle))
		}()
		checks = r.converge(ctx, s.payments, s.cfg.Concurrency, settleStart.Add(s.cfg.Settle), 250*time.Millisecond)
		<-lagDone
	}
	rep := s.report(st, checks)
	lag.fill(rep)
	rep.DeliverySeconds = delivered.Seconds()
	rep.SettleSeconds = time.Since(settleStart).Seconds()
	rep.DurationSeconds = time.Since(start).Seconds()
	if delivered > 0 {
		rep.Throughput = float64(rep.Deliveries) / delivered.Seconds()
	}
	if pace != nil {
		rep.Rate, rep.OfferedRate, rep.LateStarts = s.cfg.Rate, pace.offered(), int(pace.late.Load())
	}
	return rep, nil
}

// deliverAll walks every payment's plan; a bounded number of payments are
// in flight at once so that a huge run does not start everything at once.
// With --rate, sends start on the pacer's clock (returned, for the report);
// the walkers waiting for a start outnumber the in-flight cap, so a start
// never waits for a send to be ready, only for a free slot. Every finished
// send is offered to lag (nil: no lag measurement).
func (s *sim) deliverAll(ctx context.Context, d *deliverer, st *stats, lag *lagMeter) *pacer {
	plans := make([][][]send, len(s.payments))
	sends := 0
	for i, p := range s.payments {
		plans[i] = plan(planRand(s.cfg.Seed, i), p, s.cfg.Chaos)
		for _, g := range plans[i] {
			st.plan(len(g))
			sends += len(g)
		}
	}
	var pace *pacer
	var wg sync.WaitGroup
	defer wg.Wait()
	active := make(chan struct{}, s.cfg.Concurrency*8)
	wave := min(len(s.payments), cap(active))
	if s.cfg.Rate > 0 {
		pace = newPacer(s.cfg.Rate, s.cfg.Concurrency)
	}
	for i, p := range s.payments {
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
			s.walk(ctx, d, st, pace, lag, p, plans[i])
		}()
	}
	if wave == len(s.payments) && pace != nil {
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
// (with a pacer: each as soon as the pacer starts it).
func (s *sim) walk(ctx context.Context, d *deliverer, st *stats, pace *pacer, lag *lagMeter, p *Payment, groups [][]send) {
	for _, g := range groups {
		if !sleep(ctx, g[0].delay) {
			return
		}
		for _, sd := range g {
			s.api.advance(p, sd.step) // the provider's state runs ahead of its webhooks
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
				rec := d.deliver(ctx, p, w)
				st.record(p.Provider+"/"+w.EventID, rec)
				lag.offer(p, rec)
			}()
		}
		wg.Wait()
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// waitReady polls GET /readyz until 200 or timeout.
func waitReady(ctx context.Context, client *http.Client, ledger string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ledger+"/readyz", nil)
		if err != nil {
			return fmt.Errorf("paysim: ledger URL: %w", err)
		}
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("paysim: ledger at %s not ready after %s: %w", ledger, timeout, last)
		}
		if !sleep(ctx, 200*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// simulate is `paysim run`: start the APIs, print what the ledger needs,
// run, report.
func simulate(ctx context.Context, cfg Config, stdout, stderr io.Writer) (*Report, error) {
	s, err := newSim(cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	fmt.Fprintf(stderr, "paysim: provider APIs on %s (Mercado Pago %s/mercadopago, JWKS %s/.well-known/jwks.json); ledger config:\n",
		s.apiBase, s.apiBase, s.apiBase)
	printEnv(stderr, s.env())
	var progress io.Writer
	if cfg.Progress || isTerminal(stderr) {
		progress = stderr
	}
	rep, err := s.run(ctx, cfg.Ledger, progress)
	if err != nil {
		return nil, err
	}
	if cfg.JSON {
		err = rep.writeJSON(stdout)
	} else {
		rep.writeText(stdout)
	}
	return rep, err
}
