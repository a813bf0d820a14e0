package domain_test

import (
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/payledger/payledger/domain"
)

// opened is a review of the fold tests' payment opened at sec.
func opened(reason, cause string, sec int) *domain.ReviewOpened {
	id := domain.ReviewID("stripe", "pi_3Nk-x_Y", reason, cause)
	m := meta(id, sec)
	m.ProviderEventType = domain.ReviewEventType
	return &domain.ReviewOpened{Meta: m, ReviewID: id, Reason: reason, Cause: cause, Status: domain.StatusPending}
}

func resolved(o *domain.ReviewOpened, res domain.Resolution, sec int) *domain.ReviewResolved {
	m := meta(domain.ResolvedEventID(o.ReviewID), sec)
	m.ProviderEventType = domain.ReviewEventType
	return &domain.ReviewResolved{Meta: m, ReviewID: o.ReviewID, Resolution: res, ResolvedBy: "ana"}
}

func TestReviewFactsChangeNoState(t *testing.T) {
	a := opened(domain.ReviewCurrencyMismatch, "evt_x", 5)
	facts := []domain.Event{created("evt_1", 0, 1000), succeeded("evt_2", 1, 1000)}
	plain := domain.Fold(facts...).State()
	with := domain.Fold(append(facts, a)...)
	got := with.State()
	if !got.RequiresReview || plain.RequiresReview {
		t.Fatalf("RequiresReview = %v (with an open review), %v (without)", got.RequiresReview, plain.RequiresReview)
	}
	got.RequiresReview = false
	if !equalState(got, plain) {
		t.Errorf("a review fact changed the state:\n got %+v\nwant %+v", got, plain)
	}
	closed := domain.Fold(append(facts, a, resolved(a, domain.ResolutionAccepted, 6))...)
	if closed.State().RequiresReview {
		t.Error("RequiresReview after the only review was resolved")
	}
	rs := closed.Reviews()
	if len(rs) != 1 || !rs[0].Resolved || rs[0].Resolution != domain.ResolutionAccepted || rs[0].ResolvedBy != "ana" ||
		!rs[0].OpenedAt.Equal(a.OccurredAt) {
		t.Errorf("Reviews = %+v", rs)
	}
	// A resolution of a review never opened is ignored.
	stray := domain.Fold(append(facts, resolved(a, domain.ResolutionOther, 6))...)
	if len(stray.Reviews()) != 0 || stray.State().RequiresReview {
		t.Errorf("stray resolution: %+v", stray.Reviews())
	}
}

func TestAnomaliesNameTheirFact(t *testing.T) {
	eur := &domain.PaymentSucceeded{Meta: meta("evt_eur", 3), Amount: 10, AmountReceived: 10, Currency: "EUR"}
	p := domain.Fold(created("evt_1", 0, 1000), succeeded("evt_2", 1, 1000), cancelled("evt_3", 2), eur)
	got := p.Anomalies()
	want := []domain.Anomaly{{Reason: domain.ReviewCancelAfterSuccess, Cause: "evt_3"}, {Reason: domain.ReviewCurrencyMismatch, Cause: "evt_eur"}}
	if len(got) != len(want) {
		t.Fatalf("Anomalies = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Anomalies[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	open := domain.AnomalyReviews(p, now)
	if len(open) != 2 || open[0].Reason != domain.ReviewCancelAfterSuccess || open[0].Cause != "evt_3" ||
		!open[0].OccurredAt.Equal(now) || open[0].ProviderEventID != open[0].ReviewID {
		t.Fatalf("AnomalyReviews = %+v", open)
	}
	// Once opened (and even once resolved) the same anomaly opens nothing;
	// a new anomalous fact opens a new review.
	p2 := domain.Fold(append(p.Events(), open[0], open[1], resolved(open[0], domain.ResolutionAccepted, 9))...)
	if again := domain.AnomalyReviews(p2, now); len(again) != 0 {
		t.Errorf("after opening: %+v", again)
	}
	eur2 := &domain.PaymentSucceeded{Meta: meta("evt_eur2", 4), Amount: 10, AmountReceived: 10, Currency: "EUR"}
	p3 := domain.Fold(append(p2.Events(), eur2)...)
	if again := domain.AnomalyReviews(p3, now); len(again) != 1 || again[0].Cause != "evt_eur2" {
		t.Errorf("a new anomalous fact: %+v", again)
	}
	// Conflicting duplicates name the key.
	dup := &domain.PaymentSucceeded{Meta: meta("evt_2", 1), Amount: 999, AmountReceived: 999, Currency: "USD"}
	if got := domain.Fold(created("evt_1", 0, 1000), succeeded("evt_2", 1, 1000), dup).Anomalies(); len(got) != 1 ||
		got[0] != (domain.Anomaly{Reason: domain.ReviewConflictingDuplicates, Cause: "evt_2"}) {
		t.Errorf("conflicting duplicates: %+v", got)
	}
}

func TestTimeoutReview(t *testing.T) {
	first := meta("evt_1", 0).OccurredAt
	waiting := domain.Fold(processing("evt_1", 0))
	after := 72 * time.Hour
	if r := domain.TimeoutReview(waiting, first.Add(after-time.Second), after); r != nil {
		t.Errorf("before the deadline: %+v", r)
	}
	r := domain.TimeoutReview(waiting, first.Add(after), after)
	if r == nil || r.Reason != domain.ReviewConfirmationTimeout || r.Cause != "status:awaiting_confirmation" ||
		!r.Deadline.Equal(first.Add(after)) || r.Status != domain.StatusAwaitingConfirmation {
		t.Fatalf("at the deadline: %+v", r)
	}
	again := domain.Fold(append(waiting.Events(), r)...)
	if r2 := domain.TimeoutReview(again, first.Add(2*after), after); r2 != nil {
		t.Errorf("opened already: %+v", r2)
	}
	// A later wait in another status is a new cause.
	auth := domain.Fold(append(again.Events(), authorized("evt_2", 1))...)
	if r3 := domain.TimeoutReview(auth, first.Add(2*after), after); r3 == nil || r3.Cause != "status:authorized" || r3.ReviewID == r.ReviewID {
		t.Errorf("authorized later: %+v", r3)
	}
	done := domain.Fold(processing("evt_1", 0), succeeded("evt_2", 1, 1000))
	if r4 := domain.TimeoutReview(done, first.Add(2*after), after); r4 != nil {
		t.Errorf("a confirmed payment: %+v", r4)
	}
}

func TestResolveReview(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	o := opened(domain.ReviewConfirmationTimeout, "status:pending", 5)
	p := domain.Fold(created("evt_1", 0, 100), o)
	tests := []struct {
		name string
		id   string
		res  domain.Resolution
		note string
		kind domain.Kind
	}{
		{"unknown resolution", o.ReviewID, "approved", "", domain.KindInvalid},
		{"note too long", o.ReviewID, domain.ResolutionOther, string(make([]byte, domain.MaxReviewNote+1)), domain.KindInvalid},
		{"no such review", "rev_nope", domain.ResolutionAccepted, "", domain.KindNotFound},
	}
	for _, tt := range tests {
		if _, err := domain.ResolveReview(p, tt.id, tt.res, tt.note, "ana", now); domain.KindOf(err) != tt.kind {
			t.Errorf("%s: err = %v, want kind %v", tt.name, err, tt.kind)
		}
	}
	r, err := domain.ResolveReview(p, o.ReviewID, domain.ResolutionWrittenOff, "customer never paid", "ana", now)
	if err != nil || r.ProviderEventID != domain.ResolvedEventID(o.ReviewID) || !r.OccurredAt.Equal(now) {
		t.Fatalf("resolve: %+v, %v", r, err)
	}
	done := domain.Fold(append(p.Events(), r)...)
	// The same request again is answered with the stored resolution; a
	// different one is a conflict.
	if again, err := domain.ResolveReview(done, o.ReviewID, domain.ResolutionWrittenOff, "customer never paid", "ana", now.Add(time.Hour)); err != nil ||
		!again.OccurredAt.Equal(now) {
		t.Errorf("identical retry: %+v, %v", again, err)
	}
	var de *domain.Error
	if _, err := domain.ResolveReview(done, o.ReviewID, domain.ResolutionAccepted, "", "bob", now); !errors.As(err, &de) || de.Kind != domain.KindConflict {
		t.Errorf("different resolution: %v, want a conflict", err)
	}
}

// TestReviewFactsAnyOrder: review facts among provider facts, in any arrival
// order, fold to the same state and reviews, and never move the status.
func TestReviewFactsAnyOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		facts := genEvents(t)
		plain := domain.Fold(facts...).State()
		a := opened(domain.ReviewConfirmationTimeout, "status:pending", rapid.IntRange(0, 4).Draw(t, "a"))
		b := opened(domain.ReviewCurrencyMismatch, "evt_0", rapid.IntRange(0, 4).Draw(t, "b"))
		all := append(facts, a, b)
		if rapid.Bool().Draw(t, "resolve") {
			all = append(all, resolved(a, domain.ResolutionAccepted, rapid.IntRange(0, 4).Draw(t, "ra")))
		}
		want := domain.Fold(all...)
		got := domain.Fold(rapid.Permutation(all).Draw(t, "order")...)
		if !equalState(got.State(), want.State()) || len(got.Reviews()) != 2 {
			t.Fatalf("order changed the fold: %+v vs %+v", got.State(), want.State())
		}
		for i, r := range want.Reviews() {
			if got.Reviews()[i].Resolved != r.Resolved {
				t.Fatalf("review %d resolved %v, want %v", i, got.Reviews()[i].Resolved, r.Resolved)
			}
		}
		s := want.State()
		if !s.RequiresReview {
			t.Fatal("an open review and RequiresReview false")
		}
		s.RequiresReview = false
		if !equalState(s, plain) {
			t.Fatalf("review facts changed the state:\n got %+v\nwant %+v", s, plain)
		}
	})
}
