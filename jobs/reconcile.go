package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// Defaults of ReconcilerConfig.
const (
	DefaultReconcileAfter       = 30 * time.Minute
	DefaultReconcileSample      = 0.01
	DefaultReconcileConcurrency = 4
	DefaultCheckTimeout         = 30 * time.Second // a status client's attempts and backoff, a short Retry-After
	DefaultReviewAfter          = 72 * time.Hour   // LEDGER_REVIEW_AFTER: a payment waits this long before a review opens
	sampleWindow                = 24 * time.Hour   // the sample is drawn from payments finished this recently
)

// OutcomeSkipped is PassReport.Counts' key for candidates not checked.
const OutcomeSkipped = "skipped"

// Reasons a candidate was not checked (CheckResult.Skipped, PassReport.Skipped).
const (
	SkipNoCredentials = "no API credentials configured"
	SkipBreakerOpen   = "circuit breaker open"
	SkipRefused       = "credentials refused"
	skipBudget        = "budget spent" // counted Remaining, not skipped
)

// ReconcileStore is the part of the event store the reconciler reads and
// appends with.
type ReconcileStore interface {
	Appender
	ReadStream(ctx context.Context, stream string) ([]eventstore.RecordedEvent, error)
}

// CandidateSource selects the payments to check (projections.Queries).
type CandidateSource interface {
	InDoubt(ctx context.Context, q domain.DoubtQuery) ([]domain.Candidate, error)
	SampleFinished(ctx context.Context, q domain.SampleQuery) ([]domain.Candidate, error)
	DoubtTotals(ctx context.Context, quietSince time.Time) (map[string][]domain.DoubtTotal, error)
}

// ReconcileObserver is told what the reconciler does, for metrics.
type ReconcileObserver interface {
	CheckDone(provider string, outcome domain.CheckOutcome, cause domain.CorrectionCause)
	BreakerChanged(provider string, open bool)
	InDoubt(totals map[string][]domain.DoubtTotal, providers []string)
}

// ReconcilerConfig configures a Reconciler. Zero values take the defaults.
type ReconcilerConfig struct {
	// Fetchers are the status clients of the providers with API
	// credentials; give their HTTP clients GateTransport(…, Gate, name) so
	// that their retries count against the rate.
	Fetchers []StatusFetcher
	// Providers names every provider ledger serves; those without a
	// fetcher are reported skipped.
	Providers []string
	// Gate paces and guards the calls (required). NewReconciler makes its
	// breaker changes reach Observer and the log: build the reconciler
	// before the gate is first used.
	Gate       *Gate
	Store      ReconcileStore  // required
	Candidates CandidateSource // required for Pass
	Observer   ReconcileObserver
	// After is how long a payment not final stays quiet before it is in
	// doubt (default 30m). Sample is the share of the payments finished in
	// the last 24 h re-checked at each pass, in [0, 1]; 0 draws none (the
	// command applies LEDGER_RECONCILE_SAMPLE's default, DefaultReconcileSample).
	After  time.Duration
	Sample float64
	// CheckTimeout bounds one check's provider call, retries and rate
	// waits included (default 30s). A check that runs out counts against
	// the breaker.
	CheckTimeout time.Duration
	Now          func() time.Time
	Logger       *slog.Logger
	// ReviewAfter is how long after its first fact's provider time a
	// payment may stay waiting (pending, awaiting_confirmation, authorized)
	// before a check that still has no final answer opens a
	// confirmation_timeout review (default 72h; negative is an error).
	// ReviewAfterBy overrides it per provider (a value <= 0 there is an
	// error: leave the provider out to take ReviewAfter).
	ReviewAfter   time.Duration
	ReviewAfterBy map[string]time.Duration
	// Concurrency bounds the checks in flight per provider. 0: derived from
	// the provider's rate (see workers), so that the rate, not the number
	// of checks waiting on the provider's answers, bounds a pass.
	Concurrency int
}

// Reconciler asks providers for the state of payments in doubt and records
// what they say, with a check event per payment in its stream (issue 17).
type Reconciler struct {
	cfg       ReconcilerConfig
	sample    float64
	fetchers  map[string]StatusFetcher
	providers []string // sorted: Providers and the fetchers' names
	rec       *eventstore.Recorder
	codec     *eventstore.Codec
	log       *slog.Logger
}

// NewReconciler validates cfg and wires the gate's breaker changes to the
// observer and the log.
func NewReconciler(cfg ReconcilerConfig) (*Reconciler, error) {
	var errs []error
	if cfg.Gate == nil {
		errs = append(errs, errors.New("no gate"))
	}
	if cfg.Store == nil {
		errs = append(errs, errors.New("no event store"))
	}
	sample := cfg.Sample
	if !(sample >= 0 && sample <= 1) {
		errs = append(errs, fmt.Errorf("sample share %v is not in [0, 1]", sample))
	}
	if cfg.After < 0 {
		errs = append(errs, fmt.Errorf("negative After %s", cfg.After))
	}
	errs = append(errs, reviewAfterErrors(cfg)...)
	fetchers := map[string]StatusFetcher{}
	names := slices.Clone(cfg.Providers)
	for i, f := range cfg.Fetchers {
		switch {
		case f == nil || f.Name() == "":
			errs = append(errs, fmt.Errorf("fetcher %d is nil or has no name", i+1))
		case fetchers[f.Name()] != nil:
			errs = append(errs, fmt.Errorf("two fetchers for provider %q", f.Name()))
		default:
			fetchers[f.Name()] = f
			names = append(names, f.Name())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("jobs: reconciler config: %w", err)
	}
	slices.Sort(names)
	setDefault(&cfg.After, DefaultReconcileAfter)
	setDefault(&cfg.CheckTimeout, DefaultCheckTimeout)
	setDefault(&cfg.ReviewAfter, DefaultReviewAfter)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Reconciler{cfg: cfg, sample: sample, fetchers: fetchers, providers: slices.Compact(names),
		rec: eventstore.NewRecorder(cfg.Store, eventstore.NewCodec(), maxAppendAttempts, nil), codec: eventstore.NewCodec(),
		log: cfg.Logger}
	prev := cfg.Gate.onChange
	cfg.Gate.onChange = func(provider string, open bool) {
		if prev != nil {
			prev(provider, open)
		}
		r.breakerChanged(provider, open)
	}
	return r, nil
}

// Providers returns every provider the reconciler knows, sorted.
func (r *Reconciler) Providers() []string { return slices.Clone(r.providers) }

// HasFetcher reports whether provider has API credentials configured.
func (r *Reconciler) HasFetcher(provider string) bool { return r.fetchers[provider] != nil }

func (r *Reconciler) breakerChanged(provider string, open bool) {
	if open {
		r.log.Warn(fmt.Sprintf("reconciliation: %s breaker open after %d failed checks, next try after %s",
			provider, r.cfg.Gate.cfg.FailuresToOpen, r.cfg.Gate.cfg.Cooldown), "provider", provider)
	} else {
		r.log.Info("reconciliation: "+provider+" breaker closed", "provider", provider)
	}
	if r.cfg.Observer != nil {
		r.cfg.Observer.BreakerChanged(provider, open)
	}
}

// CheckResult is what one check did.
type CheckResult struct {
	Provider  string
	PaymentID string
	Trigger   string
	Outcome   domain.CheckOutcome // empty when Skipped or Err
	Cause     domain.CorrectionCause
	// Skipped says why the provider was not asked (SkipBreakerOpen,
	// SkipNoCredentials, SkipRefused); nothing was logged.
	Skipped                                   string
	StatusBefore, StatusObserved, StatusAfter domain.Status
	// Refused: the provider refused our credentials (HTTP 401/403).
	Refused bool
	// Err: the check could not be logged (a store failure, or our ctx
	// ended); run it again.
	Err error
	// Check is the check event (appended unless dry run); nil when Skipped or Err.
	Check *domain.ReconciliationChecked
	// Review is the confirmation_timeout review the check opened (appended
	// with it unless dry run); nil when none was due.
	Review *domain.ReviewOpened
}

// Check asks c's provider about the payment, records what it says and logs
// the check in the payment's stream (neither in a dry run). Whatever the
// provider answers, the check is logged; only a store failure (or ctx
// ending) is returned, in CheckResult.Err.
func (r *Reconciler) Check(ctx context.Context, c domain.Candidate, run string, dryRun bool) CheckResult {
	return r.check(ctx, c, run, dryRun, time.Time{})
}

// check is Check that gives up waiting for a rate token at startBy (when
// not zero): a pass's budget bounds when its checks start, and a wait for a
// token is not a start. Such a check is Skipped skipBudget.
// reviewAfterErrors checks the review deadlines of cfg.
func reviewAfterErrors(cfg ReconcilerConfig) []error {
	var errs []error
	if cfg.ReviewAfter < 0 {
		errs = append(errs, fmt.Errorf("negative ReviewAfter %s", cfg.ReviewAfter))
	}
	for _, p := range slices.Sorted(maps.Keys(cfg.ReviewAfterBy)) {
		if d := cfg.ReviewAfterBy[p]; d <= 0 {
			errs = append(errs, fmt.Errorf("ReviewAfter %s of provider %q is not positive", d, p))
		}
	}
	return errs
}

func (r *Reconciler) check(ctx context.Context, c domain.Candidate, run string, dryRun bool, startBy time.Time) CheckResult {
	res := CheckResult{Provider: c.Provider, PaymentID: c.ProviderPaymentID, Trigger: cmp.Or(c.Trigger, domain.TriggerOnDemand)}
	op := "jobs: reconcile " + c.Provider + "/" + c.ProviderPaymentID
	f := r.fetchers[c.Provider]
	if f == nil {
		res.Skipped = SkipNoCredentials
		return res
	}
	if r.refusing(c.Provider) {
		res.Skipped = SkipBreakerOpen
		return res
	}
	held, err := r.read(ctx, c)
	if err != nil {
		res.Err = fmt.Errorf("%s: %w", op, err)
		return res
	}
	before := domain.Fold(held...).State()
	res.StatusBefore, res.StatusAfter = before.Status, before.Status
	facts, budget, err := r.ask(ctx, f, c, startBy)
	if budget {
		res.Skipped = skipBudget
		return res
	}
	at := r.cfg.Now().UTC()
	check := &domain.ReconciliationChecked{Meta: domain.Meta{Provider: c.Provider, ProviderPaymentID: c.ProviderPaymentID,
		ProviderEventID: domain.CheckEventID(run, c.ProviderPaymentID), ProviderEventType: domain.ReconciliationEventType,
		OccurredAt: at}, Run: run, Trigger: res.Trigger, StatusBefore: before.Status, StatusAfter: before.Status}
	switch {
	case errors.Is(err, ErrBreakerOpen):
		res.Skipped = SkipBreakerOpen
		return res
	case err != nil && ctx.Err() != nil:
		res.Err = fmt.Errorf("%s: %w", op, err)
		return res
	case errors.Is(err, domain.ErrUnknownPayment):
		check.Outcome = domain.OutcomeNotFound
	case err != nil:
		check.Outcome, check.Error = domain.OutcomeFailed, err.Error()
		res.Refused = domain.KindOf(err) == domain.KindUnauthorized
	default:
		if !r.observed(op, c, held, before, facts, check) {
			facts = nil // a bad answer: only the failed check is stored
		}
	}
	res.Outcome, res.Cause, res.StatusObserved, res.StatusAfter = check.Outcome, check.Cause, check.StatusObserved, check.StatusAfter
	res.Check = check
	res.Review = r.timeoutReview(held, facts, check)
	if !dryRun {
		if err := r.recordCheck(ctx, op, facts, check, res.Review); err != nil {
			res.Err = err
			return res
		}
		r.checkRecorded(ctx, c, res)
	}
	r.logCheck(ctx, check, dryRun)
	return res
}

// checkRecorded tells the observer and the log about a check just stored.
func (r *Reconciler) checkRecorded(ctx context.Context, c domain.Candidate, res CheckResult) {
	if r.cfg.Observer != nil {
		r.cfg.Observer.CheckDone(c.Provider, res.Outcome, res.Cause)
	}
	if res.Review != nil {
		r.log.InfoContext(ctx, "reconciliation: "+c.Provider+"/"+c.ProviderPaymentID+" is still "+string(res.StatusAfter)+
			" past its review deadline; review opened", "provider", c.Provider, "payment", c.ProviderPaymentID,
			"review", res.Review.ReviewID, "deadline", res.Review.Deadline)
	}
}

// ask calls the provider through the gate, giving up the wait for a token
// at startBy (budget true, nothing asked) when it is not zero.
func (r *Reconciler) ask(ctx context.Context, f StatusFetcher, c domain.Candidate, startBy time.Time) ([]domain.Event, bool, error) {
	var facts []domain.Event
	waitCtx, cancelWait := ctx, context.CancelFunc(func() {})
	if !startBy.IsZero() {
		waitCtx, cancelWait = context.WithDeadline(ctx, startBy)
	}
	defer cancelWait()
	called := false
	err := r.cfg.Gate.Check(waitCtx, c.Provider, func(wctx context.Context) error {
		called = true
		// Started: the budget no longer applies, ctx still does (wctx
		// carries the Gate's credit for the first attempt).
		cctx, cancel := context.WithTimeout(context.WithoutCancel(wctx), r.cfg.CheckTimeout)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		var err error
		facts, err = f.Observe(cctx, c.ProviderPaymentID)
		return err
	})
	return facts, err != nil && !called && ctx.Err() == nil && waitCtx.Err() != nil, err
}

// read returns the facts held for c (none for an unknown stream).
func (r *Reconciler) read(ctx context.Context, c domain.Candidate) ([]domain.Event, error) {
	recs, err := r.cfg.Store.ReadStream(ctx, eventstore.PaymentStream(c.Provider, c.ProviderPaymentID))
	if err != nil {
		return nil, fmt.Errorf("read stream: %w", err)
	}
	out := make([]domain.Event, len(recs))
	for i, rec := range recs {
		if out[i], err = r.codec.Decode(rec); err != nil {
			return nil, fmt.Errorf("decode event %s: %w", rec.ID, err)
		}
	}
	return out, nil
}

// observed checks the provider's facts and fills in check from them. A
// provider client's bad answer is a failed check (false: its facts are not
// to be stored).
func (r *Reconciler) observed(op string, c domain.Candidate, held []domain.Event,
	before domain.PaymentState, facts []domain.Event, check *domain.ReconciliationChecked) bool {
	var obs *domain.PaymentStatusObserved
	for _, ev := range facts {
		if err := checkFact(op, c.Provider, c.ProviderPaymentID, ev); err != nil {
			check.Outcome, check.Error = domain.OutcomeFailed, err.Error()
			return false
		}
		if o, ok := ev.(*domain.PaymentStatusObserved); ok && obs == nil {
			obs = o
		}
	}
	if obs == nil {
		check.Outcome, check.Error = domain.OutcomeFailed, op+": the status client returned no status observation"
		return false
	}
	after := domain.Fold(append(slices.Clone(held), facts...)...).State()
	check.Outcome, check.Cause = domain.ClassifyCheck(before, after)
	check.StatusObserved, check.ProviderStatus, check.StatusAfter = obs.Status, obs.ProviderStatus, after.Status
	check.EventID = eventstore.EventID(obs.Meta).String()
	return true
}

// reviewAfter is provider's review deadline.
func (r *Reconciler) reviewAfter(provider string) time.Duration {
	if d, ok := r.cfg.ReviewAfterBy[provider]; ok {
		return d
	}
	return r.cfg.ReviewAfter
}

// timeoutReview is the confirmation_timeout review check opens, or nil: the
// provider was asked and answered (a failed check is no answer), and the
// payment, folded with what it said, still waits past its deadline. Its ID
// derives from the payment and its status, so however often the check
// runs it is appended once; a wait in another status is a new review.
func (r *Reconciler) timeoutReview(held, facts []domain.Event, check *domain.ReconciliationChecked) *domain.ReviewOpened {
	if check.Outcome == domain.OutcomeFailed || check.Outcome == "" {
		return nil
	}
	p := domain.Fold(append(slices.Clone(held), facts...)...)
	if !p.State().Status.Waiting() {
		return nil
	}
	return domain.TimeoutReview(p, check.OccurredAt, r.reviewAfter(check.Provider))
}

// recordCheck stores the provider's facts, the check and the review it
// opened (when not nil) as one batch, so a crash between them cannot leave
// a correction without its check (the corrected payment, final now, would
// never be checked again) nor a deadline passed without its review. A
// batch is stored whole or not at all: when part of it is already stored
// (the provider repeated a state observed before), each fact is recorded
// alone, and then the check with its review, still together.
func (r *Reconciler) recordCheck(ctx context.Context, op string, facts []domain.Event, check *domain.ReconciliationChecked,
	review *domain.ReviewOpened) error {
	own := []domain.Event{check}
	if review != nil {
		own = append(own, review)
	}
	if len(facts) > 0 {
		dup, err := r.recordBatch(ctx, op, check, append(slices.Clone(facts), own...))
		if err != nil || !dup {
			return err
		}
		for _, ev := range facts {
			if err := r.record(ctx, op, ev); err != nil {
				return err
			}
		}
	}
	if len(own) == 1 {
		return r.record(ctx, op, check)
	}
	dup, err := r.recordBatch(ctx, op, check, own)
	if err != nil || !dup {
		return err
	}
	for _, ev := range own {
		if err := r.record(ctx, op, ev); err != nil {
			return err
		}
	}
	return nil
}

// recordBatch appends evs, check's batch, in one append; dup says part of
// it was stored already (and so none of it was).
func (r *Reconciler) recordBatch(ctx context.Context, op string, check *domain.ReconciliationChecked, evs []domain.Event) (bool, error) {
	res, err := r.rec.Record(ctx, domain.Notification{Provider: check.Provider, ProviderEventID: check.ProviderEventID,
		ProviderEventType: check.ProviderEventType, Events: evs},
		eventstore.Metadata{Provider: check.Provider, ProviderEventType: check.ProviderEventType, ReceivedAt: r.cfg.Now().UTC(),
			Source: eventstore.SourceReconciliation})
	if err != nil {
		return false, fmt.Errorf("%s: record %s with its facts: %w", op, check.EventType(), err)
	}
	return res.Duplicate(), nil
}

// record appends ev to its payment's stream; a duplicate is success.
func (r *Reconciler) record(ctx context.Context, op string, ev domain.Event) error {
	m := ev.EventMeta()
	_, err := r.rec.Record(ctx, domain.Notification{Provider: m.Provider, ProviderEventID: m.ProviderEventID,
		ProviderEventType: m.ProviderEventType, Events: []domain.Event{ev}},
		eventstore.Metadata{Provider: m.Provider, ProviderEventType: m.ProviderEventType, ReceivedAt: r.cfg.Now().UTC(),
			Source: eventstore.SourceReconciliation})
	if err != nil {
		return fmt.Errorf("%s: record %s: %w", op, ev.EventType(), err)
	}
	return nil
}

func (r *Reconciler) logCheck(ctx context.Context, c *domain.ReconciliationChecked, dryRun bool) {
	level := slog.LevelInfo
	switch c.Outcome {
	case domain.OutcomeUnchanged:
		level = slog.LevelDebug
	case domain.OutcomeFailed:
		level = slog.LevelWarn
	}
	r.log.Log(ctx, level, "reconciliation check", "provider", c.Provider, "payment_id", c.ProviderPaymentID,
		"run", c.Run, "trigger", c.Trigger, "outcome", c.Outcome, "cause", c.Cause, "status_before", c.StatusBefore,
		"status_observed", c.StatusObserved, "status_after", c.StatusAfter, "error", c.Error, "dry_run", dryRun)
}

// refusing reports whether provider's breaker is open and its cool-down not
// over, so that a check can be skipped without reading its stream. Once the
// cool-down is over Gate.Check decides (one trial).
func (r *Reconciler) refusing(provider string) bool {
	g := r.cfg.Gate
	p := g.provider(provider)
	return p.open.Load() && g.cfg.Now().Before(time.Unix(0, p.retryAt.Load()))
}

// PassOptions narrow and shape one pass.
type PassOptions struct {
	Run      string // names the pass in its check events; must be new for every pass
	Provider string // empty: every provider
	// OlderThan, when not nil, replaces the configured After: 0 selects
	// every payment not final.
	OlderThan *time.Duration
	// PaymentID, with Provider, checks exactly that payment (on demand),
	// whatever its state.
	PaymentID string
	DryRun    bool
	// Budget, when > 0, stops starting new checks after this long; what
	// was not started is Remaining.
	Budget time.Duration
	// Results keeps every CheckResult in the report.
	Results  bool
	Progress func(done, total int)
}

// PassReport is what a pass did.
type PassReport struct {
	Run string
	// Counts: provider → outcome (or "skipped") → checks.
	Counts      map[string]map[string]int
	Corrections map[string]map[domain.CorrectionCause]int
	// Skipped: provider → why none of its payments were checked (or the
	// rest of them, for refused credentials).
	Skipped map[string]string
	// Failed counts the checks that could not be logged (store failures).
	Failed    int
	Remaining int
	Results   []CheckResult
}

// Pass checks the payments in doubt and a sample of the recently finished,
// oldest doubt first, each provider with its own workers so that a slow
// one never holds another back. It returns an error when the selection
// failed, when ctx ended, or when some check could not be logged (the
// report says how many); checks done are kept either way.
func (r *Reconciler) Pass(ctx context.Context, o PassOptions) (PassReport, error) {
	rep := &PassReport{Run: o.Run, Counts: map[string]map[string]int{}, Corrections: map[string]map[domain.CorrectionCause]int{},
		Skipped: map[string]string{}}
	if o.Run == "" {
		return *rep, domain.Invalid("jobs: reconcile", "a pass needs a run ID", nil)
	}
	providers := r.providers
	if o.Provider != "" {
		if !slices.Contains(r.providers, o.Provider) {
			return *rep, domain.Invalid("jobs: reconcile", fmt.Sprintf("unknown provider %q", o.Provider), nil)
		}
		providers = []string{o.Provider}
	}
	start := r.cfg.Now()
	cands, err := r.select_(ctx, o, start, providers)
	if err != nil {
		return *rep, err
	}
	byProvider := map[string][]domain.Candidate{}
	for _, c := range cands {
		byProvider[c.Provider] = append(byProvider[c.Provider], c)
	}
	r.skipUnconfigured(ctx, o.Run, providers, byProvider, rep)
	col := &collector{rep: rep, ctx: ctx, results: o.Results, progress: o.Progress}
	for _, cs := range byProvider {
		col.total += len(cs)
	}
	var deadline time.Time
	if o.Budget > 0 {
		deadline = start.Add(o.Budget)
	}
	var wg sync.WaitGroup
	for p, cs := range byProvider {
		wg.Go(func() {
			skip, remaining := r.provider(ctx, p, cs, o, deadline, col.add)
			col.mu.Lock()
			defer col.mu.Unlock()
			if skip != "" {
				rep.Skipped[p] = skip
			}
			rep.Remaining += remaining
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return *rep, fmt.Errorf("jobs: reconcile pass %s: %w", o.Run, err)
	}
	if len(col.errs) > 0 {
		return *rep, fmt.Errorf("jobs: reconcile pass %s: %d check(s) not logged: %w", o.Run, len(col.errs), col.errs[0])
	}
	return *rep, nil
}

// skipUnconfigured reports, once per pass, the providers without API
// credentials, and takes their candidates out of byProvider.
func (r *Reconciler) skipUnconfigured(ctx context.Context, run string, providers []string,
	byProvider map[string][]domain.Candidate, rep *PassReport) {
	for _, p := range providers {
		if r.fetchers[p] != nil {
			continue
		}
		rep.Skipped[p] = SkipNoCredentials
		if n := len(byProvider[p]); n > 0 {
			rep.count(p, OutcomeSkipped, n)
			r.log.WarnContext(ctx, fmt.Sprintf("reconciliation: %s has no API credentials configured (%s); skipping its %d payment(s) to check",
				p, credentialVar(p), n), "provider", p, "run", run)
		} else {
			r.log.DebugContext(ctx, "reconciliation: "+p+" has no API credentials configured", "provider", p, "run", run)
		}
		delete(byProvider, p)
	}
}

// collector gathers a pass's results from its workers.
type collector struct {
	mu       sync.Mutex
	rep      *PassReport
	ctx      context.Context
	results  bool
	progress func(done, total int)
	done     int
	total    int
	errs     []error
}

func (c *collector) add(res CheckResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rep := c.rep
	c.done++
	switch {
	case res.Err != nil:
		if c.ctx.Err() == nil {
			rep.Failed++
			c.errs = append(c.errs, res.Err)
		} else {
			rep.Remaining++
		}
	case res.Skipped == skipBudget:
		rep.Remaining++
	case res.Skipped != "":
		rep.count(res.Provider, OutcomeSkipped, 1)
	default:
		rep.count(res.Provider, string(res.Outcome), 1)
		if res.Cause != "" {
			if rep.Corrections[res.Provider] == nil {
				rep.Corrections[res.Provider] = map[domain.CorrectionCause]int{}
			}
			rep.Corrections[res.Provider][res.Cause]++
		}
	}
	if c.results && res.Err == nil && res.Skipped != skipBudget {
		rep.Results = append(rep.Results, res)
	}
	if c.progress != nil {
		c.progress(c.done, c.total)
	}
}

func (rep *PassReport) count(provider, outcome string, n int) {
	if rep.Counts[provider] == nil {
		rep.Counts[provider] = map[string]int{}
	}
	rep.Counts[provider][outcome] += n
}

// select_ returns the candidates of o, deduplicated, oldest first, and
// tells the observer the money in doubt.
func (r *Reconciler) select_(ctx context.Context, o PassOptions, now time.Time, providers []string) ([]domain.Candidate, error) {
	if o.PaymentID != "" {
		if o.Provider == "" {
			return nil, domain.Invalid("jobs: reconcile", "a payment ID needs its provider", nil)
		}
		return []domain.Candidate{{Provider: o.Provider, ProviderPaymentID: o.PaymentID, Trigger: domain.TriggerOnDemand}}, nil
	}
	if r.cfg.Candidates == nil {
		return nil, errors.New("jobs: reconcile: no candidate source")
	}
	after := r.cfg.After
	if o.OlderThan != nil {
		after = max(0, *o.OlderThan)
	}
	quiet := now.Add(-after)
	if r.cfg.Observer != nil {
		totals, err := r.cfg.Candidates.DoubtTotals(ctx, quiet)
		if err != nil {
			return nil, fmt.Errorf("jobs: reconcile: money in doubt: %w", err)
		}
		r.cfg.Observer.InDoubt(totals, slices.Clone(providers))
	}
	doubt, err := r.cfg.Candidates.InDoubt(ctx, domain.DoubtQuery{Provider: o.Provider, QuietSince: quiet})
	if err != nil {
		return nil, fmt.Errorf("jobs: reconcile: select payments in doubt: %w", err)
	}
	for i := range doubt {
		doubt[i].Trigger = cmp.Or(doubt[i].Trigger, domain.TriggerInDoubt)
	}
	if r.sample > 0 {
		sample, err := r.cfg.Candidates.SampleFinished(ctx, domain.SampleQuery{Provider: o.Provider,
			FinishedSince: now.Add(-sampleWindow), QuietSince: quiet, Share: r.sample})
		if err != nil {
			return nil, fmt.Errorf("jobs: reconcile: sample finished payments: %w", err)
		}
		for i := range sample {
			sample[i].Trigger = cmp.Or(sample[i].Trigger, domain.TriggerSample)
		}
		doubt = append(doubt, sample...)
	}
	type key struct{ provider, id string }
	seen := map[key]bool{}
	out := doubt[:0]
	for _, c := range doubt {
		k := key{c.Provider, c.ProviderPaymentID}
		if seen[k] || (o.Provider != "" && c.Provider != o.Provider) {
			continue
		}
		seen[k] = true
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b domain.Candidate) int {
		return cmp.Or(a.LastRecordedAt.Compare(b.LastRecordedAt), cmp.Compare(a.Provider, b.Provider),
			cmp.Compare(a.ProviderPaymentID, b.ProviderPaymentID))
	})
	return out, nil
}

// maxReconcileWorkers bounds the derived checks in flight per provider.
const maxReconcileWorkers = 64

// workers is how many of p's checks run at once: Concurrency when set, else
// half the provider's rate (at least DefaultReconcileConcurrency, at most
// maxReconcileWorkers). A check waits on one status call, a few hundred ms
// against a real provider (2–5 calls a second per worker), so rate/2
// workers keep the limiter, not the round trips, the bound; with a fixed 4
// a rate above ~10/s was never reached (BENCHMARKS.md, "Reconciliation pass").
func (r *Reconciler) workers(p string) int {
	if r.cfg.Concurrency > 0 {
		return r.cfg.Concurrency
	}
	n := int(math.Ceil(r.cfg.Gate.Rate(p) / 2))
	return min(max(n, DefaultReconcileConcurrency), maxReconcileWorkers)
}

// provider checks one provider's candidates with its workers. The
// first check runs alone, so that refused credentials cost one call. It
// returns why the provider's remaining checks were skipped (refused
// credentials) and how many were not started (budget, ctx).
func (r *Reconciler) provider(ctx context.Context, p string, cs []domain.Candidate, o PassOptions, deadline time.Time,
	collect func(CheckResult)) (string, int) {
	var mu sync.Mutex
	next, refused := 0, ""
	take := func() (domain.Candidate, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next == len(cs) || refused != "" || ctx.Err() != nil || (!deadline.IsZero() && !r.cfg.Now().Before(deadline)) {
			return domain.Candidate{}, false
		}
		next++
		return cs[next-1], true
	}
	check := func(c domain.Candidate) {
		res := r.check(ctx, c, o.Run, o.DryRun, deadline)
		if res.Refused {
			mu.Lock()
			if refused == "" {
				status := refusedStatus(res.Check.Error)
				refused = SkipRefused + " (" + status + ")"
				// Wrong credentials fail every check alike: one clear line, not one per payment.
				r.log.ErrorContext(ctx, fmt.Sprintf("reconciliation: %s refused the API credentials (HTTP %s): check %s; skipping %s for the rest of this pass",
					p, status, credentialVar(p), p), "provider", p, "run", o.Run, "error", res.Check.Error)
			}
			mu.Unlock()
		}
		collect(res)
	}
	work := func() {
		for {
			c, ok := take()
			if !ok {
				return
			}
			check(c)
		}
	}
	// The first check alone: refused credentials show before the others
	// start, at the cost of one call.
	if c, ok := take(); ok {
		check(c)
	}
	var wg sync.WaitGroup
	for range r.workers(p) {
		wg.Go(work)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	rest := len(cs) - next
	if refused != "" {
		for range rest {
			collect(CheckResult{Provider: p, Skipped: refused})
		}
		return refused, 0
	}
	return "", rest
}

// refusedStatus names the HTTP status of a refusal from its error text
// (providers/rest says "HTTP 401"/"HTTP 403").
func refusedStatus(msg string) string {
	if strings.Contains(msg, "HTTP 403") {
		return "403"
	}
	return "401"
}

// credentialVar names the setting that holds provider's API credentials.
func credentialVar(provider string) string {
	if provider == "mercadopago" {
		return "LEDGER_MERCADOPAGO_ACCESS_TOKEN"
	}
	return "LEDGER_" + strings.ToUpper(provider) + "_API_KEY"
}

// GateTransport returns a RoundTripper that takes one of provider's tokens
// from g before each HTTP attempt, so that a status client's own retries
// count against the rate (the first attempt inside Gate.Check is free).
func GateTransport(base http.RoundTripper, g *Gate, provider string) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &gateTransport{base: base, gate: g, provider: provider}
}

type gateTransport struct {
	base     http.RoundTripper
	gate     *Gate
	provider string
}

func (t *gateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.gate.Wait(req.Context(), t.provider); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}
