package main

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/jobs"
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
	if c.Roles != allRoles() {
		t.Errorf("Roles = %+v, want all", c.Roles)
	}
	if c.GCPercent != DefaultGCPercent || c.DebugAddr != "" {
		t.Errorf("GCPercent = %d, DebugAddr = %q; want %d and off", c.GCPercent, c.DebugAddr, DefaultGCPercent)
	}
}

// GOGC set by the operator wins over serve's default: serve leaves the
// runtime's setting (already read from GOGC) alone.
func TestConfigGOGCWins(t *testing.T) {
	for _, v := range []string{"100", "off"} {
		c, err := configFromEnv(env(map[string]string{"GOGC": v, "LEDGER_DEBUG_ADDR": " 127.0.0.1:6060 "}))
		if err != nil {
			t.Fatal(err)
		}
		if c.GCPercent != 0 || c.DebugAddr != "127.0.0.1:6060" {
			t.Errorf("GOGC=%s: GCPercent = %d, DebugAddr = %q", v, c.GCPercent, c.DebugAddr)
		}
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
		"LEDGER_ROLES":                    "webhooks,reader",
		"LEDGER_OPERATOR":                 "cli:ana",
	}))
	if err == nil {
		t.Fatal("want errors")
	}
	for _, name := range []string{"LEDGER_STRIPE_WEBHOOK_TOLERANCE", "LEDGER_API_TOKENS", "LEDGER_DATABASE_URL",
		"LEDGER_EVENTSTORE_URL", "LEDGER_LOG_LEVEL", "LEDGER_LOG_FORMAT", "LEDGER_ROLES", "LEDGER_OPERATOR"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not mention %s:\n%v", name, err)
		}
	}
}

// TestConfigOperator: LEDGER_OPERATOR is a name of a token name's alphabet,
// unset by default (the OS user then).
func TestConfigOperator(t *testing.T) {
	tests := []struct {
		raw, want string
		ok        bool
	}{
		{raw: "", want: "", ok: true},
		{raw: " ana.silva_2-b ", want: "ana.silva_2-b", ok: true},
		{raw: "Ana", ok: false},
		{raw: "ana silva", ok: false},
		{raw: "cli:ana", ok: false},
		{raw: strings.Repeat("a", 65), ok: false},
	}
	for _, tt := range tests {
		c, err := configFromEnv(env(map[string]string{"LEDGER_OPERATOR": tt.raw}))
		if (err == nil) != tt.ok || (tt.ok && c.Operator != tt.want) {
			t.Errorf("LEDGER_OPERATOR=%q: %q, %v; want %q, ok %v", tt.raw, c.Operator, err, tt.want, tt.ok)
		}
	}
}

func TestConfigProviders(t *testing.T) {
	c, err := configFromEnv(env(map[string]string{
		"LEDGER_MERCADOPAGO_WEBHOOK_SECRETS": "mp1,mp2",
		"LEDGER_MERCADOPAGO_ACCESS_TOKEN":    "APP_USR-1",
		"LEDGER_MERCADOPAGO_MAX_AGE":         "1h",
		"LEDGER_ASAAS_WEBHOOK_TOKENS":        "tok1",
		"LEDGER_ASAAS_ALLOWED_IPS":           "default, 10.1.2.3, 192.0.2.0/24",
		"LEDGER_ASAAS_TIMEZONE":              "America/Recife",
		"LEDGER_PAGARME_JWKS_URL":            "https://hubapi.pagar.me/.well-known/jwks.json",
		"LEDGER_JOBS_MAX_ATTEMPTS":           "5",
		"LEDGER_JOBS_WORKERS":                "8",
		"LEDGER_APPEND_GROUP_SIZE":           "1",
		"LEDGER_APPEND_GROUP_WRITERS":        "8",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.MercadoPago.Secrets) != 2 || c.MercadoPago.MaxAge != time.Hour || !c.Asaas.UseDefault ||
		len(c.Asaas.AllowedIPs) != 2 || c.Asaas.AllowedIPs[0].Bits() != 32 || c.Asaas.Location.String() != "America/Recife" ||
		c.JobsMaxAttempts != 5 || c.Pagarme.JWKSURL == "" || c.AppendGroupSize != 1 || c.AppendGroupWriters != 8 ||
		c.JobsWorkers != 8 {
		t.Errorf("parsed = %+v", c)
	}
	if c, _ := configFromEnv(env(nil)); c.Asaas.Location.String() != "America/Sao_Paulo" || c.JobsMaxAttempts != 12 ||
		c.AppendGroupSize != 64 || c.AppendGroupWriters != 2 || c.JobsWorkers != jobs.DefaultWorkers {
		t.Errorf("defaults: %v, %d, group %d×%d, %d workers", c.Asaas.Location, c.JobsMaxAttempts, c.AppendGroupSize,
			c.AppendGroupWriters, c.JobsWorkers)
	}
}

func TestConfigProviderProblems(t *testing.T) {
	_, err := configFromEnv(env(map[string]string{
		"LEDGER_ASAAS_ALLOWED_IPS":    "not-an-ip",
		"LEDGER_ASAAS_TIMEZONE":       "Mars/Olympus",
		"LEDGER_PAGARME_API_BASE":     "ftp://x",
		"LEDGER_JOBS_MAX_ATTEMPTS":    "0",
		"LEDGER_JOBS_WORKERS":         "0",
		"LEDGER_MERCADOPAGO_MAX_AGE":  "-1s",
		"LEDGER_APPEND_GROUP_SIZE":    "0",
		"LEDGER_APPEND_GROUP_WRITERS": "many",
	}))
	for _, name := range []string{"LEDGER_ASAAS_ALLOWED_IPS", "LEDGER_ASAAS_TIMEZONE",
		"LEDGER_PAGARME_API_BASE", "LEDGER_JOBS_MAX_ATTEMPTS", "LEDGER_MERCADOPAGO_MAX_AGE",
		"LEDGER_APPEND_GROUP_SIZE", "LEDGER_APPEND_GROUP_WRITERS", "LEDGER_JOBS_WORKERS"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error does not mention %s: %v", name, err)
		}
	}
}

func TestConfigReconcile(t *testing.T) {
	def := ReconcileConfig{Interval: 5 * time.Minute, After: 30 * time.Minute, Sample: 0.01, Rate: 5, Cooldown: time.Minute}
	tests := []struct {
		name string
		env  map[string]string
		want ReconcileConfig
		bad  string // the variable the error names; "" when valid
	}{
		{"defaults", nil, def, ""},
		{"set", map[string]string{"LEDGER_RECONCILE_INTERVAL": "30s", "LEDGER_RECONCILE_AFTER": "1s",
			"LEDGER_RECONCILE_SAMPLE": "1", "LEDGER_RECONCILE_RATE": "0.5", "LEDGER_RECONCILE_COOLDOWN": "2m"},
			ReconcileConfig{Interval: 30 * time.Second, After: time.Second, Sample: 1, Rate: 0.5, Cooldown: 2 * time.Minute}, ""},
		{"interval 0 disables", map[string]string{"LEDGER_RECONCILE_INTERVAL": "0", "LEDGER_RECONCILE_SAMPLE": "0"},
			ReconcileConfig{After: def.After, Rate: def.Rate, Cooldown: def.Cooldown}, ""},
		{"interval 0s disables", map[string]string{"LEDGER_RECONCILE_INTERVAL": "0s"},
			ReconcileConfig{After: def.After, Sample: def.Sample, Rate: def.Rate, Cooldown: def.Cooldown}, ""},
		{"interval below a second", map[string]string{"LEDGER_RECONCILE_INTERVAL": "500ms"}, def, "LEDGER_RECONCILE_INTERVAL"},
		{"interval not a duration", map[string]string{"LEDGER_RECONCILE_INTERVAL": "5"}, def, "LEDGER_RECONCILE_INTERVAL"},
		{"after 0", map[string]string{"LEDGER_RECONCILE_AFTER": "0"}, def, "LEDGER_RECONCILE_AFTER"},
		{"sample above 1", map[string]string{"LEDGER_RECONCILE_SAMPLE": "1.5"}, def, "LEDGER_RECONCILE_SAMPLE"},
		{"sample negative", map[string]string{"LEDGER_RECONCILE_SAMPLE": "-0.1"}, def, "LEDGER_RECONCILE_SAMPLE"},
		{"sample NaN", map[string]string{"LEDGER_RECONCILE_SAMPLE": "NaN"}, def, "LEDGER_RECONCILE_SAMPLE"},
		{"rate 0", map[string]string{"LEDGER_RECONCILE_RATE": "0"}, def, "LEDGER_RECONCILE_RATE"},
		{"rate words", map[string]string{"LEDGER_RECONCILE_RATE": "fast"}, def, "LEDGER_RECONCILE_RATE"},
		{"a provider's own rate", map[string]string{"LEDGER_ASAAS_RECONCILE_RATE": "0.5", "LEDGER_STRIPE_RECONCILE_RATE": ""},
			ReconcileConfig{Interval: def.Interval, After: def.After, Sample: def.Sample, Rate: def.Rate, Cooldown: def.Cooldown,
				Rates: map[string]float64{"asaas": 0.5}}, ""},
		{"a provider's rate 0", map[string]string{"LEDGER_PAGARME_RECONCILE_RATE": "0"}, def, "LEDGER_PAGARME_RECONCILE_RATE"},
		{"cooldown short", map[string]string{"LEDGER_RECONCILE_COOLDOWN": "10ms"}, def, "LEDGER_RECONCILE_COOLDOWN"},
		{"review after", map[string]string{"LEDGER_REVIEW_AFTER": "2s"},
			ReconcileConfig{Interval: def.Interval, After: def.After, Sample: def.Sample, Rate: def.Rate, Cooldown: def.Cooldown,
				ReviewAfter: 2 * time.Second}, ""},
		{"review after 0", map[string]string{"LEDGER_REVIEW_AFTER": "0"}, def, "LEDGER_REVIEW_AFTER"},
		{"review after negative", map[string]string{"LEDGER_REVIEW_AFTER": "-1h"}, def, "LEDGER_REVIEW_AFTER"},
		{"review after words", map[string]string{"LEDGER_REVIEW_AFTER": "3 days"}, def, "LEDGER_REVIEW_AFTER"},
		{"a provider's own review deadline", map[string]string{"LEDGER_ASAAS_REVIEW_AFTER": "240h", "LEDGER_STRIPE_REVIEW_AFTER": ""},
			ReconcileConfig{Interval: def.Interval, After: def.After, Sample: def.Sample, Rate: def.Rate, Cooldown: def.Cooldown,
				ReviewAfterBy: map[string]time.Duration{"asaas": 240 * time.Hour}}, ""},
		{"a provider's review deadline 0", map[string]string{"LEDGER_MERCADOPAGO_REVIEW_AFTER": "0"}, def, "LEDGER_MERCADOPAGO_REVIEW_AFTER"},
		{"a provider's review deadline bad", map[string]string{"LEDGER_PAGARME_REVIEW_AFTER": "soon"}, def, "LEDGER_PAGARME_REVIEW_AFTER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := configFromEnv(env(tt.env))
			if tt.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("error = %v, want one naming %s", err, tt.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.Rates == nil {
				tt.want.Rates = map[string]float64{}
			}
			if tt.want.ReviewAfter == 0 {
				tt.want.ReviewAfter = jobs.DefaultReviewAfter
			}
			if tt.want.ReviewAfterBy == nil {
				tt.want.ReviewAfterBy = map[string]time.Duration{}
			}
			if !reflect.DeepEqual(c.Reconcile, tt.want) {
				t.Errorf("Reconcile = %+v, want %+v", c.Reconcile, tt.want)
			}
		})
	}
}

// TestConfigReviewAfterReachesReconciler: the review deadlines are wired
// into the reconciler's config.
func TestConfigReviewAfterReachesReconciler(t *testing.T) {
	c, err := configFromEnv(env(map[string]string{"LEDGER_REVIEW_AFTER": "90m", "LEDGER_ASAAS_REVIEW_AFTER": "240h"}))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := reconcilerConfig(c, jobs.NewGate(gateConfig(c), nil), nil, nil, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if rc.ReviewAfter != 90*time.Minute || !reflect.DeepEqual(rc.ReviewAfterBy, map[string]time.Duration{"asaas": 240 * time.Hour}) {
		t.Errorf("reconciler review deadlines %s %v", rc.ReviewAfter, rc.ReviewAfterBy)
	}
}
