package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/projections"
)

// Redeliverer re-checks a collision's stored delivery (the api Server's
// webhook path). Outcome "conflict" means it still collides.
type Redeliverer interface {
	// CheckRedelivery refuses, before the retry's fact, a payload that is
	// no delivery or names a provider this process does not configure.
	CheckRedelivery(payload json.RawMessage) error
	Redeliver(ctx context.Context, payload json.RawMessage) (outcome string, err error)
}

// OutcomeConflict is the Redeliverer outcome of a delivery that still collides.
const OutcomeConflict = "conflict"

// RetrierConfig configures a Retrier.
type RetrierConfig struct {
	Pool  *pgxpool.Pool // the read-model database (dead_letters, River's tables)
	Store Appender      // where the retry facts go
	// Redeliverer re-checks collisions; nil refuses to retry them.
	Redeliverer Redeliverer
	Now         func() time.Time
	Logger      *slog.Logger
}

// Retrier retries dead letters: every retry is a deadletter.retried.v1
// fact first, then one transaction marks the entry retried and does the
// kind's work (River's retry, a re-projection request), so a retry killed
// half way and run again appends nothing twice and retries once.
type Retrier struct {
	cfg    RetrierConfig
	dl     *projections.DeadLetters
	client *river.Client[pgx.Tx]
	// afterFact, in tests, runs between the fact and the transaction.
	afterFact func(id int64) error
}

// NewRetrier returns a Retrier. It needs no started Jobs.
func NewRetrier(cfg RetrierConfig) (*Retrier, error) {
	if cfg.Pool == nil || cfg.Store == nil {
		return nil, errors.New("jobs: retrier: a pool and a store are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// A client without workers or queues only talks to the database.
	client, err := river.NewClient(riverpgxv5.New(cfg.Pool), &river.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("jobs: retrier: %w", err)
	}
	return &Retrier{cfg: cfg, dl: projections.NewDeadLetters(cfg.Pool), client: client}, nil
}

// Retry retries dead letter id as by. It is a KindNotFound error for an
// unknown id, KindConflict when the entry is not open (projections.ErrNotOpen
// wrapped) or its collision still collides.
func (r *Retrier) Retry(ctx context.Context, id int64, by string) (domain.DeadLetter, error) {
	e, err := r.dl.DeadLetter(ctx, id)
	if err != nil {
		return domain.DeadLetter{}, err
	}
	if err := r.retry(ctx, e, by, nil); err != nil {
		return domain.DeadLetter{}, err
	}
	return r.dl.DeadLetter(ctx, id)
}

// RetryMatching retries the open entries f matches now (fixed before the
// first retry, so entries failing meanwhile wait for the next call) and
// returns how many it retried. Entries retried by someone else meanwhile,
// or still colliding, are skipped.
func (r *Retrier) RetryMatching(ctx context.Context, f domain.DeadLetterFilter, by string) (int, error) {
	ids, err := r.dl.OpenDeadLetterIDs(ctx, f)
	if err != nil {
		return 0, err
	}
	bulk := f
	bulk.State = ""
	n := 0
	for _, id := range ids {
		e, err := r.dl.DeadLetter(ctx, id)
		if err != nil {
			return n, err
		}
		if e.State != domain.DeadLetterOpen {
			continue
		}
		err = r.retry(ctx, e, by, &bulk)
		switch {
		case domain.KindOf(err) == domain.KindConflict, domain.KindOf(err) == domain.KindInvalid:
			// Not open any more, still colliding, its job still finishing,
			// or its payload unusable: not retried now, and not a reason
			// to stop the others.
			r.cfg.Logger.WarnContext(ctx, "dead letter not retried", "dead_letter", id, "err", err)
			continue
		case err != nil:
			return n, err
		}
		n++
	}
	return n, nil
}

var errStillConflict = errors.New("the delivery still collides")

func (r *Retrier) retry(ctx context.Context, e domain.DeadLetter, by string, bulk *domain.DeadLetterFilter) error {
	op := fmt.Sprintf("jobs: retry dead letter %d", e.ID)
	if err := r.precheck(ctx, e); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	at := r.cfg.Now().UTC().Truncate(time.Microsecond)
	if err := r.appendFact(ctx, e, by, at, bulk); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if r.afterFact != nil {
		if err := r.afterFact(e.ID); err != nil {
			return err
		}
	}
	err := r.act(ctx, e, by, at)
	if k := domain.KindOf(err); (k == domain.KindConflict || k == domain.KindInvalid) && !errors.Is(err, projections.ErrNotOpen) {
		// Refused after its fact (a collision that still collides, a job
		// that started meanwhile): the attempt is on record, so the entry
		// counts it and the next retry is a new fact, not this one's ID.
		if cerr := r.dl.CountFailedRetry(ctx, e.ID, e.Retries, by, at); cerr != nil && !errors.Is(cerr, projections.ErrNotOpen) {
			return fmt.Errorf("%s: %w", op, cerr)
		}
	}
	if errors.Is(err, projections.ErrNotOpen) {
		return &domain.Error{Kind: domain.KindConflict, Op: op, Msg: "dead letter is not open", Err: err}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// precheck refuses, before any fact, a retry that cannot work now: an
// entry not open, a collision this process cannot re-check, a job payload
// without a job or whose job is still finishing its last attempt.
func (r *Retrier) precheck(ctx context.Context, e domain.DeadLetter) error {
	const op = "jobs: retry"
	switch {
	case e.State != domain.DeadLetterOpen:
		return &domain.Error{Kind: domain.KindConflict, Op: op, Msg: "dead letter is not open", Err: projections.ErrNotOpen}
	case e.Kind == domain.DeadLetterCollision && r.cfg.Redeliverer == nil:
		return &domain.Error{Kind: domain.KindConflict, Op: op,
			Msg: "collisions are re-checked through the API: POST /v1/dead-letters/{id}/retry"}
	case e.Kind == domain.DeadLetterCollision:
		return r.cfg.Redeliverer.CheckRedelivery(e.Payload)
	case e.Kind == domain.DeadLetterJob:
		p, err := decodeJobPayload(e.Payload)
		if err != nil {
			return err
		}
		return r.jobFinishing(ctx, r.client.JobGet, p.JobID)
	}
	return nil
}

// act does the retry's work after its fact: a collision is re-checked
// first (it records on the entry's row, so outside the transaction), then
// one transaction marks the entry retried and does the kind's work.
func (r *Retrier) act(ctx context.Context, e domain.DeadLetter, by string, at time.Time) error {
	if e.Kind == domain.DeadLetterCollision {
		outcome, err := r.cfg.Redeliverer.Redeliver(ctx, e.Payload)
		if err != nil {
			return fmt.Errorf("redeliver: %w", err)
		}
		if outcome == OutcomeConflict {
			msg := "the delivery still collides; the entry stays open"
			if len(e.Streams) > 1 {
				msg = fmt.Sprintf("the delivery still collides: its event ID is stored in %s; the entry stays open", e.Streams[1])
			}
			return &domain.Error{Kind: domain.KindConflict, Op: "jobs: redeliver", Msg: msg, Err: errStillConflict}
		}
	}
	return pgx.BeginFunc(ctx, r.cfg.Pool, func(tx pgx.Tx) error {
		if err := r.dl.MarkRetriedTx(ctx, tx, e.ID, e.Retries, by, at); err != nil {
			return err
		}
		switch e.Kind {
		case domain.DeadLetterJob:
			return r.retryJob(ctx, tx, e)
		case domain.DeadLetterProjection:
			if len(e.Streams) == 0 {
				return errors.New("projection dead letter names no stream")
			}
			return projections.RequestReprojectTx(ctx, tx, e.Streams[0])
		}
		return nil
	})
}

func (r *Retrier) appendFact(ctx context.Context, e domain.DeadLetter, by string, at time.Time, bulk *domain.DeadLetterFilter) error {
	retry := e.Retries + 1
	data, err := json.Marshal(domain.DeadLetterRetry{DeadLetterID: e.ID, Retry: retry, Kind: e.Kind, Cause: e.Cause,
		Provider: e.Provider, ProviderPaymentID: e.ProviderPaymentID, Streams: e.Streams, RetriedBy: by, RetriedAt: at,
		Bulk: bulk})
	if err != nil {
		return err
	}
	md, err := json.Marshal(map[string]any{"received_at": at})
	if err != nil {
		return err
	}
	// The store drops an event whose ID it holds: a re-run appends nothing.
	_, err = r.cfg.Store.Append(ctx, eventstore.DeadLetterStream(e.ID), eventstore.Any(), []eventstore.EventData{{
		ID: eventstore.DeadLetterRetryID(e.ID, retry), Type: domain.TypeDeadLetterRetried, Data: data, Metadata: md}})
	return err
}

// rawArgs re-inserts a job from its stored kind and encoded args.
type rawArgs struct {
	kind string
	args json.RawMessage
}

func (a rawArgs) Kind() string                 { return a.kind }
func (a rawArgs) MarshalJSON() ([]byte, error) { return a.args, nil }

// decodeJobPayload reads a job dead letter's payload: the job's ID, kind
// and args.
func decodeJobPayload(payload json.RawMessage) (jobPayload, error) {
	var p jobPayload
	if err := json.Unmarshal(payload, &p); err != nil || p.Kind == "" {
		return p, domain.Invalid("jobs: retry job", "the dead letter's payload holds no job", err)
	}
	return p, nil
}

// jobFinishing refuses while River runs the job: the error handler records
// the dead letter before River finalizes the job, and retrying it in
// between would race River's own discard.
func (r *Retrier) jobFinishing(ctx context.Context, get func(context.Context, int64) (*rivertype.JobRow, error), id int64) error {
	row, err := get(ctx, id)
	switch {
	case errors.Is(err, rivertype.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("jobs: retry job %d: %w", id, err)
	case row.State == rivertype.JobStateRunning:
		return &domain.Error{Kind: domain.KindConflict, Op: "jobs: retry job",
			Msg: fmt.Sprintf("job %d is still finishing its last attempt; retry in a moment", id)}
	}
	return nil
}

// retryJob puts the River job back in line, or inserts it again from the
// payload (with its kind's insert options) when River's row is gone.
func (r *Retrier) retryJob(ctx context.Context, tx pgx.Tx, e domain.DeadLetter) error {
	p, err := decodeJobPayload(e.Payload)
	if err != nil {
		return err
	}
	getTx := func(ctx context.Context, id int64) (*rivertype.JobRow, error) { return r.client.JobGetTx(ctx, tx, id) }
	if err := r.jobFinishing(ctx, getTx, p.JobID); err != nil {
		return err
	}
	_, err = r.client.JobRetryTx(ctx, tx, p.JobID)
	if errors.Is(err, rivertype.ErrNotFound) {
		_, err = r.client.InsertTx(ctx, tx, rawArgs{kind: p.Kind, args: p.Args}, insertOptsOf(p.Kind))
	}
	if err != nil {
		return fmt.Errorf("retry job %d: %w", p.JobID, err)
	}
	return nil
}

// insertOptsOf is the insert options of a job kind (its queue, its
// uniqueness), for a job inserted again from its stored kind and args.
func insertOptsOf(kind string) *river.InsertOpts {
	var opts river.InsertOpts
	switch kind {
	case EnrichKind:
		opts = EnrichArgs{}.InsertOpts()
	case FeeKind:
		opts = FeeArgs{}.InsertOpts()
	case ReconcilePaymentKind:
		opts = ReconcileArgs{}.InsertOpts()
	case ReconcilePassKind:
		opts = ReconcilePassArgs{}.InsertOpts()
	case ReviewSweepKind:
		opts = ReviewSweepArgs{}.InsertOpts()
	default:
		return nil
	}
	return &opts
}
