package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
)

// errClosed ends a subscription after Close.
var errClosed = errors.New("postgres: subscription closed")

// feedSQL reads the page after a position, only rows of transactions older
// than the oldest one still running: those are final (ARCHITECTURE.md, "The
// no-skip feed").
const feedSQL = `SELECT ` + eventColumns + `
	FROM es_events
	WHERE (tx_id, seq) > ($1, $2)
	  AND tx_id < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
	ORDER BY tx_id, seq
	LIMIT $3`

// SubscribeAll follows the global feed from after from. It does no I/O until
// the first Next. The subscription ends when ctx is done or Close is called.
func (s *Store) SubscribeAll(ctx context.Context, from eventstore.Position, filter eventstore.Filter) (eventstore.Subscription, error) {
	life, cancel := context.WithCancelCause(ctx)
	return &subscription{pool: s.pool, opts: s.opts, filter: filter, life: life, cancel: cancel, pos: from}, nil
}

// subscription polls the feed a page at a time and hands the page out from
// a buffer. Next is for one goroutine; Close may be called from any.
type subscription struct {
	pool   *pgxpool.Pool
	opts   Options
	filter eventstore.Filter
	life   context.Context // done when the subscriber's ctx ends or on Close
	cancel context.CancelCauseFunc

	pos      eventstore.Position  // the last row read, matching or not
	buf      []eventstore.Message // the unread part of the last page
	caughtUp bool                 // the last page was short: wait before the next
}

// Next returns the next event, or a checkpoint when the end of a page was
// filtered out. It blocks until one is available, ctx is done (ctx.Err()),
// or the subscription ends. After a database error Next may be called
// again: it resumes from the last message returned.
func (s *subscription) Next(ctx context.Context) (eventstore.Message, error) {
	for {
		if s.life.Err() != nil {
			return eventstore.Message{}, context.Cause(s.life)
		}
		if len(s.buf) > 0 {
			m := s.buf[0]
			s.buf = s.buf[1:]
			return m, nil
		}
		if s.caughtUp {
			if err := s.wait(ctx); err != nil {
				return eventstore.Message{}, err
			}
		}
		if err := s.fetch(ctx); err != nil {
			return eventstore.Message{}, err
		}
	}
}

// Close ends the subscription; a blocked Next returns. It is idempotent.
func (s *subscription) Close() error {
	s.cancel(errClosed)
	return nil
}

func (s *subscription) wait(ctx context.Context) error {
	t := time.NewTimer(s.opts.PollInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.life.Done():
		return context.Cause(s.life)
	case <-t.C:
		return nil
	}
}

// fetch reads the next page into the buffer. On error nothing moves.
func (s *subscription) fetch(ctx context.Context) error {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.life, cancel)()

	rows, _ := s.pool.Query(qctx, feedSQL, s.pos.Commit, s.pos.Prepare, s.opts.BatchSize) // CollectRows reports the error
	page, err := pgx.CollectRows(rows, scanEvent)
	switch {
	case s.life.Err() != nil:
		return context.Cause(s.life)
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return translate("postgres: subscribe after "+s.pos.String(), err)
	}
	s.caughtUp = len(page) < s.opts.BatchSize
	for i := range page {
		if s.filter.Match(page[i].Stream) {
			s.buf = append(s.buf, eventstore.Message{Event: &page[i], Checkpoint: page[i].Position})
		}
	}
	if n := len(page); n > 0 {
		s.pos = page[n-1].Position
		if !s.filter.Match(page[n-1].Stream) {
			// The page ended with events the filter dropped: say how far
			// the feed got, so a consumer can advance its checkpoint.
			s.buf = append(s.buf, eventstore.Message{Checkpoint: s.pos})
		}
	}
	return nil
}
