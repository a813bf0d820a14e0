package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
)

// Job kinds of the reconciler. They are stored in every job row: renaming
// one strands the jobs already queued.
const (
	ReconcilePassKind    = "reconcile_pass"
	ReconcilePaymentKind = "reconcile_payment"
)

// unfinished are the states in which a job still is to run or is running.
var unfinished = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}

// ReconcilePassArgs is one reconciliation pass, enqueued periodically.
type ReconcilePassArgs struct{}

// Kind implements river.JobArgs.
func (ReconcilePassArgs) Kind() string { return ReconcilePassKind }

// InsertOpts implements river.JobArgsWithInsertOpts: one unfinished pass
// across all processes, so a pass that continues (snoozed) absorbs the next
// periodic insert.
func (ReconcilePassArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByState: unfinished}}
}

// ReconcileArgs asks for one payment to be checked now (on demand).
type ReconcileArgs struct {
	Provider  string `json:"provider"`
	PaymentID string `json:"payment_id"`
}

// Kind implements river.JobArgs.
func (ReconcileArgs) Kind() string { return ReconcilePaymentKind }

// InsertOpts implements river.JobArgsWithInsertOpts: one unfinished check
// per payment; asking again while it waits or runs returns that job.
func (ReconcileArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinished}}
}

// passWorker works ReconcilePassArgs.
type passWorker struct {
	river.WorkerDefaults[ReconcilePassArgs]
	r      *Reconciler
	budget time.Duration
}

// passBudget is how long a pass job starts checks: River cancels a job at
// JobTimeout and the rescuer runs it again after RescueAfter, so the
// checks started last (each up to CheckTimeout) must end well before
// either.
func passBudget(cfg Config, checkTimeout time.Duration) time.Duration {
	limit := min(cfg.JobTimeout, cfg.RescueAfter)
	return max(limit*9/10-checkTimeout, limit/4)
}

// Work runs a pass. When its budget ends with payments left, it snoozes
// to continue at once in a fresh run with a fresh selection: what it
// checked is quiet again (its check is a fact), so the next run goes on
// with the next oldest.
func (w *passWorker) Work(ctx context.Context, job *river.Job[ReconcilePassArgs]) error {
	rep, err := w.r.Pass(ctx, PassOptions{Run: passRun(job.JobRow), Budget: w.budget})
	w.r.log.InfoContext(ctx, "reconciliation pass", "run", rep.Run, "counts", rep.Counts, "corrections", rep.Corrections,
		"skipped", rep.Skipped, "failed", rep.Failed, "remaining", rep.Remaining)
	if err != nil {
		return err
	}
	if rep.Remaining > 0 {
		return river.JobSnooze(0)
	}
	return nil
}

// passRun names one run of a pass job: the attempt grows on every retry or
// rescue and the snooze count on every continuation, so no two runs share
// an ID (a check event of an earlier run would swallow a new one).
func passRun(job *rivertype.JobRow) string {
	return fmt.Sprintf("pass-%d-%d-%d", job.ID, job.Attempt, snoozes(job))
}

// paymentWorker works ReconcileArgs.
type paymentWorker struct {
	river.WorkerDefaults[ReconcileArgs]
	r *Reconciler
}

// Work checks the payment. A logged check, whatever its outcome, completes
// the job; a store failure or an open breaker retries it.
func (w *paymentWorker) Work(ctx context.Context, job *river.Job[ReconcileArgs]) error {
	a := job.Args
	run := fmt.Sprintf("job-%d-%d-%d", job.ID, job.Attempt, snoozes(job.JobRow))
	res := w.r.Check(ctx, domain.Candidate{Provider: a.Provider, ProviderPaymentID: a.PaymentID, Trigger: domain.TriggerOnDemand}, run, false)
	switch {
	case res.Err != nil:
		return res.Err
	case res.Skipped == SkipNoCredentials:
		return river.JobCancel(fmt.Errorf("jobs: reconcile %s/%s: %s has %s", a.Provider, a.PaymentID, a.Provider, SkipNoCredentials))
	case res.Skipped != "":
		return fmt.Errorf("jobs: reconcile %s/%s: %s", a.Provider, a.PaymentID, res.Skipped)
	}
	return nil
}

// addReconcileWorkers registers the reconciler's workers.
func addReconcileWorkers(workers *river.Workers, cfg Config, r *Reconciler) error {
	if r == nil {
		return nil
	}
	if err := river.AddWorkerSafely(workers, &passWorker{r: r, budget: passBudget(cfg, r.cfg.CheckTimeout)}); err != nil {
		return fmt.Errorf("jobs: register reconciliation pass worker: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &paymentWorker{r: r}); err != nil {
		return fmt.Errorf("jobs: register reconciliation worker: %w", err)
	}
	return nil
}

// reconcilePeriodic is the periodic pass, when there is a reconciler and
// an interval. River enqueues periodic jobs from its leader only, and the
// pass is unique: one at a time across processes. RunOnStart: a leader
// elected (a deploy, a restart) inserts one at once, else passes would
// starve under deploys more frequent than the interval; the extra pass is
// cheap, payments checked recently are not in doubt.
func reconcilePeriodic(cfg Config, r *Reconciler) []*river.PeriodicJob {
	if r == nil || cfg.ReconcileInterval <= 0 {
		return nil
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(cfg.ReconcileInterval),
		func() (river.JobArgs, *river.InsertOpts) { return ReconcilePassArgs{}, nil },
		&river.PeriodicJobOpts{ID: ReconcilePassKind, RunOnStart: true})}
}

// EnqueueReconcile enqueues one check of a payment and returns its job ID,
// or that of the unfinished check already queued for it. A provider without
// API credentials is a domain.KindConflict error. It works whether or not
// Start was called.
func (j *Jobs) EnqueueReconcile(ctx context.Context, provider, providerPaymentID string) (int64, error) {
	op := "jobs: enqueue reconcile " + provider + "/" + providerPaymentID
	switch {
	case j.reconciler == nil:
		return 0, &domain.Error{Kind: domain.KindConflict, Op: op, Msg: "reconciliation is not configured"}
	case strings.TrimSpace(providerPaymentID) == "":
		return 0, domain.Invalid(op, "no payment ID", nil)
	case !j.reconciler.HasFetcher(provider):
		return 0, &domain.Error{Kind: domain.KindConflict, Op: op, Msg: provider + " has no API credentials configured"}
	}
	res, err := j.client.Insert(ctx, ReconcileArgs{Provider: provider, PaymentID: providerPaymentID}, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	return res.Job.ID, nil
}

// Reconciler returns the reconciler, nil when Config.Reconcile was nil
// (`ledger reconcile` runs passes with it).
func (j *Jobs) Reconciler() *Reconciler { return j.reconciler }

// snoozes is how many times River snoozed job (its metadata's count).
func snoozes(job *rivertype.JobRow) int64 {
	var md struct {
		Snoozes int64 `json:"snoozes"`
	}
	_ = json.Unmarshal(job.Metadata, &md) // absent or unreadable: none
	return md.Snoozes
}

// reconciler builds the reconciler of c.Reconcile, with c's logger and
// clock where it has none.
func (c *Config) reconciler() (*Reconciler, error) {
	rc := *c.Reconcile
	if rc.Logger == nil {
		rc.Logger = c.Logger
	}
	if rc.Now == nil {
		rc.Now = c.Now
	}
	return NewReconciler(rc)
}
