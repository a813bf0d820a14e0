package lag

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/deliver"
	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/cmd/paysim/internal/verdict"
	"github.com/payledger/payledger/internal/backoff"
)

// Config is how end-to-end lag is sampled.
type Config struct {
	Rate     float64       // samples started per second at most; 0: no lag measurement
	Interval time.Duration // pause between two reads of one sample
	Reads    float64       // read-API requests per second at most, all samples together
}

// Meter follows sampled deliveries until the read API shows them.
type Meter struct {
	cfg      Config
	r        *readapi.Client
	timeout  time.Duration // per read
	now      func() time.Time
	pick     *spacing // sampling clock
	reads    *spacing // read pacing
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	started  time.Time
	requests atomic.Int64
	lastRead atomic.Int64 // unix nanoseconds

	mu         sync.Mutex
	lags       []time.Duration
	halfWidths []time.Duration
	unresolved int
	failed     int
	firstError string
}

// New returns a meter reading through r; nil when cfg disables it.
func New(ctx context.Context, cfg Config, r *readapi.Client, timeout time.Duration, now func() time.Time) *Meter {
	if cfg.Rate <= 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	return &Meter{cfg: cfg, r: r, timeout: timeout, now: now, ctx: ctx, cancel: cancel, started: now(),
		pick: newSpacing(cfg.Rate), reads: newSpacing(cfg.Reads)}
}

// Offer is told of every finished send; it samples an accepted one when the
// sampling clock allows and follows it in the background. Only "accepted"
// names an event this send stored: a duplicate's event was stored earlier.
func (m *Meter) Offer(p *truth.Payment, rec deliver.Delivery) {
	if m == nil || !rec.Acked || rec.Outcome != "accepted" || rec.EventID == "" {
		return
	}
	if !m.pick.take(m.now()) {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.follow(p, rec.EventID, rec.Sent)
	}()
}

// Finish waits for the samples in progress until deadline, then abandons
// the rest (counted unresolved). Offer must not be called any more.
func (m *Meter) Finish(deadline time.Time) {
	if m == nil {
		return
	}
	t := time.AfterFunc(time.Until(deadline), m.cancel)
	m.wg.Wait()
	t.Stop()
	m.cancel()
}

// follow measures one sample. The first read of the payment is made at
// once, before the revision is known, and judged once it is: if it does
// not show the event, the change happened after it started, a tighter
// bound than the send when the ledger is slow to answer.
func (m *Meter) follow(p *truth.Payment, eventID string, sent time.Time) {
	ctx := m.ctx
	first, ok := m.read(ctx, p)
	if !ok {
		return
	}
	if !m.pace(ctx) {
		m.fail(ctx, nil)
		return
	}
	rev, err := m.revision(ctx, p, eventID)
	if err != nil {
		m.fail(ctx, err)
		return
	}
	lower := sent // the event cannot be visible before it was sent
	for r := first; ; {
		if r.shows(rev) {
			m.record(estimateLag(sent, lower, r.end))
			return
		}
		lower = r.start
		if backoff.Sleep(ctx, m.cfg.Interval) != nil {
			m.fail(ctx, nil)
			return
		}
		if r, ok = m.read(ctx, p); !ok {
			return
		}
	}
}

// reading is one read of a sampled payment: when it started and ended and
// the event count it saw (0 when the payment is not in the read model yet).
type reading struct {
	start, end time.Time
	count      int
}

func (r reading) shows(rev uint64) bool { return visible(r.count, rev) }

// read makes one paced read of p; false (with the sample filed as failed or
// unresolved) when it could not.
func (m *Meter) read(ctx context.Context, p *truth.Payment) (reading, bool) {
	if !m.pace(ctx) {
		m.fail(ctx, nil)
		return reading{}, false
	}
	rctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	r := reading{start: m.now()}
	c := m.r.Fetch(rctx, p)
	r.end = m.now()
	m.counted(r.end)
	switch {
	case c.Code == http.StatusOK && c.Err == "":
		r.count = c.Got.EventCount
	case c.Code == http.StatusNotFound: // not projected yet
	default:
		m.fail(ctx, fmt.Errorf("paysim: lag: read %s: %s", p.Key(), c.Err))
		return reading{}, false
	}
	return r, true
}

// revision looks the stored event up in the payment's stream.
func (m *Meter) revision(ctx context.Context, p *truth.Payment, eventID string) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	rev, err := m.r.Revision(ctx, p, eventID)
	m.counted(m.now())
	if err != nil {
		return 0, fmt.Errorf("paysim: lag: %w", err)
	}
	return rev, nil
}

// pace waits for the next read the --lag-reads budget allows.
func (m *Meter) pace(ctx context.Context) bool {
	now := m.now()
	return backoff.Sleep(ctx, m.reads.reserve(now).Sub(now)) == nil
}

func (m *Meter) counted(at time.Time) {
	m.requests.Add(1)
	m.lastRead.Store(at.UnixNano())
}

func (m *Meter) record(lag, halfWidth time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lags = append(m.lags, lag)
	m.halfWidths = append(m.halfWidths, halfWidth)
}

// fail files a sample that ended without a measurement: unresolved when the
// meter was stopped (the settle deadline or an interrupt), failed otherwise.
func (m *Meter) fail(ctx context.Context, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ctx.Err() != nil || err == nil {
		m.unresolved++
		return
	}
	m.failed++
	if m.firstError == "" {
		m.firstError = err.Error()
	}
}

// Fill writes the meter's figures into the report.
func (m *Meter) Fill(r *verdict.Report) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	lags, half := slices.Clone(m.lags), slices.Clone(m.halfWidths)
	slices.Sort(lags)
	slices.Sort(half)
	r.LagSamples, r.LagUnresolved, r.LagErrors, r.LagFirstError = len(lags), m.unresolved, m.failed, m.firstError
	if len(lags) > 0 {
		r.LagMS = verdict.Percentiles(lags)
		r.LagResolutionMS = verdict.Percentiles(half).P50
	}
	r.LagReads = int(m.requests.Load())
	if span := time.Duration(m.lastRead.Load() - m.started.UnixNano()); r.LagReads > 0 && span > 0 {
		r.LagReadRate = float64(r.LagReads) / span.Seconds()
	}
}

// visible reports whether a reading of the payment with eventCount events
// includes the event stored at revision rev: the read model holds a prefix
// of the stream, so it does once it counts rev+1 events.
func visible(eventCount int, rev uint64) bool {
	return eventCount > 0 && uint64(eventCount) > rev
}

// estimateLag returns the lag of a send at sent that became visible after
// lower (the send, or the start of the last read that did not show it) and
// by end (the end of the first read that did): the middle of that interval,
// and half its width.
func estimateLag(sent, lower, end time.Time) (lag, halfWidth time.Duration) {
	if lower.Before(sent) {
		lower = sent
	}
	half := max(0, end.Sub(lower)/2)
	return lower.Add(half).Sub(sent), half
}

// spacing hands out moments at least 1/rate apart, without bursts.
type spacing struct {
	mu    sync.Mutex
	every time.Duration
	next  time.Time
}

func newSpacing(rate float64) *spacing {
	return &spacing{every: time.Duration(float64(time.Second) / rate)}
}

// take claims the moment now if it is due, else reports false (the caller
// skips rather than waits: sampling).
func (s *spacing) take(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Before(s.next) {
		return false
	}
	s.next = now.Add(s.every)
	return true
}

// reserve claims the next due moment at or after now and returns it (the
// caller waits until then: pacing).
func (s *spacing) reserve(now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := now
	if s.next.After(at) {
		at = s.next
	}
	s.next = at.Add(s.every)
	return at
}
