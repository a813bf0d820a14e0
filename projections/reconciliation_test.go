package projections

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
)

// r0 is the record time the reconciliation fixtures start at.
var r0 = time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)

func (p pay) notified(evt string, at time.Duration) domain.Event {
	return &domain.PaymentNotified{Meta: p.meta(evt, at, "payment.updated"), Action: "payment.updated"}
}

func (p pay) authorized(evt string, at time.Duration, amount int64) domain.Event {
	return &domain.PaymentAuthorized{Meta: p.meta(evt, at, "payment_intent.amount_capturable_updated"), Amount: amount,
		AmountCapturable: amount, Currency: "USD"}
}

func (p pay) observed(evt string, at time.Duration, st domain.Status, amount int64) domain.Event {
	return &domain.PaymentStatusObserved{Meta: p.meta(evt, at, "payment"), Status: st, ProviderStatus: string(st),
		Amount: amount, AmountCaptured: amount, Currency: "USD"}
}

// check is the reconciliation check of p in run, answered at the record
// time r0+at (the job's clock).
func (p pay) check(run string, at time.Duration, outcome domain.CheckOutcome, cause domain.CorrectionCause) *domain.ReconciliationChecked {
	c := &domain.ReconciliationChecked{
		Meta: domain.Meta{Provider: p.provider, ProviderEventID: domain.CheckEventID(run, p.id),
			ProviderEventType: domain.ReconciliationEventType, ProviderPaymentID: p.id, OccurredAt: r0.Add(at)},
		Run: run, Trigger: domain.TriggerInDoubt, StatusBefore: domain.StatusPending, StatusAfter: domain.StatusPending,
		Outcome: outcome, Cause: cause,
	}
	switch outcome {
	case domain.OutcomeCorrected:
		c.StatusObserved, c.ProviderStatus, c.StatusAfter = domain.StatusConfirmed, "succeeded", domain.StatusConfirmed
		c.EventID = "0b6c3d1e-5f3a-5d8e-9a41-6f2c7b1e2d90"
	case domain.OutcomeUnchanged:
		c.StatusObserved, c.ProviderStatus = domain.StatusPending, "processing"
	case domain.OutcomeFailed:
		c.Error = "stripe: 503 Service Unavailable"
	}
	return c
}

// applyAt applies events, recorded at at, as one batch.
func (a *applier) applyAt(at time.Time, events ...domain.Event) {
	a.t.Helper()
	a.feed.mu.Lock()
	n := len(a.feed.msgs)
	a.feed.mu.Unlock()
	a.feed.addAt(at, events...)
	a.feed.mu.Lock()
	batch := slices.Clone(a.feed.msgs[n:])
	a.feed.mu.Unlock()
	a.apply(batch)
}

// eventID is the stored ID of e.
func eventID(t testing.TB, e domain.Event) string {
	t.Helper()
	d, err := eventstore.NewCodec().Encode(e, eventstore.Metadata{Provider: e.EventMeta().Provider})
	if err != nil {
		t.Fatal(err)
	}
	return d.ID.String()
}

// sameCheck compares two log rows, the time at Postgres's precision.
func sameCheck(a, b domain.ReconciliationCheck) bool {
	same := a.CheckedAt.Equal(b.CheckedAt)
	a.CheckedAt, b.CheckedAt = time.Time{}, time.Time{}
	return same && a == b
}

// dumpChecks renders every reconciliation_checks row but id, with its
// place in id order, keyed by event ID.
func dumpChecks(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	return dump(t, pool, `SELECT event_id::text, concat_ws('|', rank() OVER (ORDER BY id), provider,
		provider_payment_id, checked_at, run, trigger, status_before, status_observed, provider_status, status_after,
		outcome, cause, observed_event_id, error) FROM reconciliation_checks`)
}

// TestReconciliationLogProjected: checks appended to the real store land in
// the log, once each and newest first, and a Reset and replay reproduces it.
func TestReconciliationLogProjected(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond, BatchSize: 4})
	q := NewQueries(pool)
	pa, pb, pc := pay{"stripe", "pi_3Qr-a_1"}, pay{"stripe", "pi_3Qr-b_2"}, pay{"mercadopago", "1319-x_3"}
	checks := []*domain.ReconciliationChecked{
		pa.check("pass-1", time.Hour, domain.OutcomeUnchanged, ""),
		pb.check("pass-1", time.Hour, domain.OutcomeCorrected, domain.CauseMissingWebhook),
		pc.check("pass-1", time.Hour, domain.OutcomeFailed, ""),
		pa.check("pass-2", 2*time.Hour, domain.OutcomeNotFound, ""),
	}
	checks[1].Trigger = domain.TriggerSample
	events := []domain.Event{pa.created("evt_1", 0, 1000), pb.created("evt_1", 0, 2000), pc.notified("n_1", 0),
		checks[0], checks[1], pb.observed("obs_1", time.Hour, domain.StatusConfirmed, 2000), checks[2], checks[3]}
	last := appendAll(t, store, events...)
	// Redelivered: the store keeps one of each.
	appendAll(t, store, checks[0], checks[3])
	r := NewRunner(testConfig(DefaultName, nil), pool, store)
	stop := start(t, r)
	waitPosition(t, r, last)
	stop()

	page, err := q.Checks(t.Context(), domain.CheckQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Checks) != len(checks) || page.NextCursor != "" {
		t.Fatalf("log = %+v, want %d checks on one page", page, len(checks))
	}
	for i, c := range page.Checks {
		e := checks[len(checks)-1-i] // newest first
		if want := checkOf(eventID(t, e), e); !sameCheck(c, want) {
			t.Errorf("check %d = %+v, want %+v", i, c, want)
		}
	}
	rep, err := Audit(t.Context(), pool, DefaultName, store)
	if err != nil || len(rep.Mismatches) != 0 {
		t.Errorf("Audit = %+v, %v; want no mismatches", rep.Mismatches, err)
	}

	projected := dumpChecks(t, pool)
	if err := Reset(t.Context(), pool, DefaultName); err != nil {
		t.Fatal(err)
	}
	if n := len(dumpChecks(t, pool)); n != 0 {
		t.Errorf("after Reset the log has %d rows", n)
	}
	r = NewRunner(testConfig(DefaultName, nil), pool, store)
	start(t, r)
	waitPosition(t, r, last)
	diffDumps(t, "reconciliation_checks after replay", dumpChecks(t, pool), projected)
}

// TestReconciliationLogReapplied: a check the feed delivers again, alone
// or beside others and twice in one batch, stays one row with its id.
func TestReconciliationLogReapplied(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	p := pay{"stripe", "pi_3Qs-a_1"}
	c1, c2 := p.check("pass-1", time.Hour, domain.OutcomeUnchanged, ""), p.check("pass-2", 2*time.Hour, domain.OutcomeUnchanged, "")
	a.applyAt(r0, p.created("evt_1", 0, 1000), c1)
	before := dump(t, pool, `SELECT event_id::text, id::text FROM reconciliation_checks`)
	a.applyAt(r0.Add(time.Hour), c1)
	a.applyAt(r0.Add(2*time.Hour), c1, c2, c2)
	after := dump(t, pool, `SELECT event_id::text, id::text FROM reconciliation_checks`)
	if len(after) != 2 || after[eventID(t, c1)] != before[eventID(t, c1)] || after[eventID(t, c2)] == "" {
		t.Errorf("log ids %v after redelivery, want %v and one for %s", after, before, eventID(t, c2))
	}
}

// TestAuditReconciliationLog: Audit reports a log row lost, added or
// changed.
func TestAuditReconciliationLog(t *testing.T) {
	p := pay{"stripe", "pi_3Qt-a_1"}
	check := p.check("pass-1", time.Hour, domain.OutcomeUnchanged, "")
	id := eventID(t, check)
	const ghost = "6f1c3b9e-2a47-4d0e-8b1f-3c5d7e9a0b12"
	insert := func(payment string) string {
		return `INSERT INTO reconciliation_checks (event_id, provider, provider_payment_id, checked_at, run, trigger,
			status_before, status_after, outcome) VALUES ('` + ghost + `', 'stripe', '` + payment + `', now(), 'pass-x',
			'in_doubt', 'pending', 'pending', 'unchanged')`
	}
	for _, tt := range []struct {
		name    string
		corrupt string
		want    []AuditMismatch
	}{
		{name: "clean"},
		{"row lost", `DELETE FROM reconciliation_checks`,
			[]AuditMismatch{{"stripe/pi_3Qt-a_1", "reconciliation_check", "no row", "check " + id}}},
		{"row added", insert(p.id),
			[]AuditMismatch{{"stripe/pi_3Qt-a_1", "reconciliation_check", "row " + ghost, "no such check in the stream"}}},
		{"row of an unknown payment", insert("pi_3Qt-ghost_2"),
			[]AuditMismatch{{"stripe/pi_3Qt-ghost_2", "reconciliation_check", "row " + ghost, "no such check in the stream"}}},
		{"outcome changed", `UPDATE reconciliation_checks SET outcome = 'corrected'`, []AuditMismatch{{Payment: "stripe/pi_3Qt-a_1",
			Field: "reconciliation_check " + id}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool := pgtest.NewPool(t)
			store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond})
			last := appendAll(t, store, p.created("evt_1", 0, 1000), check)
			r := NewRunner(testConfig(DefaultName, nil), pool, store)
			stop := start(t, r)
			waitPosition(t, r, last)
			stop()
			if tt.corrupt != "" {
				if _, err := pool.Exec(t.Context(), tt.corrupt); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := Audit(t.Context(), pool, DefaultName, store)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Mismatches) != len(tt.want) || rep.Mismatched != len(tt.want) {
				t.Fatalf("mismatches = %+v (%d payments), want %+v", rep.Mismatches, rep.Mismatched, tt.want)
			}
			for i, w := range tt.want {
				g := rep.Mismatches[i]
				if w.ReadModel == "" { // a changed row: both renderings are long
					if g.Payment != w.Payment || g.Field != w.Field || !strings.Contains(g.ReadModel, "Outcome:corrected") ||
						!strings.Contains(g.Fold, "Outcome:unchanged") {
						t.Errorf("mismatch %d = %+v, want %s %s corrected vs unchanged", i, g, w.Payment, w.Field)
					}
				} else if g != w {
					t.Errorf("mismatch %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestPaymentsReconciliationColumns: last_recorded_at moves with a check,
// last_fact_at with provider facts only; notified_only holds while every
// provider fact is a bare notification.
func TestPaymentsReconciliationColumns(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	h := func(n int) time.Time { return r0.Add(time.Duration(n) * time.Hour) }
	for _, tt := range []struct {
		name                 string
		batches              func(p pay) [][]domain.Event // batch i recorded at h(i)
		lastRecorded, lastFt time.Time
		notifiedOnly         bool
	}{
		{"created, then checked", func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 100)}, {p.check("pass-1", time.Hour, domain.OutcomeUnchanged, "")}}
		}, h(1), h(0), false},
		{"notified twice", func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.notified("n_1", 0)}, {p.notified("n_2", time.Minute)}}
		}, h(1), h(1), true},
		{"notified, then checked", func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.notified("n_1", 0)}, {p.check("pass-1", time.Hour, domain.OutcomeFailed, "")}}
		}, h(1), h(0), true},
		{"notified, checked, then observed", func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.notified("n_1", 0)}, {p.check("pass-1", time.Hour, domain.OutcomeCorrected, domain.CauseMissingWebhook)},
				{p.observed("obs_1", time.Hour, domain.StatusConfirmed, 500)}}
		}, h(2), h(2), false},
		{"observed, then notified", func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.observed("obs_1", 0, domain.StatusConfirmed, 500)}, {p.notified("n_1", time.Minute)}}
		}, h(1), h(1), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := pay{"mercadopago", "1319-" + strings.NewReplacer(", ", "_", " ", "_").Replace(tt.name)}
			for i, b := range tt.batches(p) {
				a.applyAt(h(i), b...)
			}
			var (
				recorded, fact time.Time
				notifiedOnly   bool
			)
			err := pool.QueryRow(t.Context(), `SELECT last_recorded_at, last_fact_at, notified_only FROM payments
				WHERE provider = $1 AND provider_payment_id = $2`, p.provider, p.id).Scan(&recorded, &fact, &notifiedOnly)
			if err != nil {
				t.Fatal(err)
			}
			if !recorded.Equal(tt.lastRecorded) || !fact.Equal(tt.lastFt) || notifiedOnly != tt.notifiedOnly {
				t.Errorf("last_recorded_at %s, last_fact_at %s, notified_only %t; want %s, %s, %t",
					recorded.UTC(), fact.UTC(), notifiedOnly, tt.lastRecorded, tt.lastFt, tt.notifiedOnly)
			}
		})
	}
}

// The reconciliation fixture: payments recorded at r0 + hours. In doubt:
// sA, aA (0h; adyen first), sB (0h, after sA by ID), aN (notified only,
// 1h), sAuth (1h), sDisp (2h), sEUR (30m, EUR), sChecked (created at 0h,
// checked at 5h). Finished: sConf (0h), sFail (2h), mRef (3h, checked at
// 4h).
var (
	sA, sB   = pay{"stripe", "pi_3Qd-a_1"}, pay{"stripe", "pi_3Qd-b_2"}
	aA, aN   = pay{"adyen", "PSP-8815-a"}, pay{"adyen", "PSP-8815-n"}
	sAuth    = pay{"stripe", "pi_3Qd-auth_3"}
	sDisp    = pay{"stripe", "pi_3Qd-disp_4"}
	sEUR     = pay{"stripe", "pi_3Qd-eur_5"}
	sChecked = pay{"stripe", "pi_3Qd-chk_6"}
	sConf    = pay{"stripe", "pi_3Qd-conf_7"}
	sFail    = pay{"stripe", "pi_3Qd-fail_8"}
	mRef     = pay{"mercadopago", "1319-ref_9"}
)

// seedReconciliation projects the fixture and returns the applier to add
// more.
func seedReconciliation(t *testing.T, pool *pgxpool.Pool) *applier {
	t.Helper()
	a := newApplier(t, pool)
	eur := sEUR.created("evt_1", 0, 900).(*domain.PaymentCreated)
	eur.Currency = "EUR"
	a.applyAt(r0, sA.created("evt_1", 0, 100), sB.created("evt_1", 0, 200), aA.created("evt_1", 0, 300),
		sChecked.created("evt_1", 0, 400), sConf.created("evt_1", 0, 500), sConf.succeeded("evt_2", time.Second, 500))
	a.applyAt(r0.Add(30*time.Minute), eur)
	a.applyAt(r0.Add(time.Hour), aN.notified("n_1", 0), sAuth.authorized("evt_1", 0, 600))
	a.applyAt(r0.Add(2*time.Hour), sDisp.created("evt_1", 0, 700), sDisp.succeeded("evt_2", time.Second, 700),
		sDisp.disputeOpened("evt_3", time.Hour, 700), sFail.failed("evt_1", 0, 800))
	a.applyAt(r0.Add(3*time.Hour), mRef.succeeded("evt_1", 0, 1000), mRef.refunded("evt_2", time.Hour, 1000, 1000))
	a.applyAt(r0.Add(4*time.Hour), mRef.check("pass-1", 4*time.Hour, domain.OutcomeUnchanged, ""))
	a.applyAt(r0.Add(5*time.Hour), sChecked.check("pass-1", 5*time.Hour, domain.OutcomeFailed, ""))
	return a
}

func ids(cs []domain.Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Provider + "/" + c.ProviderPaymentID
	}
	return out
}

func names(ps ...pay) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.provider + "/" + p.id
	}
	return out
}

func TestInDoubt(t *testing.T) {
	pool := pgtest.NewPool(t)
	seedReconciliation(t, pool)
	q := NewQueries(pool)
	h := func(f float64) time.Time { return r0.Add(time.Duration(f * float64(time.Hour))) }
	for _, tt := range []struct {
		name string
		q    domain.DoubtQuery
		want []string
	}{
		{"quiet since 3h", domain.DoubtQuery{QuietSince: h(3)}, names(aA, sA, sB, sEUR, aN, sAuth, sDisp)},
		{"nothing is quiet since the first record", domain.DoubtQuery{QuietSince: h(0)}, names()},
		{"quiet since 1h, strictly before", domain.DoubtQuery{QuietSince: h(1)}, names(aA, sA, sB, sEUR)},
		{"a check makes a payment quiet again", domain.DoubtQuery{QuietSince: h(5)}, names(aA, sA, sB, sEUR, aN, sAuth, sDisp)},
		{"until after the check", domain.DoubtQuery{QuietSince: h(6)}, names(aA, sA, sB, sEUR, aN, sAuth, sDisp, sChecked)},
		{"one provider", domain.DoubtQuery{QuietSince: h(6), Provider: "stripe"}, names(sA, sB, sEUR, sAuth, sDisp, sChecked)},
		{"notified only", domain.DoubtQuery{QuietSince: h(6), Provider: "adyen"}, names(aA, aN)},
		{"limit", domain.DoubtQuery{QuietSince: h(6), Limit: 2}, names(aA, sA)},
		{"unknown provider", domain.DoubtQuery{QuietSince: h(6), Provider: "asaas"}, names()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := q.InDoubt(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tt.want) || got == nil {
				t.Errorf("InDoubt = %q, want %q", ids(got), tt.want)
			}
		})
	}
	got, err := q.InDoubt(t.Context(), domain.DoubtQuery{QuietSince: h(6), Provider: "stripe", Limit: 1})
	want := domain.Candidate{Provider: "stripe", ProviderPaymentID: sA.id, Status: domain.StatusPending, Currency: "USD",
		Amount: 100, LastRecordedAt: r0, Trigger: domain.TriggerInDoubt}
	if err != nil || len(got) != 1 || got[0] != want {
		t.Errorf("InDoubt = %+v, %v; want [%+v]", got, err, want)
	}
	if _, err := q.InDoubt(t.Context(), domain.DoubtQuery{QuietSince: h(6), Limit: -1}); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("limit -1: err = %v, want KindInvalid", err)
	}
}

// TestInDoubtUsesIndex: the planner can serve InDoubt from the partial
// index, which it only may when the WHERE implies the index's predicate.
func TestInDoubtUsesIndex(t *testing.T) {
	pool := pgtest.NewPool(t)
	seedReconciliation(t, pool)
	// A test table is too small for the planner to prefer any index.
	conn, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Rollback(t.Context()) }()
	if _, err := conn.Exec(t.Context(), "SET LOCAL enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	// Without a provider: with one the WHERE only gains a conjunct (the
	// predicate is still implied), but on this table the planner rightly
	// prefers the provider's index.
	for _, dq := range []domain.DoubtQuery{{QuietSince: r0}, {QuietSince: r0.Add(6 * time.Hour), Limit: 10}} {
		rest, args := inDoubtQuery(dq)
		rows, err := conn.Query(t.Context(), "EXPLAIN "+candidateSelect+rest, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(plan, "\n"), "payments_in_doubt_idx") {
			t.Errorf("plan of %+v does not use payments_in_doubt_idx:\n%s", dq, strings.Join(plan, "\n"))
		}
	}
}

// TestInDoubtPredicateIsFinalsComplement: the SQL predicate names exactly
// the statuses domain.Status.Final says are not final (a new one needs a
// migration that redefines the index).
func TestInDoubtPredicateIsFinalsComplement(t *testing.T) {
	for _, s := range domain.Statuses() {
		if in := strings.Contains(inDoubt, "'"+string(s)+"'"); in == s.Final() {
			t.Errorf("status %s: in the doubt predicate %t, Final %t", s, in, s.Final())
		}
	}
}

func TestSampleFinished(t *testing.T) {
	pool := pgtest.NewPool(t)
	seedReconciliation(t, pool)
	q := NewQueries(pool)
	for _, tt := range []struct {
		name string
		q    domain.SampleQuery
		want []string
	}{
		{"all since the start", domain.SampleQuery{FinishedSince: r0, Share: 1}, names(sConf, sFail, mRef)},
		{"by the provider fact, inclusive", domain.SampleQuery{FinishedSince: r0.Add(3 * time.Hour), Share: 1}, names(mRef)},
		{"a check finishes nothing", domain.SampleQuery{FinishedSince: r0.Add(3*time.Hour + time.Second), Share: 1}, names()},
		{"one provider", domain.SampleQuery{FinishedSince: r0, Provider: "stripe", Share: 1}, names(sConf, sFail)},
		{"share 0", domain.SampleQuery{FinishedSince: r0, Share: 0}, names()},
		{"quiet since: a check counts", domain.SampleQuery{FinishedSince: r0, QuietSince: r0.Add(3 * time.Hour), Share: 1}, names(sConf, sFail)},
		{"quiet since, strictly", domain.SampleQuery{FinishedSince: r0, QuietSince: r0.Add(2 * time.Hour), Share: 1}, names(sConf)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := q.SampleFinished(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tt.want) || got == nil {
				t.Errorf("SampleFinished = %q, want %q", ids(got), tt.want)
			}
			for _, c := range got {
				if c.Trigger != domain.TriggerSample || !c.Status.Final() {
					t.Errorf("candidate %+v: want a final payment, trigger sample", c)
				}
			}
		})
	}
	all := names(sConf, sFail, mRef)
	for range 5 {
		got, err := q.SampleFinished(t.Context(), domain.SampleQuery{FinishedSince: r0, Share: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return !slices.Contains(g, s) })) {
			t.Errorf("share 0.5 drew %q, not an ordered subset of %q", g, all)
		}
	}
	for _, share := range []float64{-0.1, 1.01, math.NaN(), math.Inf(1)} {
		if _, err := q.SampleFinished(t.Context(), domain.SampleQuery{Share: share}); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("share %v: err = %v, want KindInvalid", share, err)
		}
	}
}

func TestDoubtTotals(t *testing.T) {
	pool := pgtest.NewPool(t)
	seedReconciliation(t, pool)
	q := NewQueries(pool)
	h := func(f float64) time.Time { return r0.Add(time.Duration(f * float64(time.Hour))) }
	for _, tt := range []struct {
		name  string
		quiet time.Time
		want  map[string][]domain.DoubtTotal
	}{
		{"nothing quiet", h(0), map[string][]domain.DoubtTotal{}},
		{"quiet since 3h", h(3), map[string][]domain.DoubtTotal{
			"adyen": {{Currency: "", Payments: 1, Amount: 0, Oldest: h(1)}, {Currency: "USD", Payments: 1, Amount: 300, Oldest: h(0)}},
			"stripe": {{Currency: "EUR", Payments: 1, Amount: 900, Oldest: h(0.5)},
				{Currency: "USD", Payments: 4, Amount: 100 + 200 + 600 + 700, Oldest: h(0)}},
		}},
		{"quiet since 6h", h(6), map[string][]domain.DoubtTotal{
			"adyen": {{Currency: "", Payments: 1, Amount: 0, Oldest: h(1)}, {Currency: "USD", Payments: 1, Amount: 300, Oldest: h(0)}},
			"stripe": {{Currency: "EUR", Payments: 1, Amount: 900, Oldest: h(0.5)},
				{Currency: "USD", Payments: 5, Amount: 100 + 200 + 400 + 600 + 700, Oldest: h(0)}},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := q.DoubtTotals(t.Context(), tt.quiet)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || got == nil {
				t.Errorf("DoubtTotals = %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestReconciliationSummary(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := seedReconciliation(t, pool)
	a.applyAt(r0.Add(6*time.Hour), sA.check("pass-2", 6*time.Hour, domain.OutcomeCorrected, domain.CauseMissingWebhook),
		sB.check("pass-2", 6*time.Hour, domain.OutcomeCorrected, domain.CauseMissingWebhook))
	q := NewQueries(pool)
	zeros := func(kv ...any) map[domain.CheckOutcome]int64 {
		m := map[domain.CheckOutcome]int64{}
		for _, o := range domain.CheckOutcomes() {
			m[o] = 0
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(domain.CheckOutcome)] = int64(kv[i+1].(int))
		}
		return m
	}
	line := func(p string, checks map[domain.CheckOutcome]int64, doubt []domain.DoubtTotal) domain.ProviderReconciliation {
		return domain.ProviderReconciliation{Provider: p, Checks: checks, InDoubt: doubt}
	}
	adyenDoubt := []domain.DoubtTotal{{Currency: "", Payments: 1, Oldest: r0.Add(time.Hour)}, {Currency: "USD", Payments: 1, Amount: 300, Oldest: r0}}
	for _, tt := range []struct {
		name              string
		since, quietSince time.Time
		want              []domain.ProviderReconciliation
	}{
		{"everything", time.Time{}, r0.Add(time.Hour), []domain.ProviderReconciliation{
			line("adyen", zeros(), adyenDoubt[1:]),
			line("mercadopago", zeros(domain.OutcomeUnchanged, 1), []domain.DoubtTotal{}),
			line("stripe", zeros(domain.OutcomeFailed, 1, domain.OutcomeCorrected, 2),
				[]domain.DoubtTotal{{Currency: "EUR", Payments: 1, Amount: 900, Oldest: r0.Add(30 * time.Minute)}}),
		}},
		{"checks since 5h, nothing quiet", r0.Add(5 * time.Hour), r0, []domain.ProviderReconciliation{
			line("stripe", zeros(domain.OutcomeFailed, 1, domain.OutcomeCorrected, 2), []domain.DoubtTotal{}),
		}},
		{"checks since 6h+, doubt since 3h", r0.Add(6*time.Hour + time.Second), r0.Add(3 * time.Hour), []domain.ProviderReconciliation{
			line("adyen", zeros(), adyenDoubt),
			line("stripe", zeros(), []domain.DoubtTotal{{Currency: "EUR", Payments: 1, Amount: 900, Oldest: r0.Add(30 * time.Minute)},
				{Currency: "USD", Payments: 2, Amount: 600 + 700, Oldest: r0.Add(time.Hour)}}),
		}},
		{"nothing", r0.Add(7 * time.Hour), r0, []domain.ProviderReconciliation{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := q.ReconciliationSummary(t.Context(), tt.since, tt.quietSince)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Since.Equal(tt.since) || got.Providers == nil || fmt.Sprintf("%+v", got.Providers) != fmt.Sprintf("%+v", tt.want) {
				t.Errorf("summary = %+v\nwant since %s, %+v", got, tt.since, tt.want)
			}
			for _, p := range got.Providers {
				if p.InDoubt == nil || len(p.Checks) != len(domain.CheckOutcomes()) {
					t.Errorf("provider %s: in doubt %#v, checks %v: want a non-nil slice and every outcome", p.Provider, p.InDoubt, p.Checks)
				}
			}
		})
	}
}

func TestChecksPages(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	q := NewQueries(pool)
	// 23 checks, one a minute, over two providers, every outcome and cause.
	var log []*domain.ReconciliationChecked
	for i := range 23 {
		p := pay{[]string{"stripe", "adyen"}[i%2], fmt.Sprintf("pi_3Qp-%02d_x", i)}
		outcome := domain.CheckOutcomes()[i%4]
		var cause domain.CorrectionCause
		if outcome == domain.OutcomeCorrected {
			cause = domain.CorrectionCauses()[(i/4)%2]
		}
		c := p.check(fmt.Sprintf("pass-%d", i), time.Duration(i)*time.Minute, outcome, cause)
		log = append(log, c)
		a.applyAt(r0.Add(time.Duration(i)*time.Minute), p.created("evt_1", 0, 100), c)
	}
	since := r0.Add(10 * time.Minute)
	for _, tt := range []struct {
		name  string
		q     domain.CheckQuery
		match func(c *domain.ReconciliationChecked) bool
	}{
		{"all", domain.CheckQuery{}, func(*domain.ReconciliationChecked) bool { return true }},
		{"provider", domain.CheckQuery{Provider: "adyen"}, func(c *domain.ReconciliationChecked) bool { return c.Provider == "adyen" }},
		{"outcome", domain.CheckQuery{Outcome: domain.OutcomeCorrected},
			func(c *domain.ReconciliationChecked) bool { return c.Outcome == domain.OutcomeCorrected }},
		{"cause", domain.CheckQuery{Cause: domain.CauseDiverged},
			func(c *domain.ReconciliationChecked) bool { return c.Cause == domain.CauseDiverged }},
		{"since, inclusive", domain.CheckQuery{Since: since}, func(c *domain.ReconciliationChecked) bool { return !c.OccurredAt.Before(since) }},
		{"every filter", domain.CheckQuery{Provider: "stripe", Outcome: domain.OutcomeUnchanged, Since: since},
			func(c *domain.ReconciliationChecked) bool {
				return c.Provider == "stripe" && c.Outcome == domain.OutcomeUnchanged && !c.OccurredAt.Before(since)
			}},
		{"none", domain.CheckQuery{Provider: "asaas"}, func(*domain.ReconciliationChecked) bool { return false }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for i := len(log) - 1; i >= 0; i-- {
				if tt.match(log[i]) {
					want = append(want, eventID(t, log[i]))
				}
			}
			for _, limit := range []int{0, 1, 3, domain.MaxPageSize} {
				var got []string
				cq := tt.q
				cq.Limit = limit
				for pages := 0; ; pages++ {
					if pages > len(log) {
						t.Fatalf("limit %d: more pages than checks", limit)
					}
					page, err := q.Checks(t.Context(), cq)
					if err != nil {
						t.Fatal(err)
					}
					if page.Checks == nil || len(page.Checks) > max(limit, 1) && limit != 0 {
						t.Fatalf("limit %d: page of %d checks (nil %t)", limit, len(page.Checks), page.Checks == nil)
					}
					for _, c := range page.Checks {
						got = append(got, c.ID)
					}
					if page.NextCursor == "" {
						break
					}
					cq.Cursor = page.NextCursor
				}
				if !slices.Equal(got, want) {
					t.Errorf("limit %d: walked %q\nwant %q", limit, got, want)
				}
			}
		})
	}

	last, err := q.Checks(t.Context(), domain.CheckQuery{Limit: 1})
	if err != nil || len(last.Checks) != 1 || !sameCheck(last.Checks[0], checkOf(eventID(t, log[22]), log[22])) {
		t.Errorf("newest check = %+v, %v; want %+v", last.Checks, err, checkOf(eventID(t, log[22]), log[22]))
	}
	for _, tt := range []struct {
		name string
		q    domain.CheckQuery
	}{
		{"negative limit", domain.CheckQuery{Limit: -1}},
		{"limit above the maximum", domain.CheckQuery{Limit: domain.MaxPageSize + 1}},
		{"garbage cursor", domain.CheckQuery{Cursor: "not a cursor"}},
		{"a payments cursor", domain.CheckQuery{Cursor: encodeCursor(5)}},
		{"id zero", domain.CheckQuery{Cursor: base64.RawURLEncoding.EncodeToString([]byte("r1:0"))}},
		{"leading zero", domain.CheckQuery{Cursor: base64.RawURLEncoding.EncodeToString([]byte("r1:05"))}},
		{"padded", domain.CheckQuery{Cursor: encodeCheckCursor(5) + "="}},
		{"unknown outcome", domain.CheckQuery{Outcome: "lost"}},
		{"unknown cause", domain.CheckQuery{Cause: "cosmic_rays"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := q.Checks(t.Context(), tt.q); domain.KindOf(err) != domain.KindInvalid {
				t.Errorf("err = %v, want KindInvalid", err)
			}
		})
	}
}

// FuzzDecodeCheckCursor: a cursor decodes only if it is the encoding of
// the id it decodes to (one spelling per position).
func FuzzDecodeCheckCursor(f *testing.F) {
	for _, s := range []string{encodeCheckCursor(1), encodeCheckCursor(1 << 40), "cjE6MQ", "", "r1:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		id, err := decodeCheckCursor(c)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("decode %q: %v, want KindInvalid", c, err)
			}
			return
		}
		if encodeCheckCursor(id) != c {
			t.Fatalf("%q decodes to %d, which encodes as %q", c, id, encodeCheckCursor(id))
		}
	})
}
