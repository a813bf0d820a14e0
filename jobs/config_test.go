package jobs

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/payledger/payledger/eventstore/postgres"
)

func TestNewRejectsBadConfig(t *testing.T) {
	// A pool that never connects: New does no I/O.
	pool, err := pgxpool.New(t.Context(), "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store := postgres.New(pool, postgres.Options{})
	mp := &fakeFetcher{name: "mercadopago"}
	tests := []struct {
		name string
		cfg  Config
		want []string // every problem is reported
	}{
		{name: "nothing", cfg: Config{}, want: []string{"no database pool", "no event store"}},
		{name: "enrichment without a fetcher", cfg: Config{Pool: pool, Store: store, EnrichProviders: []string{"mercadopago"}},
			want: []string{`provider "mercadopago" is to be enriched but has no fetcher`}},
		{name: "bad fetchers", cfg: Config{Pool: pool, Store: store, Fetchers: []StatusFetcher{mp, nil, &fakeFetcher{}, mp}},
			want: []string{"fetcher 2 is nil", "fetcher 3 has no name", `two fetchers for provider "mercadopago"`}},
		{name: "fees without a fetcher, or from a fetcher that fetches none", cfg: Config{Pool: pool, Store: store,
			Fetchers: []StatusFetcher{mp}, FeeProviders: []string{"stripe", "mercadopago"}},
			want: []string{`provider "stripe" is to have its fees fetched but has no fetcher`,
				`provider "mercadopago" is to have its fees fetched but its fetcher fetches no fees`}},
		{name: "inverted retry bounds", cfg: Config{Pool: pool, Store: store, RetryMin: time.Hour, RetryMax: time.Minute},
			want: []string{"RetryMax 1m0s is below RetryMin 1h0m0s"}},
		{name: "rescue before the timeout", cfg: Config{Pool: pool, Store: store, JobTimeout: time.Hour, RescueAfter: time.Minute},
			want: []string{"RescueAfter 1m0s must exceed JobTimeout 1h0m0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil {
				t.Fatal("New accepted the config")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	j, err := New(Config{Pool: pool, Store: store, Fetchers: []StatusFetcher{mp}, EnrichProviders: []string{"mercadopago"}})
	if err != nil || j.Enqueuer() == nil {
		t.Fatalf("New(valid) = %v, %v", j, err)
	}
}

// TestRiverConfig pins the River settings the package's promises rest on.
func TestRiverConfig(t *testing.T) {
	cfg := Config{}
	cfg.setDefaults()
	rc := riverConfig(cfg, river.NewWorkers())
	checks := []struct {
		name      string
		got, want any
	}{
		{"dead letters are never deleted", rc.DiscardedJobRetentionPeriod, time.Duration(-1)},
		{"max attempts", rc.MaxAttempts, DefaultMaxAttempts},
		{"workers", rc.Queues[river.QueueDefault].MaxWorkers, DefaultWorkers},
		{"fee workers", rc.Queues[FeeQueue].MaxWorkers, DefaultWorkers},
		{"job timeout", rc.JobTimeout, DefaultJobTimeout},
		{"rescue after", rc.RescueStuckJobsAfter, DefaultRescueAfter},
		{"poll interval", rc.FetchPollInterval, DefaultPollInterval},
		{"production start-up", rc.TestOnly, false},
	}
	if p, ok := rc.RetryPolicy.(retryPolicy); !ok || p.min != DefaultRetryMin || p.max != DefaultRetryMax {
		t.Errorf("retry policy %#v, want payledger's from %s to %s", rc.RetryPolicy, DefaultRetryMin, DefaultRetryMax)
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}
