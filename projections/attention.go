package projections

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
)

// attentionSQL counts, in one round trip, what needs a human: each query
// reads a partial index of the open rows (reviews_open_idx,
// dead_letters_open_idx, the in-doubt index for awaiting payments), so its
// cost follows the size of the queue, not of the tables.
const (
	attentionReviewsSQL = `SELECT provider, reason, count(*), min(opened_at) FROM reviews
        WHERE resolved_at IS NULL GROUP BY provider, reason`
	attentionDeadLettersSQL = `SELECT kind, cause, count(*), min(first_failed_at) FROM dead_letters
        WHERE state = 'open' GROUP BY kind, cause`
	attentionParkedSQL   = `SELECT count(*), min(parked_at) FROM parked_streams`
	attentionAwaitingSQL = `SELECT provider, count(*), min(created_at) FROM payments
        WHERE status = 'awaiting_confirmation' GROUP BY provider`
)

// Attention returns what needs a human now (domain.Attention), read in one
// repeatable-read snapshot so the figures agree with each other.
func (q *Queries) Attention(ctx context.Context) (domain.Attention, error) {
	const op = "projections: attention"
	a := domain.Attention{Reviews: map[[2]string]domain.AttentionCount{},
		DeadLetters: map[[2]string]domain.AttentionCount{}, Awaiting: map[string]domain.AttentionCount{}}
	err := pgx.BeginTxFunc(ctx, q.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := groupCounts(ctx, tx, attentionReviewsSQL, a.Reviews); err != nil {
			return err
		}
		if err := groupCounts(ctx, tx, attentionDeadLettersSQL, a.DeadLetters); err != nil {
			return err
		}
		var oldest *time.Time
		if err := tx.QueryRow(ctx, attentionParkedSQL).Scan(&a.Parked.Count, &oldest); err != nil {
			return err
		}
		if oldest != nil {
			a.Parked.Oldest = *oldest
		}
		rows, err := tx.Query(ctx, attentionAwaitingSQL)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p string
			var c domain.AttentionCount
			if err := rows.Scan(&p, &c.Count, &c.Oldest); err != nil {
				return err
			}
			a.Awaiting[p] = c
		}
		return rows.Err()
	})
	if err != nil {
		return domain.Attention{}, fmt.Errorf("%s: %w", op, err)
	}
	return a, nil
}

// groupCounts reads rows of (key1, key2, count, oldest) into into.
func groupCounts(ctx context.Context, tx pgx.Tx, sql string, into map[[2]string]domain.AttentionCount) error {
	rows, err := tx.Query(ctx, sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k [2]string
		var c domain.AttentionCount
		if err := rows.Scan(&k[0], &k[1], &c.Count, &c.Oldest); err != nil {
			return err
		}
		into[k] = c
	}
	return rows.Err()
}
