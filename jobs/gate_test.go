package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/rest"
)

// fakeClock is the limiter's clock in tests: sleeping advances it, so the
// time a run of checks would take is counted, never measured.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now, c.slept = c.now.Add(d), c.slept+d
	}
	return ctx.Err()
}

func fakeGate(cfg GateConfig) (*Gate, *fakeClock) {
	clock := &fakeClock{now: time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)}
	cfg.Now = clock.Now
	g := NewGate(cfg, nil)
	g.sleep = clock.Sleep
	return g, clock
}

var errDown = domain.Unavailable("rest", "Service Unavailable", errors.New("HTTP 503"))

func ok(context.Context) error   { return nil }
func down(context.Context) error { return errDown }

// TestGateRate counts, on a fake clock, how long N checks wait: (N−Burst)/Rate,
// with every HTTP attempt of a check (a Wait from its transport) counted.
func TestGateRate(t *testing.T) {
	tests := []struct {
		name             string
		cfg              GateConfig
		checks, attempts int
		want             time.Duration
	}{
		{"defaults: 5/s, burst 1", GateConfig{}, 6, 1, time.Second},
		{"10/s, burst 3", GateConfig{Rate: 10, Burst: 3}, 13, 1, time.Second},
		{"no wait within the burst", GateConfig{Rate: 1, Burst: 4}, 4, 1, 0},
		{"retries count: 3 attempts per check", GateConfig{Rate: 5}, 4, 3, 2200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, clock := fakeGate(tt.cfg)
			fn := func(ctx context.Context) error {
				for range tt.attempts {
					if err := g.Wait(ctx, "stripe"); err != nil {
						return err
					}
				}
				return nil
			}
			for i := range tt.checks {
				if err := g.Check(t.Context(), "stripe", fn); err != nil {
					t.Fatalf("check %d: %v", i, err)
				}
			}
			if d := clock.slept - tt.want; d < -time.Millisecond || d > time.Millisecond {
				t.Errorf("%d checks waited %s, want %s", tt.checks, clock.slept, tt.want)
			}
		})
	}
}

// TestGateWaitCreditIsPerProvider: Check's free first attempt is for its own
// provider only, and only once.
func TestGateWaitCreditIsPerProvider(t *testing.T) {
	g, clock := fakeGate(GateConfig{Rate: 1})
	if err := g.Wait(t.Context(), "asaas"); err != nil { // uses asaas' burst
		t.Fatal(err)
	}
	err := g.Check(t.Context(), "stripe", func(ctx context.Context) error {
		if err := g.Wait(ctx, "stripe"); err != nil { // free
			return err
		}
		return g.Wait(ctx, "asaas") // not free: one second
	})
	if err != nil || clock.slept != time.Second {
		t.Errorf("Check = %v after waiting %s, want nil after 1s", err, clock.slept)
	}
}

// TestGateCancelled: a done ctx returns promptly with its error, fn is not
// called, and cancelled waits never count against the breaker.
func TestGateCancelled(t *testing.T) {
	g := NewGate(GateConfig{Rate: 1, FailuresToOpen: 1}, nil)
	if err := g.Check(t.Context(), "stripe", ok); err != nil { // spends the burst
		t.Fatal(err)
	}
	var calls atomic.Int32
	count := func(context.Context) error { calls.Add(1); return errDown }

	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := g.Check(cancelled, "stripe", count); !errors.Is(err, context.Canceled) {
		t.Errorf("Check(cancelled) = %v, want context.Canceled", err)
	}
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := g.Check(short, "stripe", count); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Check(deadline during the wait) = %v, want context.DeadlineExceeded", err)
	}
	if waited := time.Since(start); waited > 500*time.Millisecond {
		t.Errorf("Check waited %s for a token after its ctx ended", waited)
	}
	if calls.Load() != 0 || g.Open("stripe") {
		t.Errorf("fn called %d times, breaker open %v; want 0, false", calls.Load(), g.Open("stripe"))
	}
}

// changeLog collects onChange calls.
type changeLog struct {
	mu  sync.Mutex
	got []string
}

func (r *changeLog) onChange(provider string, open bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("%s:%v", provider, open))
}

func (r *changeLog) changes() []string { r.mu.Lock(); defer r.mu.Unlock(); return slices.Clone(r.got) }

// TestGateBreaker walks one provider's breaker through its life with a
// short real cool-down (gobreaker reads the real clock).
func TestGateBreaker(t *testing.T) {
	const cooldown = 50 * time.Millisecond
	rec := &changeLog{}
	g := NewGate(GateConfig{Rate: 1e6, Burst: 100, Cooldown: cooldown}, rec.onChange)
	var calls atomic.Int32
	check := func(fn func(context.Context) error) error {
		return g.Check(t.Context(), "stripe", func(ctx context.Context) error { calls.Add(1); return fn(ctx) })
	}
	expect := func(step string, wantCalls int32, wantOpen bool, wantChanges ...string) {
		t.Helper()
		if calls.Load() != wantCalls || g.Open("stripe") != wantOpen || !slices.Equal(rec.changes(), wantChanges) {
			t.Fatalf("%s: %d calls, open %v, changes %q; want %d, %v, %q",
				step, calls.Load(), g.Open("stripe"), rec.changes(), wantCalls, wantOpen, wantChanges)
		}
	}

	for range 4 {
		_ = check(down)
	}
	_ = check(ok) // resets the count
	for range 4 {
		_ = check(down)
	}
	expect("4 failures, a success, 4 failures", 9, false)
	if err := check(down); !errors.Is(err, errDown) {
		t.Fatalf("5th failure = %v, want fn's error", err)
	}
	expect("5 consecutive failures", 10, true, "stripe:true")

	err := check(ok)
	if !errors.Is(err, ErrBreakerOpen) || !strings.Contains(err.Error(), "stripe") || !strings.Contains(err.Error(), "retrying after") {
		t.Fatalf("Check while open = %v, want ErrBreakerOpen naming stripe and when it retries", err)
	}
	expect("refused while open", 10, true, "stripe:true")

	time.Sleep(cooldown + 10*time.Millisecond)
	trial(t, g, check, down)
	expect("failed trial re-opens", 11, true, "stripe:true", "stripe:true")
	if err := check(ok); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("Check after a failed trial = %v, want ErrBreakerOpen", err)
	}

	time.Sleep(cooldown + 10*time.Millisecond)
	trial(t, g, check, ok)
	expect("successful trial closes", 12, false, "stripe:true", "stripe:true", "stripe:false")
	_ = check(ok)
	expect("closed again", 13, false, "stripe:true", "stripe:true", "stripe:false")
}

// trial runs the half-open check with fn, holding it until a second check
// has been refused: half-open lets exactly one through.
func trial(t *testing.T, g *Gate, check func(func(context.Context) error) error, fn func(context.Context) error) {
	t.Helper()
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- check(func(ctx context.Context) error { close(started); <-release; return fn(ctx) })
	}()
	<-started
	if err := g.Check(t.Context(), "stripe", ok); !errors.Is(err, ErrBreakerOpen) ||
		!strings.Contains(err.Error(), "trial check") {
		t.Errorf("second check during the trial = %v, want ErrBreakerOpen (trial under way)", err)
	}
	close(release)
	<-done
}

// TestGateWhatTrips classifies real providers/rest errors against a fake API:
// only an unwell provider trips the breaker (FailuresToOpen 1 here).
func TestGateWhatTrips(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow", "/hang":
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		case "/429":
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/429-long":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/bad-json":
			_, _ = w.Write([]byte("{"))
		default:
			var code int
			_, _ = fmt.Sscanf(r.URL.Path, "/%d", &code)
			w.WriteHeader(code)
		}
	}))
	defer api.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // connection refused

	client := func(t *testing.T, base string) *rest.Client {
		c, err := rest.New(rest.Config{Provider: "stripe", Options: rest.Options{BaseURL: base, MaxAttempts: 2,
			Timeout: 50 * time.Millisecond, RetryMin: time.Millisecond, RetryMax: time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	get := func(base, path string) func(context.Context) error {
		return func(ctx context.Context) error { var v any; return client(t, base).GetJSON(ctx, path, "pi_1", &v) }
	}
	fixed := func(err error) func(context.Context) error { return func(context.Context) error { return err } }

	tests := []struct {
		name  string
		fn    func(context.Context) error
		trips bool
	}{
		{"500", get(api.URL, "/500"), true},
		{"503", get(api.URL, "/503"), true},
		{"429 after Retry-After", get(api.URL, "/429"), true},
		{"429 asking too long a wait", get(api.URL, "/429-long"), true},
		{"attempt timeout", get(api.URL, "/slow"), true},
		{"connection refused", get(gone.URL, "/x"), true},
		{"deadline inside fn", fixed(fmt.Errorf("stripe: %w", context.DeadlineExceeded)), true},
		{"404 unknown payment", get(api.URL, "/404"), false},
		{"401 wrong key", get(api.URL, "/401"), false},
		{"answer does not decode", get(api.URL, "/bad-json"), false},
		{"invalid mapping", fixed(domain.Invalid("stripe: status", "payment intent pi_1 has no amount", nil)), false},
		{"unknown payment", fixed(fmt.Errorf("stripe: %w", domain.ErrUnknownPayment)), false},
		{"success", get(api.URL, "/200"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGate(GateConfig{Rate: 1e6, FailuresToOpen: 1}, nil)
			err := g.Check(t.Context(), "stripe", tt.fn)
			if g.Open("stripe") != tt.trips {
				t.Errorf("after %v (kind %s): open %v, want %v", err, domain.KindOf(err), g.Open("stripe"), tt.trips)
			}
		})
	}

	t.Run("our caller cancels mid-request", func(t *testing.T) {
		g := NewGate(GateConfig{Rate: 1e6, FailuresToOpen: 1}, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		c, _ := rest.New(rest.Config{Provider: "stripe", Options: rest.Options{BaseURL: api.URL, Timeout: 5 * time.Second}})
		err := g.Check(ctx, "stripe", func(ctx context.Context) error { var v any; return c.GetJSON(ctx, "/hang", "pi_1", &v) })
		if err == nil || g.Open("stripe") {
			t.Errorf("Check = %v, open %v; want an error and the breaker closed", err, g.Open("stripe"))
		}
	})
}

// TestGateProvidersIndependent: one provider's open breaker and spent tokens
// do not touch another's.
func TestGateProvidersIndependent(t *testing.T) {
	rec := &changeLog{}
	g := NewGate(GateConfig{Rate: 1e6, FailuresToOpen: 2}, rec.onChange)
	_ = g.Check(t.Context(), "asaas", down)
	_ = g.Check(t.Context(), "asaas", down)
	called := false
	if err := g.Check(t.Context(), "pagarme", func(context.Context) error { called = true; return nil }); err != nil || !called {
		t.Errorf("pagarme check = %v (called %v) while asaas is open", err, called)
	}
	if !g.Open("asaas") || g.Open("pagarme") || !slices.Equal(rec.changes(), []string{"asaas:true"}) {
		t.Errorf("open asaas %v, pagarme %v, changes %q", g.Open("asaas"), g.Open("pagarme"), rec.changes())
	}

	fg, clock := fakeGate(GateConfig{Rate: 1})
	for _, p := range []string{"stripe", "mercadopago", "asaas"} {
		_ = fg.Check(t.Context(), p, ok)
	}
	if clock.slept != 0 {
		t.Errorf("one check each of three providers waited %s, want 0", clock.slept)
	}
}

// TestGateConcurrent runs many goroutines over two providers under -race:
// fn runs at most once per Check, and each provider's onChange calls
// alternate sensibly (never a close without an open before it).
func TestGateConcurrent(t *testing.T) {
	rec := &changeLog{}
	g := NewGate(GateConfig{Rate: 1e6, Burst: 1000, FailuresToOpen: 3, Cooldown: time.Millisecond}, rec.onChange)
	var checks, calls atomic.Int64
	var wg sync.WaitGroup
	for i := range 40 {
		provider := []string{"stripe", "mercadopago"}[i%2]
		wg.Go(func() {
			for j := range 50 {
				checks.Add(1)
				_ = g.Check(t.Context(), provider, func(ctx context.Context) error {
					calls.Add(1)
					if (i+j)%3 == 0 {
						return errDown
					}
					return g.Wait(ctx, provider)
				})
				_ = g.Open(provider)
			}
		})
	}
	wg.Wait()
	if calls.Load() > checks.Load() || calls.Load() == 0 {
		t.Errorf("%d fn calls for %d checks", calls.Load(), checks.Load())
	}
	open := map[string]bool{}
	for _, c := range rec.changes() {
		provider, state, _ := strings.Cut(c, ":")
		if state == "false" && !open[provider] {
			t.Errorf("%s closed while not open in %q", provider, rec.changes())
		}
		open[provider] = state == "true"
	}
	for p, o := range open {
		if g.Open(p) != o {
			t.Errorf("%s: Open %v, last change said %v", p, g.Open(p), o)
		}
	}
}

func TestGatePerProviderRate(t *testing.T) {
	g := NewGate(GateConfig{Rate: 5, Rates: map[string]float64{"asaas": 0.5, "stripe": 0}}, nil)
	for p, want := range map[string]float64{"asaas": 0.5, "stripe": 5, "pagarme": 5} {
		if got := g.Rate(p); got != want {
			t.Errorf("Rate(%s) = %v, want %v", p, got, want)
		}
	}
}

func TestReconcileWorkers(t *testing.T) {
	g := NewGate(GateConfig{Rate: 5, Rates: map[string]float64{"stripe": 25, "mercadopago": 1000}}, nil)
	for _, tt := range []struct {
		concurrency int
		provider    string
		want        int
	}{
		{0, "asaas", DefaultReconcileConcurrency}, // rate 5: the floor
		{0, "stripe", 13},                         // rate 25
		{0, "mercadopago", maxReconcileWorkers},   // rate 1000: the ceiling
		{7, "stripe", 7},                          // set explicitly
	} {
		r := &Reconciler{cfg: ReconcilerConfig{Gate: g, Concurrency: tt.concurrency}}
		if got := r.workers(tt.provider); got != tt.want {
			t.Errorf("workers(%s) with Concurrency %d = %d, want %d", tt.provider, tt.concurrency, got, tt.want)
		}
	}
}
