package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/projections"
)

// DeadLetterSyncKind is the job kind of DeadLetterSyncArgs.
const DeadLetterSyncKind = "dead_letter_sync"

// deadLetterSyncInterval is how often discarded jobs missing from the
// dead-letter queue (a crash between River's discard and our insert) are
// recorded.
const deadLetterSyncInterval = time.Minute

// jobPayload is a job dead letter's payload: what a retry needs when
// River's row is gone.
type jobPayload struct {
	JobID int64           `json:"job_id"`
	Kind  string          `json:"kind"`
	Args  json.RawMessage `json:"args"`
}

// jobArgsProvider is the provider and payment every payledger job's args name.
type jobArgsProvider struct {
	Provider  string `json:"provider"`
	PaymentID string `json:"payment_id"`
}

// jobFailure is the dead letter of a job whose attempts ran out.
func jobFailure(id int64, kind string, args []byte, attempt int, lastErr string, at time.Time) domain.DeadLetterFailure {
	var p jobArgsProvider
	_ = json.Unmarshal(args, &p) // a job without a payment has none
	payload, _ := json.Marshal(jobPayload{JobID: id, Kind: kind, Args: json.RawMessage(args)})
	f := domain.DeadLetterFailure{Key: "job:" + strconv.FormatInt(id, 10), Kind: domain.DeadLetterJob, Cause: kind,
		Provider: p.Provider, ProviderPaymentID: p.PaymentID, Attempts: max(attempt, 1), At: at, Error: lastErr,
		Payload: payload}
	if p.Provider != "" && p.PaymentID != "" {
		f.Streams = []string{eventstore.PaymentStream(p.Provider, p.PaymentID)}
	}
	return f
}

// deadLetterHandler is River's ErrorHandler: a job failing its last attempt
// becomes a dead letter. River discards it right after; the sync job covers
// a crash in between.
type deadLetterHandler struct {
	dl  *projections.DeadLetters
	now func() time.Time
	log *slog.Logger
}

func (h *deadLetterHandler) HandleError(ctx context.Context, job *rivertype.JobRow, err error) *river.ErrorHandlerResult {
	h.record(ctx, job, err.Error())
	return nil
}

func (h *deadLetterHandler) HandlePanic(ctx context.Context, job *rivertype.JobRow, panicVal any, _ string) *river.ErrorHandlerResult {
	h.record(ctx, job, fmt.Sprintf("panic: %v", panicVal))
	return nil
}

func (h *deadLetterHandler) record(ctx context.Context, job *rivertype.JobRow, lastErr string) {
	if job.Attempt < job.MaxAttempts || job.Kind == DeadLetterSyncKind {
		return
	}
	f := jobFailure(job.ID, job.Kind, job.EncodedArgs, job.Attempt, lastErr, h.now())
	if _, err := h.dl.Record(ctx, f); err != nil {
		// The sync job records it within a minute.
		h.log.ErrorContext(ctx, "recording a dead-lettered job", "job_id", job.ID, "kind", job.Kind, "error", err)
	}
}

// DeadLetterSyncArgs records the discarded jobs the dead-letter queue lacks.
type DeadLetterSyncArgs struct{}

// Kind implements river.JobArgs.
func (DeadLetterSyncArgs) Kind() string { return DeadLetterSyncKind }

// InsertOpts implements river.JobArgsWithInsertOpts: one sync per minute.
func (DeadLetterSyncArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: deadLetterSyncInterval}}
}

type deadLetterSyncWorker struct {
	river.WorkerDefaults[DeadLetterSyncArgs]
	pool *pgxpool.Pool
}

func (w *deadLetterSyncWorker) Work(ctx context.Context, _ *river.Job[DeadLetterSyncArgs]) error {
	_, err := SyncDeadLetters(ctx, w.pool)
	return err
}

// missingDeadLettersSQL: discarded jobs whose last attempt no dead letter
// records (none with their key failed since that attempt started).
const missingDeadLettersSQL = `SELECT j.id, j.kind, j.args, j.attempt,
    coalesce(j.errors[array_length(j.errors, 1)]->>'error', ''), coalesce(j.finalized_at, now())
FROM river_job j
WHERE j.state = 'discarded' AND j.kind <> $1 AND NOT EXISTS (
    SELECT 1 FROM dead_letters d WHERE d.dedupe_key = 'job:' || j.id
    AND d.last_failed_at >= coalesce(j.attempted_at, j.created_at))
ORDER BY j.id LIMIT 1000`

// SyncDeadLetters records the discarded jobs the dead-letter queue lacks
// and returns how many. The error handler records them as they fail; this
// catches the ones a crash lost.
func SyncDeadLetters(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	rows, err := pool.Query(ctx, missingDeadLettersSQL, DeadLetterSyncKind)
	if err != nil {
		return 0, fmt.Errorf("jobs: sync dead letters: %w", err)
	}
	var fs []domain.DeadLetterFailure
	for rows.Next() {
		var (
			id      int64
			kind    string
			args    []byte
			attempt int
			lastErr string
			at      time.Time
		)
		if err := rows.Scan(&id, &kind, &args, &attempt, &lastErr, &at); err != nil {
			rows.Close()
			return 0, fmt.Errorf("jobs: sync dead letters: %w", err)
		}
		fs = append(fs, jobFailure(id, kind, args, attempt, lastErr, at))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("jobs: sync dead letters: %w", err)
	}
	dl := projections.NewDeadLetters(pool)
	for _, f := range fs {
		if _, err := dl.Record(ctx, f); err != nil {
			return 0, fmt.Errorf("jobs: sync dead letters: %w", err)
		}
	}
	return len(fs), nil
}

func deadLetterPeriodic() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(deadLetterSyncInterval),
		func() (river.JobArgs, *river.InsertOpts) { return DeadLetterSyncArgs{}, nil },
		&river.PeriodicJobOpts{ID: DeadLetterSyncKind, RunOnStart: true})
}
