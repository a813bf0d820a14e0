package main

import (
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigDefaults(t *testing.T) {
	c, err := configFromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != ":8080" || c.DatabaseURL != DefaultDatabaseURL || c.EventStoreURL != "" ||
		c.StripeTolerance != 300*time.Second || len(c.StripeSecrets) != 0 || len(c.Tokens) != 0 {
		t.Errorf("defaults = %+v", c)
	}
}

func TestConfigParses(t *testing.T) {
	c, err := configFromEnv(env(map[string]string{
		"LEDGER_HTTP_ADDR":                " 127.0.0.1:9000 ",
		"LEDGER_STRIPE_WEBHOOK_SECRETS":   "whsec_a, whsec_b,,",
		"LEDGER_STRIPE_WEBHOOK_TOLERANCE": "120s",
		"LEDGER_API_TOKENS":               "read:r1,admin:a1",
		"LEDGER_EVENTSTORE_URL":           "postgres://postgres@127.0.0.1/es",
		"LEDGER_LOG_LEVEL":                "debug",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:9000" || len(c.StripeSecrets) != 2 || c.StripeSecrets[1] != "whsec_b" ||
		c.StripeTolerance != 120*time.Second || len(c.Tokens) != 2 {
		t.Errorf("parsed = %+v", c)
	}
}

func TestConfigReportsEveryProblem(t *testing.T) {
	_, err := configFromEnv(env(map[string]string{
		"LEDGER_STRIPE_WEBHOOK_TOLERANCE": "soon",
		"LEDGER_API_TOKENS":               "root:x",
		"LEDGER_DATABASE_URL":             "mysql://x",
		"LEDGER_EVENTSTORE_URL":           "redis://x",
		"LEDGER_LOG_LEVEL":                "loud",
		"LEDGER_LOG_FORMAT":               "xml",
	}))
	if err == nil {
		t.Fatal("want errors")
	}
	for _, name := range []string{"LEDGER_STRIPE_WEBHOOK_TOLERANCE", "LEDGER_API_TOKENS", "LEDGER_DATABASE_URL",
		"LEDGER_EVENTSTORE_URL", "LEDGER_LOG_LEVEL", "LEDGER_LOG_FORMAT"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not mention %s:\n%v", name, err)
		}
	}
}
