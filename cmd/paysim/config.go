package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/deliver"
	"github.com/payledger/payledger/cmd/paysim/internal/fakeapi"
	"github.com/payledger/payledger/cmd/paysim/internal/floor"
	"github.com/payledger/payledger/cmd/paysim/internal/gen"
	"github.com/payledger/payledger/cmd/paysim/internal/lag"
	"github.com/payledger/payledger/cmd/paysim/internal/sign"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// Config is everything a run is told by its flags.
type Config struct {
	Ledger      string
	Token       string
	Payments    int
	Seed        uint64
	Providers   []string
	Skip        []string // lifecycles not to generate, "provider/lifecycle"
	APIAddr     string
	KeyFile     string // Pagar.me signing key (PEM); generated when empty or absent
	Chaos       deliver.Chaos
	Loss        deliver.Loss // webhooks the providers never send (--drop, --outage)
	AfterSend   string       // a shell command run once every send is done, before the read-back (--after-send)
	CheckLog    bool         // check the ledger's reconciliation log against what was dropped (--reconciliation-log)
	Epoch       time.Time    // provider time of the first payment (--epoch)
	Concurrency int
	Rate        float64 // sends started per second, open loop; 0: as fast as --concurrency allows
	AckOnly     bool    // deliver and count acknowledgements only: the target has no read API
	Lag         lag.Config
	Retry       deliver.Retry
	Settle      time.Duration
	ReadyWait   time.Duration
	JSON        bool
	Progress    bool
	Secrets     sign.Secrets        // what webhooks are signed with
	APIKeys     fakeapi.Credentials // what the fake provider APIs accept
	Books       bool                // check GET /v1/ledger/balances against the truth
	StripeFees  bool                // the ledger fetches Stripe fees: expect them, and configure it to
	Snapshot    float64             // share of sends after which the recorded-basis snapshot is taken; 0: none
	Margin      time.Duration       // the snapshot's waits around T
}

// lossFlags registers what the providers withhold (--drop, --outage) and
// the hook that recovers it (--after-send).
func (c *Config) lossFlags(fs *flag.FlagSet) {
	fs.Float64Var(&c.Loss.Drop, "drop", 0, "share of payments whose final webhooks (every one after the payment's first) are never sent: the provider gave up; its API still shows the outcome")
	fs.StringVar(&c.AfterSend, "after-send", "", "a shell command (sh -c) to run once every send is done and before the read-back, with the\n"+
		"outage's provider-time span in PAYSIM_OUTAGE_SINCE and PAYSIM_OUTAGE_UNTIL (RFC 3339; until excluded): e.g.\n"+
		"'ledger backfill --provider stripe --since $PAYSIM_OUTAGE_SINCE --until $PAYSIM_OUTAGE_UNTIL'; paysim fails if it fails")
	fs.BoolVar(&c.CheckLog, "reconciliation-log", false, "after the read-back, check GET /v1/reconciliation/log: one corrected (missing_webhook) row\n"+
		"per payment --drop withheld from, none for a payment nothing was withheld from")
	fs.DurationVar(&c.Loss.Outage, "outage", 0, "a window this long in which every delivery fails at the provider side and is never retried (lost); 0: none")
	c.Epoch = gen.Epoch()
	fs.Func("epoch", "provider time the first payment starts at, RFC 3339 (default "+gen.Epoch().Format(time.RFC3339)+
		"; a Stripe backfill needs a date in the last 30 days)", func(v string) error {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return fmt.Errorf("want an RFC 3339 time")
		}
		c.Epoch = t.UTC()
		return nil
	})
	c.Loss.OutageAt = -1
	fs.Func("outage-at", "when the --outage window opens, from the first send (Go duration; default: mid-run, once half the sends finished, after the recorded-basis snapshot)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration ≥ 0")
		}
		c.Loss.OutageAt = d
		return nil
	})
}

// flags registers the flags of both subcommands on fs.
func (c *Config) flags(fs *flag.FlagSet) *string {
	providers := fs.String("providers", strings.Join(truth.Providers(), ","), "comma-separated providers to simulate")
	fs.Func("skip-lifecycles", "comma-separated provider/lifecycle pairs not to generate (e.g. to isolate a known ledger bug)", func(v string) error {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.Skip = append(c.Skip, s)
			}
		}
		return nil
	})
	fs.StringVar(&c.Ledger, "ledger", "http://127.0.0.1:8080", "ledger base URL")
	fs.StringVar(&c.Token, "token", "dev-read-token", "Bearer token for the ledger's read API (role read)")
	fs.IntVar(&c.Payments, "payments", 1000, "number of payments")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed: the same seed generates the same payments and payloads")
	fs.StringVar(&c.APIAddr, "api-addr", "127.0.0.1:8089", "listen address of the fake provider APIs and JWKS (fixed, so `paysim env` can name it beforehand)")
	fs.StringVar(&c.KeyFile, "pagarme-key", "", "PEM file of the Pagar.me RS256 key: read if present, else generated and written there (empty: a new key per run)")
	fs.Float64Var(&c.Chaos.Dup, "dup", 0.2, "share of webhooks delivered twice (half at once, half later)")
	fs.Float64Var(&c.Chaos.Reorder, "reorder", 0.3, "share of payments whose deliveries are shuffled")
	fs.DurationVar(&c.Chaos.MaxDelay, "max-delay", 20*time.Millisecond, "random wait before each delivery, up to this")
	fs.DurationVar(&c.Chaos.LateDelay, "late-delay", 500*time.Millisecond, "extra wait before a late Pix/boleto confirmation")
	c.lossFlags(fs)
	fs.IntVar(&c.Concurrency, "concurrency", 32, "HTTP requests to the ledger in flight at most")
	fs.Float64Var(&c.Rate, "rate", 0, "offered load: start this many deliveries per second whatever the ledger's pace (open loop, at most --concurrency in flight); 0: closed loop")
	fs.BoolVar(&c.AckOnly, "ack-only", false, "deliver and report acknowledgements only, for a target without the read API (paysim floor): no convergence check, no lag")
	fs.Float64Var(&c.Lag.Rate, "lag-samples", 20, "end-to-end lag: sample at most this many accepted deliveries per second (0: no lag measurement)")
	fs.DurationVar(&c.Lag.Interval, "lag-interval", 5*time.Millisecond, "end-to-end lag: pause between two reads of one sample")
	fs.Float64Var(&c.Lag.Reads, "lag-reads", 200, "end-to-end lag: read-API requests per second at most, all samples together")
	fs.IntVar(&c.Retry.Attempts, "retry-attempts", 8, "attempts per delivery at most")
	fs.DurationVar(&c.Retry.Budget, "retry-budget", 30*time.Second, "give a delivery up this long after its first attempt")
	fs.DurationVar(&c.Retry.Base, "retry-base", 100*time.Millisecond, "first backoff; doubles per attempt, half of it jitter")
	fs.DurationVar(&c.Retry.Max, "retry-max", 5*time.Second, "backoff cap")
	fs.DurationVar(&c.Retry.Timeout, "timeout", 10*time.Second, "per-attempt timeout")
	fs.DurationVar(&c.Settle, "settle", 60*time.Second, "how long to wait for the read models to converge")
	fs.DurationVar(&c.ReadyWait, "ready-timeout", 30*time.Second, "how long to wait for the ledger's /readyz before sending")
	fs.BoolVar(&c.JSON, "json", false, "print the report as JSON on stdout")
	fs.BoolVar(&c.Progress, "progress", false, "show the progress line even when stderr is not a terminal")
	fs.StringVar(&c.Secrets.Stripe, "stripe-secret", "whsec_paysim_secret", "Stripe endpoint secret")
	fs.StringVar(&c.Secrets.MercadoPago, "mercadopago-secret", "mp_paysim_secret", "Mercado Pago webhook secret")
	fs.StringVar(&c.APIKeys.MercadoPagoToken, "mercadopago-token", "APP_USR-paysim", "Mercado Pago access token the fake API accepts")
	fs.StringVar(&c.Secrets.AsaasToken, "asaas-token", "asaas_paysim_token", "Asaas webhook authentication token")
	fs.StringVar(&c.APIKeys.AsaasAPIKey, "asaas-api-key", "$aact_paysim", "Asaas API key the fake API accepts")
	fs.StringVar(&c.APIKeys.PagarmeAPIKey, "pagarme-api-key", "sk_paysim", "Pagar.me secret key the fake API accepts")
	fs.StringVar(&c.APIKeys.StripeAPIKey, "stripe-api-key", "sk_test_paysim", "Stripe secret key the fake API accepts")
	fs.BoolVar(&c.Books, "books", true, "check the ledger's books: GET /v1/ledger/balances must equal the truth per provider, currency and account")
	fs.BoolVar(&c.StripeFees, "stripe-fees", true, "expect Stripe's fees, fetched by the ledger from the fake API's balance transactions (paysim env sets LEDGER_STRIPE_API_KEY and LEDGER_STRIPE_API_BASE); false: neither")
	fs.Float64Var(&c.Snapshot, "recorded-snapshot", 0.5, "after this share of the sends, hold deliveries back, let the read side catch up and keep the books as of that moment (basis=recorded): they must be the same at the end; 0: no snapshot (the default with --rate)")
	fs.DurationVar(&c.Margin, "snapshot-margin", time.Second, "the snapshot waits this long after catching up and again after taking its moment (clock skew, commits in flight)")
	return providers
}

// parseConfig parses args (without the subcommand) and validates.
func parseConfig(name string, args []string, stderr io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("paysim "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	providers := c.flags(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("paysim: unexpected arguments %q", fs.Args())
	}
	for _, p := range strings.Split(*providers, ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.Providers = append(c.Providers, p)
		}
	}
	c.Ledger = strings.TrimRight(c.Ledger, "/")
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "recorded-snapshot" })
	if !explicit && (c.Rate > 0 || !c.Books) {
		c.Snapshot = 0 // pausing an open-loop load would distort what it measures
	}
	if c.AckOnly {
		c.Books, c.Snapshot = false, 0 // no read API to check
	}
	return c, c.validate()
}

// validate reports every problem at once.
func (c Config) validate() error {
	var problems []string
	if c.Payments < 1 {
		problems = append(problems, "--payments must be at least 1")
	}
	if len(c.Providers) == 0 {
		problems = append(problems, "--providers is empty")
	}
	for _, p := range c.Providers {
		if gen.Lifecycles(p) == nil {
			problems = append(problems, fmt.Sprintf("--providers: unknown provider %q", p))
		}
	}
	for name, v := range map[string]float64{"--dup": c.Chaos.Dup, "--reorder": c.Chaos.Reorder, "--recorded-snapshot": c.Snapshot, "--drop": c.Loss.Drop} {
		if v < 0 || v > 1 {
			problems = append(problems, name+" must be between 0 and 1")
		}
	}
	for _, s := range c.Skip {
		prov, lc, _ := strings.Cut(s, "/")
		if !slices.Contains(gen.Lifecycles(prov), lc) {
			problems = append(problems, fmt.Sprintf("--skip-lifecycles: unknown lifecycle %q", s))
		}
	}
	if c.Loss.Outage < 0 {
		problems = append(problems, "--outage must not be negative")
	}
	if c.AckOnly && (c.Loss.Drop > 0 || c.Loss.Outage > 0) {
		problems = append(problems, "--drop and --outage need the read API: not with --ack-only")
	}
	if c.Rate < 0 {
		problems = append(problems, "--rate must not be negative")
	}
	if c.Lag.Rate < 0 || c.Lag.Interval < 0 || (c.Lag.Rate > 0 && c.Lag.Reads <= 0) {
		problems = append(problems, "lag: want --lag-samples ≥ 0, --lag-interval ≥ 0 and, when sampling, --lag-reads > 0")
	}
	if c.Snapshot > 0 && (!c.Books || c.Margin < 0) {
		problems = append(problems, "--recorded-snapshot needs --books and --snapshot-margin ≥ 0")
	}
	if c.Concurrency < 1 {
		problems = append(problems, "--concurrency must be at least 1")
	}
	if c.Retry.Attempts < 1 || c.Retry.Timeout <= 0 || c.Retry.Budget < 0 || c.Retry.Base < 0 || c.Retry.Max < c.Retry.Base {
		problems = append(problems, "retry: want --retry-attempts ≥ 1, --timeout > 0, --retry-budget ≥ 0, 0 ≤ --retry-base ≤ --retry-max")
	}
	if len(problems) > 0 {
		return fmt.Errorf("paysim: %s", strings.Join(problems, "; "))
	}
	return nil
}

// env returns the ledger configuration matching c, with apiBase the root
// of the fake provider APIs, in a stable order.
func (c Config) env(apiBase string) [][2]string {
	var stripe [][2]string
	if c.StripeFees {
		stripe = [][2]string{{"LEDGER_STRIPE_API_KEY", c.APIKeys.StripeAPIKey}, {"LEDGER_STRIPE_API_BASE", apiBase + "/stripe"}}
	}
	return append(append([][2]string{{"LEDGER_STRIPE_WEBHOOK_SECRETS", c.Secrets.Stripe}}, stripe...), [][2]string{
		{"LEDGER_MERCADOPAGO_WEBHOOK_SECRETS", c.Secrets.MercadoPago},
		{"LEDGER_MERCADOPAGO_ACCESS_TOKEN", c.APIKeys.MercadoPagoToken},
		{"LEDGER_MERCADOPAGO_API_BASE", apiBase + "/mercadopago"},
		{"LEDGER_ASAAS_WEBHOOK_TOKENS", c.Secrets.AsaasToken},
		{"LEDGER_ASAAS_API_KEY", c.APIKeys.AsaasAPIKey},
		{"LEDGER_ASAAS_API_BASE", apiBase + "/asaas"},
		{"LEDGER_PAGARME_JWKS_URL", apiBase + "/.well-known/jwks.json"},
		{"LEDGER_PAGARME_API_KEY", c.APIKeys.PagarmeAPIKey},
		{"LEDGER_PAGARME_API_BASE", apiBase + "/pagarme/core/v5"},
		{"LEDGER_API_TOKENS", "read:" + c.Token},
	}...)
}

// shellQuote quotes v for a POSIX shell.
func shellQuote(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }

// printEnv writes `export K='v'` lines.
func printEnv(w io.Writer, env [][2]string) {
	for _, kv := range env {
		fmt.Fprintf(w, "export %s=%s\n", kv[0], shellQuote(kv[1]))
	}
}

// parseFloorConfig parses the flags of `paysim floor`.
func parseFloorConfig(args []string, stderr io.Writer) (floor.Config, error) {
	var c floor.Config
	fs := flag.NewFlagSet("paysim floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:8086", "listen address")
	fs.StringVar(&c.Database, "database", "postgres://postgres@127.0.0.1:5432/payledger_floor?sslmode=disable",
		"Postgres URL (pgx); the pool has "+fmt.Sprint(floor.DefaultConns)+" connections unless it sets pool_max_conns")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("paysim floor: unexpected arguments %q", fs.Args())
	}
	if c.Listen == "" || c.Database == "" {
		return c, errors.New("paysim floor: --listen and --database must not be empty")
	}
	return c, nil
}
