package projections

import (
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
)

// TestReviewsReadModel: a review opened is a row and requires_review, its
// resolution closes both, a second review opens them again; the audit
// finds a tampered row, and Reset plus a replay reproduces the rows.
func TestReviewsReadModel(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond})
	a := pay{"stripe", "pi_3QvR-review_1"}
	base := domain.Fold(a.created("evt_1", 0, 5000))
	open1 := domain.TimeoutReview(base, t0.Add(100*time.Hour), 72*time.Hour)
	if open1 == nil {
		t.Fatal("no timeout review")
	}
	q := NewQueries(pool)
	r := NewRunner(testConfig(DefaultName, nil), pool, store)
	stop := start(t, r)
	yes, no := true, false
	expect := func(what string, requires bool, open, resolved int) {
		t.Helper()
		eventually(t, what, func() bool {
			p, err := q.Payment(t.Context(), a.provider, a.id)
			return err == nil && p.RequiresReview == requires && countReviews(t, q, "open") == open &&
				countReviews(t, q, "resolved") == resolved
		})
		page, err := q.ListPayments(t.Context(), domain.PaymentFilter{RequiresReview: &yes})
		if err != nil || (len(page.Payments) == 1) != requires {
			t.Errorf("%s: requires_review=true list %+v, %v", what, page, err)
		}
		page, err = q.ListPayments(t.Context(), domain.PaymentFilter{RequiresReview: &no})
		if err != nil || (len(page.Payments) == 1) == requires {
			t.Errorf("%s: requires_review=false list %+v, %v", what, page, err)
		}
	}
	appendAll(t, store, a.created("evt_1", 0, 5000), open1)
	expect("opened", true, 1, 0)
	row, err := q.Review(t.Context(), open1.ReviewID)
	if err != nil || row.Reason != domain.ReviewConfirmationTimeout || row.PaymentStatus != domain.StatusPending ||
		row.Amount != 5000 || row.Currency != "USD" || row.Resolved || !row.Deadline.Equal(open1.Deadline) {
		t.Errorf("Review = %+v, %v", row, err)
	}
	if _, err := q.Review(t.Context(), "rev_nope"); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("unknown review: %v", err)
	}

	p := domain.Evolve(base, open1)
	res, err := domain.ResolveReview(p, open1.ReviewID, domain.ResolutionAccepted, "paid by TED", "ana", t0.Add(101*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, store, res)
	expect("resolved", false, 0, 1)

	p = domain.Evolve(p, res)
	p = domain.Evolve(p, a.succeeded("evt_2", time.Hour, 5000))
	open2 := &domain.ReviewOpened{Meta: open1.Meta, ReviewID: "rev_second", Reason: "amount_mismatch", Cause: "x",
		Status: domain.StatusConfirmed}
	open2.ProviderEventID, open2.OccurredAt = "rev_second", t0.Add(102*time.Hour)
	last := appendAll(t, store, a.succeeded("evt_2", time.Hour, 5000), open2)
	expect("second review", true, 1, 1)
	waitPosition(t, r, last)
	stop()

	page, err := q.ListReviews(t.Context(), domain.ReviewQuery{Limit: 1})
	if err != nil || len(page.Reviews) != 1 || page.Reviews[0].ID != open1.ReviewID || page.NextCursor == "" {
		t.Fatalf("page 1 = %+v, %v", page, err)
	}
	page, err = q.ListReviews(t.Context(), domain.ReviewQuery{Limit: 1, Cursor: page.NextCursor})
	if err != nil || len(page.Reviews) != 1 || page.Reviews[0].ID != "rev_second" || page.NextCursor != "" ||
		page.Reviews[0].PaymentStatus != domain.StatusConfirmed {
		t.Fatalf("page 2 = %+v, %v", page, err)
	}
	for _, bad := range []domain.ReviewQuery{{State: "closed"}, {Limit: -1}, {Cursor: "nope"}} {
		if _, err := q.ListReviews(t.Context(), bad); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("ListReviews(%+v) = %v, want KindInvalid", bad, err)
		}
	}

	const dumpReviews = `SELECT id, concat_ws('|', provider, provider_payment_id, reason, cause, status_at_open, deadline,
		opened_at, resolved_at, resolution, note, resolved_by) FROM reviews`
	before := dump(t, pool, dumpReviews)
	if rep, err := Audit(t.Context(), pool, DefaultName, store); err != nil || len(rep.Mismatches) != 0 {
		t.Fatalf("clean audit: %+v, %v", rep.Mismatches, err)
	}
	for _, q := range []string{
		`UPDATE reviews SET note = 'tampered' WHERE id = 'rev_second'`,
		`INSERT INTO reviews (id, provider, provider_payment_id, reason, cause, status_at_open, opened_at)
			VALUES ('rev_ghost', 'stripe', 'pi_3QvR-review_1', 'r', 'c', 'pending', now())`,
		`UPDATE payments SET requires_review = false`,
	} {
		if _, err := pool.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Audit(t.Context(), pool, DefaultName, store)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	for _, m := range rep.Mismatches {
		fields[m.Field] = true
	}
	if !fields["review rev_second"] || !fields["review"] || !fields["requires_review"] || len(rep.Mismatches) != 3 {
		t.Errorf("audit of a tampered model = %+v", rep.Mismatches)
	}

	if err := Reset(t.Context(), pool, DefaultName); err != nil {
		t.Fatal(err)
	}
	r = NewRunner(testConfig(DefaultName, nil), pool, store)
	stop = start(t, r)
	waitPosition(t, r, last)
	stop()
	diffDumps(t, "reviews after a rebuild", dump(t, pool, dumpReviews), before)
	if rep, err := Audit(t.Context(), pool, DefaultName, store); err != nil || len(rep.Mismatches) != 0 {
		t.Errorf("audit after a rebuild: %+v, %v", rep.Mismatches, err)
	}
}

func countReviews(t *testing.T, q *Queries, state string) int {
	t.Helper()
	page, err := q.ListReviews(t.Context(), domain.ReviewQuery{State: state})
	if err != nil {
		t.Fatalf("ListReviews: %v", err)
	}
	return len(page.Reviews)
}
