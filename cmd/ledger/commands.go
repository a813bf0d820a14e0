package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// command is one `ledger` subcommand. A new one is one more entry in
// commands: run, `ledger help` and `ledger <cmd> -h` pick it up.
type command struct {
	name    string
	summary string // what `ledger help` says of it
	// readOnly commands change nothing and take --json (environment.json).
	readOnly bool
	// json gives --json to a command that is not read-only.
	json bool
	// args is the synopsis of the positional arguments the command takes,
	// before or between its flags (environment.args); empty: none.
	args string
	// define adds the command's own flags to fs and returns what runs it.
	define func(fs *flag.FlagSet) func(context.Context, *environment) error
}

// environment is what a command runs with.
type environment struct {
	cfg            Config
	logger         *slog.Logger
	stdout, stderr io.Writer
	json           bool     // --json, on read-only commands and those with command.json
	args           []string // the positional arguments, for a command with command.args
	getenv         func(string) string
}

func commands() []command {
	return []command{
		{name: "serve", summary: "run the webhook ingest, the read API, the projector and the background jobs\n" +
			"(LEDGER_ROLES: only some of them); applies pending migrations first", define: noFlags(serve)},
		{name: "migrate", summary: "apply database migrations and exit", define: noFlags(migrate)},
		{name: "backfill", define: backfillFlags,
			summary: "recover an outage: store what the provider's list API holds for a window, through the\n" +
				"webhook path (stored facts are duplicates); --dry-run stores nothing; exit status 1 on failures"},
		{name: "reconcile", define: reconcileFlags,
			summary: "run one reconciliation pass now: ask the providers about the payments in doubt and record\n" +
				"what they say; --dry-run appends nothing; exit status 1 when checks failed"},
		{name: "doctor", readOnly: true, define: doctorFlags,
			summary: "list, read-only, what waits for a person (open reviews, open dead letters, parked\n" +
				"payments, payments awaiting confirmation) with the age of the oldest; exit status 1 when a\n" +
				"review, dead letter or parked payment is older than --max-age"},
		{name: "verify", readOnly: true, define: verifyFlags,
			summary: "check, read-only, that every payments row equals the fold of its stream, no event ID\n" +
				"is stored twice and every stream has a row; --chains also re-computes every stream's hash chain\n" +
				"and names the first broken link of each; --payment PROVIDER/ID, --provider and --since T audit\n" +
				"a slice; a table of the checks leads the report; exit status 1 on any problem"},
		{name: "chain", args: "backfill", json: true, define: chainFlags,
			summary: "backfill: seal, once, every stored event not sealed yet (those recorded before the chain\n" +
				"began, at the migration of its table, are marked as backfill), from the sealer's checkpoint\n" +
				"(a killed run resumes) until the store is idle; serve's projector role seals new events within\n" +
				"seconds; `ledger verify --chains` checks the seals"},
		{name: "projections", json: true, args: projectionsArgs, define: projectionsFlags,
			summary: "list: every projection (name, kind, state, checkpoint, lag, last applied); rebuild NAME:\n" +
				"empty the read models and let serve's projector replay them from the start (the read API\n" +
				"answers Ledger-Projection-Rebuilding: true until caught up; follows the replay unless\n" +
				"--no-wait); rebuild NAME --shadow: build them with this build's code in a shadow schema while\n" +
				"the live ones serve, diff the two (per provider, currency and status counts and money; per\n" +
				"account balances; reviews, checks, parked streams) and switch atomically only when the diff\n" +
				"is empty or --accept-diff is given; exit status 1 when not switched"},
		{name: "replay", readOnly: true, args: "PROVIDER PAYMENT_ID", define: replayFlags,
			summary: "every fact of one payment's stream in fold order (provider time, stored time, type, key\n" +
				"fields, what it changed, the journal entries it posts), then its state; --as-of T [--basis\n" +
				"effective|recorded] shows it as of a moment; read-only; exit status 1 for an unknown payment"},
		{name: "evidence", readOnly: true, args: "PROVIDER PAYMENT_ID", define: evidenceFlags,
			summary: "the evidence of one payment: each fact's delivery as received, its signature re-verified now\n" +
				"with the configured secrets (verified, verified_with_rotated_secret, unverifiable with the reason,\n" +
				"failed) and its hash-chain link; --out FILE.zip also writes the zip (manifest.json, the raw\n" +
				"bodies, README.txt with the openssl recipe for Stripe); read-only; exit status 1 for an unknown\n" +
				"payment, or when a fact fails re-verification or its chain link is broken"},
		{name: "dead-letters", json: true, args: dlArgs, define: deadLettersFlags,
			summary: "the dead-letter queue: list [filters] (every match, oldest first), show ID (every field and\n" +
				"the payload), retry ID, or retry --kind K [--cause C] [--provider P] [--dry-run] (every open\n" +
				"entry the filter matches now; --dry-run lists them and changes nothing); retried_by is\n" +
				"cli:<LEDGER_OPERATOR or the OS user>; exit status 1 for an unknown ID, an entry that cannot be\n" +
				"retried (not open, still colliding, its provider not configured), or a bulk retry that left\n" +
				"matched entries open"},
	}
}

func noFlags(run func(context.Context, *environment) error) func(*flag.FlagSet) func(context.Context, *environment) error {
	return func(*flag.FlagSet) func(context.Context, *environment) error { return run }
}

// run dispatches a command. It is main without the process: tests call it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stderr)
		return usageError{errors.New("no command")}
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return help(args[1:], stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	printUsage(stderr)
	return usageError{fmt.Errorf("unknown command %q", args[0])}
}

// run parses the command's flags and the configuration, then runs it.
func (c command) run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	e := &environment{stdout: stdout, stderr: stderr, getenv: getenv}
	fs, exec := c.flagSet(e)
	fs.SetOutput(stderr)
	pos, err := c.parse(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{fmt.Errorf("%s: %w", c.name, err)}
	}
	if len(pos) > 0 && c.args == "" {
		return usageError{fmt.Errorf("%s: unexpected arguments %q", c.name, pos)}
	}
	e.args = pos
	cfg, err := configFromEnv(getenv)
	if err != nil {
		return configError(err)
	}
	e.cfg, e.logger = cfg, newLogger(cfg, stderr)
	return exec(ctx, e)
}

// parse parses args into fs and returns the positional arguments. A
// command with args takes them anywhere among its flags (`dead-letters
// retry 42 --json`): the flag package stops at the first one, so parsing
// goes on after it.
func (c command) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if c.args == "" || fs.NArg() == 0 {
			return append(pos, fs.Args()...), nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// flagSet defines c's flags, --json for a read-only command included.
func (c command) flagSet(e *environment) (*flag.FlagSet, func(context.Context, *environment) error) {
	fs := flag.NewFlagSet("ledger "+c.name, flag.ContinueOnError)
	if c.readOnly || c.json {
		fs.BoolVar(&e.json, "json", false, "print the report as JSON")
	}
	exec := c.define(fs)
	fs.Usage = func() {
		synopsis := c.name
		if c.args != "" {
			synopsis += " " + c.args
		}
		fmt.Fprintf(fs.Output(), "usage: ledger %s%s\n\n%s\n", synopsis, flagsHint(fs), c.summary)
		printFlags(fs.Output(), fs)
	}
	return fs, exec
}

func newLogger(cfg Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// Exit statuses: `ledger help` and README document them.
const (
	exitOK       = 0 // done, nothing wrong
	exitProblems = 1 // problems found (verify), or the command failed
	exitUsage    = 2 // unknown command or flag, or a configuration error
)

// usageError is a usage or configuration error: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// configError marks err as a configuration problem.
func configError(err error) error { return usageError{fmt.Errorf("configuration:\n%w", err)} }

// exitCode is the exit status of a command that returned err.
func exitCode(err error) int {
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage):
		return exitUsage
	}
	return exitProblems
}

func flagsHint(fs *flag.FlagSet) string {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return ""
	}
	return " [flags]"
}

// printFlags lists fs's flags, or says there are none.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	if flagsHint(fs) == "" {
		fmt.Fprintln(w, "\nno flags")
		return
	}
	fmt.Fprintln(w, "\nflags:")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// indent prefixes every line of s but the first with pad.
func indent(s, pad string) string { return strings.ReplaceAll(s, "\n", "\n"+pad) }

// report prints v: as indented JSON with --json, else through text.
func (e *environment) report(v any, text func(io.Writer)) error {
	if e.json {
		return printJSONTo(e.stdout, v)
	}
	text(e.stdout)
	return nil
}
