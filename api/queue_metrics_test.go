package api

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// payledger_jobs reports every state (zeros included), keeps the last
// reading when a read fails, and reports nothing before a first success.
func TestQueueMetrics(t *testing.T) {
	var counts map[string]int
	var fail error
	reg := prometheus.NewRegistry()
	m, err := NewQueueMetrics(reg, func(context.Context) (map[string]int, error) { return counts, fail }, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func() map[string]float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			for _, mt := range mf.GetMetric() {
				out[mt.GetLabel()[0].GetValue()] = mt.GetGauge().GetValue()
			}
		}
		return out
	}
	fail = errors.New("database down")
	if got := read(); len(got) != 0 {
		t.Errorf("before any reading: %v, want nothing", got)
	}
	fail, counts = nil, map[string]int{"available": 3, "discarded": 1}
	got := read()
	if len(got) != len(jobStates) || got["available"] != 3 || got["discarded"] != 1 || got["running"] != 0 {
		t.Errorf("reading: %v", got)
	}
	fail, m.readAt = errors.New("database down"), m.readAt.Add(-2*attentionCacheFor)
	if got := read(); got["available"] != 3 {
		t.Errorf("after a failed read: %v, want the last reading", got)
	}
}
