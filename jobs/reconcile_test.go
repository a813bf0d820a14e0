package jobs

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/providers/rest"
	"github.com/payledger/payledger/providers/stripe"
)

var _ ReconcileStore = (*postgres.Store)(nil)

// memCandidates is the selection over a known set of payments, read from
// the real event store: a payment not final (or known from notifications
// only) is in doubt unless a check of it was recorded since QuietSince
// (its provider facts count as long quiet: they were seeded "long ago").
// Finished payments are the sample (every one, whatever the share).
type memCandidates struct {
	store    ReconcileStore
	provider string
	ids      []string
}

func (m *memCandidates) scan(ctx context.Context, quietSince time.Time, final bool) ([]domain.Candidate, error) {
	codec := eventstore.NewCodec()
	var out []domain.Candidate
	for _, id := range m.ids {
		recs, err := m.store.ReadStream(ctx, eventstore.PaymentStream(m.provider, id))
		if err != nil {
			return nil, err
		}
		var facts []domain.Event
		var lastCheck time.Time
		notifiedOnly := true
		for _, rec := range recs {
			ev, err := codec.Decode(rec)
			if err != nil {
				return nil, err
			}
			facts = append(facts, ev)
			if domain.IsCheck(ev) {
				lastCheck = rec.RecordedAt
			} else if _, ok := ev.(*domain.PaymentNotified); !ok {
				notifiedOnly = false
			}
		}
		s := domain.Fold(facts...).State()
		isFinal := s.Status.Final() && !notifiedOnly
		if isFinal != final || (!final && !quietSince.IsZero() && !lastCheck.Before(quietSince)) {
			continue
		}
		out = append(out, domain.Candidate{Provider: m.provider, ProviderPaymentID: id, Status: s.Status,
			Currency: s.Currency, Amount: s.Amount, LastRecordedAt: lastCheck})
	}
	return out, nil
}

func (m *memCandidates) InDoubt(ctx context.Context, q domain.DoubtQuery) ([]domain.Candidate, error) {
	return m.scan(ctx, q.QuietSince, false)
}

func (m *memCandidates) SampleFinished(ctx context.Context, q domain.SampleQuery) ([]domain.Candidate, error) {
	if q.Share == 0 {
		return nil, nil
	}
	return m.scan(ctx, time.Time{}, true)
}

func (m *memCandidates) DoubtTotals(context.Context, time.Time) (map[string][]domain.DoubtTotal, error) {
	return map[string][]domain.DoubtTotal{}, nil
}

// observerLog records what the reconciler tells its observer.
type observerLog struct {
	mu       sync.Mutex
	checks   []string
	breakers []string
	inDoubt  int
}

func (o *observerLog) CheckDone(p string, out domain.CheckOutcome, c domain.CorrectionCause) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.checks = append(o.checks, p+":"+string(out)+":"+string(c))
}

func (o *observerLog) BreakerChanged(p string, open bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.breakers = append(o.breakers, p+map[bool]string{true: ":open", false: ":closed"}[open])
}

func (o *observerLog) InDoubt(map[string][]domain.DoubtTotal, []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inDoubt++
}

func (o *observerLog) breakerChanges() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.breakers)
}

// rig is a reconciler over the env's store, with the real Stripe status
// client on base (the env's fake by default) behind a Gate.
type rig struct {
	r   *Reconciler
	g   *Gate
	obs *observerLog
	src *memCandidates
}

type rigOpts struct {
	gate        GateConfig
	base, key   string
	attempts    int
	timeout     time.Duration // the rest client's attempt timeout
	check       time.Duration // CheckTimeout
	concurrency int
	sample      float64
	providers   []string
	reviewAfter time.Duration
	reviewBy    map[string]time.Duration
}

func (e *env) rig(ids []string, o rigOpts) *rig {
	e.t.Helper()
	if o.gate.Rate == 0 {
		o.gate.Rate, o.gate.Burst = 1e6, 100
	}
	obs := &observerLog{}
	g := NewGate(o.gate, nil)
	c, err := stripe.NewStatusClient(stripe.StatusConfig{SecretKey: cmpOr(o.key, fakeKey),
		Options: rest.Options{BaseURL: cmpOr(o.base, e.api.srv.URL), MaxAttempts: max(o.attempts, 1),
			Timeout: cmpOr(o.timeout, 5*time.Second), RetryMin: time.Millisecond, RetryMax: time.Millisecond, Now: now,
			HTTPClient: &http.Client{Transport: GateTransport(nil, g, stripe.ProviderName)}}})
	if err != nil {
		e.t.Fatal(err)
	}
	src := &memCandidates{store: e.store, provider: stripe.ProviderName, ids: ids}
	r, err := NewReconciler(ReconcilerConfig{Fetchers: []StatusFetcher{c}, Providers: o.providers, Gate: g, Store: e.store,
		Candidates: src, Observer: obs, After: time.Hour, Sample: o.sample, CheckTimeout: o.check, Now: now,
		Logger: e.log.Logger(), Concurrency: o.concurrency, ReviewAfter: o.reviewAfter, ReviewAfterBy: o.reviewBy})
	if err != nil {
		e.t.Fatal(err)
	}
	return &rig{r: r, g: g, obs: obs, src: src}
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// seed appends facts to a Stripe payment's stream, as webhooks would.
func (e *env) seed(id string, evs ...domain.Event) {
	e.t.Helper()
	codec := eventstore.NewCodec()
	for _, ev := range evs {
		data, err := codec.Encode(ev, eventstore.Metadata{Provider: "stripe", ReceivedAt: time.Now(), Source: eventstore.SourceWebhook})
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.store.Append(e.t.Context(), eventstore.PaymentStream("stripe", id), eventstore.Any(),
			[]eventstore.EventData{data}); err != nil {
			e.t.Fatal(err)
		}
	}
}

func meta(id, evt string) domain.Meta {
	return domain.Meta{Provider: "stripe", ProviderEventID: evt, ProviderEventType: "x", ProviderPaymentID: id,
		OccurredAt: now().Add(-2 * time.Hour)}
}

func created(id string) domain.Event {
	return &domain.PaymentCreated{Meta: meta(id, "evt_c_"+id), Amount: 2000, Currency: "BRL"}
}

func succeededEv(id string) domain.Event {
	return &domain.PaymentSucceeded{Meta: meta(id, "evt_s_"+id), Amount: 2000, AmountReceived: 2000, Currency: "BRL"}
}

// checks returns the payment's check events.
func (e *env) checks(id string) []*domain.ReconciliationChecked {
	e.t.Helper()
	var out []*domain.ReconciliationChecked
	for _, ev := range e.stream("stripe", id) {
		if c, ok := ev.(*domain.ReconciliationChecked); ok {
			out = append(out, c)
		}
	}
	return out
}

func older(d time.Duration) *time.Duration { return &d }

func TestReconcileOutcomes(t *testing.T) {
	e := newEnv(t)
	e.seed("pi_same", created("pi_same"))
	e.seed("pi_missed", created("pi_missed"))
	e.seed("pi_div", created("pi_div"), succeededEv("pi_div"))
	e.seed("pi_gone", created("pi_gone"))
	e.notify("stripe", "pi_notified", "evt_n_1")
	e.api.set("pi_same", "requires_confirmation", 2000, 0, 0)
	e.api.set("pi_missed", "succeeded", 2000, 2000, 0)
	e.api.set("pi_div", "succeeded", 2000, 2000, 2000)
	e.api.set("pi_notified", "succeeded", 2000, 2000, 0)
	ids := []string{"pi_same", "pi_missed", "pi_div", "pi_gone", "pi_notified"}
	rg := e.rig(ids, rigOpts{sample: 1, providers: []string{"stripe", "asaas"}})

	rep, err := rg.r.Pass(t.Context(), PassOptions{Run: "run-1", Results: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		outcome        domain.CheckOutcome
		cause          domain.CorrectionCause
		before, after  domain.Status
		trigger        string
		observed, hold bool
	}{
		"pi_same":     {domain.OutcomeUnchanged, "", domain.StatusPending, domain.StatusPending, domain.TriggerInDoubt, true, false},
		"pi_missed":   {domain.OutcomeCorrected, domain.CauseMissingWebhook, domain.StatusPending, domain.StatusConfirmed, domain.TriggerInDoubt, true, false},
		"pi_div":      {domain.OutcomeCorrected, domain.CauseDiverged, domain.StatusConfirmed, domain.StatusRefunded, domain.TriggerSample, true, false},
		"pi_gone":     {domain.OutcomeNotFound, "", domain.StatusPending, domain.StatusPending, domain.TriggerInDoubt, false, false},
		"pi_notified": {domain.OutcomeCorrected, domain.CauseMissingWebhook, domain.StatusPending, domain.StatusConfirmed, domain.TriggerInDoubt, true, false},
	}
	for id, w := range want {
		cs := e.checks(id)
		if len(cs) != 1 {
			t.Fatalf("%s: %d check events, want 1", id, len(cs))
		}
		c := cs[0]
		if c.Outcome != w.outcome || c.Cause != w.cause || c.StatusBefore != w.before || c.StatusAfter != w.after ||
			c.Trigger != w.trigger || c.Run != "run-1" || c.ProviderEventID != domain.CheckEventID("run-1", id) ||
			c.ProviderEventType != domain.ReconciliationEventType || (c.EventID != "") != w.observed {
			t.Errorf("%s: check %+v, want %+v", id, c, w)
		}
		if w.observed {
			obs := 0
			for _, ev := range e.stream("stripe", id) {
				if o, ok := ev.(*domain.PaymentStatusObserved); ok {
					obs++
					if eventstore.EventID(o.Meta).String() != c.EventID || c.StatusObserved != o.Status || c.ProviderStatus != o.ProviderStatus {
						t.Errorf("%s: check names observation %s (%s/%s), stream holds %s (%s/%s)", id, c.EventID,
							c.StatusObserved, c.ProviderStatus, eventstore.EventID(o.Meta), o.Status, o.ProviderStatus)
					}
				}
			}
			if obs != 1 {
				t.Errorf("%s: %d observations, want 1", id, obs)
			}
		}
	}
	recs, _ := e.store.ReadStream(t.Context(), eventstore.PaymentStream("stripe", "pi_missed"))
	for _, rec := range recs[1:] {
		if md, _ := eventstore.DecodeMetadata(rec.Metadata); md.Source != eventstore.SourceReconciliation {
			t.Errorf("%s stored with source %q", rec.Type, md.Source)
		}
	}
	if rep.Counts["stripe"]["corrected"] != 3 || rep.Counts["stripe"]["unchanged"] != 1 || rep.Counts["stripe"]["not_found"] != 1 ||
		rep.Corrections["stripe"][domain.CauseDiverged] != 1 || rep.Skipped["asaas"] != SkipNoCredentials || len(rep.Results) != 5 {
		t.Errorf("report %+v", rep)
	}
	if len(rg.obs.checks) != 5 || rg.obs.inDoubt != 1 {
		t.Errorf("observer: %q checks, %d in-doubt reports", rg.obs.checks, rg.obs.inDoubt)
	}

	// Same answers again: no new observation, one new check each.
	if _, err := rg.r.Pass(t.Context(), PassOptions{Run: "run-2", OlderThan: older(0)}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if n := len(e.observed("stripe", id)); n > 1 {
			t.Errorf("%s: %d distinct observations after a second pass", id, n)
		}
	}
	// Corrected payments are final now and the sample (share 1) re-checks
	// them; the others are in doubt again with --older-than 0s.
	for _, id := range ids {
		if got := len(e.checks(id)); got != 2 {
			t.Errorf("%s: %d checks after two passes, want 2", id, got)
		}
	}

	// A dry run calls the provider and appends nothing.
	e.api.set("pi_same", "succeeded", 2000, 2000, 0)
	before := map[string]int{}
	for _, id := range ids {
		before[id] = len(e.stream("stripe", id))
	}
	calls := e.api.callCount()
	rep, err = rg.r.Pass(t.Context(), PassOptions{Run: "run-3", OlderThan: older(0), DryRun: true, Results: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if n := len(e.stream("stripe", id)); n != before[id] {
			t.Errorf("dry run appended to %s: %d events, had %d", id, n, before[id])
		}
	}
	if e.api.callCount() == calls || rep.Counts["stripe"]["corrected"] != 1 {
		t.Errorf("dry run made %d calls, report %+v", e.api.callCount()-calls, rep.Counts)
	}
}

func TestReconcileBreaker(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for _, id := range []string{"pi_1", "pi_2", "pi_3", "pi_4", "pi_5", "pi_6", "pi_7"} {
		e.seed(id, created(id))
		e.api.set(id, "requires_confirmation", 2000, 0, 0)
		ids = append(ids, id)
	}
	const cooldown = 300 * time.Millisecond
	rg := e.rig(ids, rigOpts{gate: GateConfig{Rate: 1e6, Burst: 100, Cooldown: cooldown}, concurrency: 1})
	e.api.setScript(func(int) action { return outage })

	rep, err := rg.r.Pass(t.Context(), PassOptions{Run: "down"})
	if err != nil {
		t.Fatal(err)
	}
	if e.api.callCount() != 5 || rep.Counts["stripe"]["failed"] != 5 || rep.Counts["stripe"]["skipped"] != 2 {
		t.Fatalf("%d calls, report %+v; want 5 calls, 5 failed, 2 skipped", e.api.callCount(), rep.Counts)
	}
	for _, id := range ids[:5] {
		if cs := e.checks(id); len(cs) != 1 || cs[0].Outcome != domain.OutcomeFailed || cs[0].Error == "" {
			t.Errorf("%s: checks %+v, want one failed with its error", id, cs)
		}
	}
	if got := rg.obs.breakerChanges(); !slices.Equal(got, []string{"stripe:open"}) || e.log.Count("breaker open after 5 failed checks") != 1 {
		t.Errorf("breaker changes %q, %d log lines", got, e.log.Count("breaker open"))
	}
	// Still cooling down: no call at all.
	if _, err := rg.r.Pass(t.Context(), PassOptions{Run: "cooling"}); err != nil || e.api.callCount() != 5 {
		t.Fatalf("pass while open: %v, %d calls", err, e.api.callCount())
	}

	time.Sleep(cooldown + 50*time.Millisecond)
	e.api.setScript(nil)
	rep, err = rg.r.Pass(t.Context(), PassOptions{Run: "up", OlderThan: older(0)})
	if err != nil {
		t.Fatal(err)
	}
	if e.api.callCount() != 5+7 || rep.Counts["stripe"]["unchanged"] != 7 {
		t.Errorf("%d calls, report %+v; want 7 more calls, all unchanged", e.api.callCount(), rep.Counts)
	}
	if got := rg.obs.breakerChanges(); !slices.Equal(got, []string{"stripe:open", "stripe:closed"}) {
		t.Errorf("breaker changes %q", got)
	}
}

// counting is a fake API answering every request with status (and
// Retry-After), counting them.
func counting(t *testing.T, status int, retryAfter string, sleep time.Duration) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if sleep > 0 {
			select {
			case <-r.Context().Done():
			case <-time.After(sleep):
			}
		}
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestReconcileFailures(t *testing.T) {
	e := newEnv(t)
	ids := []string{"pi_1", "pi_2", "pi_3"}
	for _, id := range ids {
		e.seed(id, created(id))
	}
	t.Run("429 after Retry-After counts", func(t *testing.T) {
		srv, n := counting(t, http.StatusTooManyRequests, "1", 0)
		rg := e.rig(ids, rigOpts{base: srv.URL, attempts: 2, gate: GateConfig{Rate: 1e6, Burst: 100, FailuresToOpen: 1}})
		start := time.Now()
		res := rg.r.Check(t.Context(), domain.Candidate{Provider: "stripe", ProviderPaymentID: "pi_1"}, "r429", false)
		if res.Outcome != domain.OutcomeFailed || n.Load() != 2 || time.Since(start) < time.Second || !rg.g.Open("stripe") {
			t.Errorf("check %+v after %d calls in %s, open %v; want failed after 2 calls ≥1s apart, breaker open",
				res, n.Load(), time.Since(start), rg.g.Open("stripe"))
		}
	})
	t.Run("timeouts count", func(t *testing.T) {
		srv, n := counting(t, http.StatusOK, "", 5*time.Second)
		rg := e.rig(ids, rigOpts{base: srv.URL, check: 100 * time.Millisecond, concurrency: 1,
			gate: GateConfig{Rate: 1e6, Burst: 100, FailuresToOpen: 2}})
		rep, err := rg.r.Pass(t.Context(), PassOptions{Run: "slow", OlderThan: older(0)})
		if err != nil || n.Load() != 2 || rep.Counts["stripe"]["failed"] != 2 || rep.Counts["stripe"]["skipped"] != 1 {
			t.Errorf("pass %v, %d calls, counts %+v; want 2 timed-out checks, then the breaker", err, n.Load(), rep.Counts)
		}
	})
	t.Run("401 skips the provider", func(t *testing.T) {
		srv, n := counting(t, http.StatusUnauthorized, "", 0)
		rg := e.rig(ids, rigOpts{base: srv.URL, concurrency: 4})
		rep, err := rg.r.Pass(t.Context(), PassOptions{Run: "refused", OlderThan: older(0)})
		if err != nil || rep.Skipped["stripe"] != "credentials refused (401)" || rep.Counts["stripe"]["failed"] != 1 ||
			rep.Counts["stripe"]["skipped"] != 2 || rg.g.Open("stripe") {
			t.Errorf("pass %v, report %+v", err, rep)
		}
		if n.Load() != 1 || e.log.Count("refused the API credentials", "LEDGER_STRIPE_API_KEY") != 1 {
			t.Errorf("%d calls, %d log lines; want one of each", n.Load(), e.log.Count("refused the API credentials"))
		}
	})
}

// TestReconcileRate: with Rate 5 every HTTP attempt, a status client's
// retry included, takes a token.
func TestReconcileRate(t *testing.T) {
	e := newEnv(t)
	ids := []string{"pi_1", "pi_2", "pi_3"}
	for _, id := range ids {
		e.seed(id, created(id))
		e.api.set(id, "requires_confirmation", 2000, 0, 0)
	}
	e.api.setScript(func(call int) action { return []action{outage, answer}[(call-1)%2] })
	// One check at a time, so the fake's alternation hits each check's first attempt.
	rg := e.rig(ids, rigOpts{attempts: 2, gate: GateConfig{Rate: 5, Burst: 1}, concurrency: 1})
	start := time.Now()
	rep, err := rg.r.Pass(t.Context(), PassOptions{Run: "rate", OlderThan: older(0)})
	took := time.Since(start)
	if err != nil || rep.Counts["stripe"]["unchanged"] != 3 || e.api.callCount() != 6 {
		t.Fatalf("pass %v, %+v, %d calls", err, rep.Counts, e.api.callCount())
	}
	// Six tokens at 5/s with a burst of one: five waits of 200ms.
	if took < 950*time.Millisecond {
		t.Errorf("6 HTTP attempts took %s, want ≥ 1s at 5/s", took)
	}
}

// TestReconcileCrash: a pass cancelled midway logs what it finished; the
// next run checks the rest, and nothing is doubled.
func TestReconcileCrash(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for _, id := range []string{"pi_1", "pi_2", "pi_3", "pi_4", "pi_5", "pi_6"} {
		e.seed(id, created(id))
		e.api.set(id, "succeeded", 2000, 2000, 0)
		ids = append(ids, id)
	}
	rg := e.rig(ids, rigOpts{gate: GateConfig{Rate: 5, Burst: 1}, concurrency: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	rep, err := rg.r.Pass(ctx, PassOptions{Run: "crash"})
	if !errors.Is(err, context.DeadlineExceeded) || rep.Remaining == 0 {
		t.Fatalf("cancelled pass: %v, %+v", err, rep)
	}
	if _, err := rg.r.Pass(t.Context(), PassOptions{Run: "again"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if n := len(e.observed("stripe", id)); n != 1 {
			t.Errorf("%s: %d observations, want 1", id, n)
		}
		if n := len(e.checks(id)); n != 1 {
			t.Errorf("%s: %d checks, want 1", id, n)
		}
	}
}

func (e *env) reconcileConfig(ids []string, rate float64) Config {
	cfg := e.config()
	g := NewGate(GateConfig{Rate: rate, Burst: 1}, nil)
	c, err := stripe.NewStatusClient(stripe.StatusConfig{SecretKey: fakeKey, Options: rest.Options{BaseURL: e.api.srv.URL,
		MaxAttempts: 1, Now: now, HTTPClient: &http.Client{Transport: GateTransport(nil, g, "stripe")}}})
	if err != nil {
		e.t.Fatal(err)
	}
	cfg.EnrichProviders = nil
	cfg.Reconcile = &ReconcilerConfig{Fetchers: []StatusFetcher{c}, Providers: []string{"stripe", "asaas"}, Gate: g,
		Store: e.store, Candidates: &memCandidates{store: e.store, provider: "stripe", ids: ids}, After: time.Hour,
		CheckTimeout: time.Second}
	return cfg
}

func TestReconcileOnDemand(t *testing.T) {
	e := newEnv(t)
	e.seed("pi_1", created("pi_1"))
	e.api.set("pi_1", "succeeded", 2000, 2000, 0)
	cfg := e.reconcileConfig([]string{"pi_1"}, 1e6)

	// Insert-only: a process that never starts its workers.
	ins, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	id, err := ins.EnqueueReconcile(t.Context(), "stripe", "pi_1")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ins.EnqueueReconcile(t.Context(), "stripe", "pi_1"); err != nil || again != id {
		t.Errorf("second enqueue = %d, %v; want the waiting job %d", again, err, id)
	}
	if _, err := ins.EnqueueReconcile(t.Context(), "asaas", "pay_1"); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("enqueue for a provider without credentials = %v, want KindConflict", err)
	}

	e.startJobs(cfg)
	eventually(t, "the on-demand check", func() bool { return len(e.checks("pi_1")) == 1 })
	c := e.checks("pi_1")[0]
	if c.Trigger != domain.TriggerOnDemand || c.Outcome != domain.OutcomeCorrected || c.Run != "job-"+strconv.FormatInt(id, 10)+"-1-0" {
		t.Errorf("check %+v", c)
	}
	eventually(t, "the job to complete", func() bool {
		j, err := ins.client.JobGet(t.Context(), id)
		return err == nil && j.State == "completed"
	})
}

// TestReconcilePassJob: two processes, one pass at a time; the pass
// snoozes when its budget ends and goes on until every payment is checked,
// each once.
func TestReconcilePassJob(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for i := range 10 {
		id := "pi_" + strconv.Itoa(i)
		e.seed(id, created(id))
		e.api.set(id, "requires_confirmation", 2000, 0, 0)
		ids = append(ids, id)
	}
	// Budget: max(0.9·2s − 1s, 0.5s) = 0.8s, at 3 checks a second: 10
	// checks take about 3s.
	cfgFor := func() Config {
		cfg := e.reconcileConfig(ids, 3)
		cfg.ReconcileInterval, cfg.JobTimeout, cfg.RescueAfter = time.Hour, 2*time.Second, 4*time.Second
		return cfg
	}
	a := e.startJobs(cfgFor())
	e.startJobs(cfgFor())
	eventually(t, "every payment checked", func() bool {
		for _, id := range ids {
			if len(e.checks(id)) == 0 {
				return false
			}
		}
		return true
	})
	eventually(t, "the pass to complete", func() bool {
		res, err := a.client.JobList(t.Context(), river.NewJobListParams().Kinds(ReconcilePassKind))
		return err == nil && len(res.Jobs) == 1 && res.Jobs[0].State == "completed"
	})
	res, err := a.client.JobList(t.Context(), river.NewJobListParams().Kinds(ReconcilePassKind))
	if err != nil {
		t.Fatal(err)
	}
	if n := snoozes(res.Jobs[0]); n < 1 {
		t.Errorf("pass snoozed %d times, want at least once (attempt %d, metadata %s)", n, res.Jobs[0].Attempt, res.Jobs[0].Metadata)
	}
	runs := map[string]bool{}
	for _, id := range ids {
		cs := e.checks(id)
		if len(cs) != 1 {
			t.Errorf("%s: %d checks, want 1", id, len(cs))
			continue
		}
		runs[cs[0].Run] = true
	}
	t.Logf("runs %v", runs)
	if len(runs) < 2 {
		t.Errorf("runs %v: want the pass continued in at least two runs", runs)
	}
}
