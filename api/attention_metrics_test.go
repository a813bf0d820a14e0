package api

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/promtest"
)

// attentionStub answers Attention with what the test sets, counting calls.
// (projections' TestAttention reads the real tables.)
type attentionStub struct {
	a     domain.Attention
	err   error
	calls int
}

func (s *attentionStub) Attention(context.Context) (domain.Attention, error) {
	s.calls++
	return s.a, s.err
}

func TestAttentionMetrics(t *testing.T) {
	now := testNow
	stub := &attentionStub{a: domain.Attention{
		Reviews:     map[[2]string]domain.AttentionCount{{"asaas", "confirmation_timeout"}: {Count: 3, Oldest: now.Add(-2 * time.Hour)}},
		DeadLetters: map[[2]string]domain.AttentionCount{{"job", "enrich"}: {Count: 2, Oldest: now.Add(-time.Minute)}},
		Parked:      domain.AttentionCount{Count: 1, Oldest: now.Add(-30 * time.Second)},
		Awaiting:    map[string]domain.AttentionCount{"asaas": {Count: 5, Oldest: now.Add(-time.Hour)}},
	}}
	reg := prometheus.NewRegistry()
	if _, err := NewAttentionMetrics(reg, stub, []string{"asaas", "stripe", "stripe"}, func() time.Time { return now }, nil); err != nil {
		t.Fatal(err)
	}
	val := func(name string, labels map[string]string) float64 { return promtest.Value(t, reg, name, labels) }
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"payledger_attention_up", nil, 1},
		{"payledger_reviews_open", map[string]string{"provider": "asaas", "reason": "confirmation_timeout"}, 3},
		{"payledger_reviews_open_oldest_seconds", map[string]string{"provider": "asaas", "reason": "confirmation_timeout"}, 7200},
		{"payledger_dead_letters", map[string]string{"kind": "job", "cause": "enrich"}, 2},
		{"payledger_dead_letters_oldest_seconds", map[string]string{"kind": "job", "cause": "enrich"}, 60},
		{"payledger_parked_payments", nil, 1},
		{"payledger_parked_payments_oldest_seconds", nil, 30},
		{"payledger_payments_awaiting", map[string]string{"provider": "asaas"}, 5},
		{"payledger_payments_awaiting_oldest_seconds", map[string]string{"provider": "asaas"}, 3600},
		{"payledger_payments_awaiting", map[string]string{"provider": "stripe"}, 0},
		{"payledger_payments_awaiting_oldest_seconds", map[string]string{"provider": "stripe"}, 0},
	} {
		if got := val(c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	calls := stub.calls
	if calls != 1 {
		t.Errorf("%d readings for many gathers within the cache time, want 1", calls)
	}

	// A failed reading keeps the last figures and says so; the ages grow.
	now = now.Add(attentionCacheFor)
	stub.err = errors.New("database down")
	if got := val("payledger_attention_up", nil); got != 0 {
		t.Errorf("up after a failed reading = %v, want 0", got)
	}
	if got := val("payledger_parked_payments", nil); got != 1 {
		t.Errorf("parked after a failed reading = %v, want the last figure 1", got)
	}
	if got := val("payledger_parked_payments_oldest_seconds", nil); got != 30+attentionCacheFor.Seconds() {
		t.Errorf("parked age = %v, want %v", got, 30+attentionCacheFor.Seconds())
	}
}
