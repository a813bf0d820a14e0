package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// ReviewSweepKind is the job kind of the review sweep. It is stored in
// every job row: renaming it strands the jobs already queued.
const ReviewSweepKind = "review_sweep"

// Defaults of the review sweep.
const (
	DefaultReviewSweepInterval = time.Minute
	reviewSweepBatch           = 500
)

// sourceReviewSweep is the Metadata.Source of the reviews the sweep opens:
// payledger's own fact, from no provider API.
const sourceReviewSweep = "review_sweep"

// AnomalySource selects the payments whose fold found an anomaly no review
// was opened for yet (projections.Queries: payments.unreviewed_anomalies).
// It returns up to limit of them after the keyset cursor afterID (0: from
// the start), in cursor order, and the cursor of the last one.
type AnomalySource interface {
	UnreviewedAnomalies(ctx context.Context, limit int, afterID int64) ([]domain.Candidate, int64, error)
}

// ReviewSweepArgs is one review sweep, enqueued periodically.
type ReviewSweepArgs struct{}

// Kind implements river.JobArgs.
func (ReviewSweepArgs) Kind() string { return ReviewSweepKind }

// InsertOpts implements river.JobArgsWithInsertOpts: one unfinished sweep
// across all processes.
func (ReviewSweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByState: unfinished}}
}

// reviewSweeper opens the reviews of the anomalies the fold found: for each
// flagged payment it folds the stream and appends domain.AnomalyReviews in
// one append. The reviews' IDs derive from the payment, the reason and the
// anomalous fact, so a sweep run again (or racing another, or seeing a
// payment whose flag the projector has not cleared yet) adds nothing.
type reviewSweeper struct {
	src    AnomalySource
	store  ReconcileStore
	rec    *eventstore.Recorder
	codec  *eventstore.Codec
	now    func() time.Time
	log    *slog.Logger
	batch  int
	budget time.Duration
}

// SweepReport is what a sweep did.
type SweepReport struct {
	Payments int // flagged payments read
	Opened   int // reviews appended
	Skipped  int // streams that could not be decoded (the projector parks them)
	// Remaining: the budget ended with payments left to read.
	Remaining bool
}

// sweep reads flagged payments batch by batch until none is left or the
// budget (when > 0) is spent.
func (s *reviewSweeper) sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	start := s.now()
	var after int64
	for {
		if s.budget > 0 && s.now().Sub(start) >= s.budget {
			rep.Remaining = true
			return rep, nil
		}
		cands, next, err := s.src.UnreviewedAnomalies(ctx, s.batch, after)
		if err != nil {
			return rep, fmt.Errorf("jobs: review sweep: select payments: %w", err)
		}
		for _, c := range cands {
			n, err := s.open(ctx, c)
			if err != nil {
				return rep, err
			}
			rep.Payments++
			if n < 0 {
				rep.Skipped++
			} else {
				rep.Opened += n
			}
		}
		if len(cands) < s.batch || next <= after {
			return rep, nil
		}
		after = next
	}
}

// open appends c's due anomaly reviews and returns how many; -1 when its
// stream cannot be decoded (logged; a poison event is the projector's dead
// letter, not the sweep's to stop on).
func (s *reviewSweeper) open(ctx context.Context, c domain.Candidate) (int, error) {
	op := "jobs: review sweep " + c.Provider + "/" + c.ProviderPaymentID
	recs, err := s.store.ReadStream(ctx, eventstore.PaymentStream(c.Provider, c.ProviderPaymentID))
	if err != nil {
		return 0, fmt.Errorf("%s: read stream: %w", op, err)
	}
	evs := make([]domain.Event, len(recs))
	for i, rec := range recs {
		if evs[i], err = s.codec.Decode(rec); err != nil {
			s.log.WarnContext(ctx, op+": stream not decodable, skipped", "event", rec.ID, "error", err)
			return -1, nil
		}
	}
	revs := domain.AnomalyReviews(domain.Fold(evs...), s.now())
	if len(revs) == 0 {
		return 0, nil
	}
	batch := make([]domain.Event, len(revs))
	for i, r := range revs {
		batch[i] = r
	}
	md := eventstore.Metadata{Provider: c.Provider, ProviderEventType: domain.ReviewEventType, ReceivedAt: s.now().UTC(),
		Source: sourceReviewSweep}
	res, err := s.rec.Record(ctx, domain.Notification{Provider: c.Provider, ProviderEventID: revs[0].ProviderEventID,
		ProviderEventType: domain.ReviewEventType, Events: batch}, md)
	if err != nil {
		return 0, fmt.Errorf("%s: record reviews: %w", op, err)
	}
	if res.Duplicate() && len(batch) > 1 {
		// Part of it was stored (a racing sweep): none of the batch was; each alone.
		for _, ev := range batch {
			m := ev.EventMeta()
			if _, err := s.rec.Record(ctx, domain.Notification{Provider: c.Provider, ProviderEventID: m.ProviderEventID,
				ProviderEventType: m.ProviderEventType, Events: []domain.Event{ev}}, md); err != nil {
				return 0, fmt.Errorf("%s: record review: %w", op, err)
			}
		}
	} else if res.Duplicate() {
		return 0, nil
	}
	for _, r := range revs {
		s.log.InfoContext(ctx, "review opened for an anomaly", "provider", c.Provider, "payment", c.ProviderPaymentID,
			"review", r.ReviewID, "reason", r.Reason)
	}
	return len(revs), nil
}

// reviewSweepWorker works ReviewSweepArgs.
type reviewSweepWorker struct {
	river.WorkerDefaults[ReviewSweepArgs]
	s *reviewSweeper
}

// Work sweeps; when its budget ends with payments left, it snoozes to go on
// at once in a fresh run.
func (w *reviewSweepWorker) Work(ctx context.Context, _ *river.Job[ReviewSweepArgs]) error {
	rep, err := w.s.sweep(ctx)
	level := slog.LevelDebug
	if rep.Opened > 0 || rep.Skipped > 0 {
		level = slog.LevelInfo
	}
	w.s.log.Log(ctx, level, "review sweep", "payments", rep.Payments, "opened", rep.Opened, "skipped", rep.Skipped,
		"remaining", rep.Remaining)
	if err != nil {
		return err
	}
	if rep.Remaining {
		return river.JobSnooze(0)
	}
	return nil
}

// newReviewSweeper builds the sweeper of cfg (defaults applied), nil when
// cfg.Reviews is nil.
func newReviewSweeper(cfg Config) *reviewSweeper {
	if cfg.Reviews == nil {
		return nil
	}
	store, _ := cfg.Store.(ReconcileStore) // validate checked it
	return &reviewSweeper{src: cfg.Reviews, store: store, codec: eventstore.NewCodec(),
		rec: eventstore.NewRecorder(cfg.Store, eventstore.NewCodec(), maxAppendAttempts, nil), now: cfg.Now,
		log: cfg.Logger, batch: reviewSweepBatch, budget: passBudget(cfg, 0)}
}

// addReviewSweepWorker registers the sweep's worker when there is a sweeper.
func addReviewSweepWorker(workers *river.Workers, s *reviewSweeper) error {
	if s == nil {
		return nil
	}
	if err := river.AddWorkerSafely(workers, &reviewSweepWorker{s: s}); err != nil {
		return fmt.Errorf("jobs: register review sweep worker: %w", err)
	}
	return nil
}

// reviewSweepPeriodic is the periodic sweep (River's leader enqueues it;
// RunOnStart for the same reason as the reconciliation pass).
func reviewSweepPeriodic(cfg Config, s *reviewSweeper) []*river.PeriodicJob {
	if s == nil {
		return nil
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(cfg.ReviewSweepInterval),
		func() (river.JobArgs, *river.InsertOpts) { return ReviewSweepArgs{}, nil },
		&river.PeriodicJobOpts{ID: ReviewSweepKind, RunOnStart: true})}
}

// SweepReviews runs one review sweep now (tests, and a command that wants
// it done before it reports), whether or not Start was called. It is an
// error without Config.Reviews.
func (j *Jobs) SweepReviews(ctx context.Context) (SweepReport, error) {
	if j.sweeper == nil {
		return SweepReport{}, &domain.Error{Kind: domain.KindConflict, Op: "jobs: review sweep", Msg: "no anomaly source configured"}
	}
	return j.sweeper.sweep(ctx)
}
