package projections

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
)

// DeadLetters is the dead-letter queue in Postgres (table dead_letters):
// one queue for failed jobs, parked payments and collisions. It is
// operational state, not a read model: Reset and rebuilds leave it alone,
// and rows are never deleted.
type DeadLetters struct{ pool *pgxpool.Pool }

// NewDeadLetters returns the queue on pool.
func NewDeadLetters(pool *pgxpool.Pool) *DeadLetters { return &DeadLetters{pool: pool} }

// execer is what Record needs: a pool, a connection or a transaction.
type execer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// recordDeadLetterSQL inserts a failure or, for a key already recorded,
// counts it on that entry and opens it again. $8 = 0 adds one attempt.
const recordDeadLetterSQL = `INSERT INTO dead_letters AS d
    (dedupe_key, kind, cause, provider, provider_payment_id, streams, attempts,
     first_failed_at, last_failed_at, last_error, payload)
VALUES ($1, $2, $3, $4, $5, $6, greatest($7::int, 1), $8, $8, $9, $10)
ON CONFLICT (dedupe_key) DO UPDATE SET
    attempts = CASE WHEN $7::int > 0 THEN $7::int ELSE d.attempts + 1 END,
    last_failed_at = greatest(d.last_failed_at, excluded.last_failed_at),
    last_error = excluded.last_error,
    cause = excluded.cause,
    streams = excluded.streams,
    payload = excluded.payload,
    state = 'open'
RETURNING id`

func recordArgs(f domain.DeadLetterFailure) []any {
	payload := f.Payload
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	return []any{f.Key, string(f.Kind), f.Cause, f.Provider, f.ProviderPaymentID, nonNil(f.Streams), f.Attempts,
		f.At.UTC(), f.Error, payload}
}

func validFailure(f domain.DeadLetterFailure) error {
	if f.Key == "" || !f.Kind.Valid() || f.Cause == "" || f.At.IsZero() {
		return fmt.Errorf("projections: record dead letter: key, kind, cause and time are required (got %q, %q, %q)", f.Key, f.Kind, f.Cause)
	}
	return nil
}

// Record adds f to the queue (or counts it on the entry of its key) and
// returns the entry's ID.
func (d *DeadLetters) Record(ctx context.Context, f domain.DeadLetterFailure) (int64, error) {
	return recordDeadLetter(ctx, d.pool, f)
}

// RecordTx is Record inside the caller's transaction.
func (d *DeadLetters) RecordTx(ctx context.Context, tx pgx.Tx, f domain.DeadLetterFailure) (int64, error) {
	return recordDeadLetter(ctx, tx, f)
}

func recordDeadLetter(ctx context.Context, q execer, f domain.DeadLetterFailure) (int64, error) {
	if err := validFailure(f); err != nil {
		return 0, err
	}
	var id int64
	if err := q.QueryRow(ctx, recordDeadLetterSQL, recordArgs(f)...).Scan(&id); err != nil {
		return 0, fmt.Errorf("projections: record dead letter %s: %w", f.Key, err)
	}
	return id, nil
}

const deadLetterColumns = `id, kind, cause, provider, provider_payment_id, streams, attempts,
    first_failed_at, last_failed_at, last_error, state, payload, retries, retried_at, retried_by`

func scanDeadLetter(row pgx.Row) (domain.DeadLetter, error) {
	var d domain.DeadLetter
	var kind, state string
	var retriedAt *time.Time
	err := row.Scan(&d.ID, &kind, &d.Cause, &d.Provider, &d.ProviderPaymentID, &d.Streams, &d.Attempts,
		&d.FirstFailedAt, &d.LastFailedAt, &d.LastError, &state, &d.Payload, &d.Retries, &retriedAt, &d.RetriedBy)
	d.Kind, d.State = domain.DeadLetterKind(kind), domain.DeadLetterState(state)
	if retriedAt != nil {
		d.RetriedAt = *retriedAt
	}
	d.Streams = nonNil(d.Streams)
	return d, err
}

// DeadLetter returns one entry, or a KindNotFound error.
func (d *DeadLetters) DeadLetter(ctx context.Context, id int64) (domain.DeadLetter, error) {
	dl, err := scanDeadLetter(d.pool.QueryRow(ctx, `SELECT `+deadLetterColumns+` FROM dead_letters WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.DeadLetter{}, &domain.Error{Kind: domain.KindNotFound, Op: "projections: dead letter", Msg: "no such dead letter"}
	}
	if err != nil {
		return domain.DeadLetter{}, fmt.Errorf("projections: dead letter %d: %w", id, err)
	}
	return dl, nil
}

// deadLetterFilter adds f's conditions to w.
func deadLetterFilter(w *filter, f domain.DeadLetterFilter) {
	w.equal("kind", string(f.Kind))
	w.equal("cause", f.Cause)
	w.equal("provider", f.Provider)
	w.equal("state", string(f.State)) // dead_letters_open_idx for open
}

// ListDeadLetters returns one page of the queue, oldest first. A bad limit
// or cursor is KindInvalid.
func (d *DeadLetters) ListDeadLetters(ctx context.Context, q domain.DeadLetterQuery) (domain.DeadLetterPage, error) {
	const op = "projections: list dead letters"
	limit, err := pageLimit(q.Limit)
	if err != nil {
		return domain.DeadLetterPage{}, err
	}
	var w filter
	if q.Cursor != "" {
		after, err := decodeCursor(q.Cursor)
		if err != nil {
			return domain.DeadLetterPage{}, err
		}
		w.where("id > " + w.arg(after))
	}
	deadLetterFilter(&w, q.DeadLetterFilter)
	rows, _ := d.pool.Query(ctx, `SELECT `+deadLetterColumns+` FROM dead_letters`+w.sql()+` ORDER BY id LIMIT `+w.arg(limit+1), w.args...)
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.DeadLetter, error) { return scanDeadLetter(row) })
	if err != nil {
		return domain.DeadLetterPage{}, fmt.Errorf("%s: %w", op, err)
	}
	var page domain.DeadLetterPage
	page.DeadLetters, page.NextCursor = trimPage(list, limit, func(e domain.DeadLetter) string { return encodeCursor(e.ID) })
	return page, nil
}

// OpenDeadLetterIDs returns the IDs of the open entries f matches, oldest
// first: what a bulk retry will retry, fixed before it starts.
func (d *DeadLetters) OpenDeadLetterIDs(ctx context.Context, f domain.DeadLetterFilter) ([]int64, error) {
	f.State = domain.DeadLetterOpen
	var w filter
	deadLetterFilter(&w, f)
	rows, _ := d.pool.Query(ctx, `SELECT id FROM dead_letters`+w.sql()+` ORDER BY id`, w.args...)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("projections: open dead letters: %w", err)
	}
	return ids, nil
}

// ErrNotOpen says a retry found its entry retried already (by another
// request, or by the run a kill interrupted).
var ErrNotOpen = errors.New("projections: dead letter is not open")

// MarkRetriedTx sets entry id retried by by at at, in the caller's
// transaction, if it is open with retries stored so far; else ErrNotOpen.
// The caller does the retry's own work in the same transaction (River's
// JobRetryTx, a parked stream's retry request), so both or neither happen.
func (d *DeadLetters) MarkRetriedTx(ctx context.Context, tx pgx.Tx, id int64, retries int, by string, at time.Time) error {
	tag, err := tx.Exec(ctx, `UPDATE dead_letters SET state = 'retried', retries = retries + 1, retried_at = $4, retried_by = $3
        WHERE id = $1 AND state = 'open' AND retries = $2`, id, retries, by, at.UTC())
	if err != nil {
		return fmt.Errorf("projections: mark dead letter %d retried: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("dead letter %d: %w", id, ErrNotOpen)
	}
	return nil
}

// CountFailedRetry counts a retry that did not help (a collision that
// still collides) on entry id, which stays open: the next retry is then a
// new retry, with its own fact. Like MarkRetriedTx it is ErrNotOpen unless
// the entry is open with retries stored so far.
func (d *DeadLetters) CountFailedRetry(ctx context.Context, id int64, retries int, by string, at time.Time) error {
	tag, err := d.pool.Exec(ctx, `UPDATE dead_letters SET retries = retries + 1, retried_at = $4, retried_by = $3
        WHERE id = $1 AND state = 'open' AND retries = $2`, id, retries, by, at.UTC())
	if err != nil {
		return fmt.Errorf("projections: count failed retry of dead letter %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("dead letter %d: %w", id, ErrNotOpen)
	}
	return nil
}

// Begin starts a transaction on the queue's pool (for MarkRetriedTx).
func (d *DeadLetters) Begin(ctx context.Context) (pgx.Tx, error) { return d.pool.Begin(ctx) }

// DeadLetterCount is the number of open entries of one kind and cause and
// when the oldest of them last failed.
type DeadLetterCount struct {
	Kind   domain.DeadLetterKind
	Cause  string
	Open   int64
	Oldest time.Time // first_failed_at of the oldest open entry
}

// OpenCounts counts the open entries by kind and cause (metrics, doctor).
func (d *DeadLetters) OpenCounts(ctx context.Context) ([]DeadLetterCount, error) {
	rows, err := d.pool.Query(ctx, `SELECT kind, cause, count(*), min(first_failed_at) FROM dead_letters
        WHERE state = 'open' GROUP BY kind, cause ORDER BY kind, cause`)
	if err != nil {
		return nil, fmt.Errorf("projections: count dead letters: %w", err)
	}
	defer rows.Close()
	var out []DeadLetterCount
	for rows.Next() {
		var c DeadLetterCount
		var kind string
		if err := rows.Scan(&kind, &c.Cause, &c.Open, &c.Oldest); err != nil {
			return nil, fmt.Errorf("projections: count dead letters: %w", err)
		}
		c.Kind = domain.DeadLetterKind(kind)
		out = append(out, c)
	}
	return out, rows.Err()
}

// RequestReprojectTx asks the projector, in the caller's transaction, to
// re-project parked stream from the store (a retry of its dead letter). It
// is ErrNotOpen when the stream is not parked.
func RequestReprojectTx(ctx context.Context, tx pgx.Tx, stream string) error {
	tag, err := tx.Exec(ctx, `UPDATE parked_streams SET retry_requested = true WHERE stream = $1`, stream)
	if err != nil {
		return fmt.Errorf("projections: request re-projection of %s: %w", stream, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("stream %s is not parked: %w", stream, ErrNotOpen)
	}
	return nil
}
