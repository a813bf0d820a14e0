package api

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payledger/payledger/domain"
)

// AttentionReader reads what needs a human now (projections.Queries).
type AttentionReader interface {
	Attention(ctx context.Context) (domain.Attention, error)
}

// attentionCacheFor is how long one reading serves scrapes: several
// Prometheus servers scraping every few seconds then cost the database one
// snapshot per interval. attentionTimeout bounds a reading during a scrape.
const (
	attentionCacheFor = 10 * time.Second
	attentionTimeout  = 3 * time.Second
)

// AttentionMetrics is the Prometheus collector of what needs a human: open
// reviews, open dead letters, parked payments and payments awaiting
// confirmation. It reads the database when scraped (at most once per
// attentionCacheFor), so every process serving /metrics reports the same
// figures; alert on max() across instances. When a reading fails, the last
// good figures are kept and payledger_attention_up reads 0.
type AttentionMetrics struct {
	reader    AttentionReader
	providers []string
	now       func() time.Time
	log       *slog.Logger

	up, reviews, reviewsOldest, deadLetters, deadLettersOldest *prometheus.Desc
	parked, parkedOldest, awaiting, awaitingOldest             *prometheus.Desc

	mu     sync.Mutex
	last   domain.Attention
	readAt time.Time
	ok     bool
}

// NewAttentionMetrics registers the collector in reg. providers are the
// configured ones: each gets an awaiting figure, 0 when none awaits. now is
// the clock of the ages; nil means time.Now.
func NewAttentionMetrics(reg prometheus.Registerer, reader AttentionReader, providers []string, now func() time.Time, log *slog.Logger) (*AttentionMetrics, error) {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &AttentionMetrics{reader: reader, providers: providers, now: now, log: log,
		up: prometheus.NewDesc("payledger_attention_up",
			"1 when the last reading of reviews, dead letters and parked payments from the database succeeded, else 0 (the other attention figures are then the last good ones).", nil, nil),
		reviews: prometheus.NewDesc("payledger_reviews_open",
			"Open reviews (payments a person must look at), by provider and reason.", []string{"provider", "reason"}, nil),
		reviewsOldest: prometheus.NewDesc("payledger_reviews_open_oldest_seconds",
			"Seconds since the oldest open review of the provider and reason was opened.", []string{"provider", "reason"}, nil),
		deadLetters: prometheus.NewDesc("payledger_dead_letters",
			"Open dead letters (failed for good, waiting for a retry), by kind (job, projection, collision) and cause.", []string{"kind", "cause"}, nil),
		deadLettersOldest: prometheus.NewDesc("payledger_dead_letters_oldest_seconds",
			"Seconds since the first failure of the oldest open dead letter of the kind and cause.", []string{"kind", "cause"}, nil),
		parked: prometheus.NewDesc("payledger_parked_payments",
			"Payments the projector parked because an event of theirs could not be projected (their read model waits).", nil, nil),
		parkedOldest: prometheus.NewDesc("payledger_parked_payments_oldest_seconds",
			"Seconds since the oldest parked payment was parked; 0 when none is.", nil, nil),
		awaiting: prometheus.NewDesc("payledger_payments_awaiting",
			"Payments awaiting confirmation (the payer or the network must act), by provider.", []string{"provider"}, nil),
		awaitingOldest: prometheus.NewDesc("payledger_payments_awaiting_oldest_seconds",
			"Seconds since the first fact (provider time) of the oldest payment awaiting confirmation; 0 when none awaits.", []string{"provider"}, nil),
	}
	if err := reg.Register(m); err != nil {
		return nil, fmt.Errorf("api: register attention metrics: %w", err)
	}
	return m, nil
}

// Describe implements prometheus.Collector.
func (m *AttentionMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.up, m.reviews, m.reviewsOldest, m.deadLetters, m.deadLettersOldest,
		m.parked, m.parkedOldest, m.awaiting, m.awaitingOldest} {
		ch <- d
	}
}

// reading returns the figures to report, reading them again when the cache
// is stale. Prometheus gives Collect no context; the reading has its own
// timeout.
func (m *AttentionMetrics) reading() (domain.Attention, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if !m.readAt.IsZero() && now.Sub(m.readAt) < attentionCacheFor {
		return m.last, m.ok
	}
	ctx, cancel := context.WithTimeout(context.Background(), attentionTimeout)
	defer cancel()
	a, err := m.reader.Attention(ctx)
	m.readAt = now
	if err != nil {
		m.log.Warn("attention metrics: reading failed, keeping the last figures", "err", err)
		m.ok = false
		return m.last, false
	}
	m.last, m.ok = a, true
	return a, true
}

// Collect implements prometheus.Collector.
func (m *AttentionMetrics) Collect(ch chan<- prometheus.Metric) {
	a, ok := m.reading()
	now := m.now()
	age := func(t time.Time) float64 {
		if t.IsZero() {
			return 0
		}
		return max(now.Sub(t).Seconds(), 0)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	up := 0.0
	if ok {
		up = 1
	}
	gauge(m.up, up)
	for k, c := range a.Reviews {
		gauge(m.reviews, float64(c.Count), k[0], k[1])
		gauge(m.reviewsOldest, age(c.Oldest), k[0], k[1])
	}
	for k, c := range a.DeadLetters {
		gauge(m.deadLetters, float64(c.Count), k[0], k[1])
		gauge(m.deadLettersOldest, age(c.Oldest), k[0], k[1])
	}
	gauge(m.parked, float64(a.Parked.Count))
	gauge(m.parkedOldest, age(a.Parked.Oldest))
	seen := map[string]bool{}
	for _, p := range m.providers {
		if seen[p] {
			continue
		}
		seen[p] = true
		c := a.Awaiting[p]
		gauge(m.awaiting, float64(c.Count), p)
		gauge(m.awaitingOldest, age(c.Oldest), p)
	}
	for p, c := range a.Awaiting {
		if !seen[p] { // a provider no longer configured still has payments
			gauge(m.awaiting, float64(c.Count), p)
			gauge(m.awaitingOldest, age(c.Oldest), p)
		}
	}
}
