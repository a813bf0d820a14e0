package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/jobs"
	"github.com/payledger/payledger/projections"
)

// `ledger dead-letters` is the dead-letter queue from a shell: the read
// API's list, show and retry, with its JSON (api.DeadLetterView) and serve's
// retrier (newRetrier), so a retry from here appends the same fact and is
// as safe to kill and run again as one through the API.

const dlArgs = "list | show ID | retry ID | retry --kind K [--cause C] [--provider P] [--dry-run]"

type dlOptions struct {
	Kind, Cause, Provider, State string
	Limit                        int
	DryRun                       bool
}

// dlRequest is one parsed invocation: a subcommand, its entry, its filter.
type dlRequest struct {
	sub    string // list, show, retry (one entry) or bulk
	id     int64
	filter domain.DeadLetterFilter
	opts   dlOptions
}

// dlFlagsOf lists the flags each subcommand takes; any other is refused, so
// a flag meant for another subcommand is not silently ignored.
func dlFlagsOf(sub string) []string {
	switch sub {
	case "list":
		return []string{"kind", "cause", "provider", "state", "limit", "json"}
	case "bulk":
		return []string{"kind", "cause", "provider", "dry-run", "json"}
	}
	return []string{"json"}
}

func deadLettersFlags(fs *flag.FlagSet) func(context.Context, *environment) error {
	var o dlOptions
	fs.StringVar(&o.Kind, "kind", "", "list, retry: only entries of this kind (job, projection, collision); a bulk retry requires it")
	fs.StringVar(&o.Cause, "cause", "", "list, retry: only entries of this cause (a job's kind such as enrich_payment,\n"+
		"undecodable, unapplicable, event_id_collision)")
	fs.StringVar(&o.Provider, "provider", "", "list, retry: only entries of this provider")
	fs.StringVar(&o.State, "state", "", "list: only open or only retried entries (default both)")
	fs.IntVar(&o.Limit, "limit", 0, "list: at most this many entries, oldest first (default every match)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "bulk retry: list what would be retried and change nothing")
	return func(ctx context.Context, e *environment) error {
		req, err := parseDLRequest(fs, e.args, o)
		if err != nil {
			return usageError{fmt.Errorf("dead-letters: %w", err)}
		}
		switch req.sub {
		case "list":
			return dlList(ctx, e, req)
		case "show":
			return dlShow(ctx, e, req.id)
		case "retry":
			return dlRetryOne(ctx, e, req.id)
		}
		if req.opts.DryRun {
			return dlDryRun(ctx, e, req.filter)
		}
		return dlRetryMatching(ctx, e, req.filter)
	}
}

// parseDLRequest reads the subcommand and its ID from args and checks that
// only its own flags were given.
func parseDLRequest(fs *flag.FlagSet, args []string, o dlOptions) (dlRequest, error) {
	if len(args) == 0 {
		return dlRequest{}, fmt.Errorf("want a subcommand: %s", dlArgs)
	}
	req := dlRequest{sub: args[0], opts: o}
	switch {
	case req.sub == "list" && len(args) == 1:
	case req.sub == "show" && len(args) == 2, req.sub == "retry" && len(args) == 2:
		id, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || id < 1 {
			return req, fmt.Errorf("%s: %q is not a dead letter ID (a positive integer)", req.sub, args[1])
		}
		req.id = id
	case req.sub == "retry" && len(args) == 1:
		req.sub = "bulk"
	case req.sub == "list" || req.sub == "show" || req.sub == "retry":
		return req, fmt.Errorf("%s: unexpected arguments %q (want %s)", req.sub, args[1:], dlArgs)
	default:
		return req, fmt.Errorf("unknown subcommand %q: want %s", req.sub, dlArgs)
	}
	var misplaced []string
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(dlFlagsOf(req.sub), f.Name) {
			misplaced = append(misplaced, "--"+f.Name)
		}
	})
	switch {
	case len(misplaced) > 0 && req.sub == "retry":
		return req, fmt.Errorf("retry takes an ID or a filter with its flags, not both (got %d and %s)", req.id,
			strings.Join(misplaced, " "))
	case len(misplaced) > 0 && req.sub == "bulk":
		return req, fmt.Errorf("a bulk retry does not take %s", strings.Join(misplaced, " "))
	case len(misplaced) > 0:
		return req, fmt.Errorf("%s does not take %s", req.sub, strings.Join(misplaced, " "))
	}
	return req, req.parseFilter()
}

func (req *dlRequest) parseFilter() error {
	if req.sub == "bulk" && req.opts.Kind == "" {
		return errors.New("retry: a bulk retry needs --kind (and may narrow it with --cause and --provider)")
	}
	if req.opts.Limit < 0 {
		return fmt.Errorf("list: --limit %d: want 0 (every match) or more", req.opts.Limit)
	}
	f, err := api.ParseDeadLetterFilter(strings.Replace(req.sub, "bulk", "retry", 1), req.opts.Kind, req.opts.Cause, req.opts.Provider, req.opts.State)
	req.filter = f
	return err
}

func dlList(ctx context.Context, e *environment, req dlRequest) error {
	pool, err := openReadOnly(ctx, e.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	all, err := dlAll(ctx, projections.NewDeadLetters(pool), req.filter, req.opts.Limit)
	if err != nil {
		return fmt.Errorf("dead-letters: list: %w", err)
	}
	if e.json {
		return printJSONTo(e.stdout, dlListJSON(all))
	}
	printDLTable(e.stdout, all)
	return nil
}

// dlAll walks the queue's pages: every entry f matches, oldest first, or
// the first limit of them.
func dlAll(ctx context.Context, dl *projections.DeadLetters, f domain.DeadLetterFilter, limit int) ([]domain.DeadLetter, error) {
	out := []domain.DeadLetter{}
	q := domain.DeadLetterQuery{DeadLetterFilter: f, Limit: domain.MaxPageSize}
	for {
		if limit > 0 {
			q.Limit = min(domain.MaxPageSize, limit-len(out))
		}
		page, err := dl.ListDeadLetters(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.DeadLetters...)
		if page.NextCursor == "" || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		q.Cursor = page.NextCursor
	}
}

// dlListJSON is list --json: GET /v1/dead-letters's body, every page at once.
func dlListJSON(ds []domain.DeadLetter) any {
	views := make([]api.DeadLetterView, 0, len(ds))
	for _, d := range ds {
		views = append(views, api.ViewDeadLetter(d, false))
	}
	return struct {
		DeadLetters []api.DeadLetterView `json:"dead_letters"`
	}{views}
}

func dlShow(ctx context.Context, e *environment, id int64) error {
	pool, err := openReadOnly(ctx, e.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	d, err := projections.NewDeadLetters(pool).DeadLetter(ctx, id)
	if err != nil {
		return fmt.Errorf("dead-letters: show %d: %w", id, err)
	}
	if e.json {
		return printJSONTo(e.stdout, api.ViewDeadLetter(d, true))
	}
	printDL(e.stdout, api.ViewDeadLetter(d, true))
	return nil
}

// dlRetriedBy is who a retry from this command is recorded as: "cli:" and
// LEDGER_OPERATOR, else the OS user's name (lower-cased), else $USER.
func dlRetriedBy(cfg Config, current func() (*user.User, error), getenv func(string) string) (string, error) {
	if cfg.Operator != "" {
		return "cli:" + cfg.Operator, nil
	}
	name := ""
	if u, err := current(); err == nil {
		name = u.Username
	}
	if name == "" && getenv != nil {
		name = getenv("USER")
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if !validOperator(name) {
		return "", configError(fmt.Errorf("LEDGER_OPERATOR is unset and the OS user name %q is not 1 to 64 of [a-z0-9_.-]: "+
			"set LEDGER_OPERATOR to say who retries", name))
	}
	return "cli:" + name, nil
}

// printJSONTo writes v indented, as doctor does.
func printJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printDLTable(w io.Writer, ds []domain.DeadLetter) {
	if len(ds) == 0 {
		fmt.Fprintln(w, "no dead letter matches")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tCAUSE\tPROVIDER\tPAYMENT\tATTEMPTS\tFIRST FAILURE\tLAST FAILURE\tSTATE\tLAST ERROR")
	for _, d := range ds {
		v := api.ViewDeadLetter(d, false)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", v.ID, v.Kind, dlCell(v.Cause), dlCell(v.Provider),
			dlCell(v.ProviderPaymentID), v.Attempts, v.FirstFailedAt, v.LastFailedAt, v.State, dlOneLine(v.LastError, 80))
	}
	_ = tw.Flush()
}

// dlCell is a table cell: "-" for nothing, no tab or line break.
func dlCell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Join(strings.Fields(s), " ")
}

// dlOneLine is s's first line, cut to max runes; "…" says something was
// left off.
func dlOneLine(s string, max int) string {
	first, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	first = strings.Join(strings.Fields(first), " ")
	if r := []rune(first); len(r) > max {
		first, more = string(r[:max]), true
	}
	if first == "" {
		return "-"
	}
	if more {
		first += "…"
	}
	return first
}

// printDL prints every field of v, the last error in full and the payload
// indented.
func printDL(w io.Writer, v api.DeadLetterView) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range [][2]string{{"id", strconv.FormatInt(v.ID, 10)}, {"kind", v.Kind}, {"cause", v.Cause},
		{"provider", dlCell(v.Provider)}, {"payment", dlCell(v.ProviderPaymentID)}, {"streams", dlCell(strings.Join(v.Streams, " "))},
		{"attempts", strconv.Itoa(v.Attempts)}, {"first failure", v.FirstFailedAt}, {"last failure", v.LastFailedAt},
		{"state", v.State}, {"retries", strconv.Itoa(v.Retries)}, {"retried at", dlRetriedAt(v)}, {"retried by", dlCell(v.RetriedBy)}} {
		fmt.Fprintf(tw, "%s:\t%s\n", row[0], row[1])
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "last error:\n  %s\n", indent(strings.TrimRight(v.LastError, "\n"), "  "))
	if len(v.Payload) == 0 {
		return
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, v.Payload, "  ", "  "); err != nil {
		pretty.Reset()
		pretty.Write(v.Payload)
	}
	fmt.Fprintf(w, "payload:\n  %s\n", pretty.String())
}

func dlRetriedAt(v api.DeadLetterView) string {
	if v.RetriedAt == nil {
		return "-"
	}
	return *v.RetriedAt
}

// dlQuiet is the logger provider wiring gets: its warnings are about
// serve's webhook endpoints, which this command does not open.
func dlQuiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// dlRetrier opens what a retry writes to, as serve does: the migrated
// database, the event store, and the retrier with the configured
// providers' parsers, which re-check collisions.
func dlRetrier(ctx context.Context, e *environment) (*dlRetry, error) {
	by, err := dlRetriedBy(e.cfg, user.Current, e.getenv)
	if err != nil {
		return nil, err
	}
	providers, err := wireProviders(e.cfg, dlQuiet())
	if err != nil {
		return nil, err
	}
	pool, store, err := openCommandStores(ctx, e)
	if err != nil {
		return nil, err
	}
	dl := projections.NewDeadLetters(pool)
	r, err := newRetrier(pool, store, dl, providers.webhooks, e.logger)
	if err != nil {
		pool.Close()
		store.close()
		return nil, err
	}
	return &dlRetry{Retrier: r, dl: dl, by: by, close: func() { store.close(); pool.Close() }}, nil
}

// dlRetry is an opened retrier and who retries.
type dlRetry struct {
	*jobs.Retrier
	dl    *projections.DeadLetters
	by    string
	close func()
}

func dlRetryOne(ctx context.Context, e *environment, id int64) error {
	r, err := dlRetrier(ctx, e)
	if err != nil {
		return err
	}
	defer r.close()
	d, err := r.Retry(ctx, id, r.by)
	if domain.KindOf(err) == domain.KindConflict {
		msg := domain.MessageOf(err)
		if now, rerr := r.dl.DeadLetter(ctx, id); rerr == nil && errors.Is(err, projections.ErrNotOpen) {
			v := api.ViewDeadLetter(now, false)
			msg = fmt.Sprintf("not open: it is %s (retried by %s at %s)", v.State, dlCell(v.RetriedBy), dlRetriedAt(v))
		}
		return dlNotRetried{id: id, msg: msg, err: err}
	}
	if err != nil {
		return fmt.Errorf("dead-letters: retry %d: %w", id, err)
	}
	if e.json {
		return printJSONTo(e.stdout, api.ViewDeadLetter(d, false))
	}
	fmt.Fprintf(e.stdout, "retried dead letter %d as %s (retry %d)\n\n", d.ID, r.by, d.Retries)
	printDL(e.stdout, api.ViewDeadLetter(d, false))
	return nil
}

// dlNotRetried is a retry the retrier refused (KindConflict): not open,
// still colliding, its provider not configured here, its job still
// running. msg is the retrier's own words.
type dlNotRetried struct {
	id  int64
	msg string
	err error
}

func (e dlNotRetried) Error() string {
	return fmt.Sprintf("dead-letters: retry %d: %s; nothing was retried", e.id, e.msg)
}

func (e dlNotRetried) Unwrap() error { return e.err }

// dlDryRun lists what a bulk retry of f would retry now, read-only.
func dlDryRun(ctx context.Context, e *environment, f domain.DeadLetterFilter) error {
	pool, err := openReadOnly(ctx, e.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	dl := projections.NewDeadLetters(pool)
	ids, err := dl.OpenDeadLetterIDs(ctx, f)
	if err != nil {
		return fmt.Errorf("dead-letters: retry --dry-run: %w", err)
	}
	if e.json {
		return printJSONTo(e.stdout, struct {
			WouldRetry int     `json:"would_retry"`
			IDs        []int64 `json:"ids"`
		}{len(ids), append([]int64{}, ids...)})
	}
	open := f
	open.State = domain.DeadLetterOpen
	all, err := dlAll(ctx, dl, open, 0)
	if err != nil {
		return fmt.Errorf("dead-letters: retry --dry-run: %w", err)
	}
	all = slices.DeleteFunc(all, func(d domain.DeadLetter) bool { return !slices.Contains(ids, d.ID) })
	printDLTable(e.stdout, all)
	fmt.Fprintf(e.stdout, "\nwould retry %d (dry run: nothing changed)\n", len(ids))
	return nil
}

// dlRetryMatching retries every open entry f matches now, each once. Killed
// half way, it is resumed by running it again: what it retried is no longer
// open, and an entry it was retrying is retried once (jobs.Retrier).
func dlRetryMatching(ctx context.Context, e *environment, f domain.DeadLetterFilter) error {
	r, err := dlRetrier(ctx, e)
	if err != nil {
		return err
	}
	defer r.close()
	ids, err := r.dl.OpenDeadLetterIDs(ctx, f)
	if err != nil {
		return fmt.Errorf("dead-letters: retry: %w", err)
	}
	n, err := r.RetryMatching(ctx, f, r.by)
	if err != nil {
		return fmt.Errorf("dead-letters: retry: %d of %d matched retried, then: %w", n, len(ids), err)
	}
	if e.json {
		err = printJSONTo(e.stdout, map[string]int{"retried": n})
	} else {
		fmt.Fprintf(e.stdout, "retried %d of %d matched\n", n, len(ids))
	}
	if err == nil && n < len(ids) {
		err = fmt.Errorf("dead-letters: retry: %d of %d matched were not retried (see the warnings above): %w",
			len(ids)-n, len(ids), errDLSkipped)
	}
	return err
}

// errDLSkipped marks a bulk retry that left some matched entries open
// (exit status 1): retried meanwhile by someone else, still colliding, a
// provider not configured here.
var errDLSkipped = errors.New("some dead letters were not retried")
