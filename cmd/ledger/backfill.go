package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/rest"
)

// `ledger backfill` recovers an outage: it asks the provider's list API what
// it holds for a window and stores it through eventstore.Recorder, the path
// every webhook takes, so a fact already stored is a duplicate and a missing
// one is added exactly once. Running it again resumes (everything done is a
// duplicate). ARCHITECTURE.md ("Backfill") says what each provider can list.

// lister is a status client that can also list a window (providers.Page).
type lister interface {
	ListPage(ctx context.Context, w providers.Window, cursor string) (providers.Page, error)
	Coverage() providers.Coverage
}

// errBackfillFailed marks a run in which some listed objects could not be
// stored (exit status 1).
var errBackfillFailed = errors.New("backfill failed")

type backfillOptions struct {
	Provider     string
	Since, Until time.Time
	DryRun, JSON bool
}

// backfillReport is the summary; --json prints it as one object.
type backfillReport struct {
	Provider string    `json:"provider"`
	Since    time.Time `json:"since"`
	Until    time.Time `json:"until"`
	// Coverage says what the provider's list API can see of the window.
	Coverage   providers.Coverage `json:"coverage"`
	DryRun     bool               `json:"dry_run"`
	Fetched    int                `json:"fetched"`    // objects listed
	New        int                `json:"new"`        // stored now (with --dry-run: would be)
	Duplicates int                `json:"duplicates"` // already stored
	Ignored    int                `json:"ignored"`    // listed objects that map to no fact (as their webhooks would)
	Failed     int                `json:"failed"`     // objects that could not be mapped or stored
	Errors     []string           `json:"errors"`     // the first few failures
}

// maxReportedErrors bounds backfillReport.Errors.
const maxReportedErrors = 20

func backfillFlags(fs *flag.FlagSet) func(context.Context, *environment) error {
	var o backfillOptions
	var since, until string
	fs.StringVar(&o.Provider, "provider", "", "the provider to ask (stripe, mercadopago, asaas, pagarme); required")
	fs.StringVar(&since, "since", "", "start of the window, RFC 3339 (2026-03-01T00:00:00Z); required")
	fs.StringVar(&until, "until", "", "end of the window (excluded), RFC 3339; default now")
	fs.BoolVar(&o.DryRun, "dry-run", false, "list and report what would be stored, without storing")
	fs.BoolVar(&o.JSON, "json", false, "print the summary as one JSON object")
	return func(ctx context.Context, e *environment) error {
		if err := o.parse(since, until, time.Now()); err != nil {
			return usageError{fmt.Errorf("backfill: %w", err)}
		}
		return backfill(ctx, e, o)
	}
}

// parse checks the flags and fills in the window.
func (o *backfillOptions) parse(since, until string, now time.Time) error {
	if o.Provider == "" {
		return errors.New("--provider is required")
	}
	if since == "" {
		return errors.New("--since is required")
	}
	var err error
	if o.Since, err = time.Parse(time.RFC3339, since); err != nil {
		return fmt.Errorf("--since %q: want an RFC 3339 time such as 2026-03-01T00:00:00Z", since)
	}
	o.Until = now
	if until != "" {
		if o.Until, err = time.Parse(time.RFC3339, until); err != nil {
			return fmt.Errorf("--until %q: want an RFC 3339 time such as 2026-03-02T00:00:00Z", until)
		}
	}
	if !o.Since.Before(o.Until) {
		return fmt.Errorf("--since %s is not before --until %s", o.Since.Format(time.RFC3339), o.Until.Format(time.RFC3339))
	}
	o.Since, o.Until = o.Since.UTC(), o.Until.UTC()
	return nil
}

// backfillLister returns the provider's list client, or an error saying why
// there is none (unknown provider, no API credentials, no list API).
func backfillLister(cfg Config, name string) (lister, error) {
	var names []string
	for _, p := range providerTable() {
		names = append(names, p.name)
		if p.name != name {
			continue
		}
		st, err := p.status(cfg, nil)
		if err != nil {
			return nil, fmt.Errorf("backfill: %s API client: %w", name, err)
		}
		if st == nil {
			return nil, usageError{fmt.Errorf("backfill: %s has no API credentials configured (see `ledger help`: its LEDGER_%s_* variables)",
				name, strings.ToUpper(name))}
		}
		l, ok := st.(lister)
		if !ok {
			return nil, usageError{fmt.Errorf("backfill: %s has no list API payledger can backfill from", name)}
		}
		return l, nil
	}
	return nil, usageError{fmt.Errorf("backfill: unknown provider %q (want one of %s)", name, strings.Join(names, ", "))}
}

func backfill(ctx context.Context, e *environment, o backfillOptions) error {
	l, err := backfillLister(e.cfg, o.Provider)
	if err != nil {
		return err
	}
	pool, store, err := openCommandStores(ctx, e)
	if err != nil {
		return err
	}
	defer pool.Close()
	defer store.close()

	rep := backfillReport{Provider: o.Provider, Since: o.Since, Until: o.Until, Coverage: l.Coverage(), DryRun: o.DryRun, Errors: []string{}}
	bar := newProgress(e.stderr, o.JSON)
	b := backfiller{store: store, rec: eventstore.NewRecorder(store, eventstore.NewCodec(), 5, nil), codec: eventstore.NewCodec(),
		dryRun: o.DryRun, now: time.Now}
	runErr := b.run(ctx, l, providers.Window{Since: o.Since, Until: o.Until}, &rep, func() { bar.show(rep) })
	bar.done()
	if err := printBackfill(e.stdout, rep, o.JSON); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if rep.Failed > 0 {
		return fmt.Errorf("backfill: %d of %d listed objects failed: %w", rep.Failed, rep.Fetched, errBackfillFailed)
	}
	return nil
}

// backfiller stores what the pages list.
type backfiller struct {
	store  eventstore.Store
	rec    *eventstore.Recorder
	codec  *eventstore.Codec
	dryRun bool
	now    func() time.Time
}

// run walks the window's pages and records every listed object, counting
// into rep and calling progress after each page. A page the provider does
// not answer (after the client's own retries) ends the run with its error:
// what was stored stays, and the next run resumes.
func (b backfiller) run(ctx context.Context, l lister, w providers.Window, rep *backfillReport, progress func()) error {
	cursor := ""
	for {
		page, err := l.ListPage(ctx, w, cursor)
		if err != nil {
			if refused(err) {
				return fmt.Errorf("backfill: %s refused the API credentials; check its LEDGER_%s_* key: %w",
					rep.Provider, strings.ToUpper(rep.Provider), err)
			}
			return fmt.Errorf("backfill: list %s (after %d objects; run again to resume): %w", rep.Provider, rep.Fetched, err)
		}
		for _, n := range page.Notifications {
			rep.Fetched++
			if err := b.one(ctx, n, rep); err != nil {
				if !errors.Is(err, eventstore.ErrNotStored) && domain.KindOf(err) != domain.KindInvalid {
					return err
				}
				if errors.Is(err, eventstore.ErrNotStored) {
					return fmt.Errorf("backfill: the event store failed (run again to resume): %w", err)
				}
				rep.Failed++
				if len(rep.Errors) < maxReportedErrors {
					rep.Errors = append(rep.Errors, err.Error())
				}
			}
		}
		progress()
		if page.Next == "" {
			return nil
		}
		if page.Next == cursor {
			return fmt.Errorf("backfill: %s returned the same page cursor %q twice", rep.Provider, cursor)
		}
		cursor = page.Next
	}
}

// refused reports whether the provider refused our credentials: its API
// answered 401 or 403 (providers/rest keeps the status).
func refused(err error) bool {
	var re *rest.Error
	if errors.As(err, &re) && (re.Status == http.StatusUnauthorized || re.Status == http.StatusForbidden) {
		return true
	}
	return domain.KindOf(err) == domain.KindUnauthorized
}

// one records (or, in a dry run, looks up) one listed object.
func (b backfiller) one(ctx context.Context, n domain.Notification, rep *backfillReport) error {
	if len(n.Events) == 0 {
		rep.Ignored++
		return nil
	}
	meta := eventstore.Metadata{Provider: rep.Provider, ProviderEventType: n.ProviderEventType,
		ReceivedAt: b.now().UTC(), Source: eventstore.SourceBackfill}
	if b.dryRun {
		stored, err := b.stored(ctx, n, meta)
		if err != nil {
			return err
		}
		if stored {
			rep.Duplicates++
		} else {
			rep.New++
		}
		return nil
	}
	res, err := b.rec.Record(ctx, n, meta)
	if err != nil {
		return fmt.Errorf("backfill: %s %s: %w", rep.Provider, n.ProviderEventID, err)
	}
	if res.Duplicate() {
		rep.Duplicates++
	} else {
		rep.New++
	}
	return nil
}

// stored reports whether every event of n is already in its stream, as
// Record would find it: the dry run's answer to "new or duplicate".
func (b backfiller) stored(ctx context.Context, n domain.Notification, meta eventstore.Metadata) (bool, error) {
	for _, ev := range n.Events {
		m := ev.EventMeta()
		if m.Provider != meta.Provider || m.ProviderPaymentID == "" || m.ProviderEventID == "" {
			return false, domain.Invalid("backfill: dry run", fmt.Sprintf("a %s fact without its payment or event ID, or of another provider", ev.EventType()), nil)
		}
		data, err := b.codec.Encode(ev, meta)
		if err != nil {
			return false, fmt.Errorf("backfill: dry run: %w", err)
		}
		recs, err := b.store.ReadStream(ctx, eventstore.PaymentStream(m.Provider, m.ProviderPaymentID))
		if err != nil {
			return false, fmt.Errorf("backfill: dry run: read %s: %w", m.ProviderPaymentID, err)
		}
		found := false
		for _, r := range recs {
			if r.ID == data.ID {
				found = true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}

// printBackfill prints the summary: a table, or with --json one object.
func printBackfill(w io.Writer, r backfillReport, asJSON bool) error {
	if asJSON {
		if err := json.NewEncoder(w).Encode(r); err != nil {
			return fmt.Errorf("backfill: %w", err)
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	verb := "stored"
	if r.DryRun {
		verb = "would store (dry run)"
	}
	fmt.Fprintf(tw, "backfill %s\t%s … %s\n", r.Provider, r.Since.Format(time.RFC3339), r.Until.Format(time.RFC3339))
	fmt.Fprintf(tw, "coverage\t%s\n", coverageText(r.Coverage))
	fmt.Fprintf(tw, "fetched\t%d\n", r.Fetched)
	fmt.Fprintf(tw, "new (%s)\t%d\n", verb, r.New)
	fmt.Fprintf(tw, "duplicates\t%d\n", r.Duplicates)
	fmt.Fprintf(tw, "ignored\t%d\n", r.Ignored)
	fmt.Fprintf(tw, "failed\t%d\n", r.Failed)
	for _, e := range r.Errors {
		fmt.Fprintf(tw, "  error\t%s\n", e)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("backfill: %w", err)
	}
	return nil
}

func coverageText(c providers.Coverage) string {
	switch c {
	case providers.CoverageChanges:
		return "every change in the window"
	case providers.CoverageCreatedOrPaid:
		return "payments created or paid in the window; later changes of older payments are the reconciler's"
	case providers.CoverageCreated:
		return "charges created in the window; later changes of older charges are the reconciler's"
	}
	return string(c)
}

// progress draws a progress bar on a terminal (never with --json, never
// into a pipe or a log).
type progress struct{ bar *progressbar.ProgressBar }

func newProgress(w io.Writer, asJSON bool) progress {
	f, ok := w.(*os.File)
	if asJSON || !ok || !term.IsTerminal(int(f.Fd())) {
		return progress{}
	}
	return progress{bar: progressbar.NewOptions(-1, progressbar.OptionSetWriter(w), progressbar.OptionSpinnerType(14),
		progressbar.OptionSetDescription("backfill"), progressbar.OptionClearOnFinish())}
}

func (p progress) show(r backfillReport) {
	if p.bar == nil {
		return
	}
	p.bar.Describe(fmt.Sprintf("backfill %s: fetched %d, new %d, duplicates %d, failed %d", r.Provider, r.Fetched, r.New, r.Duplicates, r.Failed))
	_ = p.bar.Set(r.Fetched)
}

func (p progress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
