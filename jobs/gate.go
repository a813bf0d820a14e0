package jobs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"
	"golang.org/x/time/rate"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/backoff"
)

// ErrBreakerOpen is returned (wrapped, naming the provider) by Gate.Check
// without calling the check while that provider's breaker is open.
var ErrBreakerOpen = errors.New("circuit breaker open")

// GateConfig configures a Gate. Zero values take the defaults.
type GateConfig struct {
	Rate           float64            // calls per second per provider (default 5)
	Rates          map[string]float64 // per-provider overrides of Rate (providers' own limits differ)
	Burst          int                // calls allowed at once (default 1)
	FailuresToOpen int                // consecutive failed checks that open the breaker (default 5)
	Cooldown       time.Duration      // how long an open breaker refuses checks (default 1m)
	Now            func() time.Time   // the rate limiter's clock (default time.Now); the breaker's is always real
}

// Gate paces and guards the calls payledger makes to each provider's API:
// one token-bucket limiter and one circuit breaker per provider, created on
// first use. It is safe for concurrent use.
//
// Check takes one token per check. The status client's own retries count
// too: give its HTTP client a transport whose RoundTrip calls
// Gate.Wait(req.Context(), provider) before each attempt. The first such
// Wait inside a Check (on the ctx Check hands fn) is free, as Check already
// paid for it: with that transport every HTTP attempt costs one token,
// without it every check does.
type Gate struct {
	cfg      GateConfig
	onChange func(provider string, open bool)
	sleep    func(context.Context, time.Duration) error // tests replace it with a fake clock

	mu        sync.Mutex
	providers map[string]*providerGate
}

type providerGate struct {
	lim     *rate.Limiter
	cb      *gobreaker.CircuitBreaker[struct{}]
	open    atomic.Bool
	retryAt atomic.Int64 // Unix nanoseconds, by cfg.Now, when the cooldown ends
}

// NewGate returns a Gate. onChange, when not nil, is called each time a
// provider's breaker opens (open true; also when a trial check fails and it
// re-opens) and when it closes again. It runs synchronously inside the
// transition, so it must be quick and must not call Check.
func NewGate(cfg GateConfig, onChange func(provider string, open bool)) *Gate {
	if cfg.Rate <= 0 {
		cfg.Rate = 5
	}
	if cfg.Burst <= 0 {
		cfg.Burst = 1
	}
	if cfg.FailuresToOpen <= 0 {
		cfg.FailuresToOpen = 5
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Gate{cfg: cfg, onChange: onChange, sleep: backoff.Sleep, providers: map[string]*providerGate{}}
}

// Rate is provider's calls per second: its override, or the default.
func (g *Gate) Rate(provider string) float64 {
	if r := g.cfg.Rates[provider]; r > 0 {
		return r
	}
	return g.cfg.Rate
}

// Open reports whether provider's breaker is open right now, including the
// half-open state in which one trial check is allowed through.
func (g *Gate) Open(provider string) bool { return g.provider(provider).open.Load() }

// provider returns provider's limiter and breaker, creating them once.
func (g *Gate) provider(name string) *providerGate {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p, ok := g.providers[name]; ok {
		return p
	}
	p := &providerGate{lim: rate.NewLimiter(rate.Limit(g.Rate(name)), g.cfg.Burst)}
	p.cb = gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        name,
		MaxRequests: 1, // half-open lets exactly one check through
		Timeout:     g.cfg.Cooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= uint32(g.cfg.FailuresToOpen) },
		// Only an unwell provider trips the breaker; any other answer shows
		// it is up. Our caller's cancellation says nothing about it.
		IsSuccessful:  func(err error) bool { return !unwell(err) },
		IsExcluded:    func(err error) bool { _, ok := err.(*callerDone); return ok },
		OnStateChange: func(_ string, from, to gobreaker.State) { g.transition(name, p, from, to) },
	})
	g.providers[name] = p
	return p
}

// transition records a breaker state change and tells onChange about opens
// and closes; open → half-open is neither (the breaker still refuses all but
// one check).
func (g *Gate) transition(name string, p *providerGate, _, to gobreaker.State) {
	switch to {
	case gobreaker.StateOpen:
		p.retryAt.Store(g.cfg.Now().Add(g.cfg.Cooldown).UnixNano())
		p.open.Store(true)
	case gobreaker.StateClosed:
		p.open.Store(false)
	default:
		return
	}
	if g.onChange != nil {
		g.onChange(name, to == gobreaker.StateOpen)
	}
}

// Check runs fn, one status check of provider, through provider's breaker
// and limiter. While the breaker is open it returns ErrBreakerOpen without
// calling fn; otherwise it waits for a token (returning ctx's error if ctx
// ends first, fn not called) and returns fn's error unchanged.
//
// Only an unwell provider counts as a failed check: a domain.KindUnavailable
// error (what providers/rest returns for 5xx, 408, 429 after its own
// Retry-After handling, timeouts and network errors), or a deadline or
// network error of fn's own. An unknown payment (404), a KindInvalid
// answer, any other error, and any error once ctx is done leave the breaker
// as it is or count as a success. Put a per-check timeout inside fn, not on
// ctx, so that it counts.
func (g *Gate) Check(ctx context.Context, provider string, fn func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jobs: check %s: %w", provider, err)
	}
	p := g.provider(provider)
	_, err := p.cb.Execute(func() (struct{}, error) {
		if err := g.wait(ctx, provider, p); err != nil {
			return struct{}{}, &callerDone{err}
		}
		err := fn(context.WithValue(ctx, creditKey{}, &credit{provider: provider}))
		if err != nil && ctx.Err() != nil {
			return struct{}{}, &callerDone{err}
		}
		return struct{}{}, err
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return g.openError(provider, p)
	}
	if done, ok := err.(*callerDone); ok {
		return done.err
	}
	return err
}

// Wait takes one of provider's tokens, waiting for it unless ctx ends first.
// Call it before every HTTP attempt of a status client (from a RoundTripper)
// so that its retries count against the rate; inside Check the first call
// is free, since Check already took that attempt's token.
func (g *Gate) Wait(ctx context.Context, provider string) error {
	if c, ok := ctx.Value(creditKey{}).(*credit); ok && c.provider == provider && c.used.CompareAndSwap(false, true) {
		return nil
	}
	return g.wait(ctx, provider, g.provider(provider))
}

// wait reserves a token by cfg.Now and sleeps until it is due; a cancelled
// wait gives the token back.
func (g *Gate) wait(ctx context.Context, provider string, p *providerGate) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jobs: rate %s: %w", provider, err)
	}
	now := g.cfg.Now()
	r := p.lim.ReserveN(now, 1)
	if !r.OK() {
		return fmt.Errorf("jobs: rate %s: burst %d admits no call", provider, g.cfg.Burst)
	}
	if err := g.sleep(ctx, r.DelayFrom(now)); err != nil {
		r.CancelAt(g.cfg.Now())
		return fmt.Errorf("jobs: rate %s: %w", provider, err)
	}
	return nil
}

// openError says which provider is refused and when it is tried again.
func (g *Gate) openError(provider string, p *providerGate) error {
	at := time.Unix(0, p.retryAt.Load())
	if g.cfg.Now().Before(at) {
		return fmt.Errorf("jobs: check %s: %w, retrying after %s", provider, ErrBreakerOpen, at.UTC().Format(time.RFC3339))
	}
	return fmt.Errorf("jobs: check %s: %w, a trial check is under way", provider, ErrBreakerOpen)
}

// unwell reports whether err says the provider is down or overloaded.
func unwell(err error) bool {
	if err == nil || errors.Is(err, domain.ErrUnknownPayment) {
		return false
	}
	var ne net.Error
	return domain.KindOf(err) == domain.KindUnavailable || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne)
}

// callerDone marks an error caused by our caller's ctx ending, which the
// breaker must not count either way.
type callerDone struct{ err error }

func (e *callerDone) Error() string { return e.err.Error() }
func (e *callerDone) Unwrap() error { return e.err }

// credit is the token Check took for a check's first HTTP attempt.
type credit struct {
	provider string
	used     atomic.Bool
}

type creditKey struct{}
