package api

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/promtest"
)

// reconcileObserver is the jobs package's observer interface, verbatim, so
// ReconcileMetrics keeps its method set.
type reconcileObserver interface {
	CheckDone(provider string, outcome domain.CheckOutcome, cause domain.CorrectionCause)
	BreakerChanged(provider string, open bool)
	InDoubt(totals map[string][]domain.DoubtTotal, providers []string)
}

var _ reconcileObserver = (*ReconcileMetrics)(nil)

func TestReconcileMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	now := testNow
	m, err := NewReconcileMetrics(reg, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	val := func(name string, labels map[string]string) float64 { return promtest.Value(t, reg, name, labels) }
	type series struct {
		name   string
		labels map[string]string
		want   float64 // -1: absent
	}
	expect := func(step string, ss []series) {
		t.Helper()
		for _, s := range ss {
			if got := val(s.name, s.labels); got != s.want {
				t.Errorf("%s: %s%v = %v, want %v", step, s.name, s.labels, got, s.want)
			}
		}
	}
	p := func(provider string) map[string]string { return map[string]string{"provider": provider} }
	pl := func(provider, k, v string) map[string]string { return map[string]string{"provider": provider, k: v} }

	m.InDoubt(map[string][]domain.DoubtTotal{
		"stripe": {
			{Currency: "USD", Payments: 2, Amount: 7000, Oldest: testNow.Add(-time.Hour)},
			{Currency: "BRL", Payments: 1, Amount: 12990, Oldest: testNow.Add(-2 * time.Hour)},
		},
		"paypal": {{Currency: "USD", Payments: 9, Amount: 1, Oldest: testNow.Add(-time.Hour)}}, // not configured
	}, []string{"stripe", fakeName})
	m.CheckDone("stripe", domain.OutcomeCorrected, domain.CauseDiverged)
	m.CheckDone("stripe", domain.OutcomeCorrected, domain.CauseDiverged)
	m.CheckDone("stripe", domain.OutcomeUnchanged, "")
	m.BreakerChanged(fakeName, true)
	now = now.Add(time.Minute) // the age grows between passes
	expect("first pass", []series{
		{"payledger_reconciliation_checks_total", pl("stripe", "outcome", "corrected"), 2},
		{"payledger_reconciliation_checks_total", pl("stripe", "outcome", "unchanged"), 1},
		{"payledger_reconciliation_checks_total", pl(fakeName, "outcome", "failed"), 0},
		{"payledger_reconciliation_corrections_total", pl("stripe", "cause", "diverged"), 2},
		{"payledger_reconciliation_corrections_total", pl("stripe", "cause", "missing_webhook"), 0},
		{"payledger_reconciliation_corrections_total", pl("stripe", "cause", ""), -1},
		{"payledger_reconciliation_breaker_open", p(fakeName), 1},
		{"payledger_reconciliation_breaker_open", p("stripe"), 0},
		{"payledger_payments_in_doubt", p("stripe"), 3},
		{"payledger_payments_in_doubt", p(fakeName), 0},
		{"payledger_payments_in_doubt", p("paypal"), -1},
		{"payledger_amount_in_doubt", pl("stripe", "currency", "USD"), 7000},
		{"payledger_amount_in_doubt", pl("stripe", "currency", "BRL"), 12990},
		{"payledger_oldest_doubt_seconds", p("stripe"), 2*3600 + 60},
		{"payledger_oldest_doubt_seconds", p(fakeName), 0},
	})

	m.BreakerChanged(fakeName, false)
	m.InDoubt(map[string][]domain.DoubtTotal{"stripe": {{Currency: "USD", Payments: 1, Amount: 500, Oldest: testNow}}},
		[]string{"stripe", "stripe"})
	expect("second pass", []series{
		{"payledger_reconciliation_breaker_open", p(fakeName), 0},
		{"payledger_payments_in_doubt", p("stripe"), 1},
		{"payledger_payments_in_doubt", p(fakeName), -1},
		{"payledger_amount_in_doubt", pl("stripe", "currency", "USD"), 500},
		{"payledger_amount_in_doubt", pl("stripe", "currency", "BRL"), -1},
		{"payledger_oldest_doubt_seconds", p("stripe"), 60},
		{"payledger_oldest_doubt_seconds", p(fakeName), -1},
	})

	m.InDoubt(nil, []string{"stripe"})
	expect("nothing in doubt", []series{
		{"payledger_payments_in_doubt", p("stripe"), 0},
		{"payledger_amount_in_doubt", pl("stripe", "currency", "USD"), -1},
		{"payledger_oldest_doubt_seconds", p("stripe"), 0},
	})

	if _, err := NewReconcileMetrics(reg, nil); err == nil {
		t.Error("registering twice in one registry succeeded")
	}
}
