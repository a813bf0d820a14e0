package verdict

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/internal/backoff"
)

// Recorded is the recorded-basis check: the books as the ledger knew them
// at T, a moment mid-run with deliveries held back and the read side caught
// up, must equal what balances answered at T, and be answered the same at
// the end of the run (facts learned later never change them).
type Recorded struct {
	At       string            `json:"at"` // T, RFC 3339
	Accounts int               `json:"accounts"`
	Balances []readapi.Balance `json:"-"` // balances?as_of=T&basis=recorded, at T
	// Moved: balances changed while T was taken on every attempt (jobs
	// still posting), so the answer at T was not compared.
	Moved bool     `json:"moved,omitempty"`
	AtT   []string `json:"differences_at_t,omitempty"`  // recorded as of T vs balances at T
	Later []string `json:"differences_later,omitempty"` // at the end vs at T
	Error string   `json:"error,omitempty"`
	// Seconds is how long deliveries were held back.
	Seconds float64 `json:"seconds"`
}

// SnapshotConfig is how the recorded-basis snapshot is taken.
type SnapshotConfig struct {
	Workers  int
	Margin   time.Duration // wait after catching up, and again after T: clock skew and in-flight commits
	Deadline time.Time     // give up catching up
	Attempts int           // tries when the books move around T
}

// TakeSnapshot waits until the read side shows every event stored so far,
// then reads balances, takes T, waits Margin, reads the books as of T on the
// recorded basis and balances again. When both balances reads agree (the
// books did not move around T) the as-of answer must equal them.
func TakeSnapshot(ctx context.Context, c *readapi.Client, payments []*truth.Payment, cfg SnapshotConfig) *Recorded {
	start := time.Now()
	r := &Recorded{}
	defer func() { r.Seconds = time.Since(start).Seconds() }()
	if err := WaitCaughtUp(ctx, c, payments, cfg.Workers, cfg.Deadline); err != nil {
		r.Error = err.Error()
		return r
	}
	for range max(1, cfg.Attempts) {
		if backoff.Sleep(ctx, cfg.Margin) != nil {
			r.Error = ctx.Err().Error()
			return r
		}
		before, at, after, err := snapshotOnce(ctx, c, cfg)
		if err != nil {
			r.Error = err.Error()
			return r
		}
		r.At, r.Balances, r.Accounts = at.Format(time.RFC3339Nano), after.asOf, len(after.asOf)
		if r.Moved = SameBalances(before, after.now) != nil; !r.Moved {
			r.AtT = SameBalances(before, after.asOf)
			return r
		}
	}
	return r
}

// snapshotAnswers are the reads after T: as of T, recorded; and balances now.
type snapshotAnswers struct{ asOf, now []readapi.Balance }

func snapshotOnce(ctx context.Context, c *readapi.Client, cfg SnapshotConfig) ([]readapi.Balance, time.Time, snapshotAnswers, error) {
	var out snapshotAnswers
	before, err := readBalances(ctx, c, readapi.BalanceQuery{}, cfg.Deadline)
	if err != nil {
		return nil, time.Time{}, out, err
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	if backoff.Sleep(ctx, cfg.Margin) != nil {
		return nil, at, out, ctx.Err()
	}
	if out.asOf, err = readBalances(ctx, c, readapi.BalanceQuery{AsOf: at, Basis: "recorded"}, cfg.Deadline); err != nil {
		return nil, at, out, err
	}
	if out.now, err = readBalances(ctx, c, readapi.BalanceQuery{}, cfg.Deadline); err != nil {
		return nil, at, out, err
	}
	return before, at, out, nil
}

// readBalances reads balances, retrying failures that may pass (no answer,
// 5xx: a ledger restarting) until deadline.
func readBalances(ctx context.Context, c *readapi.Client, q readapi.BalanceQuery, deadline time.Time) ([]readapi.Balance, error) {
	for {
		b, err := c.Balances(ctx, q)
		var se *readapi.StatusError
		if err == nil || errors.As(err, &se) && se.Code < 500 || time.Now().After(deadline) {
			return b.Balances, err
		}
		if backoff.Sleep(ctx, 200*time.Millisecond) != nil {
			return nil, err
		}
	}
}

// Recheck reads the books as of T on the recorded basis again (the end of
// the run) and names what changed since the snapshot.
func (r *Recorded) Recheck(ctx context.Context, c *readapi.Client) {
	if r.Error != "" {
		return
	}
	at, err := time.Parse(time.RFC3339Nano, r.At)
	if err != nil {
		r.Error = err.Error()
		return
	}
	b, err := readBalances(ctx, c, readapi.BalanceQuery{AsOf: at, Basis: "recorded"}, time.Now().Add(time.Minute))
	if err != nil {
		r.Error = "at the end: " + err.Error()
		return
	}
	r.Later = SameBalances(r.Balances, b)
}

// OK reports whether the check ran and found no difference.
func (r *Recorded) OK() bool { return r.Error == "" && len(r.AtT) == 0 && len(r.Later) == 0 }

// WaitCaughtUp returns once every payment's read model holds every event
// its stream holds (event_count ≥ the events endpoint's length), or an
// error when deadline passes first.
func WaitCaughtUp(ctx context.Context, c *readapi.Client, payments []*truth.Payment, workers int, deadline time.Time) error {
	pending := payments
	for {
		var mu sync.Mutex
		var next []*truth.Payment
		var last error // errors of several types: not an atomic.Value, which panics on a second type
		forEach(len(pending), workers, func(i int) {
			if err := caughtUp(ctx, c, pending[i]); err != nil {
				mu.Lock()
				last = err
				next = append(next, pending[i])
				mu.Unlock()
			}
		})
		if pending = next; len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("read side not caught up by the deadline: %d payments behind (%v)", len(pending), last)
		}
		if backoff.Sleep(ctx, 100*time.Millisecond) != nil {
			return ctx.Err()
		}
	}
}

// errBehind means the read model has fewer events than the stream.
var errBehind = errors.New("read model behind its stream")

// caughtUp checks one payment: nil when its read model is not behind.
func caughtUp(ctx context.Context, c *readapi.Client, p *truth.Payment) error {
	n, err := c.StreamLength(ctx, p.Provider, p.ID)
	var se *readapi.StatusError
	switch {
	case errors.As(err, &se) && se.Code == http.StatusNotFound:
		return nil // nothing stored yet
	case err != nil:
		return err
	}
	a := c.Fetch(ctx, p)
	if a.Code != http.StatusOK || a.Err != "" {
		return fmt.Errorf("%s: read model: %d %s", p.Key(), a.Code, a.Err)
	}
	if a.Got.EventCount < n {
		return fmt.Errorf("%s: %w (%d of %d)", p.Key(), errBehind, a.Got.EventCount, n)
	}
	return nil
}

// forEach runs fn(0..n-1) on a bounded number of workers.
func forEach(n, workers int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
