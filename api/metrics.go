package api

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Webhook outcomes, as answered and as counted.
const (
	outcomeAccepted  = "accepted"
	outcomeDuplicate = "duplicate"
	outcomeIgnored   = "ignored"
	outcomeConflict  = "conflict" // its event ID is stored for another payment: kept as a dead letter
	outcomeRejected  = "rejected" // 4xx: not verified, malformed, too large, unknown provider
	outcomeError     = "error"    // 5xx: we could not store it; the provider retries
)

// unknownProvider labels deliveries to providers that are not configured, so
// a caller cannot grow the label set by inventing provider names.
const unknownProvider = "unknown"

// metrics are the server's Prometheus collectors. A nil *metrics records
// nothing, so handlers need no registry checks.
type metrics struct {
	deliveries *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	retries    *prometheus.CounterVec
}

// newMetrics registers the collectors in reg (nil: no metrics) and creates
// each provider's series at zero so rates work from the first scrape.
func newMetrics(reg *prometheus.Registry, providers []string) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payledger_webhook_deliveries_total",
			Help: "Webhook deliveries by provider and outcome (accepted, duplicate, ignored, rejected, error).",
		}, []string{"provider", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "payledger_webhook_duration_seconds",
			Help:    "Time to handle one webhook delivery, from first byte read to response.",
			Buckets: prometheus.DefBuckets,
		}, []string{"provider"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payledger_append_conflict_retries_total",
			Help: "Appends retried because the store reported a concurrent write to the stream.",
		}, []string{"provider"}),
	}
	for _, c := range []prometheus.Collector{m.deliveries, m.latency, m.retries} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	for _, p := range providers {
		for _, o := range []string{outcomeAccepted, outcomeDuplicate, outcomeIgnored, outcomeConflict, outcomeRejected, outcomeError} {
			m.deliveries.WithLabelValues(p, o)
		}
		m.retries.WithLabelValues(p)
	}
	return m, nil
}

func (m *metrics) delivery(provider, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.deliveries.WithLabelValues(provider, outcome).Inc()
	m.latency.WithLabelValues(provider).Observe(d.Seconds())
}

func (m *metrics) conflictRetry(provider string) {
	if m == nil {
		return
	}
	m.retries.WithLabelValues(provider).Inc()
}
