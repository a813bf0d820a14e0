package deliver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/gen"
	"github.com/payledger/payledger/cmd/paysim/internal/sign"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// TestRateStartsEveryDelivery runs the open-loop mode against a ledger
// that acknowledges everything: every planned send is started by the pacer
// exactly once and delivered, and the achieved offered rate never exceeds
// the target (starts are never early) nor collapses.
func TestRateStartsEveryDelivery(t *testing.T) {
	tests := []struct {
		name     string
		payments int
		dup      float64
		rate     float64
	}{
		{"no duplicates", 60, 0, 200},
		{"with duplicates", 50, 0.2, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var posts atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				posts.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"outcome":"accepted"}`))
			}))
			defer srv.Close()
			// The flags' defaults, as `paysim run` would have them.
			cfg := Config{Ledger: srv.URL, Seed: 1, Chaos: Chaos{Dup: tt.dup}, Concurrency: 8,
				Retry: Retry{Attempts: 8, Budget: 30 * time.Second, Base: 100 * time.Millisecond, Max: 5 * time.Second, Timeout: 10 * time.Second}}
			cfg.Rate = tt.rate
			payments, err := gen.Generate(cfg.Seed, tt.payments, truth.Providers(), nil)
			if err != nil {
				t.Fatal(err)
			}
			key, err := sign.LoadKey("")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			st := NewStats()
			s := New(cfg, srv.Client(), sign.New(sign.Secrets{}, key), noProvider{})
			pace := s.deliverAll(ctx, payments, st, nil)
			if pace == nil {
				t.Fatal("--rate set but no pacer")
			}
			planned, done, acked, givenUp, _ := st.progress()
			if planned < 100 || done != planned || acked != planned || givenUp != 0 || int(posts.Load()) != planned {
				t.Fatalf("planned %d, done %d, acked %d, given up %d, posts %d", planned, done, acked, givenUp, posts.Load())
			}
			if got := pace.started.Load(); int(got) != planned {
				t.Fatalf("pacer started %d sends, want %d", got, planned)
			}
			// Sanity only: starts are never early, so the rate cannot exceed the target.
			if r := pace.offered(); r > tt.rate*1.01 || r < tt.rate/20 {
				t.Fatalf("offered rate %.1f/s, target %.0f/s", r, tt.rate)
			}
		})
	}
}

// TestRateCountsLateStarts holds the only in-flight slot: the next due
// start finds the cap full and is counted late, then goes once the slot
// frees.
func TestRateCountsLateStarts(t *testing.T) {
	p := newPacer(1000, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.run(ctx, 3)
	}()
	if !p.acquire(ctx) {
		t.Fatal("first start never came")
	}
	for p.late.Load() == 0 { // the second start is due and blocked on the cap
		if ctx.Err() != nil {
			t.Fatal("no late start while the only slot was held")
		}
		time.Sleep(time.Millisecond)
	}
	p.release()
	for range 2 {
		if !p.acquire(ctx) {
			t.Fatal("start missing")
		}
		p.release()
	}
	<-done
	if got := p.started.Load(); got != 3 {
		t.Fatalf("started %d, want 3", got)
	}
	if got := p.late.Load(); got < 1 || got > 2 {
		t.Fatalf("late starts %d, want 1 or 2", got)
	}
}

// noProvider is a provider without a status API to advance.
type noProvider struct{}

func (noProvider) Advance(*truth.Payment, int) {}
