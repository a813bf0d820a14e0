package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/eventstore/postgres"
)

// Config is everything `ledger` reads from its environment. Nothing else in
// payledger reads the environment.
type Config struct {
	Roles                Roles // LEDGER_ROLES: what this process runs
	HTTPAddr             string
	DebugAddr            string // empty: no profiler listener
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
	Tokens               []api.Token
	LogLevel             slog.Level
	LogFormat            string // json or text
	ShutdownTimeout      time.Duration
	EventStorePollPeriod time.Duration
	AppendGroupSize      int // 1: every append in its own transaction
	AppendGroupWriters   int
	// GCPercent is applied with debug.SetGCPercent by serve; 0 leaves the
	// runtime's setting alone (GOGC was set: the operator's choice wins).
	GCPercent int
}

// DefaultGCPercent is serve's garbage-collector target when GOGC is unset.
// The live heap of a serving ledger is small (tens of MB) and short-lived
// garbage is most of what it allocates, so Go's default of 100 collects
// very often: at 1,000 webhooks/s GOGC=400 took 12% less CPU (BENCHMARKS.md)
// for a heap target four times the live heap. GOMEMLIMIT still caps it.
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

// DefaultDatabaseURL is the local Postgres that `make run` and the tests use.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/payledger?sslmode=disable"

// configFromEnv reads LEDGER_* variables through getenv, applies defaults and
// reports every problem at once.
func configFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		HTTPAddr:             or(getenv("LEDGER_HTTP_ADDR"), ":8080"),
		DebugAddr:            strings.TrimSpace(getenv("LEDGER_DEBUG_ADDR")),
		DatabaseURL:          or(getenv("LEDGER_DATABASE_URL"), DefaultDatabaseURL),
		EventStoreURL:        strings.TrimSpace(getenv("LEDGER_EVENTSTORE_URL")),
		StripeSecrets:        splitList(getenv("LEDGER_STRIPE_WEBHOOK_SECRETS")),
		LogFormat:            or(getenv("LEDGER_LOG_FORMAT"), "json"),
		StripeTolerance:      300 * time.Second,
		ShutdownTimeout:      30 * time.Second,
		EventStorePollPeriod: 25 * time.Millisecond,
	}
	if strings.TrimSpace(getenv("GOGC")) == "" {
		c.GCPercent = DefaultGCPercent
	}
	c.StripeAPIKey = strings.TrimSpace(getenv("LEDGER_STRIPE_API_KEY"))
	c.StripeAPIBase = strings.TrimSpace(getenv("LEDGER_STRIPE_API_BASE"))
	c.MercadoPago = MercadoPagoConfig{
		Secrets:     splitList(getenv("LEDGER_MERCADOPAGO_WEBHOOK_SECRETS")),
		AccessToken: strings.TrimSpace(getenv("LEDGER_MERCADOPAGO_ACCESS_TOKEN")),
		APIBase:     strings.TrimSpace(getenv("LEDGER_MERCADOPAGO_API_BASE")),
	}
	c.Asaas = AsaasConfig{
		Tokens:    splitList(getenv("LEDGER_ASAAS_WEBHOOK_TOKENS")),
		APIKey:    strings.TrimSpace(getenv("LEDGER_ASAAS_API_KEY")),
		APIBase:   strings.TrimSpace(getenv("LEDGER_ASAAS_API_BASE")),
		UserAgent: or(getenv("LEDGER_ASAAS_USER_AGENT"), "payledger"),
	}
	c.Pagarme = PagarmeConfig{
		JWKSURL: strings.TrimSpace(getenv("LEDGER_PAGARME_JWKS_URL")),
		Secrets: splitList(getenv("LEDGER_PAGARME_WEBHOOK_SECRETS")),
		APIKey:  strings.TrimSpace(getenv("LEDGER_PAGARME_API_KEY")),
		APIBase: strings.TrimSpace(getenv("LEDGER_PAGARME_API_BASE")),
	}
	var problems []error
	roles, err := parseRoles(getenv("LEDGER_ROLES"))
	if err != nil {
		problems = append(problems, fmt.Errorf("LEDGER_ROLES: %w", err))
	}
	c.Roles = roles
	problems = append(problems, c.parseProviders(getenv)...)
	durations := []struct {
		name string
		dst  *time.Duration
		min  time.Duration
	}{
		{"LEDGER_STRIPE_WEBHOOK_TOLERANCE", &c.StripeTolerance, time.Second},
		{"LEDGER_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout, 0},
		{"LEDGER_EVENTSTORE_POLL_INTERVAL", &c.EventStorePollPeriod, time.Millisecond},
		{"LEDGER_MERCADOPAGO_MAX_AGE", &c.MercadoPago.MaxAge, 0},
		{"LEDGER_JOBS_RESCUE_AFTER", &c.JobsRescueAfter, 2 * time.Minute},
	}
	for _, d := range durations {
		if v := getenv(d.name); v != "" {
			parsed, err := time.ParseDuration(v)
			if err != nil || parsed < d.min {
				problems = append(problems, fmt.Errorf("%s=%q: want a duration of at least %s such as 300s", d.name, v, d.min))
				continue
			}
			*d.dst = parsed
		}
	}
	if err := c.LogLevel.UnmarshalText([]byte(or(getenv("LEDGER_LOG_LEVEL"), "info"))); err != nil {
		problems = append(problems, fmt.Errorf("LEDGER_LOG_LEVEL: want debug, info, warn or error"))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		problems = append(problems, fmt.Errorf("LEDGER_LOG_FORMAT=%q: want json or text", c.LogFormat))
	}
	tokens, err := api.ParseTokens(getenv("LEDGER_API_TOKENS"))
	if err != nil {
		problems = append(problems, fmt.Errorf("LEDGER_API_TOKENS: %w", err))
	}
	c.Tokens = tokens
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		problems = append(problems, fmt.Errorf("LEDGER_DATABASE_URL: want a postgres:// URL"))
	}
	if c.EventStoreURL != "" {
		if _, err := eventStoreKind(c.EventStoreURL); err != nil {
			problems = append(problems, fmt.Errorf("LEDGER_EVENTSTORE_URL: %w", err))
		}
	}
	return c, errors.Join(problems...)
}

// parseProviders reads the provider settings that need more than a string.
func (c *Config) parseProviders(getenv func(string) string) []error {
	var problems []error
	loc, err := time.LoadLocation(or(getenv("LEDGER_ASAAS_TIMEZONE"), "America/Sao_Paulo"))
	if err != nil {
		problems = append(problems, fmt.Errorf("LEDGER_ASAAS_TIMEZONE: %w", err))
	}
	c.Asaas.Location = loc
	for _, item := range splitList(getenv("LEDGER_ASAAS_ALLOWED_IPS")) {
		if item == "default" {
			c.Asaas.UseDefault = true
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			a, aerr := netip.ParseAddr(item)
			if aerr != nil {
				problems = append(problems, fmt.Errorf("LEDGER_ASAAS_ALLOWED_IPS: %q is not an IP address or CIDR prefix", item))
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		c.Asaas.AllowedIPs = append(c.Asaas.AllowedIPs, p.Masked())
	}
	c.JobsMaxAttempts = 12
	c.AppendGroupSize = postgres.DefaultGroupSize
	c.AppendGroupWriters = postgres.DefaultGroupWriters
	ints := []struct {
		name     string
		dst      *int
		min, max int
	}{
		{"LEDGER_JOBS_MAX_ATTEMPTS", &c.JobsMaxAttempts, 1, 100},
		{"LEDGER_APPEND_GROUP_SIZE", &c.AppendGroupSize, 1, 1000},
		{"LEDGER_APPEND_GROUP_WRITERS", &c.AppendGroupWriters, 1, 64},
	}
	for _, i := range ints {
		if v := getenv(i.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < i.min || n > i.max {
				problems = append(problems, fmt.Errorf("%s=%q: want an integer from %d to %d", i.name, v, i.min, i.max))
				continue
			}
			*i.dst = n
		}
	}
	for name, base := range map[string]string{"LEDGER_STRIPE_API_BASE": c.StripeAPIBase, "LEDGER_MERCADOPAGO_API_BASE": c.MercadoPago.APIBase,
		"LEDGER_ASAAS_API_BASE": c.Asaas.APIBase, "LEDGER_PAGARME_API_BASE": c.Pagarme.APIBase, "LEDGER_PAGARME_JWKS_URL": c.Pagarme.JWKSURL} {
		if base == "" {
			continue
		}
		if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			problems = append(problems, fmt.Errorf("%s=%q: want an http(s) URL", name, base))
		}
	}
	return problems
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

func or(v, def string) string {
	if v = strings.TrimSpace(v); v != "" {
		return v
	}
	return def
}

// splitList splits a comma-separated list, dropping blanks around items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
