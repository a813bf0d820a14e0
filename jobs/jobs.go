package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/payledger/payledger/projections"
)

// hardStopTimeout bounds the wait for cancelled jobs to return once Stop's
// grace period is over.
const hardStopTimeout = 10 * time.Second

// Jobs is payledger's job queue: one River client with the workers
// registered. Create it with New, start it with Start, stop it with Stop.
type Jobs struct {
	client     *river.Client[pgx.Tx]
	enqueuer   *Enqueuer
	reconciler *Reconciler    // nil without Config.Reconcile
	sweeper    *reviewSweeper // nil without Config.Reviews
	log        *slog.Logger
}

// New validates cfg and builds the River client. It does no I/O: River's
// tables must exist (migrations.Up creates them).
func New(cfg Config) (*Jobs, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var rc *Reconciler
	if cfg.Reconcile != nil {
		var err error
		if rc, err = cfg.reconciler(); err != nil {
			return nil, err
		}
	}
	workers, fees, err := newWorkers(cfg, rc)
	if err != nil {
		return nil, err
	}
	sweeper := newReviewSweeper(cfg)
	if err := addReviewSweepWorker(workers, sweeper); err != nil {
		return nil, err
	}
	rcfg := riverConfig(cfg, workers)
	rcfg.PeriodicJobs = append(append(reconcilePeriodic(cfg, rc), reviewSweepPeriodic(cfg, sweeper)...), deadLetterPeriodic())
	rcfg.ErrorHandler = &deadLetterHandler{dl: projections.NewDeadLetters(cfg.Pool), now: cfg.Now, log: cfg.Logger}
	client, err := river.NewClient(riverpgxv5.New(cfg.Pool), rcfg)
	if err != nil {
		return nil, fmt.Errorf("jobs: river client: %w", err)
	}
	enrich := map[string]bool{}
	for _, p := range cfg.EnrichProviders {
		enrich[p] = true
	}
	return &Jobs{client: client, enqueuer: &Enqueuer{client: client, enrich: enrich, fees: fees}, reconciler: rc, sweeper: sweeper,
		log: cfg.Logger}, nil
}

// newWorkers registers the enrichment and fee workers (and rc's, when not
// nil), and returns the providers whose fees are fetched.
func newWorkers(cfg Config, rc *Reconciler) (*river.Workers, map[string]bool, error) {
	rec := newRecorder(cfg.Store, cfg.Now, cfg.Logger)
	enrich := &enrichWorker{fetchers: map[string]StatusFetcher{}, rec: rec, log: cfg.Logger}
	fee := &feeWorker{fetchers: map[string]FeeFetcher{}, rec: rec, log: cfg.Logger}
	for _, f := range cfg.Fetchers {
		enrich.fetchers[f.Name()] = f
	}
	fees := map[string]bool{}
	for _, p := range cfg.FeeProviders {
		// validate checked that the provider's fetcher is a FeeFetcher.
		fee.fetchers[p], fees[p] = enrich.fetchers[p].(FeeFetcher), true
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, enrich); err != nil {
		return nil, nil, fmt.Errorf("jobs: register enrichment worker: %w", err)
	}
	if err := river.AddWorkerSafely(workers, fee); err != nil {
		return nil, nil, fmt.Errorf("jobs: register fee worker: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &deadLetterSyncWorker{pool: cfg.Pool}); err != nil {
		return nil, nil, fmt.Errorf("jobs: register dead-letter sync worker: %w", err)
	}
	if err := addReconcileWorkers(workers, cfg, rc); err != nil {
		return nil, nil, err
	}
	return workers, fees, nil
}

// riverConfig is the River configuration for cfg (defaults applied).
func riverConfig(cfg Config, workers *river.Workers) *river.Config {
	return &river.Config{
		Logger:  cfg.Logger,
		Workers: workers,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers},
			FeeQueue: {MaxWorkers: cfg.Workers}},
		MaxAttempts: cfg.MaxAttempts,
		RetryPolicy: retryPolicy{min: cfg.RetryMin, max: cfg.RetryMax, now: cfg.Now},
		// Discarded jobs are the dead-letter queue: never delete them.
		DiscardedJobRetentionPeriod: -1,
		// Inserts (in the projector's transactions) and finished jobs wake
		// the producer at once; the cooldown (100 ms) spaces its fetches
		// under load, so Workers per fetch is what sets the throughput, and
		// the poll only catches retries whose backoff ended.
		FetchPollInterval:    cfg.PollInterval,
		FetchCooldown:        min(cfg.PollInterval, river.FetchCooldownDefault),
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		TestOnly:             cfg.testOnly,
	}
}

// Enqueuer returns the enqueuer to hand the projector as its
// projections.RunnerConfig.FollowUp. It works whether or not Start was
// called: a process may enqueue and let others work the jobs.
func (j *Jobs) Enqueuer() *Enqueuer { return j.enqueuer }

// Start starts working jobs in the background and returns. ctx must live
// as long as the workers should: River stops them when it is cancelled, so
// pass a context that outlives the shutdown signal and call Stop.
func (j *Jobs) Start(ctx context.Context) error {
	if err := j.client.Start(ctx); err != nil {
		return fmt.Errorf("jobs: start: %w", err)
	}
	return nil
}

// Stop stops fetching new jobs and waits for the running ones to finish
// until ctx is done. Then it cancels them and waits a little more; River
// puts a job cancelled this way back in line without using up an attempt,
// and its work is idempotent, so nothing is lost. It returns an error only
// when the workers did not stop at all.
func (j *Jobs) Stop(ctx context.Context) error {
	err := j.client.Stop(ctx)
	if err == nil {
		return nil
	}
	if ctx.Err() == nil {
		return fmt.Errorf("jobs: stop: %w", err)
	}
	j.log.WarnContext(ctx, "jobs still running at the end of the shutdown grace period; cancelling them")
	hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), hardStopTimeout)
	defer cancel()
	if err := j.client.StopAndCancel(hard); err != nil {
		return fmt.Errorf("jobs: stop: cancelled jobs did not return: %w", err)
	}
	return nil
}

// RetryDeadLetter puts a dead-lettered (or any finished) job back in line
// to run now, with one more attempt if it had used them all. Operators call
// it once the cause is fixed.
func (j *Jobs) RetryDeadLetter(ctx context.Context, id int64) error {
	if _, err := j.client.JobRetry(ctx, id); err != nil {
		return fmt.Errorf("jobs: retry job %d: %w", id, err)
	}
	return nil
}
