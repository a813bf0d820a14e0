package projections

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
)

// brokenDecoder is the codec failing on the events whose data holds poison:
// the "handler" a fix replaces.
type brokenDecoder struct {
	codec  *eventstore.Codec
	poison []byte
}

func (d brokenDecoder) DecodeData(typ string, data []byte) (domain.Event, error) {
	if bytes.Contains(data, d.poison) {
		return nil, errors.New("test: this decoder cannot read it")
	}
	return d.codec.DecodeData(typ, data)
}

// dumpJournal renders every journal entry and running total.
func dumpJournal(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	out := dump(t, pool, `SELECT id::text, concat_ws('|', provider, provider_payment_id, currency, effective_at,
		recorded_at, cause_event_id, reverses, fact_key, fact_rank, arrival_revision, seq, accounts::text, debits::text,
		credits::text) FROM ledger_entries`)
	for k, v := range dump(t, pool, `SELECT concat_ws('|', basis, unit, bucket, provider, currency, account),
		concat_ws('|', debits, credits) FROM ledger_totals`) {
		out["total "+k] = v
	}
	return out
}

type parkedRow struct {
	provider, paymentID, eventID string
	retry                        bool
	deadLetter                   int64
}

func readParked(t testing.TB, pool *pgxpool.Pool, stream string) (parkedRow, bool) {
	t.Helper()
	var p parkedRow
	err := pool.QueryRow(t.Context(), `SELECT provider, provider_payment_id, event_id::text, retry_requested, dead_letter_id
		FROM parked_streams WHERE stream = $1`, stream).Scan(&p.provider, &p.paymentID, &p.eventID, &p.retry, &p.deadLetter)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return p, true
}

func requestRetry(t testing.TB, pool *pgxpool.Pool, dl *DeadLetters, id int64, stream string) {
	t.Helper()
	got, err := dl.DeadLetter(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	err = pgx.BeginFunc(t.Context(), pool, func(tx pgx.Tx) error {
		if err := dl.MarkRetriedTx(t.Context(), tx, id, got.Retries, "test", time.Now()); err != nil {
			return err
		}
		return RequestReprojectTx(t.Context(), tx, stream)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestParkUndecodable: an event of B that does not decode parks B only; A
// and C, before and after it in the feed, are projected, and so is
// everything after. A retry that fails again keeps B parked; once the
// decoder is fixed, a retry projects B as a rebuild would.
func TestParkUndecodable(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond, BatchSize: 16})
	dl := NewDeadLetters(pool)
	q := NewQueries(pool)
	a, b, c := pay{"stripe", "pi_A"}, pay{"stripe", "pi_B"}, pay{"stripe", "pi_C"}
	streamB := eventstore.PaymentStream("stripe", "pi_B")
	feed := []domain.Event{
		a.created("evt_1", 0, 1000), b.created("evt_1", time.Second, 2000), a.succeeded("evt_2", time.Minute, 1000),
		b.succeeded("evt_poison", time.Minute, 2000), c.created("evt_1", 2*time.Second, 3000),
		c.succeeded("evt_2", 2*time.Minute, 3000), b.refunded("evt_3", time.Hour, 2000, 500),
	}
	last := appendAll(t, store, feed...)
	broken := brokenDecoder{codec: eventstore.NewCodec(), poison: []byte("evt_poison")}
	newRunner := func(d Decoder) *Runner {
		cfg := testConfig("payments_v1", nil)
		cfg.Decoder, cfg.Streams = d, store
		return NewRunner(cfg, pool, store)
	}

	r1 := newRunner(broken)
	stop := start(t, r1)
	waitPosition(t, r1, last)
	for _, k := range []string{"pi_A", "pi_C"} {
		if s, err := q.Payment(t.Context(), "stripe", k); err != nil || s.Status != domain.StatusConfirmed {
			t.Errorf("%s: %+v, %v; want succeeded", k, s, err)
		}
	}
	if s, err := q.Payment(t.Context(), "stripe", "pi_B"); err != nil || s.Status != domain.StatusPending {
		t.Errorf("parked B reads %+v, %v; want what was projected before (pending)", s, err)
	}
	var nB int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM payment_events WHERE provider_payment_id = 'pi_B'`).Scan(&nB); err != nil {
		t.Fatal(err)
	}
	if nB != 1 {
		t.Errorf("payment_events holds %d events of parked B, want 1 (the one before it parked)", nB)
	}
	p, ok := readParked(t, pool, streamB)
	if !ok || p.provider != "stripe" || p.paymentID != "pi_B" {
		t.Fatalf("parked row of B: %+v, %t", p, ok)
	}
	d, err := dl.DeadLetter(t.Context(), p.deadLetter)
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != domain.DeadLetterProjection || d.Cause != domain.CauseUndecodable || d.State != domain.DeadLetterOpen ||
		d.Attempts != 1 || len(d.Streams) != 1 || d.Streams[0] != streamB || d.ProviderPaymentID != "pi_B" {
		t.Errorf("dead letter: %+v", d)
	}

	// A retry while the cause is still there: parked again, attempts 2.
	requestRetry(t, pool, dl, d.ID, streamB)
	eventually(t, "the failed retry", func() bool {
		p, ok := readParked(t, pool, streamB)
		return ok && !p.retry
	})
	if d, err = dl.DeadLetter(t.Context(), p.deadLetter); err != nil || d.Attempts != 2 || d.State != domain.DeadLetterOpen {
		t.Errorf("after a failed retry: %+v, %v; want attempts 2, open", d, err)
	}
	// A later event of B waits too; others go on.
	last = appendAll(t, store, b.disputeOpened("evt_4", 2*time.Hour, 100), a.refunded("evt_3", time.Hour, 1000, 1000))
	waitPosition(t, r1, last)
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM payment_events WHERE provider_payment_id = 'pi_B'`).Scan(&nB); err != nil || nB != 1 {
		t.Errorf("payment_events holds %d events of parked B (%v), want 1", nB, err)
	}
	stop()

	// The fix: the real decoder, and a retry.
	r2 := newRunner(nil)
	stop = start(t, r2)
	d, _ = dl.DeadLetter(t.Context(), p.deadLetter)
	requestRetry(t, pool, dl, d.ID, streamB)
	eventually(t, "B re-projected", func() bool { _, ok := readParked(t, pool, streamB); return !ok })
	last = appendAll(t, store, b.disputeClosed("evt_5", 3*time.Hour, 100, domain.DisputeWon))
	waitPosition(t, r2, last)
	stop()
	if d, err = dl.DeadLetter(t.Context(), p.deadLetter); err != nil || d.State != domain.DeadLetterRetried {
		t.Errorf("dead letter after the retry: %+v, %v; want left retried", d, err)
	}
	payments, events, ledger := dumpPayments(t, pool), dumpEvents(t, pool), dumpJournal(t, pool)

	// A rebuild from zero must give the same read model.
	if err := Reset(t.Context(), pool, "payments_v1"); err != nil {
		t.Fatal(err)
	}
	r3 := newRunner(nil)
	stop = start(t, r3)
	waitPosition(t, r3, last)
	stop()
	diffDumps(t, "payments", payments, dumpPayments(t, pool))
	diffDumps(t, "payment_events", events, dumpEvents(t, pool))
	diffDumps(t, "ledger", ledger, dumpJournal(t, pool))
	if s, err := q.Payment(t.Context(), "stripe", "pi_B"); err != nil || s.Status == domain.StatusPending {
		t.Errorf("B after the retry: %+v, %v", s, err)
	}
}

// TestInfrastructureFailureParksNothing: connections killed under the
// runner (admin shutdown, 57P01) are retried with backoff, never parked.
func TestInfrastructureFailureParksNothing(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond, BatchSize: 16})
	cfg := testConfig("payments_v1", nil)
	cfg.Streams = store
	r := NewRunner(cfg, pool, store)
	start(t, r)
	// The test writes and checks on its own pool, spared by name: a
	// termination is asynchronous, so a connection of the killed pool can
	// still be handed out and fail; only the runner must survive that.
	wcfg := pool.Config().Copy()
	wcfg.ConnConfig.RuntimeParams["application_name"] = "test-writer"
	writer, err := pgxpool.NewWithConfig(t.Context(), wcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	wstore := postgres.New(writer, postgres.Options{})
	var all []domain.Event
	var last eventstore.Position
	for n := range 10 {
		evs := lifecycle("stripe", n)
		all = append(all, evs...)
		last = appendAll(t, wstore, evs...)
		if _, err := writer.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name <> 'test-writer'`); err != nil {
			t.Fatal(err)
		}
	}
	waitPosition(t, r, last)
	checkReadModel(t, NewQueries(writer), all)
	var parked, dead int
	if err := writer.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM parked_streams), (SELECT count(*) FROM dead_letters)`).
		Scan(&parked, &dead); err != nil {
		t.Fatal(err)
	}
	if parked != 0 || dead != 0 {
		t.Errorf("after connection failures: %d parked streams, %d dead letters; want none", parked, dead)
	}
}

// TestParkUnapplicable: a payment the read model rejects (here a CHECK
// constraint the test adds) is parked, cause unapplicable; the other
// payments of its batch, and later ones, are projected.
func TestParkUnapplicable(t *testing.T) {
	pool := pgtest.NewPool(t)
	if _, err := pool.Exec(t.Context(), `ALTER TABLE payments ADD CONSTRAINT test_no_6666 CHECK (amount <> 6666)`); err != nil {
		t.Fatal(err)
	}
	store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond, BatchSize: 16})
	a, b := pay{"stripe", "pi_ok"}, pay{"stripe", "pi_bad"}
	first := []domain.Event{a.created("evt_1", 0, 100), b.created("evt_1", 0, 6666), a.succeeded("evt_2", time.Minute, 100)}
	last := appendAll(t, store, first...)
	cfg := testConfig("payments_v1", nil)
	cfg.Streams = store
	r := NewRunner(cfg, pool, store)
	start(t, r)
	waitPosition(t, r, last)
	later := []domain.Event{b.succeeded("evt_2", time.Minute, 6666), pay{"stripe", "pi_next"}.created("evt_1", 0, 5)}
	last = appendAll(t, store, later...)
	waitPosition(t, r, last)
	checkReadModel(t, NewQueries(pool), []domain.Event{first[0], first[2], later[1]})
	var cause string
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT d.cause, (SELECT count(*) FROM payment_events WHERE provider_payment_id = 'pi_bad')
		FROM parked_streams p JOIN dead_letters d ON d.id = p.dead_letter_id WHERE p.stream = $1`,
		eventstore.PaymentStream("stripe", "pi_bad")).Scan(&cause, &n); err != nil {
		t.Fatalf("parked row: %v", err)
	}
	if cause != domain.CauseUnapplicable || n != 0 {
		t.Errorf("cause %q, %d events of the parked payment recorded; want unapplicable, 0", cause, n)
	}
}
