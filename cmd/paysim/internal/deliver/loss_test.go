package deliver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/gen"
	"github.com/payledger/payledger/cmd/paysim/internal/sign"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

func TestDropSet(t *testing.T) {
	ps, err := gen.Generate(7, 400, truth.Providers(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		share float64
		want  int
	}{{0, 0}, {0.1, 40}, {0.25, 100}, {0.333, 133}, {1, 400}}
	for _, tt := range tests {
		got := DropSet(7, ps, tt.share)
		if n := count(got); n != tt.want {
			t.Errorf("share %v: %d dropped, want %d", tt.share, n, tt.want)
		}
		if !slices.Equal(got, DropSet(7, ps, tt.share)) {
			t.Errorf("share %v: not deterministic", tt.share)
		}
	}
	if slices.Equal(DropSet(7, ps, 0.1), DropSet(8, ps, 0.1)) {
		t.Error("seeds 7 and 8 drop the same payments")
	}
	// A larger share drops a superset: raising --drop never un-drops one.
	small, large := DropSet(7, ps, 0.1), DropSet(7, ps, 0.3)
	for i := range small {
		if small[i] && !large[i] {
			t.Fatalf("payment %d dropped at 0.1, not at 0.3", i)
		}
	}
}

func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func TestOutageWindow(t *testing.T) {
	o := &outage{length: time.Second}
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	if o.covers(t0) || o.window() != (Window{}) {
		t.Fatal("closed outage covers")
	}
	o.open(t0)
	o.open(t0.Add(time.Hour)) // opens once
	for _, tt := range []struct {
		at   time.Duration
		want bool
	}{{-time.Nanosecond, false}, {0, true}, {999 * time.Millisecond, true}, {time.Second, false}} {
		if got := o.covers(t0.Add(tt.at)); got != tt.want {
			t.Errorf("at %v: covers %v", tt.at, got)
		}
	}
	if w := o.window(); !w.Start.Equal(t0) || !w.End.Equal(t0.Add(time.Second)) {
		t.Errorf("window %+v", w)
	}
	none := &outage{}
	none.open(t0)
	if none.covers(t0) {
		t.Error("a zero-length outage covers")
	}
}

// countingLedger acknowledges every POST and remembers the event IDs.
type countingLedger struct {
	mu   sync.Mutex
	seen map[string]int
}

func (c *countingLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	c.mu.Lock()
	c.seen[r.Header.Get(EventIDHeader)]++
	c.mu.Unlock()
	_, _ = w.Write([]byte(`{"outcome":"accepted"}`))
}

// advances records how far the provider state went per payment.
type advances struct {
	mu    sync.Mutex
	shown map[string]int
}

func (a *advances) Advance(p *truth.Payment, step int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.shown[p.Key()] = max(a.shown[p.Key()], step)
}

func runLoss(t *testing.T, loss Loss, chaos Chaos, n int) ([]*truth.Payment, *countingLedger, *advances, Totals, *Sender) {
	t.Helper()
	led := &countingLedger{seen: map[string]int{}}
	srv := httptest.NewServer(led)
	t.Cleanup(srv.Close)
	cfg := Config{Ledger: srv.URL, Seed: 3, Chaos: chaos, Concurrency: 8, Loss: loss,
		Retry: Retry{Attempts: 3, Budget: 10 * time.Second, Base: 10 * time.Millisecond, Max: 50 * time.Millisecond, Timeout: 5 * time.Second}}
	ps, err := gen.Generate(cfg.Seed, n, truth.Providers(), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := sign.LoadKey("")
	if err != nil {
		t.Fatal(err)
	}
	adv := &advances{shown: map[string]int{}}
	st := NewStats()
	s := New(cfg, srv.Client(), sign.New(sign.Secrets{}, key), adv)
	s.Run(context.Background(), ps, st, nil)
	return ps, led, adv, st.Totals(ps), s
}

// TestDropWithholdsFinalWebhooks: a dropped payment's first webhook is
// delivered, none after it, yet the provider state reaches the last step;
// nothing withheld counts as undelivered.
func TestDropWithholdsFinalWebhooks(t *testing.T) {
	ps, led, adv, tot, _ := runLoss(t, Loss{Drop: 0.25, OutageAt: -1}, Chaos{Dup: 0.5, Reorder: 0.5}, 80)
	dropped := DropSet(3, ps, 0.25)
	for i, p := range ps {
		if adv.shown[p.Key()] != len(p.Steps)-1 {
			t.Errorf("%s: provider state at step %d of %d", p.Key(), adv.shown[p.Key()], len(p.Steps))
		}
		for k, step := range p.Steps {
			got := led.seen[p.Provider+":"+step.Webhook.EventID]
			if want := !dropped[i] || k == 0; (got > 0) != want {
				t.Errorf("%s step %d (dropped %v): delivered %d times", p.Key(), k, dropped[i], got)
			}
		}
		if dropped[i] && len(tot.Unsent[p.Key()]) != len(p.Steps)-1 {
			t.Errorf("%s: unsent %v", p.Key(), tot.Unsent[p.Key()])
		}
	}
	if tot.DroppedPayments != 20 || tot.Undelivered != 0 || tot.LostDeliveries != 0 || tot.DroppedWebhooks != len(flat(tot.Unsent)) {
		t.Errorf("totals %+v", tot)
	}
}

// TestOutageLosesSends: every send in the window is lost and recorded,
// none retried; the others arrive; a mid-run outage opens half-way.
func TestOutageLosesSends(t *testing.T) {
	tests := []struct {
		name string
		loss Loss
	}{
		{"fixed offset", Loss{Outage: 150 * time.Millisecond, OutageAt: 50 * time.Millisecond}},
		{"mid-run", Loss{Outage: 150 * time.Millisecond, OutageAt: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, led, _, tot, s := runLoss(t, tt.loss, Chaos{MaxDelay: 10 * time.Millisecond}, 200)
			w := s.Outage()
			if w.End.Sub(w.Start) != tt.loss.Outage || tot.LostDeliveries == 0 || tot.LostDeliveries != len(tot.Lost) {
				t.Fatalf("window %+v, %d lost", w, tot.LostDeliveries)
			}
			for _, l := range tot.Lost {
				if l.At.Before(w.Start) || !l.At.Before(w.End) || l.Reason != Lost || l.ProviderAt.IsZero() {
					t.Errorf("lost send %+v outside %+v", l, w)
				}
				provider, _, _ := strings.Cut(l.Payment, "/")
				if led.seen[provider+":"+l.EventID] != 0 {
					t.Errorf("lost %s reached the ledger", l.EventID)
				}
			}
			delivered := 0
			for _, p := range ps {
				for _, step := range p.Steps {
					delivered += led.seen[p.Provider+":"+step.Webhook.EventID]
				}
			}
			if delivered+tot.LostDeliveries != tot.Planned || tot.Undelivered != 0 || tot.LostWebhooks != tot.LostDeliveries {
				t.Errorf("delivered %d + lost %d != planned %d; undelivered %d, lost webhooks %d", delivered, tot.LostDeliveries, tot.Planned, tot.Undelivered, tot.LostWebhooks)
			}
		})
	}
}

// TestNoLossIsTheOldRun: with Loss zero every planned send reaches the
// ledger and nothing is withheld.
func TestNoLossIsTheOldRun(t *testing.T) {
	ps, led, _, tot, s := runLoss(t, Loss{OutageAt: -1}, Chaos{Dup: 0.3, Reorder: 0.3}, 60)
	sent := 0
	for _, n := range led.seen {
		sent += n
	}
	if sent != tot.Planned || tot.Done != tot.Planned || len(tot.Unsent) != 0 || tot.LostDeliveries+tot.DroppedPayments != 0 ||
		tot.Undelivered != 0 || s.Outage() != (Window{}) || len(ps) != 60 {
		t.Errorf("sent %d, totals %+v", sent, tot)
	}
}

func flat(m map[string][]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v...)
	}
	return out
}
