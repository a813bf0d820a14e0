package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// DeadLetter is a job that failed its last attempt (River's "discarded"
// state). It is kept forever for an operator to look at and retry.
type DeadLetter struct {
	ID          int64
	Kind        string          // e.g. EnrichKind
	Args        json.RawMessage // the job's arguments, e.g. an EnrichArgs
	Attempts    int
	MaxAttempts int
	Errors      []AttemptError // one per failed attempt, oldest first
	CreatedAt   time.Time
	FinalizedAt time.Time // when it was dead-lettered
}

// AttemptError is the error of one failed attempt.
type AttemptError struct {
	At      time.Time
	Attempt int
	Error   string
}

// MaxDeadLetters bounds one DeadLetters call (River's list limit).
const MaxDeadLetters = 10_000

// DeadLetters lists up to limit dead-lettered jobs, most recently
// dead-lettered first. It needs only the database, not a started Jobs, so
// an operator's command can call it.
func DeadLetters(ctx context.Context, pool *pgxpool.Pool, limit int) ([]DeadLetter, error) {
	limit = min(max(limit, 1), MaxDeadLetters)
	// A client without workers or queues only talks to the database.
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("jobs: dead letters: %w", err)
	}
	params := river.NewJobListParams().States(rivertype.JobStateDiscarded).
		OrderBy(river.JobListOrderByFinalizedAt, river.SortOrderDesc).First(limit)
	res, err := client.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("jobs: dead letters: %w", err)
	}
	out := make([]DeadLetter, 0, len(res.Jobs))
	for _, j := range res.Jobs {
		out = append(out, deadLetter(j))
	}
	return out, nil
}

func deadLetter(j *rivertype.JobRow) DeadLetter {
	d := DeadLetter{ID: j.ID, Kind: j.Kind, Args: json.RawMessage(j.EncodedArgs), Attempts: j.Attempt,
		MaxAttempts: j.MaxAttempts, CreatedAt: j.CreatedAt}
	if j.FinalizedAt != nil {
		d.FinalizedAt = *j.FinalizedAt
	}
	for _, e := range j.Errors {
		d.Errors = append(d.Errors, AttemptError{At: e.At, Attempt: e.Attempt, Error: e.Error})
	}
	return d
}
