package jobs

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of Config. With them a failing fetch is retried 11 times, the
// waits being 10s, 20s, 40s, … 2560s, 1h, 1h, each jittered into its upper
// half: 1h43m to 3h25m in all before it is dead-lettered. Long enough to
// ride out a provider outage, short enough that someone looks at a payment
// stuck in pending the same day. The same bound applies to a fee fetch
// waiting for a Stripe balance transaction (null for up to an hour with
// asynchronous capture): nine tries in its first 43 to 85 minutes, then hourly.
const (
	DefaultMaxAttempts  = 12
	DefaultWorkers      = 32 // see Workers and BENCHMARKS.md, "Background fetches after a burst"
	DefaultRetryMin     = 10 * time.Second
	DefaultRetryMax     = time.Hour
	DefaultPollInterval = time.Second
	DefaultJobTimeout   = 90 * time.Second // a status fetch's worst case is ~85 s (4 attempts × 10 s, backoff, a 30 s Retry-After)
	DefaultRescueAfter  = 3 * time.Minute  // a job left running by a killed process is retried this long after it started; a live one rescued by mistake only refetches (content-derived IDs)
)

// Config configures Jobs. Zero fields take the defaults.
type Config struct {
	// Pool is the read-model database. River's tables live there (migrations
	// create them), and the projector commits its batches there, which is
	// what lets a job be enqueued in the transaction that caused it. River
	// keeps one connection for LISTEN and uses others to fetch and complete
	// jobs. A running job holds no connection of its own (its fetch is
	// HTTP, its append joins the event store's group commit, River completes
	// jobs in batches), so the pool need not grow with Workers: the
	// listener, a fetch and a completion batch at a time.
	Pool *pgxpool.Pool
	// Fetchers are the providers' status clients, one per provider name.
	Fetchers []StatusFetcher
	// Store is where observations are appended: the event store.
	Store Appender
	// Logger receives job failures and River's own logs; nil discards them.
	Logger *slog.Logger
	// MaxAttempts bounds the attempts of a job before it is dead-lettered.
	// River stores it on each job when the job is enqueued, so a change
	// applies to jobs enqueued after it.
	MaxAttempts int
	// Workers bounds the status fetches this process runs at once, and
	// apart from them the fee fetches (FeeQueue). It is what bounds how fast
	// a burst is fetched: River takes at most Workers jobs per fetch and
	// fetches at most every 100 ms under load, so Workers×10 jobs a second
	// at best, less when a job outlasts 100 ms. A fetch is I/O-bound, so a
	// few dozen cost little; the provider's rate limit is the real ceiling
	// (every process's Workers together, divided by a fetch's latency).
	Workers int
	// EnrichProviders names the providers whose notifications carry no
	// state, so that each one is followed by a status fetch (Mercado Pago).
	// Each needs a Fetcher. Empty: nothing is enriched.
	EnrichProviders []string
	// FeeProviders names the providers whose fee is fetched by a FeeArgs
	// job after each success and each notification (Stripe: its balance
	// transaction). Each needs a Fetcher that is also a FeeFetcher. Empty:
	// no fee is fetched.
	FeeProviders []string
	// RetryMin and RetryMax bound the backoff between attempts: the n-th
	// retry waits RetryMin·2ⁿ⁻¹ capped at RetryMax, jittered into its upper half.
	RetryMin, RetryMax time.Duration
	// PollInterval is how often workers look for due jobs when no insert
	// notification woke them (a retry's backoff ending wakes nobody).
	PollInterval time.Duration
	// JobTimeout cancels a job running longer; it must cover a status
	// client's own retries (attempt timeout × attempts + Retry-After waits).
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before the queue's
	// leader assumes its process died and retries it (a process killed
	// outright never marks its job). It must exceed JobTimeout.
	RescueAfter time.Duration
	// Now is the clock of ReceivedAt in the metadata of appended events.
	Now func() time.Time
	// Reconcile configures the reconciler (issue 17); nil: no reconciler
	// workers. Its Logger and Now default to the fields above.
	Reconcile *ReconcilerConfig
	// ReconcileInterval is how often a reconciliation pass is enqueued
	// (LEDGER_RECONCILE_INTERVAL); 0 enqueues none.
	ReconcileInterval time.Duration
	// Reviews selects the payments whose anomalies await a review
	// (projections.Queries); nil: no review sweep. With it, Store must also
	// read streams (ReconcileStore). The sweep runs whether or not the
	// reconciler is configured.
	Reviews AnomalySource
	// ReviewSweepInterval is how often the review sweep is enqueued
	// (default 1m).
	ReviewSweepInterval time.Duration

	// testOnly makes River skip its production start-up jitter.
	testOnly bool
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	setDefault(&c.MaxAttempts, DefaultMaxAttempts)
	setDefault(&c.Workers, DefaultWorkers)
	setDefault(&c.RetryMin, DefaultRetryMin)
	setDefault(&c.RetryMax, max(DefaultRetryMax, c.RetryMin))
	setDefault(&c.PollInterval, DefaultPollInterval)
	setDefault(&c.JobTimeout, DefaultJobTimeout)
	setDefault(&c.RescueAfter, max(DefaultRescueAfter, 2*c.JobTimeout))
	setDefault(&c.ReviewSweepInterval, DefaultReviewSweepInterval)
	if c.Now == nil {
		c.Now = time.Now
	}
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// validate reports every problem at once.
func (c *Config) validate() error {
	var errs []error
	if c.Pool == nil {
		errs = append(errs, errors.New("no database pool"))
	}
	if c.Store == nil {
		errs = append(errs, errors.New("no event store to append observations to"))
	}
	if c.RetryMax < c.RetryMin {
		errs = append(errs, fmt.Errorf("RetryMax %s is below RetryMin %s", c.RetryMax, c.RetryMin))
	}
	if c.RescueAfter <= c.JobTimeout {
		errs = append(errs, fmt.Errorf("RescueAfter %s must exceed JobTimeout %s", c.RescueAfter, c.JobTimeout))
	}
	if _, reads := c.Store.(ReconcileStore); c.Reviews != nil && c.Store != nil && !reads {
		errs = append(errs, errors.New("the review sweep needs an event store that reads streams"))
	}
	errs = append(errs, c.validateFetchers()...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("jobs: config: %w", err)
	}
	return nil
}

// validateFetchers checks the fetchers and the providers that need them.
func (c *Config) validateFetchers() []error {
	var errs []error
	byName := map[string]StatusFetcher{}
	for i, f := range c.Fetchers {
		switch {
		case f == nil:
			errs = append(errs, fmt.Errorf("fetcher %d is nil", i+1))
		case f.Name() == "":
			errs = append(errs, fmt.Errorf("fetcher %d has no name", i+1))
		case byName[f.Name()] != nil:
			errs = append(errs, fmt.Errorf("two fetchers for provider %q", f.Name()))
		default:
			byName[f.Name()] = f
		}
	}
	for _, p := range c.EnrichProviders {
		if byName[p] == nil {
			errs = append(errs, fmt.Errorf("provider %q is to be enriched but has no fetcher", p))
		}
	}
	for _, p := range c.FeeProviders {
		f := byName[p]
		if f == nil {
			errs = append(errs, fmt.Errorf("provider %q is to have its fees fetched but has no fetcher", p))
		} else if _, ok := f.(FeeFetcher); !ok {
			errs = append(errs, fmt.Errorf("provider %q is to have its fees fetched but its fetcher fetches no fees", p))
		}
	}
	return errs
}
