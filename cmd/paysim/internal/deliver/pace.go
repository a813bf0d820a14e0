package deliver

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/payledger/payledger/internal/backoff"
)

// pacer is the open-loop clock of --rate: it starts sends at a fixed rate
// whatever the ledger's answers, so latency is measured at an offered load
// rather than at whatever load the ledger lets a closed loop reach. At most
// cap(inflight) sends run at once; a start that finds them all busy waits
// for one and is counted late, which is how a saturated ledger shows up.
type pacer struct {
	rate     float64       // starts per second
	permits  chan struct{} // unbuffered: one start handed to a waiting send
	inflight chan struct{} // sends started and not yet finished
	started  atomic.Int64
	late     atomic.Int64
	waiting  atomic.Int64 // sends blocked in acquire
	first    time.Time    // set by run before the first start
	last     atomic.Int64 // unix nanoseconds of the latest start
}

func newPacer(rate float64, concurrency int) *pacer {
	return &pacer{rate: rate, permits: make(chan struct{}), inflight: make(chan struct{}, concurrency)}
}

// run hands out n starts, the i-th due i/rate after the first. It catches
// up after a stall (starts already due go at once) so the average offered
// rate holds while the ledger is slow.
func (p *pacer) run(ctx context.Context, n int) {
	interval := time.Duration(float64(time.Second) / p.rate)
	p.first = time.Now()
	for i := range n {
		if backoff.Sleep(ctx, time.Until(p.first.Add(time.Duration(i)*interval))) != nil {
			return
		}
		select {
		case p.inflight <- struct{}{}:
		default:
			p.late.Add(1) // every send in flight: the ledger is not keeping up
			select {
			case p.inflight <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
		select {
		case p.permits <- struct{}{}:
		case <-ctx.Done():
			<-p.inflight
			return
		}
		p.started.Add(1)
		p.last.Store(time.Now().UnixNano())
	}
}

// acquire waits for the send's start; false if ctx ended first. A true
// return must be followed by release when the send is finished.
func (p *pacer) acquire(ctx context.Context) bool {
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	select {
	case <-p.permits:
		return true
	case <-ctx.Done():
		return false
	}
}

func (p *pacer) release() { <-p.inflight }

// awaitWaiting returns once n sends are blocked in acquire, or ctx is done.
func (p *pacer) awaitWaiting(ctx context.Context, n int) {
	for p.waiting.Load() < int64(n) {
		if backoff.Sleep(ctx, time.Millisecond) != nil {
			return
		}
	}
}

// offered is the achieved start rate: starts per second from the first
// start to the last.
func (p *pacer) offered() float64 {
	n := p.started.Load()
	span := time.Duration(p.last.Load() - p.first.UnixNano())
	if n < 2 || span <= 0 {
		return float64(n)
	}
	return float64(n-1) / span.Seconds()
}
