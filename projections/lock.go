package projections

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/internal/backoff"
)

// lease is a held session advisory lock. A session lock lives as long as its
// connection, so the lease keeps one pool connection out of the pool for as
// long as the runner projects; if that connection dies, Postgres releases
// the lock and another process may take over.
type lease struct {
	conn *pgxpool.Conn
	key  int64
}

// lockKey maps a projection name to an advisory lock key. It is computed in
// Go, not with Postgres' internal hashtext, so that the key does not depend
// on the server version. The prefix keeps it apart from other users of
// advisory locks (goose uses its own fixed key).
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("payledger/projections:" + name))
	return int64(h.Sum64())
}

// lock waits until this process holds the projection's lock.
func (r *Runner) lock(ctx context.Context) (*lease, error) {
	return waitLock(ctx, r.pool, r.cfg.LockName, "projection", r.log, r.cfg.retries())
}

// waitLock waits until this process holds the advisory lock of name (a
// projection's, the sealer's). It retries (with backoff) while another
// process holds it or the database is unreachable, and fails only when ctx
// is done. what names the lock in the logs.
func waitLock(ctx context.Context, pool *pgxpool.Pool, name, what string, log *slog.Logger, retries backoff.Exponential) (*lease, error) {
	key := lockKey(name)
	for attempt := 1; ; attempt++ {
		lk, held, err := tryLock(ctx, pool, key)
		switch {
		case lk != nil:
			log.InfoContext(ctx, "took the "+what+" lock")
			return lk, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case held:
			log.InfoContext(ctx, "another process holds the "+what+" lock; waiting")
		default:
			log.ErrorContext(ctx, "cannot take the "+what+" lock", "err", err)
		}
		if backoff.Sleep(ctx, retries.Delay(attempt)) != nil {
			return nil, ctx.Err()
		}
	}
}

// tryLock takes the lock on a dedicated connection. held reports that
// another session holds it.
func tryLock(ctx context.Context, pool *pgxpool.Pool, key int64) (lk *lease, held bool, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("projections: lock: acquire connection: %w", err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("projections: lock: %w", err)
	}
	if !ok {
		conn.Release()
		return nil, true, nil
	}
	return &lease{conn: conn, key: key}, false, nil
}

// check reports whether the lease's connection is still alive (and so the
// lock still held).
func (l *lease) check(ctx context.Context) error {
	if err := l.conn.Ping(ctx); err != nil {
		return fmt.Errorf("projections: lock connection: %w", err)
	}
	return nil
}

// release unlocks and returns the connection to the pool. It runs when ctx
// may already be done, so it uses a short timeout of its own. If the unlock
// fails, the connection is closed instead, which ends the session and so
// releases the lock too: a pooled connection must never keep a lock.
func (l *lease) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", l.key); err != nil {
		_ = l.conn.Hijack().Close(ctx)
		return
	}
	l.conn.Release()
}
