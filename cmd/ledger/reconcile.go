package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/jobs"
	"github.com/payledger/payledger/projections"
)

// `ledger reconcile` runs one reconciliation pass from the command line:
// the pass `ledger serve` runs every LEDGER_RECONCILE_INTERVAL, with the
// same selection, rate, breaker and log (ARCHITECTURE.md, "Reconciliation").

// errChecksFailed marks a pass in which some checks failed (exit status 1).
var errChecksFailed = errors.New("checks failed")

type reconcileOptions struct {
	Provider  string
	OlderThan *time.Duration // nil: LEDGER_RECONCILE_AFTER
	Payment   string
	DryRun    bool
	JSON      bool
}

func reconcileFlags(fs *flag.FlagSet) func(context.Context, *environment) error {
	var o reconcileOptions
	var olderThan string
	fs.StringVar(&o.Provider, "provider", "", "check only this provider's payments (stripe, mercadopago, asaas, pagarme)")
	fs.StringVar(&olderThan, "older-than", "", "in doubt once quiet this long (Go duration, 0s: every payment not final); default LEDGER_RECONCILE_AFTER")
	fs.StringVar(&o.Payment, "payment", "", "check only this provider payment ID, whatever its state (needs --provider)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "ask the providers and report what would change, without appending anything")
	fs.BoolVar(&o.JSON, "json", false, "print the summary as one JSON object")
	return func(ctx context.Context, e *environment) error {
		if err := o.parse(olderThan); err != nil {
			return usageError{fmt.Errorf("reconcile: %w", err)}
		}
		return reconcile(ctx, e, o)
	}
}

func (o *reconcileOptions) parse(olderThan string) error {
	if o.Provider != "" && !slices.Contains(providerNames(), o.Provider) {
		return fmt.Errorf("--provider %q: want one of %s", o.Provider, strings.Join(providerNames(), ", "))
	}
	if o.Payment != "" && o.Provider == "" {
		return errors.New("--payment needs --provider")
	}
	if olderThan != "" {
		d, err := time.ParseDuration(olderThan)
		if err != nil || d < 0 {
			return fmt.Errorf("--older-than %q: want a duration such as 30m or 0s", olderThan)
		}
		o.OlderThan = &d
	}
	return nil
}

func reconcile(ctx context.Context, e *environment, o reconcileOptions) error {
	pool, store, err := openCommandStores(ctx, e)
	if err != nil {
		return err
	}
	defer pool.Close()
	defer store.close()
	gate := jobs.NewGate(gateConfig(e.cfg), nil)
	rcfg, err := reconcilerConfig(e.cfg, gate, store, projections.NewQueries(pool), nil, e.logger)
	if err != nil {
		return configError(err)
	}
	if o.Provider != "" && !slices.ContainsFunc(rcfg.Fetchers, func(f jobs.StatusFetcher) bool { return f.Name() == o.Provider }) {
		return usageError{fmt.Errorf("reconcile: %s has no API credentials configured (see `ledger help`: its LEDGER_%s_* variables)",
			o.Provider, strings.ToUpper(o.Provider))}
	}
	r, err := jobs.NewReconciler(*rcfg)
	if err != nil {
		return configError(err)
	}
	bar := newPassProgress(e.stderr, o.JSON)
	rep, runErr := r.Pass(ctx, jobs.PassOptions{Run: "cli-" + uuid.NewString(), Provider: o.Provider, OlderThan: o.OlderThan,
		PaymentID: o.Payment, DryRun: o.DryRun, Results: o.DryRun || o.JSON, Progress: bar.show})
	bar.done()
	if err := printPass(e.stdout, rep, o, rcfg.Providers); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("reconcile: %w", runErr)
	}
	if n := failedChecks(rep); n > 0 {
		return fmt.Errorf("reconcile: %d checks failed: %w", n, errChecksFailed)
	}
	return nil
}

// openCommandStores opens the read-model pool (migrated) and the event
// store, as serve does, for a command that reads and appends.
func openCommandStores(ctx context.Context, e *environment) (*pgxpool.Pool, openedStore, error) {
	open := openPool
	if e.cfg.EventStoreURL == "" {
		open = openStorePool
	}
	pool, err := open(ctx, e.cfg.DatabaseURL, e.logger)
	if err != nil {
		return nil, openedStore{}, err
	}
	store, err := openEventStore(ctx, e.cfg, pool, func(ctx context.Context, u string) (*pgxpool.Pool, error) {
		return openStorePool(ctx, u, e.logger)
	}, e.logger)
	if err != nil {
		pool.Close()
		return nil, openedStore{}, err
	}
	return pool, store, nil
}

// reconcileFetchers builds every configured provider's status client for
// the reconciler, over an HTTP client whose every attempt (retries
// included) takes a token of that provider's rate.
func reconcileFetchers(cfg Config, gate *jobs.Gate) ([]jobs.StatusFetcher, error) {
	var out []jobs.StatusFetcher
	for _, p := range providerTable() {
		hc := &http.Client{Transport: jobs.GateTransport(http.DefaultTransport, gate, p.name)}
		f, err := p.status(cfg, hc)
		if err != nil {
			return nil, fmt.Errorf("%s status client: %w", p.name, err)
		}
		if f != nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// gateConfig is the reconciler's manners: LEDGER_RECONCILE_RATE (and each
// provider's own), LEDGER_RECONCILE_COOLDOWN.
func gateConfig(cfg Config) jobs.GateConfig {
	return jobs.GateConfig{Rate: cfg.Reconcile.Rate, Rates: cfg.Reconcile.Rates, Cooldown: cfg.Reconcile.Cooldown}
}

// reconcilerConfig is the reconciler of cfg: serve's periodic and on-demand
// checks and `ledger reconcile` share it.
func reconcilerConfig(cfg Config, gate *jobs.Gate, store jobs.ReconcileStore, candidates jobs.CandidateSource,
	observer jobs.ReconcileObserver, logger *slog.Logger) (*jobs.ReconcilerConfig, error) {
	fetchers, err := reconcileFetchers(cfg, gate)
	if err != nil {
		return nil, err
	}
	return &jobs.ReconcilerConfig{Fetchers: fetchers, Providers: providerNames(), Gate: gate, Store: store,
		Candidates: candidates, Observer: observer, After: cfg.Reconcile.After, Sample: cfg.Reconcile.Sample,
		ReviewAfter: cfg.Reconcile.ReviewAfter, ReviewAfterBy: cfg.Reconcile.ReviewAfterBy,
		Logger: logger.With("component", "reconciler")}, nil
}

// failedChecks counts the checks that failed: the provider could not be
// asked (logged as failed) or the check could not be logged.
func failedChecks(rep jobs.PassReport) int {
	n := rep.Failed
	for _, c := range rep.Counts {
		n += c[string(domain.OutcomeFailed)]
	}
	return n
}

// passReport is the --json summary.
type passReport struct {
	Run       string             `json:"run"`
	DryRun    bool               `json:"dry_run"`
	Providers []providerPassLine `json:"providers"`
	Checked   int                `json:"checked"`
	Failed    int                `json:"failed"` // checks that failed (exit status 1)
	Remaining int                `json:"remaining"`
	Checks    []passCheck        `json:"checks"`
}

type providerPassLine struct {
	Provider    string                         `json:"provider"`
	Checks      map[string]int                 `json:"checks"` // outcome (and "skipped") → n
	Corrections map[domain.CorrectionCause]int `json:"corrections"`
	Skipped     string                         `json:"skipped,omitempty"` // why the provider was not asked at all
}

type passCheck struct {
	Provider          string                 `json:"provider"`
	ProviderPaymentID string                 `json:"provider_payment_id"`
	Trigger           string                 `json:"trigger"`
	StatusBefore      domain.Status          `json:"status_before"`
	StatusObserved    domain.Status          `json:"status_observed"`
	ProviderStatus    string                 `json:"provider_status"`
	StatusAfter       domain.Status          `json:"status_after"`
	Outcome           string                 `json:"outcome"`
	Cause             domain.CorrectionCause `json:"cause"`
	Error             string                 `json:"error"`
}

// passColumns are the summary table's outcome columns.
var passColumns = []string{string(domain.OutcomeUnchanged), string(domain.OutcomeCorrected), string(domain.OutcomeNotFound),
	string(domain.OutcomeFailed), jobs.OutcomeSkipped}

func newPassReport(rep jobs.PassReport, o reconcileOptions, providers []string) passReport {
	out := passReport{Run: rep.Run, DryRun: o.DryRun, Failed: failedChecks(rep), Remaining: rep.Remaining, Checks: []passCheck{}}
	for _, p := range providers {
		if o.Provider != "" && p != o.Provider {
			continue
		}
		line := providerPassLine{Provider: p, Checks: map[string]int{}, Corrections: map[domain.CorrectionCause]int{},
			Skipped: rep.Skipped[p]}
		for _, c := range passColumns {
			line.Checks[c] = rep.Counts[p][c]
			if c != jobs.OutcomeSkipped {
				out.Checked += rep.Counts[p][c]
			}
		}
		for _, c := range domain.CorrectionCauses() {
			line.Corrections[c] = rep.Corrections[p][c]
		}
		out.Providers = append(out.Providers, line)
	}
	for _, r := range rep.Results {
		c := passCheck{Provider: r.Provider, ProviderPaymentID: r.PaymentID, Trigger: r.Trigger,
			StatusBefore: r.StatusBefore, StatusObserved: r.StatusObserved, StatusAfter: r.StatusAfter,
			Outcome: string(r.Outcome), Cause: r.Cause}
		switch {
		case r.Skipped != "":
			c.Outcome, c.Error = jobs.OutcomeSkipped, r.Skipped
		case r.Err != nil:
			c.Outcome, c.Error = string(domain.OutcomeFailed), r.Err.Error()
		case r.Check != nil:
			c.ProviderStatus, c.Error = r.Check.ProviderStatus, r.Check.Error
		}
		out.Checks = append(out.Checks, c)
	}
	return out
}

// printPass prints the summary: a table per provider and outcome (and, in
// a dry run, what would change), or with --json one object.
func printPass(w io.Writer, rep jobs.PassReport, o reconcileOptions, providers []string) error {
	r := newPassReport(rep, o, providers)
	if o.JSON {
		if err := json.NewEncoder(w).Encode(r); err != nil {
			return fmt.Errorf("reconcile: %w", err)
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	title := "reconciliation " + r.Run
	if r.DryRun {
		title += " (dry run: nothing appended)"
	}
	fmt.Fprintln(w, title)
	fmt.Fprintf(tw, "provider\t%s\tmissing_webhook\tdiverged\t\n", strings.Join(passColumns, "\t"))
	for _, l := range r.Providers {
		fmt.Fprintf(tw, "%s\t", l.Provider)
		for _, c := range passColumns {
			fmt.Fprintf(tw, "%d\t", l.Checks[c])
		}
		fmt.Fprintf(tw, "%d\t%d\t\n", l.Corrections[domain.CauseMissingWebhook], l.Corrections[domain.CauseDiverged])
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	for _, l := range r.Providers {
		if l.Skipped != "" {
			fmt.Fprintf(w, "%s not asked: %s\n", l.Provider, l.Skipped)
		}
	}
	if r.Remaining > 0 {
		fmt.Fprintf(w, "%d payments left for the next pass\n", r.Remaining)
	}
	if r.DryRun {
		for _, c := range r.Checks {
			if c.Outcome == string(domain.OutcomeCorrected) {
				fmt.Fprintf(w, "would correct %s/%s: %s → %s (%s, provider says %s)\n", c.Provider, c.ProviderPaymentID,
					c.StatusBefore, c.StatusAfter, c.Cause, c.ProviderStatus)
			}
		}
	}
	for _, c := range r.Checks {
		if c.Outcome == string(domain.OutcomeFailed) {
			fmt.Fprintf(w, "failed %s/%s: %s\n", c.Provider, c.ProviderPaymentID, c.Error)
		}
	}
	return nil
}

// passProgress draws the pass's progress bar on a terminal only.
type passProgress struct{ bar *progressbar.ProgressBar }

func newPassProgress(w io.Writer, asJSON bool) passProgress {
	f, ok := w.(*os.File)
	if asJSON || !ok || !term.IsTerminal(int(f.Fd())) {
		return passProgress{}
	}
	return passProgress{bar: progressbar.NewOptions(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("reconcile"),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))}
}

func (p passProgress) show(done, total int) {
	if p.bar == nil {
		return
	}
	if p.bar.GetMax() != total {
		p.bar.ChangeMax(total)
	}
	_ = p.bar.Set(done)
}

func (p passProgress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
