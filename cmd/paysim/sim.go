package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/deliver"
	"github.com/payledger/payledger/cmd/paysim/internal/fakeapi"
	"github.com/payledger/payledger/cmd/paysim/internal/gen"
	"github.com/payledger/payledger/cmd/paysim/internal/lag"
	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/sign"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/cmd/paysim/internal/verdict"
)

// sim is one simulation: the generated payments, the fake provider APIs
// (listening from newSim on, so the ledger can be configured before the
// run) and the signer.
type sim struct {
	cfg      Config
	payments []*truth.Payment
	api      *fakeapi.API
	sign     *sign.Signer
	srv      *http.Server
	apiBase  string
	served   chan error
}

// newSim generates the payments and starts the provider API server.
func newSim(cfg Config) (*sim, error) {
	payments, err := gen.GenerateAt(cfg.Epoch, cfg.Seed, cfg.Payments, cfg.Providers, cfg.Skip)
	if err != nil {
		return nil, err
	}
	key, err := sign.LoadKey(cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	signer := sign.New(cfg.Secrets, key)
	api, err := fakeapi.New(cfg.APIKeys, signer.KeyID(), &key.PublicKey, payments)
	if err != nil {
		return nil, fmt.Errorf("paysim: jwks: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.APIAddr)
	if err != nil {
		return nil, fmt.Errorf("paysim: provider API: %w", err)
	}
	s := &sim{cfg: cfg, payments: payments, api: api, sign: signer,
		srv: &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 10 * time.Second}, apiBase: "http://" + ln.Addr().String(),
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
func (s *sim) run(ctx context.Context, ledger string, progress io.Writer) (*verdict.Report, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.cfg.Concurrency * 2, MaxConnsPerHost: 0}}
	defer client.CloseIdleConnections()
	r := &readapi.Client{HTTP: client, Ledger: ledger, Token: s.cfg.Token}
	if err := r.WaitReady(ctx, s.cfg.ReadyWait); err != nil {
		return nil, err
	}
	st := deliver.NewStats()
	books := s.startBooks(ctx, r)
	sender := deliver.New(books.deliverConfig(deliver.Config{Ledger: ledger, Seed: s.cfg.Seed, Chaos: s.cfg.Chaos,
		Retry: s.cfg.Retry, Concurrency: s.cfg.Concurrency, Rate: s.cfg.Rate, Loss: s.cfg.Loss}), client, s.sign, s.api)
	var meter *lag.Meter
	var sampler deliver.Sampler // nil unless lag is measured
	if !s.cfg.AckOnly {
		if meter = lag.New(ctx, s.cfg.Lag, r, s.cfg.Retry.Timeout, time.Now); meter != nil {
			sampler = meter
		}
	}
	if err := s.sign.Presign(s.payments); err != nil {
		return nil, err
	}
	start := time.Now()
	stopProgress := deliver.StartProgress(progress, st, start)
	pace := sender.Run(ctx, s.payments, st, sampler)
	delivered := time.Since(start)
	stopProgress()
	if err := ctx.Err(); err != nil {
		meter.Finish(time.Now())
		return nil, fmt.Errorf("paysim: interrupted: %w", err)
	}
	totals := st.Totals(s.payments)
	if err := s.afterSend(ctx, totals.Lost); err != nil {
		return nil, err
	}
	settleStart := time.Now()
	readings := s.settle(ctx, r, meter, totals.Unsent, settleStart.Add(s.cfg.Settle))
	rep := verdict.Build(s.cfg.Seed, s.payments, readings, totals, s.api.FetchCounts())
	rep.SetOutage(sender.Outage())
	if err := s.converged(ctx, r, rep, readings, totals, settleStart); err != nil {
		return nil, err
	}
	meter.Fill(rep)
	if s.cfg.Books {
		rep.SetBooks(books.check(ctx, settleStart.Add(s.cfg.Settle)))
	}
	if books.recorded != nil {
		delivered -= time.Duration(books.recorded.Seconds * float64(time.Second)) // deliveries were held back
	}
	rep.DeliverySeconds = delivered.Seconds()
	rep.SettleSeconds = time.Since(settleStart).Seconds()
	rep.DurationSeconds = time.Since(start).Seconds()
	if delivered > 0 {
		rep.Throughput = float64(rep.Deliveries) / delivered.Seconds()
	}
	if s.cfg.Rate > 0 {
		rep.Rate, rep.OfferedRate, rep.LateStarts = s.cfg.Rate, pace.Offered, pace.Late
	}
	return rep, nil
}

// converged says how the withheld-from payments converged and, with
// --reconciliation-log, checks the ledger's log against them.
func (s *sim) converged(ctx context.Context, r *readapi.Client, rep *verdict.Report, readings verdict.Readings,
	totals deliver.Totals, settleStart time.Time) error {
	if readings == nil {
		return nil
	}
	counts, routes := verdict.Classify(ctx, r, readings, totals.Unsent, settleStart, s.cfg.Concurrency)
	rep.SetConverged(counts)
	if !s.cfg.CheckLog {
		return nil
	}
	rows, err := r.Checks(ctx, url.Values{})
	if err != nil {
		return fmt.Errorf("paysim: %w", err)
	}
	rep.SetLogCheck(verdict.CheckLog(rows, totals.Dropped, totals.Unsent, routes))
	return nil
}

// bookRun is the ledger check of one run: the books before it (the run must
// change them by the truth's), the snapshot taken mid-run, and the check at
// the end.
type bookRun struct {
	s        *sim
	r        *readapi.Client
	baseline []readapi.Balance
	err      error // reading the baseline failed: nothing more is checked
	recorded *verdict.Recorded
}

// startBooks reads the baseline; nothing with --books=false.
func (s *sim) startBooks(ctx context.Context, r *readapi.Client) *bookRun {
	b := &bookRun{s: s, r: r}
	if s.cfg.Books {
		base, err := r.Balances(ctx, readapi.BalanceQuery{})
		b.baseline, b.err = base.Balances, err
	}
	return b
}

// deliverConfig adds the mid-run snapshot to c when one is asked for.
func (b *bookRun) deliverConfig(c deliver.Config) deliver.Config {
	cfg := b.s.cfg
	if cfg.Snapshot <= 0 || b.err != nil {
		return c
	}
	c.PauseAt = cfg.Snapshot
	c.Pause = func(ctx context.Context) {
		b.recorded = verdict.TakeSnapshot(ctx, b.r, b.s.payments, verdict.SnapshotConfig{Workers: cfg.Concurrency,
			Margin: cfg.Margin, Deadline: time.Now().Add(cfg.Settle), Attempts: 3})
	}
	return c
}

// check compares the balances with the truth's books and, when a snapshot
// was taken, reads the books as of its moment again.
func (b *bookRun) check(ctx context.Context, deadline time.Time) *verdict.BooksCheck {
	want := truth.Ledger(b.s.payments, truth.LedgerOptions{StripeFees: b.s.cfg.StripeFees})
	if b.err != nil {
		return &verdict.BooksCheck{StripeFees: b.s.cfg.StripeFees, Accounts: len(want),
			Error: "GET /v1/ledger/balances before the run: " + b.err.Error()}
	}
	c := verdict.CheckBooks(ctx, b.r, want, b.baseline, deadline, 250*time.Millisecond)
	c.StripeFees = b.s.cfg.StripeFees
	if b.recorded != nil {
		b.recorded.Recheck(ctx, b.r)
		c.Recorded = b.recorded
	}
	return c
}

// settle reads every payment back until all match or deadline passes, while
// the lag samples still in flight end; nil with --ack-only.
func (s *sim) settle(ctx context.Context, r *readapi.Client, meter *lag.Meter, unsent map[string][]string, deadline time.Time) verdict.Readings {
	if s.cfg.AckOnly {
		return nil
	}
	lagDone := make(chan struct{})
	go func() {
		defer close(lagDone)
		meter.Finish(deadline)
	}()
	readings := verdict.Converge(ctx, r, s.payments, unsent, s.cfg.Concurrency, deadline, 250*time.Millisecond)
	<-lagDone
	return readings
}

// simulate is `paysim run`: start the APIs, print what the ledger needs,
// run, report.
func simulate(ctx context.Context, cfg Config, stdout, stderr io.Writer) (*verdict.Report, error) {
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
		err = rep.WriteJSON(stdout)
	} else {
		rep.WriteText(stdout)
	}
	return rep, err
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// afterSend runs --after-send, if set, with the provider-time span of the
// lost sends: what a backfill must cover to recover the outage, and the
// ledger configuration of the simulation's fake APIs (as `paysim env`
// prints it) added to paysim's environment. Its output goes to paysim's
// standard error; a failure fails the run.
func (s *sim) afterSend(ctx context.Context, lost []deliver.Withheld) error {
	if s.cfg.AfterSend == "" {
		return nil
	}
	var since, until time.Time
	for _, l := range lost {
		if since.IsZero() || l.ProviderAt.Before(since) {
			since = l.ProviderAt
		}
		if l.ProviderAt.After(until) {
			until = l.ProviderAt
		}
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", s.cfg.AfterSend)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Env = os.Environ()
	for _, kv := range s.env() { // the ledger configuration matching the simulation's fake APIs
		cmd.Env = append(cmd.Env, kv[0]+"="+kv[1])
	}
	if !since.IsZero() {
		// Provider times are whole seconds; until is excluded, so one more.
		cmd.Env = append(cmd.Env, "PAYSIM_OUTAGE_SINCE="+since.UTC().Format(time.RFC3339),
			"PAYSIM_OUTAGE_UNTIL="+until.UTC().Add(time.Second).Truncate(time.Second).Format(time.RFC3339))
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("paysim: --after-send %q: %w", s.cfg.AfterSend, err)
	}
	return nil
}
