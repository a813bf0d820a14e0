package projections

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/internal/promtest"
)

// The runner's metrics follow what it commits: leadership while it holds
// the lock, every applied event counted once across a failure and its
// retry, the record time of the last applied event, and the failure.
func TestRunnerMetrics(t *testing.T) {
	pool := pgtest.NewPool(t)
	feed := newMemFeed(t)
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, "payments_v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg, "payments_v1"); err == nil {
		t.Error("registering the same projection's metrics twice: want an error")
	}
	if got := value(t, reg, "payledger_projection_leader"); got != 0 {
		t.Errorf("leader before Run = %v, want 0", got)
	}

	var all []domain.Event
	for n := range 6 {
		all = append(all, lifecycle("stripe", n)...)
	}
	feed.add(all...)
	cfg := testConfig("payments_v1", nil)
	cfg.Metrics = m
	r := NewRunner(cfg, pool, feed)
	stop := start(t, r)
	first := feed.checkpoint()
	waitPosition(t, r, first)
	if got := value(t, reg, "payledger_projection_leader"); got != 1 {
		t.Errorf("leader while projecting = %v, want 1", got)
	}

	feed.fail(errors.New("connection reset by peer"))
	more := lifecycle("stripe", 9)
	all = append(all, more...)
	last := feed.add(more...)
	waitPosition(t, r, feed.checkpoint())
	eventually(t, "the failure counted", func() bool { return value(t, reg, "payledger_projection_failures_total") >= 1 })
	// Position reads the committed checkpoint; the runner counts the batch
	// just after its commit, so a loaded machine can read in between.
	lastAt := feed.recordedAt(last)
	eventually(t, "the last batch counted", func() bool {
		return value(t, reg, "payledger_projection_last_event_timestamp_seconds") == float64(lastAt.UnixNano())/1e9
	})

	if got := value(t, reg, "payledger_projection_events_applied_total"); got != float64(len(all)) {
		t.Errorf("events applied = %v, want %d (each once)", got, len(all))
	}
	if got := value(t, reg, "payledger_projection_last_event_timestamp_seconds"); got != float64(lastAt.UnixNano())/1e9 {
		t.Errorf("last event timestamp = %v, want %v (%s)", got, float64(lastAt.UnixNano())/1e9, lastAt)
	}
	if got := value(t, reg, "payledger_projection_lag_seconds"); got < time.Since(lastAt).Seconds()-60 {
		t.Errorf("lag = %vs, want about %vs (the feed's record times are in 2025)", got, time.Since(lastAt).Seconds())
	}
	if n := value(t, reg, "payledger_projection_batch_duration_seconds"); n < 2 {
		t.Errorf("batch durations observed: %v, want one per committed batch (≥ 2)", n)
	}

	stop()
	if got := value(t, reg, "payledger_projection_leader"); got != 0 {
		t.Errorf("leader after Run returned = %v, want 0", got)
	}
}

// A nil *Metrics is a runner without metrics: nothing to record, no panic.
func TestNilMetrics(t *testing.T) {
	var m *Metrics
	m.setLeader(true)
	m.committed(3, time.Now(), time.Now())
	m.failed()
}

// value is the payments_v1 series of name in reg (-1: absent): a gauge's
// or counter's value, a histogram's sample count.
func value(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	return promtest.Value(t, reg, name, map[string]string{"projection": "payments_v1"})
}
