package jobs

import (
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// reviews returns the payment's review_opened facts.
func (e *env) reviews(id string) []*domain.ReviewOpened {
	e.t.Helper()
	var out []*domain.ReviewOpened
	for _, ev := range e.stream("stripe", id) {
		if o, ok := ev.(*domain.ReviewOpened); ok {
			out = append(out, o)
		}
	}
	return out
}

func (e *env) checkOne(rg *rig, id, run string) CheckResult {
	e.t.Helper()
	res := rg.r.Check(e.t.Context(), domain.Candidate{Provider: "stripe", ProviderPaymentID: id}, run, false)
	if res.Err != nil || res.Skipped != "" {
		e.t.Fatalf("check %s %s: %v %s", id, run, res.Err, res.Skipped)
	}
	return res
}

// A payment the provider still says is waiting gets one confirmation_timeout
// review per waiting status once past its deadline, appended with the check.
func TestReconcileReviewDeadline(t *testing.T) {
	e := newEnv(t)
	e.seed("pi_wait", created("pi_wait")) // first fact 2h ago
	e.api.set("pi_wait", "processing", 2000, 0, 0)
	createdAt := domain.Fold(e.stream("stripe", "pi_wait")...).State().CreatedAt
	ids := []string{"pi_wait"}

	early := e.rig(ids, rigOpts{reviewAfter: 3 * time.Hour})
	if res := e.checkOne(early, "pi_wait", "run-1"); res.Review != nil || len(e.reviews("pi_wait")) != 0 {
		t.Fatalf("a check before the deadline opened a review: %+v", res.Review)
	}

	rg := e.rig(ids, rigOpts{reviewAfter: time.Hour})
	res := e.checkOne(rg, "pi_wait", "run-2")
	if !res.StatusAfter.Waiting() || res.Review == nil {
		t.Fatalf("past the deadline, still %s: review %+v", res.StatusAfter, res.Review)
	}
	cause := domain.TimeoutCause(res.StatusAfter)
	revs := e.reviews("pi_wait")
	if len(revs) != 1 {
		t.Fatalf("%d reviews, want 1", len(revs))
	}
	r := revs[0]
	if r.Reason != domain.ReviewConfirmationTimeout || r.Cause != cause || r.Status != res.StatusAfter ||
		!r.Deadline.Equal(createdAt.Add(time.Hour)) ||
		r.ReviewID != domain.ReviewID("stripe", "pi_wait", domain.ReviewConfirmationTimeout, cause) ||
		r.ProviderEventID != r.ReviewID || r.ProviderEventType != domain.ReviewEventType {
		t.Errorf("review %+v", r)
	}
	// One batch: the check and the review are stored together, in order.
	recs, err := e.store.ReadStream(t.Context(), eventstore.PaymentStream("stripe", "pi_wait"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(recs)
	if recs[n-1].Type != domain.TypeReviewOpened || recs[n-2].Type != domain.TypeReconciliationChecked ||
		!recs[n-1].RecordedAt.Equal(recs[n-2].RecordedAt) {
		t.Errorf("last records %s@%s, %s@%s: want the check then the review in one append",
			recs[n-2].Type, recs[n-2].RecordedAt, recs[n-1].Type, recs[n-1].RecordedAt)
	}
	if want := eventstore.EventID(r.Meta); recs[n-1].ID != want {
		t.Errorf("review stored as %s, want the deterministic %s", recs[n-1].ID, want)
	}

	// The same answer again: a new check, no second review.
	if res := e.checkOne(rg, "pi_wait", "run-3"); res.Review != nil || len(e.reviews("pi_wait")) != 1 || len(e.checks("pi_wait")) != 3 {
		t.Errorf("second check past the deadline: review %+v, %d reviews, %d checks", res.Review, len(e.reviews("pi_wait")), len(e.checks("pi_wait")))
	}

	// Authorized now, still waiting (on a capture): a new cause, a new review.
	e.api.set("pi_wait", "requires_capture", 2000, 0, 0)
	res = e.checkOne(rg, "pi_wait", "run-4")
	revs = e.reviews("pi_wait")
	if res.StatusAfter != domain.StatusAuthorized || len(revs) != 2 || revs[1].Cause != domain.TimeoutCause(domain.StatusAuthorized) ||
		revs[1].ReviewID == revs[0].ReviewID {
		t.Fatalf("authorized past the deadline: status %s, reviews %+v", res.StatusAfter, revs)
	}
	if p := domain.Fold(e.stream("stripe", "pi_wait")...); !p.RequiresReview() || len(p.Reviews()) != 2 {
		t.Errorf("fold: requires_review %v, %d reviews", p.RequiresReview(), len(p.Reviews()))
	}

	// Final now: no review, whatever the deadline.
	e.api.set("pi_wait", "succeeded", 2000, 2000, 0)
	if res := e.checkOne(rg, "pi_wait", "run-5"); res.Review != nil || len(e.reviews("pi_wait")) != 2 {
		t.Errorf("a final payment opened a review: %+v", res.Review)
	}
}

func TestReconcileReviewNoAnswer(t *testing.T) {
	e := newEnv(t)
	for _, id := range []string{"pi_fail", "pi_gone", "pi_dry"} {
		e.seed(id, created(id))
	}
	e.api.set("pi_dry", "processing", 2000, 0, 0)
	rg := e.rig([]string{"pi_fail", "pi_gone", "pi_dry"}, rigOpts{reviewAfter: time.Hour})

	// The provider could not be reached: no answer, no review.
	e.api.setScript(func(int) action { return outage })
	if res := e.checkOne(rg, "pi_fail", "run-1"); res.Outcome != domain.OutcomeFailed || res.Review != nil || len(e.reviews("pi_fail")) != 0 {
		t.Errorf("failed check: outcome %s, review %+v", res.Outcome, res.Review)
	}
	e.api.setScript(nil)

	// The provider does not know it: an answer, and it is still pending.
	if res := e.checkOne(rg, "pi_gone", "run-2"); res.Outcome != domain.OutcomeNotFound || res.Review == nil || len(e.reviews("pi_gone")) != 1 {
		t.Errorf("not_found check: outcome %s, review %+v", res.Outcome, res.Review)
	}

	// A dry run says it would open one and appends nothing.
	res := rg.r.Check(t.Context(), domain.Candidate{Provider: "stripe", ProviderPaymentID: "pi_dry"}, "run-3", true)
	if res.Err != nil || res.Review == nil || len(e.stream("stripe", "pi_dry")) != 1 {
		t.Errorf("dry run: %v, review %+v, %d events", res.Err, res.Review, len(e.stream("stripe", "pi_dry")))
	}
}

func TestReconcileReviewOverride(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration
		by    map[string]time.Duration
		opens bool
	}{
		{"default deadline not passed", 0, nil, false},
		{"global passed", time.Hour, nil, true},
		{"provider sooner", 100 * time.Hour, map[string]time.Duration{"stripe": time.Hour}, true},
		{"provider later", time.Hour, map[string]time.Duration{"stripe": 100 * time.Hour}, false},
		{"other provider sooner", 100 * time.Hour, map[string]time.Duration{"asaas": time.Hour}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.seed("pi_o", created("pi_o"))
			e.api.set("pi_o", "processing", 2000, 0, 0)
			rg := e.rig([]string{"pi_o"}, rigOpts{reviewAfter: tt.after, reviewBy: tt.by})
			if res := e.checkOne(rg, "pi_o", "run-1"); (res.Review != nil) != tt.opens || len(e.reviews("pi_o")) != len(map[bool][]int{true: {1}}[tt.opens]) {
				t.Errorf("review %+v, want opened %v", res.Review, tt.opens)
			}
		})
	}
}

func TestReconcilerReviewConfig(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration
		by    map[string]time.Duration
		ok    bool
	}{
		{"defaults", 0, nil, true},
		{"negative", -time.Hour, nil, false},
		{"override zero", time.Hour, map[string]time.Duration{"stripe": 0}, false},
		{"override", time.Hour, map[string]time.Duration{"stripe": time.Minute}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReconciler(ReconcilerConfig{Gate: NewGate(GateConfig{}, nil), Store: noStore{},
				ReviewAfter: tt.after, ReviewAfterBy: tt.by})
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok %v", err, tt.ok)
			}
			if err == nil && tt.after == 0 && r.reviewAfter("stripe") != DefaultReviewAfter {
				t.Errorf("default %s", r.reviewAfter("stripe"))
			}
		})
	}
}

// noStore satisfies ReconcileStore for config tests that never touch it.
type noStore struct{ ReconcileStore }
