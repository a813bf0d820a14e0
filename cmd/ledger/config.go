package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/jobs"
)

// Config is everything `ledger` reads from its environment. Nothing else in
// payledger reads the environment.
type Config struct {
	Roles                Roles // LEDGER_ROLES: what this process runs
	HTTPAddr             string
	DebugAddr            string // empty: no profiler listener
	Console              bool   // serve /console/ where the api role runs
	DatabaseURL          string
	EventStoreURL        string // empty: the Postgres event store in DatabaseURL; esdb:// or kurrentdb://: KurrentDB
	StripeSecrets        []string
	StripeTolerance      time.Duration
	StripeAPIKey         string
	StripeAPIBase        string
	MercadoPago          MercadoPagoConfig
	Asaas                AsaasConfig
	Pagarme              PagarmeConfig
	JobsMaxAttempts      int
	JobsRescueAfter      time.Duration
	JobsWorkers          int // status fetches at once, and apart from them fee fetches
	Reconcile            ReconcileConfig
	Tokens               []api.Token
	LogLevel             slog.Level
	LogFormat            string // json or text
	ShutdownTimeout      time.Duration
	EventStorePollPeriod time.Duration
	AppendGroupSize      int // 1: every append in its own transaction
	AppendGroupWriters   int
	// Operator (LEDGER_OPERATOR) names the person running a command that
	// records who acted (`dead-letters retry`); empty: the OS user.
	Operator string
	// GCPercent is applied with debug.SetGCPercent by serve; 0 leaves the
	// runtime's setting alone (GOGC was set: the operator's choice wins).
	GCPercent int
}

// DefaultGCPercent is serve's garbage-collector target when GOGC is unset:
// the live heap is small and most garbage short-lived (ARCHITECTURE.md,
// BENCHMARKS.md).
const DefaultGCPercent = 400

// MercadoPagoConfig is LEDGER_MERCADOPAGO_*.
type MercadoPagoConfig struct {
	Secrets     []string
	MaxAge      time.Duration // 0: no freshness check (see README)
	AccessToken string
	APIBase     string
}

// AsaasConfig is LEDGER_ASAAS_*.
type AsaasConfig struct {
	Tokens     []string
	AllowedIPs []netip.Prefix // empty: any source; "default" in the env: Asaas's published list
	UseDefault bool
	Location   *time.Location
	APIKey     string
	APIBase    string
	UserAgent  string
}

// PagarmeConfig is LEDGER_PAGARME_*.
type PagarmeConfig struct {
	JWKSURL string
	Secrets []string
	APIKey  string
	APIBase string
}

// ReconcileConfig is LEDGER_RECONCILE_*: the reconciler's schedule and
// manners (README, "Reconciliation").
type ReconcileConfig struct {
	Interval time.Duration      // between passes; 0: no periodic pass
	After    time.Duration      // quiet this long, a payment not final is in doubt
	Sample   float64            // share of the payments finished in the last 24 h re-checked at every pass
	Rate     float64            // calls per second per provider, the status client's retries included
	Rates    map[string]float64 // LEDGER_<PROVIDER>_RECONCILE_RATE: a provider's own, overriding Rate
	Cooldown time.Duration      // an open breaker refuses checks this long
	// ReviewAfter (LEDGER_REVIEW_AFTER): a payment still waiting this long
	// after its first fact, past a check with no final answer, gets a
	// confirmation_timeout review. ReviewAfterBy: LEDGER_<PROVIDER>_REVIEW_AFTER,
	// a provider's own, overriding it.
	ReviewAfter   time.Duration
	ReviewAfterBy map[string]time.Duration
}

// DefaultDatabaseURL is the local Postgres that `make run` and the tests use.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/payledger?sslmode=disable"

// configFromEnv reads LEDGER_* variables through getenv, applies defaults and
// reports every problem at once.
func configFromEnv(getenv func(string) string) (Config, error) {
	var c Config
	var problems []error
	for _, s := range c.settings() {
		if err := s.parse(getenv(s.name)); err != nil {
			problems = append(problems, err)
		}
	}
	return c, errors.Join(problems...)
}

// settings lists every variable ledger reads, in README's order: the
// process's own, then each provider's (providerTable), then the rest.
func (c *Config) settings() []setting {
	s := []setting{
		{"LEDGER_ROLES", c.parseRoles},
		text("LEDGER_HTTP_ADDR", &c.HTTPAddr, ":8080"),
		{"LEDGER_DATABASE_URL", c.parseDatabaseURL},
		{"LEDGER_EVENTSTORE_URL", c.parseEventStoreURL},
		duration("LEDGER_EVENTSTORE_POLL_INTERVAL", &c.EventStorePollPeriod, 25*time.Millisecond, time.Millisecond),
		integer("LEDGER_APPEND_GROUP_SIZE", &c.AppendGroupSize, postgres.DefaultGroupSize, 1, 1000),
		integer("LEDGER_APPEND_GROUP_WRITERS", &c.AppendGroupWriters, postgres.DefaultGroupWriters, 1, 64),
	}
	for _, p := range providerTable() {
		s = append(s, p.settings(c)...)
	}
	s = append(s,
		integer("LEDGER_JOBS_MAX_ATTEMPTS", &c.JobsMaxAttempts, 12, 1, 100),
		duration("LEDGER_JOBS_RESCUE_AFTER", &c.JobsRescueAfter, 0, 2*time.Minute), // 0: the jobs default
		integer("LEDGER_JOBS_WORKERS", &c.JobsWorkers, jobs.DefaultWorkers, 1, 1000),
		durationOrOff("LEDGER_RECONCILE_INTERVAL", &c.Reconcile.Interval, 5*time.Minute, time.Second),
		duration("LEDGER_RECONCILE_AFTER", &c.Reconcile.After, 30*time.Minute, time.Second),
		fraction("LEDGER_RECONCILE_SAMPLE", &c.Reconcile.Sample, 0.01),
		positive("LEDGER_RECONCILE_RATE", &c.Reconcile.Rate, 5, 1000),
		duration("LEDGER_RECONCILE_COOLDOWN", &c.Reconcile.Cooldown, time.Minute, time.Second))
	s = append(s, c.reconcileRates()...)
	s = append(s, duration("LEDGER_REVIEW_AFTER", &c.Reconcile.ReviewAfter, jobs.DefaultReviewAfter, time.Second))
	s = append(s, c.reviewAfters()...)
	return append(s,
		setting{"LEDGER_API_TOKENS", c.parseTokens},
		onOff("LEDGER_CONSOLE", &c.Console, true),
		setting{"LEDGER_LOG_LEVEL", c.parseLogLevel},
		setting{"LEDGER_LOG_FORMAT", c.parseLogFormat},
		duration("LEDGER_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout, 30*time.Second, 0),
		text("LEDGER_DEBUG_ADDR", &c.DebugAddr, ""),
		setting{"LEDGER_OPERATOR", c.parseOperator},
		setting{"GOGC", c.parseGOGC},
	)
}

// reconcileRates reads LEDGER_<PROVIDER>_RECONCILE_RATE for every provider:
// their published limits differ (README, "Reconciliation").
func (c *Config) reconcileRates() []setting {
	c.Reconcile.Rates = map[string]float64{}
	var out []setting
	for _, name := range providerNames() {
		v := new(float64)
		p := positive("LEDGER_"+strings.ToUpper(name)+"_RECONCILE_RATE", v, 0, 1000)
		out = append(out, setting{p.name, func(raw string) error {
			if err := p.parse(raw); err != nil {
				return err
			}
			if *v > 0 {
				c.Reconcile.Rates[name] = *v
			}
			return nil
		}})
	}
	return out
}

// reviewAfters reads LEDGER_<PROVIDER>_REVIEW_AFTER for every provider: a
// boleto waits days, a card authorization hours.
func (c *Config) reviewAfters() []setting {
	c.Reconcile.ReviewAfterBy = map[string]time.Duration{}
	var out []setting
	for _, name := range providerNames() {
		v := new(time.Duration)
		d := duration("LEDGER_"+strings.ToUpper(name)+"_REVIEW_AFTER", v, 0, time.Second)
		out = append(out, setting{d.name, func(raw string) error {
			if err := d.parse(raw); err != nil {
				return err
			}
			if *v > 0 {
				c.Reconcile.ReviewAfterBy[name] = *v
			}
			return nil
		}})
	}
	return out
}

func (c *Config) parseRoles(raw string) error {
	roles, err := parseRoles(raw)
	c.Roles = roles
	if err != nil {
		return fmt.Errorf("LEDGER_ROLES: %w", err)
	}
	return nil
}

func (c *Config) parseDatabaseURL(raw string) error {
	c.DatabaseURL = or(raw, DefaultDatabaseURL)
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return fmt.Errorf("LEDGER_DATABASE_URL: want a postgres:// URL")
	}
	return nil
}

func (c *Config) parseEventStoreURL(raw string) error {
	c.EventStoreURL = strings.TrimSpace(raw)
	if c.EventStoreURL == "" {
		return nil
	}
	if _, err := eventStoreKind(c.EventStoreURL); err != nil {
		return fmt.Errorf("LEDGER_EVENTSTORE_URL: %w", err)
	}
	return nil
}

func (c *Config) parseTokens(raw string) error {
	tokens, err := api.ParseTokens(raw)
	c.Tokens = tokens
	if err != nil {
		return fmt.Errorf("LEDGER_API_TOKENS: %w", err)
	}
	return nil
}

func (c *Config) parseLogLevel(raw string) error {
	if err := c.LogLevel.UnmarshalText([]byte(or(raw, "info"))); err != nil {
		return fmt.Errorf("LEDGER_LOG_LEVEL: want debug, info, warn or error")
	}
	return nil
}

func (c *Config) parseLogFormat(raw string) error {
	c.LogFormat = or(raw, "json")
	if c.LogFormat != "json" && c.LogFormat != "text" {
		return fmt.Errorf("LEDGER_LOG_FORMAT=%q: want json or text", c.LogFormat)
	}
	return nil
}

// validOperator reports whether name may be an operator's: a token name's
// alphabet ([a-z0-9_.-], up to 64), so "cli:<name>" in a fact reads like
// the API's token names.
func validOperator(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' && r != '.' && r != '-' {
			return false
		}
	}
	return true
}

func (c *Config) parseOperator(raw string) error {
	c.Operator = strings.TrimSpace(raw)
	if c.Operator != "" && !validOperator(c.Operator) {
		return fmt.Errorf("LEDGER_OPERATOR=%q: want a name of [a-z0-9_.-], up to 64, such as ana", c.Operator)
	}
	return nil
}

// parseGOGC leaves the runtime's setting alone when the operator set GOGC.
func (c *Config) parseGOGC(raw string) error {
	if strings.TrimSpace(raw) == "" {
		c.GCPercent = DefaultGCPercent
	}
	return nil
}

// eventStoreKind tells which adapter a LEDGER_EVENTSTORE_URL selects.
func eventStoreKind(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("not a URL")
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		return "postgres", nil
	case "esdb", "esdb+discover", "kurrentdb", "kurrentdb+discover", "kurrent", "kurrent+discover":
		return "kurrentdb", nil
	}
	return "", fmt.Errorf("scheme %q: want esdb:// or kurrentdb:// (KurrentDB), postgres:// (a separate Postgres event store), or empty (the main database)", u.Scheme)
}
