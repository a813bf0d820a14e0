package projections

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/backoff"
)

// Defaults of SealerConfig.
const (
	DefaultSealerName = "chain_sealer_v1"
	// DefaultSealerHeads bounds the stream heads kept between batches: a
	// head is a stream name and 40 bytes, and a miss costs one indexed read
	// in the batch's transaction.
	DefaultSealerHeads = 100_000
)

// SealerConfig configures a Sealer. Zero fields take the defaults.
type SealerConfig struct {
	// Name is the checkpoint name and the advisory lock's key.
	Name string
	// BatchSize bounds the events sealed in one transaction.
	BatchSize int
	// RetryMin and RetryMax bound the backoff after a failure and while
	// another process holds the lock.
	RetryMin, RetryMax time.Duration
	// Heads bounds the stream heads cached between batches.
	Heads int
	// Logger receives retries, lock waits and findings; nil discards them.
	Logger *slog.Logger
}

func (c *SealerConfig) setDefaults() {
	if c.Name == "" {
		c.Name = DefaultSealerName
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
	if c.Heads <= 0 {
		c.Heads = DefaultSealerHeads
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Sealer writes the chain seal (eventstore.ChainHash) of every event of the
// store's global feed into event_seals, in feed order, with its checkpoint
// advanced in the same transaction. Its first run seals the whole store from
// the start: events recorded before the chain began (event_seal_epoch, set
// by the migration that created the seals) are marked as backfill.
type Sealer struct {
	cfg  SealerConfig
	pool *pgxpool.Pool
	sub  Subscriber
	log  *slog.Logger
	// heads caches committed stream heads; cleared when it outgrows
	// cfg.Heads and whenever a batch fails.
	heads map[string]sealHead
}

// sealHead is a stream's last sealed revision and its hash.
type sealHead struct {
	rev  uint64
	hash [32]byte
}

// NewSealer returns a sealer that reads from sub and writes to pool, which
// must allow two connections (the lock's and a batch's).
func NewSealer(cfg SealerConfig, pool *pgxpool.Pool, sub Subscriber) *Sealer {
	cfg.setDefaults()
	return &Sealer{cfg: cfg, pool: pool, sub: sub, log: cfg.Logger.With("sealer", cfg.Name), heads: map[string]sealHead{}}
}

// Position returns the sealer's committed checkpoint (Start when none).
func (s *Sealer) Position(ctx context.Context) (eventstore.Position, error) {
	return readCheckpoint(ctx, s.pool, s.cfg.Name)
}

// Run seals until ctx is done, then returns nil. Like Runner.Run it holds
// the advisory lock of its name first, so one process seals at a time, and
// retries every failure from the committed checkpoint.
func (s *Sealer) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		lk, err := s.lock(ctx)
		if err != nil {
			continue // ctx ended while waiting
		}
		s.follow(ctx, lk)
		lk.release(ctx)
	}
	return nil
}

// follow runs sessions while the lock is held, backing off after failures.
func (s *Sealer) follow(ctx context.Context, lk *lease) {
	for attempt := 1; ; attempt++ {
		progressed, err := s.session(ctx, 0)
		if ctx.Err() != nil {
			return
		}
		if progressed {
			attempt = 1
		}
		s.log.ErrorContext(ctx, "sealer stopped; retrying from the committed checkpoint", "err", err, "attempt", attempt)
		if backoff.Sleep(ctx, s.retries().Delay(attempt)) != nil {
			return
		}
		if err := lk.check(ctx); err != nil {
			s.log.WarnContext(ctx, "lost the sealer lock", "err", err)
			return
		}
	}
}

// lock waits for the sealer's advisory lock, as Runner.lock does.
func (s *Sealer) lock(ctx context.Context) (*lease, error) {
	return waitLock(ctx, s.pool, s.cfg.Name, "sealer", s.log, s.retries())
}

// retries is the wait after failures and while another process holds the lock.
func (s *Sealer) retries() backoff.Exponential {
	return backoff.Exponential{Min: s.cfg.RetryMin, Max: s.cfg.RetryMax}
}

// session subscribes from the committed checkpoint and seals batches until
// something fails or, when idle > 0, no event came for idle (caught up:
// then the error is nil).
func (s *Sealer) session(ctx context.Context, idle time.Duration) (progressed bool, err error) {
	clear(s.heads)
	epoch, err := sealEpoch(ctx, s.pool)
	if err != nil {
		return false, err
	}
	pos, err := loadCheckpoint(ctx, s.pool, s.cfg.Name)
	if err != nil {
		return false, err
	}
	sub, err := s.sub.SubscribeAll(ctx, pos, eventstore.Filter{})
	if err != nil {
		return false, fmt.Errorf("projections: seal: subscribe from %s: %w", pos, err)
	}
	defer sub.Close()
	ctx, cancel := context.WithCancel(ctx)
	msgs := make(chan pumped, s.cfg.BatchSize)
	done := make(chan struct{})
	go pump(ctx, sub, msgs, done)
	defer func() { cancel(); <-done }()
	poll := retryPoll
	if idle > 0 {
		poll = idle
	}
	for {
		batch, subErr := gather(ctx, msgs, s.cfg.BatchSize, poll)
		if len(batch) > 0 {
			next, err := s.seal(ctx, pos, batch, epoch)
			progressed = progressed || next != pos
			pos = next
			if err != nil {
				return progressed, err
			}
		}
		// Idle: nothing came, or only checkpoints (a filtered KurrentDB
		// subscription sends them while it scans past system events).
		if subErr == nil && idle > 0 && !slices.ContainsFunc(batch, func(m eventstore.Message) bool { return m.Event != nil }) {
			return progressed, nil
		}
		if subErr != nil {
			return progressed, fmt.Errorf("projections: seal: subscription after %s: %w", pos, subErr)
		}
	}
}

// SealUntilIdle seals from the committed checkpoint until no event arrives
// for idle, then returns: the one-shot form of Run behind `ledger chain
// backfill`. It fails at once when another process holds the lock.
func (s *Sealer) SealUntilIdle(ctx context.Context, idle time.Duration) error {
	lk, held, err := tryLock(ctx, s.pool, lockKey(s.cfg.Name))
	if held {
		return fmt.Errorf("projections: seal: another process holds the sealer lock %s", s.cfg.Name)
	}
	if err != nil {
		return err
	}
	defer lk.release(ctx)
	_, err = s.session(ctx, idle)
	return err
}
