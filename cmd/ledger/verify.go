package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/jobs"
	"github.com/payledger/payledger/projections"
)

// `ledger verify` proves the ledger's promise after the fact, read-only and
// without migrating, so it may run against a live ledger or a replica; the
// checks themselves belong to projections (Audit), the Postgres store
// (Store.Audit) and jobs (CountUnfinished). ARCHITECTURE.md says why it is
// exact while the ledger runs.

// errVerifyFailed marks a verify run that found a problem (exit status 1).
var errVerifyFailed = errors.New("verify failed")

// verifyOptions are `ledger verify`'s flags.
type verifyOptions struct {
	JSON bool
	// Wait polls until the projection has caught up with the store (lag 0)
	// before checking; 0 checks at once. Postgres store only.
	Wait time.Duration
	// Chains re-computes every stream's hash chain too (see chain.go);
	// Progress, when set, is told the sealed events checked.
	Chains   bool
	Progress func(done, total int)
	// Scope is the slice checked (--payment, --provider, --since); the
	// zero value is the whole ledger.
	Scope projections.AuditScope
}

// verifyReport is what verify found; --json prints it as is.
type verifyReport struct {
	OK                bool             `json:"ok"`
	Backend           string           `json:"backend"`
	Checkpoint        string           `json:"checkpoint"`
	StoreHead         string           `json:"store_head,omitempty"`
	LagEvents         int64            `json:"projection_lag_events"` // -1: not measured (KurrentDB)
	PaymentsChecked   int              `json:"payments_checked"`
	EventsFolded      int              `json:"events_folded"`
	Mismatched        int              `json:"mismatched"` // payments with at least one differing field
	StreamsWithoutRow int              `json:"streams_without_row"`
	DuplicateEventIDs int              `json:"duplicate_event_ids"`
	DuplicateScope    string           `json:"duplicate_scope"`
	UniqueEventID     bool             `json:"unique_event_id_constraint"` // es_events_event_id_key present
	Mismatches        []verifyMismatch `json:"mismatches"`
	// The journal: entries checked, and every entry that does not balance,
	// payment whose entries differ from its books, currency whose debits
	// and credits differ, or running total that differs from its lines.
	LedgerEntries  int             `json:"ledger_entries_checked"`
	LedgerProblems []ledgerProblem `json:"ledger_problems"`
	Orphans        []string        `json:"streams_without_row_list,omitempty"`
	Duplicates     []string        `json:"duplicate_event_id_list,omitempty"`
	NotChecked     []string        `json:"not_checked,omitempty"`
	// Jobs counts follow-up jobs (status fetches) by state, except
	// completed ones. Informational: a running or available job may still
	// append an observation and change its payment; discarded ones are the
	// dead-letter queue.
	Jobs map[string]int `json:"jobs_not_completed,omitempty"`
	// OldestRunningJob is when the oldest still-running job was attempted:
	// a job whose process was killed stays running until the queue rescues it.
	OldestRunningJob *time.Time `json:"oldest_running_job_attempted_at,omitempty"`
	// Chains is the --chains section; absent without the flag.
	Chains *chainsReport `json:"chains,omitempty"`
	// Scope is the slice checked; Checks is one row per check.
	Scope  verifyScope   `json:"scope"`
	Checks []verifyCheck `json:"checks"`
}

// verifyMismatch is one field of one payment where the read model and the
// fold of the stream differ.
type verifyMismatch struct {
	Payment   string `json:"payment"` // provider/provider_payment_id
	Field     string `json:"field"`
	ReadModel string `json:"read_model"`
	Fold      string `json:"fold"`
}

// ledgerProblem is one difference found in the journal.
type ledgerProblem struct {
	Payment string `json:"payment,omitempty"` // provider/provider_payment_id; empty for a ledger-wide check
	Check   string `json:"check"`             // entry_balance, payment_books, currency_balance, running_totals
	Detail  string `json:"detail"`
}

// verifyFlags defines `ledger verify`'s own flags (--json is every
// read-only command's).
func verifyFlags(fs *flag.FlagSet) func(context.Context, *environment) error {
	var opts verifyOptions
	fs.DurationVar(&opts.Wait, "wait", 0, "wait up to this long for the projection to catch up before checking")
	fs.BoolVar(&opts.Chains, "chains", false, "also re-compute every stream's hash chain and name the first broken link of each")
	payment := fs.String("payment", "", "check only this payment, PROVIDER/ID")
	provider := fs.String("provider", "", "check only this provider's payments")
	since := fs.String("since", "", "check only payments with an event recorded at or after this RFC 3339 time")
	return func(ctx context.Context, e *environment) error {
		var err error
		if opts.Scope, err = parseVerifyScope(*payment, *provider, *since); err != nil {
			return err
		}
		opts.JSON = e.json
		bar := newEventsBar(e.stderr, "chains", e.json || !opts.Chains)
		defer bar.finish()
		opts.Progress = func(done, total int) { bar.show(int64(done), int64(total)) }
		return verify(ctx, e, opts)
	}
}

// verify runs `ledger verify` and prints its report.
func verify(ctx context.Context, e *environment, opts verifyOptions) error {
	rep, err := verifyLedger(ctx, e.cfg, opts, e.logger)
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
	} else {
		rep.print(e.stdout)
	}
	if !rep.OK {
		return fmt.Errorf("verify: %d payments mismatched, %d streams without a row, %d duplicate event IDs, %d ledger problems%s: %w",
			rep.Mismatched, rep.StreamsWithoutRow, rep.DuplicateEventIDs, len(rep.LedgerProblems), rep.chainsSummary(), errVerifyFailed)
	}
	return nil
}

// verifyLedger opens the configured databases read-only and checks them.
func verifyLedger(ctx context.Context, cfg Config, opts verifyOptions, logger *slog.Logger) (verifyReport, error) {
	pool, err := openReadOnly(ctx, cfg.DatabaseURL)
	if err != nil {
		return verifyReport{}, err
	}
	defer pool.Close()
	// A Postgres store's es_events are in pool or in a pool of their own;
	// the chain check lists the streams there without a seal.
	events := pool
	openEvents := func(ctx context.Context, url string) (*pgxpool.Pool, error) {
		p, err := openReadOnly(ctx, url)
		events = p
		return p, err
	}
	store, err := openEventStore(ctx, cfg, pool, openEvents, logger)
	if err != nil {
		return verifyReport{}, err
	}
	defer store.close()
	if store.pg == nil {
		events = nil
	}
	return checkLedger(ctx, pool, store, events, opts)
}

// checkLedger makes verify's checks on the opened databases, on the slice
// opts.Scope only. events holds the Postgres store's es_events (nil for
// KurrentDB).
func checkLedger(ctx context.Context, pool *pgxpool.Pool, store openedStore, events *pgxpool.Pool, opts verifyOptions) (verifyReport, error) {
	rep := newVerifyReport(store, opts)
	if store.pg != nil {
		if err := waitCaughtUp(ctx, pool, store.pg, opts.Wait); err != nil {
			return rep, err
		}
	}
	audit, err := projections.AuditOf(ctx, pool, projections.DefaultName, store, opts.Scope)
	if err != nil {
		return rep, fmt.Errorf("verify: %w", err)
	}
	rep.addAudit(audit)
	backlog, err := jobs.CountUnfinished(ctx, pool)
	if err != nil {
		return rep, fmt.Errorf("verify: %w", err)
	}
	rep.Jobs, rep.OldestRunningJob = backlog.ByState, backlog.OldestRunning
	if store.pg != nil {
		if err := rep.addStoreAudit(ctx, store.pg, audit, opts.Scope); err != nil {
			return rep, err
		}
	} else {
		rep.countDuplicatesInRows()
	}
	rep.Scope.Matched = audit.PaymentsChecked + rep.StreamsWithoutRow
	if err := rep.addLedger(ctx, pool, audit, opts.Scope); err != nil {
		return rep, err
	}
	if opts.Chains {
		if opts.Scope.All() {
			rep.Chains, err = checkChains(ctx, pool, store, events, opts.Progress)
		} else {
			rep.Chains, err = checkChainsOf(ctx, pool, store, rep.sliceStreams(audit), opts.Progress)
		}
		if err != nil {
			return rep, err
		}
	}
	rep.addChecks()
	return rep, nil
}

// addLedger adds the journal's checks, of the audited payments only when
// the run is a slice.
func (r *verifyReport) addLedger(ctx context.Context, pool *pgxpool.Pool, a projections.AuditReport, scope projections.AuditScope) error {
	var payments []string
	if !scope.All() {
		payments = append([]string{}, a.Payments...)
	}
	books, err := projections.AuditLedgerOf(ctx, pool, payments)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	r.LedgerEntries = books.Entries
	for _, p := range books.Problems {
		r.LedgerProblems = append(r.LedgerProblems, ledgerProblem(p))
	}
	if books.Sliced {
		r.NotChecked = append(r.NotChecked, "running totals: they sum every payment, so a slice does not compare them")
	}
	return nil
}

// newVerifyReport is the empty report for store's backend; KurrentDB has no
// cheap list of streams, so some checks are not made there.
func newVerifyReport(store openedStore, opts verifyOptions) verifyReport {
	rep := verifyReport{Backend: "postgres", LagEvents: -1, Mismatches: []verifyMismatch{}, LedgerProblems: []ledgerProblem{},
		Scope: newScopeReport(opts.Scope)}
	if store.pg != nil {
		return rep
	}
	rep.Backend = "kurrentdb"
	rep.NotChecked = append(rep.NotChecked,
		"projection lag and streams without a row: KurrentDB has no cheap list of streams; only the read model's streams are read")
	if opts.Wait > 0 {
		rep.NotChecked = append(rep.NotChecked, "--wait: the lag is not measured on KurrentDB; checked at once")
	}
	return rep
}

func (r *verifyReport) addAudit(a projections.AuditReport) {
	r.Checkpoint = a.Checkpoint.String()
	r.PaymentsChecked, r.EventsFolded, r.Mismatched = a.PaymentsChecked, a.EventsFolded, a.Mismatched
	for _, m := range a.Mismatches {
		r.Mismatches = append(r.Mismatches, verifyMismatch(m))
	}
}

// addStoreAudit adds the Postgres store's whole-store checks: duplicate
// event IDs, streams without a row, and the projection's lag. In a slice,
// only the slice's streams without a row count, and duplicates are counted
// among the slice's events (as on KurrentDB).
func (r *verifyReport) addStoreAudit(ctx context.Context, store *postgres.Store, a projections.AuditReport, scope projections.AuditScope) error {
	s, err := store.Audit(ctx, eventstore.PaymentStreamPrefix, a.Checkpoint)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	r.StoreHead, r.LagEvents = s.Head.String(), s.After
	r.UniqueEventID = s.UniqueEventID
	for _, stream := range s.Streams {
		if a.Streams[stream] {
			continue
		}
		in, err := inScope(ctx, store, scope, stream)
		if err != nil {
			return err
		}
		if in {
			r.Orphans = append(r.Orphans, stream)
		}
	}
	slices.Sort(r.Orphans)
	r.StreamsWithoutRow = len(r.Orphans)
	if !scope.All() {
		r.countDuplicatesInRows()
		r.DuplicateScope = "the slice's events"
		return nil
	}
	r.DuplicateScope = "the whole store (es_events)"
	for _, d := range s.Duplicates {
		r.Duplicates = append(r.Duplicates, fmt.Sprintf("%s ×%d", d.ID, d.Count))
	}
	r.DuplicateEventIDs = len(r.Duplicates)
	return nil
}

// countDuplicatesInRows counts, where the store cannot be audited as a
// whole, the event IDs found twice among the read model's streams.
func (r *verifyReport) countDuplicatesInRows() {
	r.DuplicateScope = "the read model's streams"
	for _, m := range r.Mismatches {
		if m.Field == "event_id" {
			r.DuplicateEventIDs++
		}
	}
}

// waitCaughtUp polls until no payment event lies after the checkpoint, or
// fails when wait passes. wait 0 returns at once.
func waitCaughtUp(ctx context.Context, pool *pgxpool.Pool, store *postgres.Store, wait time.Duration) error {
	if wait <= 0 {
		return nil
	}
	deadline := time.Now().Add(wait)
	for {
		checkpoint, err := projections.Checkpoint(ctx, pool, projections.DefaultName)
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		_, lag, err := store.Lag(ctx, eventstore.PaymentStreamPrefix, checkpoint)
		if err != nil || lag == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("verify: projection still %d events behind after %s: %w", lag, wait, errVerifyFailed)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("verify: wait: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// print writes the human report: the summary, then one line per problem.
func (r verifyReport) print(w io.Writer) {
	lag := "not measured"
	if r.LagEvents >= 0 {
		lag = fmt.Sprintf("%d events (store head %s)", r.LagEvents, r.StoreHead)
	}
	fmt.Fprintf(w, "ledger verify: %s event store, checkpoint %s at %s, projection lag %s\n",
		r.Backend, projections.DefaultName, r.Checkpoint, lag)
	r.printChecks(w)
	fmt.Fprintf(w, "payments checked %d, mismatched %d, streams without a row %d, duplicate event IDs %d\n",
		r.PaymentsChecked, r.Mismatched, r.StreamsWithoutRow, r.DuplicateEventIDs)
	fmt.Fprintf(w, "journal entries checked %d, ledger problems %d\n", r.LedgerEntries, len(r.LedgerProblems))
	fmt.Fprintf(w, "  events folded %d; duplicates counted over %s", r.EventsFolded, r.DuplicateScope)
	if r.UniqueEventID {
		fmt.Fprint(w, " (UNIQUE es_events_event_id_key is in place, so a duplicate is impossible; counted anyway)")
	}
	fmt.Fprintln(w)
	r.printProblems(w)
	r.printJobs(w)
	if r.Chains != nil {
		r.Chains.print(w)
	}
	for _, n := range r.NotChecked {
		fmt.Fprintf(w, "not checked: %s\n", n)
	}
	switch {
	case !r.Scope.All && r.Scope.Matched == 0 && r.Scope.Payment != "":
		fmt.Fprintln(w, "FAILED: UNKNOWN PAYMENT: no row and no stream of that payment, so no check was made")
	case !r.Scope.All && r.Scope.Matched == 0:
		fmt.Fprintln(w, "NOTHING MATCHED: the slice holds no payment, so no check was made")
	case r.OK:
		fmt.Fprintln(w, "OK")
	default:
		fmt.Fprintln(w, "FAILED")
	}
}

// printProblems writes one line per problem found.
func (r verifyReport) printProblems(w io.Writer) {
	for _, m := range r.Mismatches {
		fmt.Fprintf(w, "mismatch %s %s: read model %s, fold of stream %s\n", m.Payment, m.Field, m.ReadModel, m.Fold)
	}
	for _, s := range r.Orphans {
		fmt.Fprintf(w, "stream without a row: %s\n", s)
	}
	for _, d := range r.Duplicates {
		fmt.Fprintf(w, "duplicate event ID: %s\n", d)
	}
	for _, p := range r.LedgerProblems {
		who := p.Payment
		if who == "" {
			who = "the whole ledger"
		}
		fmt.Fprintf(w, "ledger %s %s: %s\n", p.Check, who, p.Detail)
	}
}

// printJobs writes the line on unfinished follow-up jobs, if there are any.
func (r verifyReport) printJobs(w io.Writer) {
	if len(r.Jobs) == 0 {
		return
	}
	states := slices.Sorted(maps.Keys(r.Jobs))
	parts := make([]string, 0, len(states))
	for _, st := range states {
		parts = append(parts, fmt.Sprintf("%s %d", st, r.Jobs[st]))
	}
	fmt.Fprintf(w, "follow-up jobs not completed: %s", strings.Join(parts, ", "))
	if r.OldestRunningJob != nil {
		fmt.Fprintf(w, " (oldest running since %s: a killed process's job stays running until the queue rescues it)",
			r.OldestRunningJob.Format(time.RFC3339))
	}
	fmt.Fprintln(w)
}
