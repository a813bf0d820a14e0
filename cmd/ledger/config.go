package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/payledger/payledger/api"
)

// Config is everything `ledger` reads from its environment. Nothing else in
// payledger reads the environment.
type Config struct {
	HTTPAddr             string
	DatabaseURL          string
	EventStoreURL        string // empty: the Postgres event store in DatabaseURL; esdb:// or kurrentdb://: KurrentDB
	StripeSecrets        []string
	StripeTolerance      time.Duration
	Tokens               []api.Token
	LogLevel             slog.Level
	LogFormat            string // json or text
	ShutdownTimeout      time.Duration
	EventStorePollPeriod time.Duration
}

// DefaultDatabaseURL is the local Postgres that `make run` and the tests use.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/payledger?sslmode=disable"

// configFromEnv reads LEDGER_* variables through getenv, applies defaults and
// reports every problem at once.
func configFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		HTTPAddr:             or(getenv("LEDGER_HTTP_ADDR"), ":8080"),
		DatabaseURL:          or(getenv("LEDGER_DATABASE_URL"), DefaultDatabaseURL),
		EventStoreURL:        strings.TrimSpace(getenv("LEDGER_EVENTSTORE_URL")),
		StripeSecrets:        splitList(getenv("LEDGER_STRIPE_WEBHOOK_SECRETS")),
		LogFormat:            or(getenv("LEDGER_LOG_FORMAT"), "json"),
		StripeTolerance:      300 * time.Second,
		ShutdownTimeout:      30 * time.Second,
		EventStorePollPeriod: 25 * time.Millisecond,
	}
	var problems []error
	durations := []struct {
		name string
		dst  *time.Duration
		min  time.Duration
	}{
		{"LEDGER_STRIPE_WEBHOOK_TOLERANCE", &c.StripeTolerance, time.Second},
		{"LEDGER_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout, 0},
		{"LEDGER_EVENTSTORE_POLL_INTERVAL", &c.EventStorePollPeriod, time.Millisecond},
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
