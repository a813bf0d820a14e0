package projections

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are a runner's Prometheus collectors, labelled with the
// projection's name. They answer the questions an operator of a split
// deployment asks first: does some process hold the projection (leader, in
// every process that runs a projector: exactly one should read 1), is it
// moving (events, last event time), how far behind the store is it when it
// applies (lag), and is it failing (failures). A nil *Metrics records
// nothing.
type Metrics struct {
	leader    prometheus.Gauge
	events    prometheus.Counter
	batches   prometheus.Histogram
	lag       prometheus.Gauge
	lastEvent prometheus.Gauge
	failures  prometheus.Counter
}

// NewMetrics registers the collectors of the projection name in reg.
func NewMetrics(reg prometheus.Registerer, name string) (*Metrics, error) {
	labels := prometheus.Labels{"projection": name}
	m := &Metrics{
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "payledger_projection_leader", ConstLabels: labels,
			Help: "1 while this process holds the projection's advisory lock and projects, else 0.",
		}),
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "payledger_projection_events_applied_total", ConstLabels: labels,
			Help: "Events applied to the read models in committed batches.",
		}),
		batches: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "payledger_projection_batch_duration_seconds", ConstLabels: labels,
			Help:    "Time to apply and commit one batch (decoding, folding, the transaction).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14), // 1 ms … 8 s
		}),
		lag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "payledger_projection_lag_seconds", ConstLabels: labels,
			Help: "For the last committed batch: from the store recording its last event to the batch's commit.",
		}),
		lastEvent: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "payledger_projection_last_event_timestamp_seconds", ConstLabels: labels,
			Help: "When the store recorded the last event applied (Unix time); alert on time() minus this while webhooks are accepted.",
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "payledger_projection_failures_total", ConstLabels: labels,
			Help: "Projection sessions stopped by an error and retried from the committed checkpoint.",
		}),
	}
	for _, c := range []prometheus.Collector{m.leader, m.events, m.batches, m.lag, m.lastEvent, m.failures} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("projections: register metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) setLeader(held bool) {
	if m == nil {
		return
	}
	v := 0.0
	if held {
		v = 1
	}
	m.leader.Set(v)
}

// committed records a batch of n events, the last of which the store
// recorded at last, that the runner began applying at start and has just
// committed.
func (m *Metrics) committed(n int, last, start time.Time) {
	if m == nil {
		return
	}
	now := time.Now()
	m.batches.Observe(now.Sub(start).Seconds())
	if n == 0 {
		return
	}
	m.events.Add(float64(n))
	if !last.IsZero() {
		m.lag.Set(max(now.Sub(last), 0).Seconds())
		m.lastEvent.Set(float64(last.UnixNano()) / 1e9)
	}
}

func (m *Metrics) failed() {
	if m == nil {
		return
	}
	m.failures.Inc()
}
