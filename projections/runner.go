package projections

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/backoff"
)

// Subscriber is the part of eventstore.Store the runner uses.
type Subscriber interface {
	SubscribeAll(ctx context.Context, from eventstore.Position, filter eventstore.Filter) (eventstore.Subscription, error)
}

// Defaults of RunnerConfig.
const (
	DefaultName      = "payments_v1"
	DefaultBatchSize = 500
	DefaultRetryMin  = 100 * time.Millisecond
	DefaultRetryMax  = 10 * time.Second
	// DefaultHistories covers the payments whose events arrive within a
	// second or two of each other (a payment's first events come in a
	// burst) at thousands of webhooks a second. A payment of four events
	// takes ~1.5 KB, and with serve's GOGC=400 each live MB can cost up to
	// five of RSS, so more would buy little and cost memory.
	DefaultHistories = 1024
)

// RunnerConfig configures a Runner. Zero fields take the defaults.
type RunnerConfig struct {
	// Name is the checkpoint name and the advisory lock's key. It is the
	// projection's identity: renaming it means a rebuild.
	Name string
	// BatchSize bounds the messages applied in one transaction.
	BatchSize int
	// RetryMin and RetryMax bound the jittered exponential backoff after a
	// failure, and the wait while another process holds the lock.
	RetryMin, RetryMax time.Duration
	// Logger receives retries and lock waits; nil discards them.
	Logger *slog.Logger
	// Histories bounds the payments whose event histories the runner keeps
	// in memory between batches (the least recently touched go first); a
	// batch of known payments is folded without reading its histories
	// back. Negative: none.
	Histories int
	// FollowUp, when set, enqueues background work in each batch's
	// transaction (see FollowUp).
	FollowUp FollowUp
	// Metrics, when set, receives the runner's leadership, progress, lag
	// and failures (see NewMetrics).
	Metrics *Metrics
	// Decoder decodes the feed's events; nil is the event store's codec.
	Decoder Decoder
	// Streams, when set, is read to re-project a parked stream whose retry
	// was requested (see RequestReprojectTx); without it retries wait.
	Streams StreamReader
	// LockName is the advisory lock's key; empty is Name. A shadow rebuild
	// projects under the live projection's name with a lock of its own.
	LockName string
}

func (c *RunnerConfig) setDefaults() {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.LockName == "" {
		c.LockName = c.Name
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.RetryMin <= 0 {
		c.RetryMin = DefaultRetryMin
	}
	if c.RetryMax <= 0 {
		c.RetryMax = DefaultRetryMax
	}
	c.RetryMax = max(c.RetryMax, c.RetryMin)
	if c.Histories == 0 {
		c.Histories = DefaultHistories
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// retries is the wait after failures and while another process holds the lock.
func (c RunnerConfig) retries() backoff.Exponential {
	return backoff.Exponential{Min: c.RetryMin, Max: c.RetryMax}
}

// Runner projects payment events into the payments read model. See the
// package documentation for its transaction, checkpoint and error rules.
type Runner struct {
	cfg   RunnerConfig
	pool  *pgxpool.Pool
	sub   Subscriber
	codec *eventstore.Codec
	// decoder decodes the feed (cfg.Decoder or codec).
	decoder Decoder
	log     *slog.Logger
	// parked is the set of parked streams, loaded when a session starts
	// and kept as the session parks and re-projects them.
	parked map[string]bool
	// histories is the session's memory of payment_events (see histories).
	histories *histories
	// until, during RunUntil, is where sessions stop.
	until *eventstore.Position
}

// NewRunner returns a runner that reads from sub and writes to pool. While
// it runs, the runner keeps one pool connection for its advisory lock and
// uses another for each batch, so pool must allow at least two connections.
func NewRunner(cfg RunnerConfig, pool *pgxpool.Pool, sub Subscriber) *Runner {
	cfg.setDefaults()
	codec := eventstore.NewCodec()
	var decoder Decoder = codec
	if cfg.Decoder != nil {
		decoder = cfg.Decoder
	}
	return &Runner{
		cfg:     cfg,
		pool:    pool,
		sub:     sub,
		codec:   codec,
		decoder: decoder,
		log:     cfg.Logger.With("projection", cfg.Name),
		parked:  map[string]bool{},

		histories: newHistories(cfg.Histories),
	}
}

// Position returns the runner's committed checkpoint (Start when none is
// stored yet).
func (r *Runner) Position(ctx context.Context) (eventstore.Position, error) {
	return readCheckpoint(ctx, r.pool, r.cfg.Name)
}

// Run projects until ctx is done, then returns nil. It waits for the
// projection's advisory lock first, and retries every failure with backoff
// from the committed checkpoint, so it only returns when ctx ends. Call it
// from one goroutine at a time.
func (r *Runner) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		lk, err := r.lock(ctx)
		if err != nil {
			continue // ctx ended while waiting
		}
		r.cfg.Metrics.setLeader(true)
		r.follow(ctx, lk)
		r.cfg.Metrics.setLeader(false)
		lk.release(ctx)
	}
	return nil
}

// follow runs sessions while this process holds the lock: each session reads
// the checkpoint, subscribes and applies batches until an error, after which
// follow backs off and starts over from the database. It returns when ctx is
// done or the lock's connection is lost.
func (r *Runner) follow(ctx context.Context, lk *lease) {
	attempt := 0
	for {
		progressed, err := r.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if progressed {
			attempt = 0
		}
		r.cfg.Metrics.failed()
		r.log.ErrorContext(ctx, "projection stopped; retrying from the committed checkpoint",
			"err", err, "attempt", attempt+1)
		if backoff.Sleep(ctx, r.cfg.retries().Delay(attempt+1)) != nil {
			return
		}
		attempt++
		if err := lk.check(ctx); err != nil {
			r.log.WarnContext(ctx, "lost the projection lock", "err", err)
			return
		}
	}
}
