package api

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// JobCounter counts the job queue's unfinished jobs by state
// (jobs.CountUnfinished).
type JobCounter func(ctx context.Context) (map[string]int, error)

// jobStates are the states payledger_jobs reports, each present (0 when
// empty) so a dashboard or the console never reads an absence as zero.
var jobStates = []string{"available", "scheduled", "retryable", "running", "discarded"}

// QueueMetrics is the collector of the job queue's depth: payledger_jobs by
// state, read from the database when scraped (at most once per
// attentionCacheFor), so every process serving /metrics reports it.
type QueueMetrics struct {
	count JobCounter
	log   *slog.Logger
	desc  *prometheus.Desc

	mu     sync.Mutex
	last   map[string]int
	readAt time.Time
}

// NewQueueMetrics registers the collector in reg.
func NewQueueMetrics(reg prometheus.Registerer, count JobCounter, log *slog.Logger) (*QueueMetrics, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &QueueMetrics{count: count, log: log, desc: prometheus.NewDesc("payledger_jobs",
		"Jobs in the background queue by state (available, scheduled, retryable: waiting; running; discarded: dead letters).",
		[]string{"state"}, nil)}
	if err := reg.Register(m); err != nil {
		return nil, err
	}
	return m, nil
}

// Describe implements prometheus.Collector.
func (m *QueueMetrics) Describe(ch chan<- *prometheus.Desc) { ch <- m.desc }

// Collect implements prometheus.Collector. A failed read reports nothing
// rather than zeros.
func (m *QueueMetrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil || time.Since(m.readAt) >= attentionCacheFor {
		ctx, cancel := context.WithTimeout(context.Background(), attentionTimeout)
		counts, err := m.count(ctx)
		cancel()
		if err != nil {
			m.log.Warn("api: job queue depth", "err", err)
			if m.last == nil {
				return
			}
		} else {
			m.last, m.readAt = counts, time.Now()
			if m.last == nil {
				m.last = map[string]int{}
			}
		}
	}
	for _, s := range jobStates {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, float64(m.last[s]), s)
	}
}
