package api

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payledger/payledger/domain"
)

// ReconcileMetrics is the Prometheus observer of the reconciler: the jobs
// package declares the interface (CheckDone, BreakerChanged, InDoubt) and
// cmd/ledger passes this one, registered on the server's registry. It lives
// in api beside the server's own metrics because jobs does not import
// Prometheus. Its methods are safe for concurrent use.
type ReconcileMetrics struct {
	checks      *prometheus.CounterVec
	corrections *prometheus.CounterVec
	breaker     *prometheus.GaugeVec
	payments    *prometheus.GaugeVec
	amount      *prometheus.GaugeVec
	oldest      *oldestDoubt

	mu         sync.Mutex
	currencies map[string]map[domain.Currency]bool // amount's label sets, by provider
	providers  map[string]bool                     // payments' label sets
}

// NewReconcileMetrics registers the reconciler's collectors in reg. now is
// the clock of payledger_oldest_doubt_seconds, read at scrape time; nil
// means time.Now.
func NewReconcileMetrics(reg prometheus.Registerer, now func() time.Time) (*ReconcileMetrics, error) {
	if now == nil {
		now = time.Now
	}
	m := &ReconcileMetrics{
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payledger_reconciliation_checks_total",
			Help: "Reconciliation checks of payments, by provider and outcome (unchanged, corrected, not_found, failed).",
		}, []string{"provider", "outcome"}),
		corrections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payledger_reconciliation_corrections_total",
			Help: "Reconciliation checks that corrected a payment, by provider and cause (missing_webhook, diverged).",
		}, []string{"provider", "cause"}),
		breaker: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "payledger_reconciliation_breaker_open",
			Help: "1 while the reconciler's circuit breaker for the provider's API is open (checks paused), else 0.",
		}, []string{"provider"}),
		payments: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "payledger_payments_in_doubt",
			Help: "Payments not final and quiet for longer than LEDGER_RECONCILE_AFTER, as of the reconciler's last pass (count).",
		}, []string{"provider"}),
		amount: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "payledger_amount_in_doubt",
			Help: "Amount of the payments in doubt, in minor units of the currency (cents), as of the reconciler's last pass.",
		}, []string{"provider", "currency"}),
		oldest: &oldestDoubt{now: now, desc: prometheus.NewDesc("payledger_oldest_doubt_seconds",
			"Seconds since the last recorded fact of the longest-quiet payment in doubt, at scrape time; 0 when none is in doubt.",
			[]string{"provider"}, nil), at: map[string]time.Time{}},
		currencies: map[string]map[domain.Currency]bool{},
		providers:  map[string]bool{},
	}
	for _, c := range []prometheus.Collector{m.checks, m.corrections, m.breaker, m.payments, m.amount, m.oldest} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("api: register reconciliation metrics: %w", err)
		}
	}
	return m, nil
}

// CheckDone counts one finished check.
func (m *ReconcileMetrics) CheckDone(provider string, outcome domain.CheckOutcome, cause domain.CorrectionCause) {
	m.checks.WithLabelValues(provider, string(outcome)).Inc()
	if outcome == domain.OutcomeCorrected {
		m.corrections.WithLabelValues(provider, string(cause)).Inc()
	}
}

// BreakerChanged records the provider's breaker opening or closing.
func (m *ReconcileMetrics) BreakerChanged(provider string, open bool) {
	v := 0.0
	if open {
		v = 1
	}
	m.breaker.WithLabelValues(provider).Set(v)
}

// InDoubt replaces the doubt gauges with totals, by provider. Every
// provider of providers (the configured ones) gets a value, 0 when nothing
// is in doubt, so a quiet provider reads 0 instead of vanishing; currencies
// and providers no longer present lose their series. The check counters
// and breaker of each provider are created at zero here too, so rates work
// from the first scrape.
func (m *ReconcileMetrics) InDoubt(totals map[string][]domain.DoubtTotal, providers []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	oldest := make(map[string]time.Time, len(providers))
	keep := make(map[string]bool, len(providers))
	for _, p := range providers {
		keep[p] = true
		for _, o := range domain.CheckOutcomes() {
			m.checks.WithLabelValues(p, string(o))
		}
		for _, c := range domain.CorrectionCauses() {
			m.corrections.WithLabelValues(p, string(c))
		}
		m.breaker.WithLabelValues(p)

		var n int64
		amounts := map[domain.Currency]int64{}
		for _, t := range totals[p] {
			n += t.Payments
			amounts[t.Currency] += t.Amount
			if o, ok := oldest[p]; !t.Oldest.IsZero() && (!ok || t.Oldest.Before(o)) {
				oldest[p] = t.Oldest
			}
		}
		m.payments.WithLabelValues(p).Set(float64(n))
		m.providers[p] = true
		// Set before deleting, so a scrape in between never misses a
		// currency that is still in doubt.
		for c, a := range amounts {
			m.amount.WithLabelValues(p, string(c)).Set(float64(a))
		}
		for c := range m.currencies[p] {
			if _, ok := amounts[c]; !ok {
				m.amount.DeleteLabelValues(p, string(c))
			}
		}
		held := make(map[domain.Currency]bool, len(amounts))
		for c := range amounts {
			held[c] = true
		}
		m.currencies[p] = held
	}
	for p := range m.providers {
		if !keep[p] {
			m.payments.DeleteLabelValues(p)
			delete(m.providers, p)
		}
	}
	for p, cs := range m.currencies {
		if keep[p] {
			continue
		}
		for c := range cs {
			m.amount.DeleteLabelValues(p, string(c))
		}
		delete(m.currencies, p)
	}
	m.oldest.set(providers, oldest)
}

// oldestDoubt is payledger_oldest_doubt_seconds: it holds each provider's
// oldest doubt time and turns it into an age when scraped, so the age grows
// between the reconciler's passes.
type oldestDoubt struct {
	now  func() time.Time
	desc *prometheus.Desc

	mu        sync.Mutex
	providers []string
	at        map[string]time.Time // absent: nothing in doubt
}

func (o *oldestDoubt) set(providers []string, at map[string]time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	// Sorted and unique: a name given twice must not be collected twice.
	ps := slices.Clone(providers)
	slices.Sort(ps)
	o.providers, o.at = slices.Compact(ps), at
}

// Describe implements prometheus.Collector.
func (o *oldestDoubt) Describe(ch chan<- *prometheus.Desc) { ch <- o.desc }

// Collect implements prometheus.Collector.
func (o *oldestDoubt) Collect(ch chan<- prometheus.Metric) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	for _, p := range o.providers {
		age := 0.0
		if t, ok := o.at[p]; ok {
			age = max(now.Sub(t).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(o.desc, prometheus.GaugeValue, age, p)
	}
}
