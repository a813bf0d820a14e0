package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// End-to-end lag is the time from a provider sending a webhook to the
// ledger's read API showing it: acknowledgement, the projector's poll and
// batch, and the read itself.
//
// The visibility test must not be satisfiable before the event sent is
// applied. GET /v1/payments/{provider}/{id} is served from the payments read
// model, which the projector folds from the events of the payment's stream it
// has recorded; the feed hands each stream over in revision order, so what is
// recorded is always a prefix of the stream, and the payment's event_count
// counts it (never more). So once we know the revision r our event was stored
// at, "event_count ≥ r+1" holds exactly when events 0..r — ours included —
// are applied. Events other than ours cannot satisfy it early: an enrichment
// job's payment.status_observed.v1 stored before ours is below r and already
// counted in r+1; one stored after ours can only be applied after ours. This
// holds for every provider, enriched or not. event_count alone, compared with
// the number of webhooks sent, would not: Mercado Pago's observations raise it.
//
// r comes from GET /v1/payments/{provider}/{id}/events, which reads the event
// store, not the read model (an auditor must see what was recorded even when
// a projection is behind), so it knows the event as soon as the webhook was
// acknowledged; it is never itself taken as "visible". The ledger names the
// stored event in its acknowledgement ("event_id"), so the lookup matches on
// that exact ID.
//
// Measuring must not become the load: deliveries are sampled on a clock (at
// most --lag-samples a second, whatever the ledger's state, so the sample is
// not biased towards fast or slow moments), and all samples' reads together
// are paced to --lag-reads a second. A sample is read every --lag-interval
// until visible. Its lag is the middle of the interval the change must have
// happened in — after the send and after the start of the last read that
// did not show it, before the end of the first read that did — and half that
// interval is its resolution, reported so that a coarse measurement shows.

// LagConfig is how end-to-end lag is sampled.
type LagConfig struct {
	Rate     float64       // samples started per second at most; 0: no lag measurement
	Interval time.Duration // pause between two reads of one sample
	Reads    float64       // read-API requests per second at most, all samples together
}

// lagMeter follows sampled deliveries until the read API shows them.
type lagMeter struct {
	cfg      LagConfig
	r        *reader
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

// newLagMeter returns a meter reading through r; nil when cfg disables it.
func newLagMeter(ctx context.Context, cfg LagConfig, r *reader, timeout time.Duration, now func() time.Time) *lagMeter {
	if cfg.Rate <= 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	return &lagMeter{cfg: cfg, r: r, timeout: timeout, now: now, ctx: ctx, cancel: cancel, started: now(),
		pick: newSpacing(cfg.Rate), reads: newSpacing(cfg.Reads)}
}

// offer is told of every finished send; it samples an accepted one when the
// sampling clock allows and follows it in the background. Only "accepted"
// names an event this send stored: a duplicate's event was stored earlier.
func (m *lagMeter) offer(p *Payment, rec Delivery) {
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

// finish waits for the samples in progress until deadline, then abandons
// the rest (counted unresolved). offer must not be called any more.
func (m *lagMeter) finish(deadline time.Time) {
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
func (m *lagMeter) follow(p *Payment, eventID string, sent time.Time) {
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
		if !sleep(ctx, m.cfg.Interval) {
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
func (m *lagMeter) read(ctx context.Context, p *Payment) (reading, bool) {
	if !m.pace(ctx) {
		m.fail(ctx, nil)
		return reading{}, false
	}
	rctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	r := reading{start: m.now()}
	c := m.r.fetch(rctx, p)
	r.end = m.now()
	m.counted(r.end)
	switch {
	case c.code == http.StatusOK && c.err == "":
		r.count = c.got.EventCount
	case c.code == http.StatusNotFound: // not projected yet
	default:
		m.fail(ctx, fmt.Errorf("paysim: lag: read %s: %s", p.Key(), c.err))
		return reading{}, false
	}
	return r, true
}

// revision looks the stored event up in the payment's stream.
func (m *lagMeter) revision(ctx context.Context, p *Payment, eventID string) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	rev, err := m.r.revision(ctx, p, eventID)
	m.counted(m.now())
	return rev, err
}

// pace waits for the next read the --lag-reads budget allows.
func (m *lagMeter) pace(ctx context.Context) bool {
	now := m.now()
	return sleep(ctx, m.reads.reserve(now).Sub(now))
}

func (m *lagMeter) counted(at time.Time) {
	m.requests.Add(1)
	m.lastRead.Store(at.UnixNano())
}

func (m *lagMeter) record(lag, halfWidth time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lags = append(m.lags, lag)
	m.halfWidths = append(m.halfWidths, halfWidth)
}

// fail files a sample that ended without a measurement: unresolved when the
// meter was stopped (the settle deadline or an interrupt), failed otherwise.
func (m *lagMeter) fail(ctx context.Context, err error) {
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

// fill writes the meter's figures into the report.
func (m *lagMeter) fill(r *Report) {
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
		r.LagMS = Latency{P50: ms(percentile(lags, 50)), P95: ms(percentile(lags, 95)), P99: ms(percentile(lags, 99)), Max: ms(lags[len(lags)-1])}
		r.LagResolutionMS = ms(percentile(half, 50))
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

// errNotInStream means the events endpoint does not list the event the
// ledger acknowledged: a lost acknowledged event, or a harness bug.
var errNotInStream = errors.New("acknowledged event not in the payment's stream")

// revision reads the payment's stream from the event store
// (GET …/events) and returns the revision of event eventID.
func (r *reader) revision(ctx context.Context, p *Payment, eventID string) (uint64, error) {
	u := r.ledger + "/v1/payments/" + url.PathEscape(p.Provider) + "/" + url.PathEscape(p.ID) + "/events"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("paysim: lag: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("paysim: lag: events of %s: %w", p.Key(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, fmt.Errorf("paysim: lag: events of %s: %w", p.Key(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("paysim: lag: events of %s: HTTP %d", p.Key(), resp.StatusCode)
	}
	rev, err := revisionIn(raw, eventID)
	if err != nil {
		return 0, fmt.Errorf("paysim: lag: events of %s: %w", p.Key(), err)
	}
	return rev, nil
}

// revisionIn finds eventID in an events endpoint answer.
func revisionIn(raw []byte, eventID string) (uint64, error) {
	var body struct {
		Events []struct {
			EventID  string `json:"event_id"`
			Revision uint64 `json:"revision"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return 0, fmt.Errorf("answer is not JSON: %w", err)
	}
	for _, e := range body.Events {
		if e.EventID == eventID {
			return e.Revision, nil
		}
	}
	return 0, fmt.Errorf("%w: %s", errNotInStream, eventID)
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
