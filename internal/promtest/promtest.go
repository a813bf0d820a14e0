// Package promtest reads metrics back from a Prometheus registry in tests.
package promtest

import (
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Value returns the value of the counter or gauge, or the sample count of
// the histogram, called name with exactly the given labels in reg; -1 if no
// such series exists.
func Value(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if !maps.Equal(got, labels) {
				continue
			}
			switch {
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}
