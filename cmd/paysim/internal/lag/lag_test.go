package lag

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/deliver"
	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/cmd/paysim/internal/verdict"
)

func TestVisible(t *testing.T) {
	tests := []struct {
		name  string
		count int
		rev   uint64
		want  bool
	}{
		{"nothing projected", 0, 0, false},
		{"first event projected", 1, 0, true},
		{"earlier events only", 2, 2, false},
		{"exactly up to ours", 3, 2, true},
		{"later events too", 5, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := visible(tt.count, tt.rev); got != tt.want {
				t.Errorf("visible(count %d, rev %d) = %v, want %v", tt.count, tt.rev, got, tt.want)
			}
		})
	}
}

func TestEstimateLag(t *testing.T) {
	sent := time.Unix(1_780_000_000, 0)
	at := func(ms int) time.Time { return sent.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name     string
		lower    time.Time
		end      time.Time
		wantLag  time.Duration
		wantHalf time.Duration
	}{
		{"first read shows it", sent, at(10), 5 * time.Millisecond, 5 * time.Millisecond},
		{"after misses", at(40), at(50), 45 * time.Millisecond, 5 * time.Millisecond},
		{"lower bound never before the send", at(-5), at(8), 4 * time.Millisecond, 4 * time.Millisecond},
		{"instant", at(20), at(20), 20 * time.Millisecond, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lag, half := estimateLag(sent, tt.lower, tt.end)
			if lag != tt.wantLag || half != tt.wantHalf {
				t.Errorf("estimateLag = %s ± %s, want %s ± %s", lag, half, tt.wantLag, tt.wantHalf)
			}
		})
	}
}

func TestSpacing(t *testing.T) {
	t0 := time.Unix(1_780_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	t.Run("take skips what is not due", func(t *testing.T) {
		s := newSpacing(100) // every 10 ms
		for _, c := range []struct {
			ms   int
			want bool
		}{{0, true}, {0, false}, {9, false}, {10, true}, {15, false}, {35, true}, {44, false}, {45, true}} {
			if got := s.take(at(c.ms)); got != c.want {
				t.Fatalf("take at %d ms = %v, want %v", c.ms, got, c.want)
			}
		}
	})
	t.Run("reserve queues without bursts", func(t *testing.T) {
		s := newSpacing(100)
		for _, c := range []struct{ ms, want int }{{0, 0}, {0, 10}, {0, 20}, {25, 30}, {100, 100}, {101, 110}} {
			if got := s.reserve(at(c.ms)); !got.Equal(at(c.want)) {
				t.Fatalf("reserve at %d ms = %s, want %d ms", c.ms, got.Sub(t0), c.want)
			}
		}
	})
}

// scriptedLedger serves the two read endpoints the lag meter uses for one
// payment: the events endpoint lists stream (event IDs in revision order),
// and the n-th payment read answers counts[n] (a negative count: that
// status, no body; past the end: the last entry).
type scriptedLedger struct {
	stream []string
	counts []int
	mu     sync.Mutex
	reads  int
}

func (l *scriptedLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer tok" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case "/v1/payments/stripe/pi_1/events":
		body := `{"events":[`
		for i, id := range l.stream {
			if i > 0 {
				body += ","
			}
			body += fmt.Sprintf(`{"event_id":%q,"revision":%d}`, id, i)
		}
		_, _ = w.Write([]byte(body + "]}"))
	case "/v1/payments/stripe/pi_1":
		l.mu.Lock()
		c := l.counts[min(l.reads, len(l.counts)-1)]
		l.reads++
		l.mu.Unlock()
		if c < 0 {
			w.WriteHeader(-c)
			return
		}
		fmt.Fprintf(w, `{"status":"pending","amount":100,"currency":"USD","event_count":%d}`, c)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func TestLagFollow(t *testing.T) {
	tests := []struct {
		name           string
		stream         []string
		counts         []int
		eventID        string
		wantSamples    int
		wantUnresolved int
		wantErrors     int
		wantReads      int // payment reads made; -1: any
	}{
		{"visible at once", []string{"e1"}, []int{1}, "e1", 1, 0, 0, 1},
		// The first read is made before the revision is known and judged after.
		{"first read judged by the revision", []string{"e1", "e2"}, []int{1, 2}, "e2", 1, 0, 0, 2},
		{"not projected, then projected", []string{"e1", "e2"}, []int{-404, 1, 1, 2}, "e2", 1, 0, 0, 4},
		// An enrichment event stored before ours raises event_count to what
		// our webhooks alone would make it: not visible until ours counts.
		{"enrichment counted first", []string{"e1", "obs", "e2"}, []int{1, 2, 3}, "e2", 1, 0, 0, 3},
		{"acknowledged but not in the stream", []string{"e1"}, []int{1}, "e9", 0, 0, 1, 1},
		{"read error", []string{"e1"}, []int{-500}, "e1", 0, 0, 1, 1},
		{"never visible by the deadline", []string{"e1", "e2"}, []int{1}, "e2", 0, 1, 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &scriptedLedger{stream: tt.stream, counts: tt.counts}
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			r := &readapi.Client{HTTP: srv.Client(), Ledger: srv.URL, Token: "tok"}
			m := New(context.Background(), Config{Rate: 1000, Interval: time.Millisecond, Reads: 10000}, r, 5*time.Second, time.Now)
			p := &truth.Payment{Provider: truth.Stripe, ID: "pi_1"}
			m.Offer(p, deliver.Delivery{Acked: true, Outcome: "accepted", EventID: tt.eventID, Sent: time.Now()})
			m.Finish(time.Now().Add(300 * time.Millisecond))
			var rep verdict.Report
			m.Fill(&rep)
			if rep.LagSamples != tt.wantSamples || rep.LagUnresolved != tt.wantUnresolved || rep.LagErrors != tt.wantErrors {
				t.Errorf("samples %d, unresolved %d, errors %d (%s); want %d, %d, %d", rep.LagSamples, rep.LagUnresolved,
					rep.LagErrors, rep.LagFirstError, tt.wantSamples, tt.wantUnresolved, tt.wantErrors)
			}
			if tt.wantReads >= 0 && fake.reads != tt.wantReads {
				t.Errorf("%d payment reads, want %d", fake.reads, tt.wantReads)
			}
			if rep.LagSamples > 0 && (rep.LagMS.P50 <= 0 || rep.LagMS.Max < rep.LagMS.P50 || rep.LagReads != fake.reads+1) {
				t.Errorf("figures %+v, %d reads (payment reads %d + 1 events read)", rep.LagMS, rep.LagReads, fake.reads)
			}
		})
	}
}

// TestLagSampling: only a send that stored its event is a sample, at most
// one per tick of the sampling clock.
func TestLagSampling(t *testing.T) {
	t0 := time.Unix(1_780_000_000, 0)
	tests := []struct {
		name string
		recs []deliver.Delivery
		at   []int // ms after t0 each is offered
		want int
	}{
		{"accepted", []deliver.Delivery{{Acked: true, Outcome: "accepted", EventID: "e1"}}, []int{0}, 1},
		{"duplicate stored nothing", []deliver.Delivery{{Acked: true, Outcome: "duplicate", EventID: "e1"}}, []int{0}, 0},
		{"not acknowledged", []deliver.Delivery{{Outcome: "accepted", EventID: "e1"}}, []int{0}, 0},
		{"no event named", []deliver.Delivery{{Acked: true, Outcome: "accepted"}}, []int{0}, 0},
		{"one per tick", []deliver.Delivery{{Acked: true, Outcome: "accepted", EventID: "e1"}, {Acked: true, Outcome: "accepted", EventID: "e1"},
			{Acked: true, Outcome: "accepted", EventID: "e1"}}, []int{0, 5, 10}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&scriptedLedger{stream: []string{"e1"}, counts: []int{1}})
			t.Cleanup(srv.Close)
			var mu sync.Mutex
			now := t0
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			r := &readapi.Client{HTTP: srv.Client(), Ledger: srv.URL, Token: "tok"}
			m := New(context.Background(), Config{Rate: 100, Interval: 0, Reads: 1e9}, r, 5*time.Second, clock)
			for i, rec := range tt.recs {
				mu.Lock()
				now = t0.Add(time.Duration(tt.at[i]) * time.Millisecond)
				mu.Unlock()
				m.Offer(&truth.Payment{Provider: truth.Stripe, ID: "pi_1"}, rec)
			}
			m.Finish(time.Now().Add(5 * time.Second))
			var rep verdict.Report
			m.Fill(&rep)
			if rep.LagSamples+rep.LagUnresolved+rep.LagErrors != tt.want {
				t.Errorf("%d samples followed, want %d", rep.LagSamples+rep.LagUnresolved+rep.LagErrors, tt.want)
			}
		})
	}
}

func TestLagDisabled(t *testing.T) {
	m := New(context.Background(), Config{}, nil, time.Second, time.Now)
	if m != nil {
		t.Fatal("--lag-samples 0 still measures")
	}
	m.Offer(&truth.Payment{}, deliver.Delivery{Acked: true, Outcome: "accepted", EventID: "e"}) // nil-safe
	m.Finish(time.Now())
	var rep verdict.Report
	m.Fill(&rep)
	if rep.LagSamples != 0 || rep.LagReads != 0 {
		t.Errorf("%+v", rep)
	}
}
