package main

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/jobs"
)

// TestExitCodes runs the commands that fail before they touch a database,
// and the help, through run and exitCode as main does.
func TestExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		want int
	}{
		{args: nil, want: exitUsage},
		{args: []string{"nosuch"}, want: exitUsage},
		{args: []string{"verify", "--bogus"}, want: exitUsage},
		{args: []string{"verify", "extra"}, want: exitUsage},
		{args: []string{"migrate", "--json"}, want: exitUsage}, // --json is for read-only commands
		{args: []string{"serve"}, env: map[string]string{"LEDGER_LOG_FORMAT": "xml"}, want: exitUsage},
		{args: []string{"verify"}, env: map[string]string{"LEDGER_DATABASE_URL": "mysql://x"}, want: exitUsage},
		{args: []string{"help", "nosuch"}, want: exitUsage},
		{args: []string{"help"}, want: exitOK},
		{args: []string{"--help"}, want: exitOK},
		{args: []string{"help", "verify"}, want: exitOK},
		{args: []string{"verify", "-h"}, want: exitOK},
		{args: []string{"serve", "--help"}, want: exitOK},
	}
	for _, tt := range tests {
		err := run(t.Context(), tt.args, env(tt.env), io.Discard, io.Discard)
		if got := exitCode(err); got != tt.want {
			t.Errorf("ledger %s: exit %d (%v), want %d", strings.Join(tt.args, " "), got, err, tt.want)
		}
	}
	if exitCode(errVerifyFailed) != exitProblems {
		t.Errorf("a failed verify exits %d, want %d", exitCode(errVerifyFailed), exitProblems)
	}
}

// TestHelpListsEverything: `ledger help` names every command and every flag,
// `ledger help <cmd>` every flag of cmd, and every read-only command takes
// --json.
func TestHelpListsEverything(t *testing.T) {
	var all bytes.Buffer
	if err := run(t.Context(), []string{"help"}, env(nil), &all, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"help", "exit status", "0  ok", "1  problems found", "2  usage or configuration error", "LEDGER_ROLES"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("ledger help lacks %q:\n%s", want, all.String())
		}
	}
	for _, c := range commands() {
		if !strings.Contains(all.String(), "\n  "+c.name+" ") {
			t.Errorf("ledger help lacks command %s", c.name)
		}
		var one bytes.Buffer
		if err := run(t.Context(), []string{"help", c.name}, env(nil), &one, io.Discard); err != nil {
			t.Fatal(err)
		}
		fs, _ := c.flagSet(&environment{})
		if c.readOnly && fs.Lookup("json") == nil {
			t.Errorf("read-only command %s takes no --json", c.name)
		}
		for name := range flagNames(fs) {
			if !strings.Contains(all.String(), "--"+name) || !strings.Contains(one.String(), "-"+name) {
				t.Errorf("flag %s of %s missing from ledger help or ledger help %s", name, c.name, c.name)
			}
		}
	}
}

// TestREADMEListsEverySetting: README's configuration table has a row for
// exactly the variables configFromEnv reads, and its command list names
// every command.
func TestREADMEListsEverySetting(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	var documented []string
	row := regexp.MustCompile("^\\| `(LEDGER_|GOGC)")
	name := regexp.MustCompile("`((?:LEDGER_[A-Z_]+)|GOGC)`")
	for _, line := range strings.Split(readme, "\n") {
		if row.MatchString(line) {
			first := strings.SplitN(line, "|", 3)[1]
			for _, m := range name.FindAllStringSubmatch(first, -1) {
				documented = append(documented, m[1])
			}
		}
	}
	var read []string
	var c Config
	for _, s := range c.settings() {
		read = append(read, s.name)
	}
	slices.Sort(documented)
	slices.Sort(read)
	if !slices.Equal(documented, read) {
		t.Errorf("README's configuration table lists\n%v\nconfigFromEnv reads\n%v", documented, read)
	}
	for _, c := range append(commands(), command{name: "help"}) {
		if !strings.Contains(readme, "`ledger "+c.name) {
			t.Errorf("README's command list lacks ledger %s", c.name)
		}
	}
}

// TestProviderTable wires every provider of the table at once.
func TestProviderTable(t *testing.T) {
	cfg, err := configFromEnv(env(map[string]string{
		"LEDGER_STRIPE_WEBHOOK_SECRETS": "whsec_a", "LEDGER_STRIPE_API_KEY": "sk_test_1",
		"LEDGER_MERCADOPAGO_WEBHOOK_SECRETS": "mp1", "LEDGER_MERCADOPAGO_ACCESS_TOKEN": "APP_USR-1",
		"LEDGER_ASAAS_WEBHOOK_TOKENS": "tok1", "LEDGER_ASAAS_API_KEY": "key1",
		"LEDGER_PAGARME_WEBHOOK_SECRETS": "pg1", "LEDGER_PAGARME_API_KEY": "sk_1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	w, err := wireProviders(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range w.webhooks {
		names = append(names, p.Name())
	}
	want := []string{"stripe", "mercadopago", "asaas", "pagarme"}
	if !slices.Equal(names, want) || len(w.fetchers) != 4 || !slices.Equal(w.enrich, []string{"mercadopago"}) ||
		!slices.Equal(w.fees, []string{"stripe"}) {
		t.Errorf("webhooks %v, %d status clients, enrich %v, fees %v; want %v, 4, [mercadopago], [stripe]",
			names, len(w.fetchers), w.enrich, w.fees, want)
	}
	// The wiring jobs.New checks: Stripe's status client fetches its fees.
	pool, err := pgxpool.New(t.Context(), "postgres://nobody@127.0.0.1:1/none") // never connects: New does no I/O
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := jobs.New(jobs.Config{Pool: pool, Store: postgres.New(pool, postgres.Options{}), Fetchers: w.fetchers,
		EnrichProviders: w.enrich, FeeProviders: w.fees}); err != nil {
		t.Errorf("jobs.New with the wired providers: %v", err)
	}
	none, err := wireProviders(Config{}, slog.New(slog.DiscardHandler))
	if err != nil || len(none.webhooks)+len(none.fetchers)+len(none.enrich)+len(none.fees) != 0 {
		t.Errorf("nothing configured: %+v, %v", none, err)
	}
}

func flagNames(fs interface{ VisitAll(func(*flag.Flag)) }) map[string]bool {
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return names
}
