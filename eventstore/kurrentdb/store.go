package kurrentdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/backoff"
)

var _ eventstore.Store = (*Store)(nil)

// Options tunes a Store. The zero value gives the defaults.
type Options struct {
	// ConflictAttempts bounds how often an Any append reads the stream and
	// tries again after another process appended in between (default 8);
	// then Append returns an error wrapping domain.ErrConflict.
	ConflictAttempts int
	// CallAttempts bounds the tries of one call to the server that fails
	// without an answer (unavailable, deadline, dropped connection)
	// (default 3). Appends are retried with the same expected revision.
	CallAttempts int
	// ResubscribeAttempts bounds consecutive failed resubscriptions of a
	// dropped subscription before Next returns the error (default 10). A
	// subscription that delivers anything starts counting again.
	ResubscribeAttempts int
	// RetryMin and RetryMax bound the jittered exponential backoff between
	// retried calls and between resubscriptions (defaults 50ms and 2s).
	RetryMin, RetryMax time.Duration
	// Logger receives subscription drops and the esdb client's own log
	// lines (Open only). Nil discards them.
	Logger *slog.Logger
	// Redial makes a new client to replace one the esdb library closed for
	// good (it does so after failing discovery, e.g. while the server is
	// down). Open sets it; without it a Store from New cannot recover from
	// that state.
	Redial func() (*esdb.Client, error)
}

// Default option values.
const (
	DefaultConflictAttempts    = 8
	DefaultCallAttempts        = 3
	DefaultResubscribeAttempts = 10
	DefaultRetryMin            = 50 * time.Millisecond
	DefaultRetryMax            = 2 * time.Second
)

func (o Options) withDefaults() Options {
	if o.ConflictAttempts <= 0 {
		o.ConflictAttempts = DefaultConflictAttempts
	}
	if o.CallAttempts <= 0 {
		o.CallAttempts = DefaultCallAttempts
	}
	if o.ResubscribeAttempts <= 0 {
		o.ResubscribeAttempts = DefaultResubscribeAttempts
	}
	if o.RetryMin <= 0 {
		o.RetryMin = DefaultRetryMin
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(DefaultRetryMax, o.RetryMin)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// retries is the wait between attempts of a call and between resubscriptions.
func (o Options) retries() backoff.Exponential {
	return backoff.Exponential{Min: o.RetryMin, Max: o.RetryMax}
}

// Store is the KurrentDB eventstore.Store. It is safe for concurrent use.
type Store struct {
	conn  *conn
	opts  Options
	locks *streamLocks
}

// New returns a Store over client, which it owns from then on (Close
// closes it, and it may be replaced through opts.Redial). New does no I/O.
func New(client *esdb.Client, opts Options) *Store {
	opts = opts.withDefaults()
	return &Store{conn: newConn(client, opts.Redial), opts: opts, locks: newStreamLocks()}
}

// Open parses connString (esdb://, esdb+discover://, or the same with the
// kurrentdb:// or kurrent:// scheme) and returns a Store over a new client
// that it replaces by itself after the client gives up on discovery. Like
// pgxpool.New it does no I/O: the client connects on first use, and Ping
// says whether the server answers.
func Open(ctx context.Context, connString string, opts Options) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kurrentdb: open: %w", err)
	}
	cfg, err := esdb.ParseConnectionString(esdbScheme(connString))
	if err != nil {
		// The parser's errors quote the string, which may hold a password.
		return nil, fmt.Errorf("kurrentdb: open: invalid connection string: %w", redact(err))
	}
	cfg.Logger = clientLogger(opts.Logger)
	redial := func() (*esdb.Client, error) {
		c := *cfg // each client keeps its own copy
		return esdb.NewClient(&c)
	}
	client, err := redial()
	if err != nil {
		return nil, fmt.Errorf("kurrentdb: open: %w", err)
	}
	opts.Redial = redial
	return New(client, opts), nil
}

// Close closes the client; subscriptions must be closed first. Calls made
// after Close fail. A client that has closed itself, or whose last call got
// no answer, is left alone: closing it could panic calls stuck inside it
// (see conn), and its connection is gone anyway. One with calls still
// inside it (a call whose ctx ended returns before its goroutine leaves the
// client) is closed by the last of them.
func (s *Store) Close() error {
	return s.conn.close()
}

// pingStream is read by Ping. It never exists, so the read is a not-found
// answer: one round trip that needs no data and no $all permission.
const pingStream = "payledger-ping"

// Ping reports whether the server answers a read. An unreachable or unready
// server gives an error wrapping domain.ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	return s.retry(ctx, "kurrentdb: ping", func(ctx context.Context, c *esdb.Client) error {
		rs, err := c.ReadStream(ctx, pingStream, esdb.ReadStreamOptions{}, 1)
		if err != nil {
			return err
		}
		defer rs.Close()
		_, err = rs.Recv()
		if err == nil || errors.Is(err, io.EOF) || isNotFound(err) {
			return nil
		}
		return err
	})
}
