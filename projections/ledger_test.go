package projections

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/pgtest"
)

func (p pay) fee(evt string, at time.Duration, amount int64, currency domain.Currency) domain.Event {
	return &domain.FeeAssessed{Meta: p.meta(evt, at, "charge.updated"), Amount: amount, Currency: currency,
		Source: "balance_transaction txn_" + p.id}
}

// far is a moment after every fixture, on both bases.
var far = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// bal renders balances as "currency account balance" lines, for comparison.
func bal(bs []domain.AccountBalance) []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		out = append(out, fmt.Sprintf("%s %s %d", b.Currency, b.Account, b.Balance()))
	}
	return out
}

// booksOf renders the books of a state as bal does (one provider).
func booksOf(s domain.PaymentState) []string {
	var out []string
	for _, b := range domain.BooksOf(s).Balances() {
		out = append(out, fmt.Sprintf("%s %s %d", b.Currency, b.Account, b.Amount))
	}
	return out
}

func balances(t *testing.T, q *Queries, provider string, b domain.Basis, asOf time.Time) []string {
	t.Helper()
	bs, err := q.Balances(t.Context(), domain.BalanceQuery{LedgerFilter: domain.LedgerFilter{Provider: provider},
		AsOf: asOf, Basis: b})
	if err != nil {
		t.Fatalf("Balances: %v", err)
	}
	// Zero balances of accounts with entries (reversed ones) are kept by
	// Balances; books leave them out.
	return slices.DeleteFunc(bal(bs), func(s string) bool { return len(s) > 2 && s[len(s)-2:] == " 0" })
}

// TestLedgerOutOfOrder: late facts post reversals, never edits, and the
// final and as-of balances hold on both bases.
func TestLedgerOutOfOrder(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	q := NewQueries(pool)
	type asOf struct {
		basis domain.Basis
		at    func(recorded []time.Time) time.Time // recorded: record time of each batch's last event
		want  []string
	}
	effective := func(d time.Duration) func([]time.Time) time.Time {
		return func([]time.Time) time.Time { return t0.Add(d) }
	}
	recorded := func(batch int) func([]time.Time) time.Time {
		return func(r []time.Time) time.Time { return r[batch] }
	}
	tests := []struct {
		name      string
		batches   func(p pay) [][]domain.Event
		reversals int
		asOf      []asOf
	}{{
		name: "refund before success",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 2000)}, {p.refunded("evt_3", time.Hour, 2000, 2000)},
				{p.succeeded("evt_2", time.Minute, 2000)}}
		},
		reversals: 1,
		asOf: []asOf{
			{domain.BasisEffective, effective(30 * time.Minute), []string{"USD provider_balance 2000", "USD sales 2000"}},
			{domain.BasisRecorded, recorded(1), []string{"USD sales 2000", "USD refunds 2000"}},
			{domain.BasisRecorded, recorded(0), []string{}},
		},
	}, {
		name: "dispute closed before opened",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 700), p.succeeded("evt_2", time.Second, 700)},
				{p.disputeClosed("evt_4", 2*time.Hour, 700, domain.DisputeLost)}, {p.disputeOpened("evt_3", time.Hour, 700)}}
		},
		reversals: 1,
		asOf: []asOf{
			{domain.BasisEffective, effective(90 * time.Minute), []string{"USD sales 700", "USD disputes 700"}},
			{domain.BasisEffective, effective(time.Minute), []string{"USD provider_balance 700", "USD sales 700"}},
			{domain.BasisRecorded, recorded(1), []string{"USD sales 700", "USD chargebacks 700"}},
		},
	}, {
		name: "fee delivered late",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 2000), p.succeeded("evt_2", time.Minute, 2000)},
				{p.refunded("evt_3", time.Hour, 2000, 500)}, {p.fee("evt_f", 5*time.Minute, 88, "USD")}}
		},
		asOf: []asOf{
			{domain.BasisEffective, effective(10 * time.Minute), []string{"USD provider_balance 1912", "USD sales 2000", "USD fees 88"}},
			{domain.BasisRecorded, recorded(1), []string{"USD provider_balance 1500", "USD sales 2000", "USD refunds 500"}},
		},
	}, {
		name: "fee before capture, in another currency",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.fee("evt_f", -time.Minute, 30, "EUR")}, {p.created("evt_1", 0, 2000)},
				{p.succeeded("evt_2", time.Hour, 2000)}}
		},
		asOf: []asOf{
			{domain.BasisEffective, effective(59 * time.Minute), []string{}},
			{domain.BasisEffective, effective(time.Hour), []string{"EUR provider_balance -30", "EUR fees 30",
				"USD provider_balance 2000", "USD sales 2000"}},
		},
	}, {
		name: "failed payment with a fee books nothing",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 2000), p.fee("evt_f", time.Minute, 30, "USD")},
				{p.failed("evt_2", time.Hour, 2000)}}
		},
	}}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pay{fmt.Sprintf("prov%d", i), fmt.Sprintf("pi_ooo-%d_x", i)}
			var all []domain.Event
			var rec []time.Time
			for _, b := range tt.batches(p) {
				a.apply(a.messages(b...))
				all = append(all, b...)
				rec = append(rec, a.feed.recordedAt(a.pos))
			}
			entries, err := q.PaymentLedger(t.Context(), p.provider, p.id)
			if err != nil {
				t.Fatal(err)
			}
			reversals := 0
			for _, e := range entries {
				var d, c int64
				for _, l := range e.Lines {
					d, c = d+l.Debit, c+l.Credit
				}
				if d != c || d == 0 {
					t.Errorf("entry %s: debits %d, credits %d", e.ID, d, c)
				}
				if e.Reverses != "" {
					reversals++
				}
			}
			if reversals != tt.reversals {
				t.Errorf("%d reversals, want %d; entries %+v", reversals, tt.reversals, entries)
			}
			want := booksOf(domain.Fold(all...).State())
			for _, b := range []domain.Basis{domain.BasisEffective, domain.BasisRecorded} {
				if got := balances(t, q, p.provider, b, far); !slices.Equal(got, want) {
					t.Errorf("final %s balances %q, want the books %q", b, got, want)
				}
			}
			for _, c := range tt.asOf {
				at := c.at(rec)
				if got := balances(t, q, p.provider, c.basis, at); !slices.Equal(got, c.want) {
					t.Errorf("%s balances as of %s: %q, want %q", c.basis, at, got, c.want)
				}
			}
		})
	}
	rep, err := AuditLedger(t.Context(), pool)
	if err != nil || len(rep.Problems) > 0 || rep.Entries == 0 {
		t.Errorf("AuditLedger: %d entries, problems %+v, %v", rep.Entries, rep.Problems, err)
	}
}

// workload returns the events of n payments, each payment's in an order of
// its own (some reversed, some shuffled) and the payments interleaved, with
// redeliveries, fees and disputes: what an at-least-once provider sends.
func workload(n int) []domain.Event {
	rng := rand.New(rand.NewPCG(16, 16))
	var streams [][]domain.Event
	for i := range n {
		evs := lifecycle([]string{"stripe", "asaas"}[i%2], i)
		p := pay{evs[0].EventMeta().Provider, evs[0].EventMeta().ProviderPaymentID}
		switch i % 5 {
		case 0:
			evs = append(evs, p.fee("evt_f", 3*time.Minute, int64(10+i), "USD"))
		case 1:
			evs = append(evs, p.disputeClosed("evt_c", 3*time.Hour, 0, domain.DisputeWon))
		case 2:
			evs = append(evs, p.fee("evt_f", -time.Minute, 7, "BRL"), evs[0])
		}
		switch i % 3 {
		case 1:
			slices.Reverse(evs)
		case 2:
			rng.Shuffle(len(evs), func(a, b int) { evs[a], evs[b] = evs[b], evs[a] })
		}
		streams = append(streams, evs)
	}
	var out []domain.Event
	for len(streams) > 0 {
		k := rng.IntN(len(streams))
		out = append(out, streams[k][0])
		if streams[k] = streams[k][1:]; len(streams[k]) == 0 {
			streams = slices.Delete(streams, k, k+1)
		}
	}
	return out
}

// dumpLedger renders every entry with its lines, keyed by ID, and every
// running total.
func dumpLedger(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	out := dump(t, pool, `SELECT e.id::text, concat_ws('|', e.provider, e.provider_payment_id, e.currency,
			e.effective_at, e.recorded_at, e.cause_event_id, e.reverses, e.fact_key, e.fact_rank,
			e.arrival_revision, e.seq,
			e.accounts, e.debits, e.credits)
		FROM ledger_entries e`)
	for k, v := range dump(t, pool, `SELECT concat_ws('|', basis, bucket, provider, currency, account),
		debits || '/' || credits FROM ledger_totals`) {
		out["total "+k] = v
	}
	return out
}

// TestLedgerRebuildIsIdentical: the ledger is a pure function of the
// event store: batches of 1, of 500, with histories read back, and a Reset
// and replay all give the same entries (IDs, recorded times, reversals) and
// totals; replaying a batch changes nothing.
func TestLedgerRebuildIsIdentical(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	msgs := a.messages(workload(60)...)
	run := func(size int, readBack bool) map[string]string {
		t.Helper()
		if err := Reset(t.Context(), pool, a.r.cfg.Name); err != nil {
			t.Fatal(err)
		}
		a.r = NewRunner(RunnerConfig{Name: a.r.cfg.Name}, pool, nil)
		a.r.histories.readBack = readBack
		pos, err := loadCheckpoint(t.Context(), pool, a.r.cfg.Name)
		if err != nil {
			t.Fatal(err)
		}
		a.pos = pos
		for i := 0; i < len(msgs); i += size {
			a.apply(msgs[i:min(i+size, len(msgs))])
		}
		return dumpLedger(t, pool)
	}
	one := run(1, false)
	if len(one) < 100 {
		t.Fatalf("only %d entries and totals: the workload posts too little", len(one))
	}
	t.Logf("%d entries and totals from %d events", len(one), len(msgs))
	diffDumps(t, "batch 500 vs batch 1", run(500, false), one)
	diffDumps(t, "batch 7, read back, vs batch 1", run(7, true), one)
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM ledger_entries WHERE reverses IS NOT NULL`).Scan(&n); err != nil || n < 10 {
		t.Errorf("%d reversals in the workload (%v), want some", n, err)
	}

	// Replays: the last 40 messages again from an earlier checkpoint, and
	// every event redelivered in one batch.
	from := eventstore.Position{Commit: uint64(len(msgs) - 40), Prepare: uint64(len(msgs) - 40)}
	if _, err := pool.Exec(t.Context(), "UPDATE projection_checkpoints SET position = $1 WHERE name = $2",
		from.String(), a.r.cfg.Name); err != nil {
		t.Fatal(err)
	}
	a.pos = from
	a.apply(msgs[len(msgs)-40:])
	a.r.histories.purge()
	a.apply(a.redeliver(msgs))
	diffDumps(t, "after replays", dumpLedger(t, pool), one)
	if rep, err := AuditLedger(t.Context(), pool); err != nil || len(rep.Problems) > 0 {
		t.Errorf("AuditLedger: problems %+v, %v", rep.Problems, err)
	}
}

// redeliver returns msgs's events again at new positions, as a feed that
// delivers twice would.
func (a *applier) redeliver(msgs []eventstore.Message) []eventstore.Message {
	out := make([]eventstore.Message, 0, len(msgs))
	for i, m := range msgs {
		rec := *m.Event
		rec.Position = eventstore.Position{Commit: a.pos.Commit + uint64(i) + 1, Prepare: a.pos.Prepare + uint64(i) + 1}
		out = append(out, eventstore.Message{Event: &rec})
	}
	return out
}

func TestLedgerAuditFindsTampering(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	p, o := pay{"stripe", "pi_tamper-1"}, pay{"stripe", "pi_tamper_2"}
	a.apply(a.messages(p.created("evt_1", 0, 900), p.succeeded("evt_2", time.Minute, 900),
		o.created("evt_1", 0, 500), o.succeeded("evt_2", time.Minute, 500), o.refunded("evt_3", time.Hour, 500, 100)))
	if rep, err := AuditLedger(t.Context(), pool); err != nil || len(rep.Problems) > 0 || rep.Payments != 2 || rep.Entries != 3 {
		t.Fatalf("AuditLedger before tampering: %+v, %v", rep, err)
	}
	tests := []struct {
		name, sql string
		want      []string // check payment
	}{{
		name: "a line changed",
		sql:  `UPDATE ledger_entries SET debits[1] = debits[1] + 1 WHERE provider_payment_id = 'pi_tamper-1'`,
		want: []string{"entry_balance stripe/pi_tamper-1", "payment_books stripe/pi_tamper-1", "currency_balance ",
			"running_totals ", "running_totals ", "running_totals ", "running_totals "}, // hour and day, both bases
	}, {
		name: "a payments row changed",
		sql:  `UPDATE payments SET amount_refunded = 200 WHERE provider_payment_id = 'pi_tamper_2'`,
		want: []string{"payment_books stripe/pi_tamper_2", "payment_books stripe/pi_tamper_2"},
	}, {
		name: "a running total changed",
		sql:  `UPDATE ledger_totals SET credits = credits + 5 WHERE account = 'sales' AND basis = 'recorded' AND unit = 'day'`,
		want: []string{"running_totals "},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx, err := pool.Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(t.Context()) }()
			if _, err := tx.Exec(t.Context(), tt.sql); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(t.Context()); err != nil {
				t.Fatal(err)
			}
			rep, err := AuditLedger(t.Context(), pool)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range rep.Problems {
				got = append(got, p.Check+" "+p.Payment)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems %q, want %q\n%+v", got, tt.want, rep.Problems)
			}
			// Undo by rebuilding from the events.
			rebuildFromEvents(t, a)
		})
	}
}

// rebuildFromEvents resets the read models and replays the feed.
func rebuildFromEvents(t *testing.T, a *applier) {
	t.Helper()
	pool := a.r.pool
	if err := Reset(t.Context(), pool, a.r.cfg.Name); err != nil {
		t.Fatal(err)
	}
	a.r.histories.purge()
	pos, err := loadCheckpoint(t.Context(), pool, a.r.cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	a.pos = pos
	a.feed.mu.Lock()
	msgs := slices.Clone(a.feed.msgs)
	a.feed.mu.Unlock()
	a.apply(msgs)
}

func TestPaymentLedger(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	q := NewQueries(pool)
	p, o := pay{"stripe", "pi_pl-1"}, pay{"stripe", "pi_pl_2"}
	a.apply(a.messages(p.refunded("evt_3", time.Hour, 800, 300), o.created("evt_1", 0, 100)))
	a.apply(a.messages(p.succeeded("evt_2", time.Minute, 800), p.fee("evt_f", 2*time.Minute, 12, "USD")))
	got, err := q.PaymentLedger(t.Context(), p.provider, p.id)
	if err != nil {
		t.Fatal(err)
	}
	// Fold order: the success, the fee, then the refund's entry and its
	// reversal (posted by the success's arrival) and the new refund entry.
	var order []string
	for _, e := range got {
		order = append(order, fmt.Sprintf("%s rev=%t", e.EffectiveAt.Sub(t0), e.Reverses != ""))
	}
	want := []string{"1m0s rev=false", "2m0s rev=false", "1h0m0s rev=false", "1h0m0s rev=true", "1h0m0s rev=false"}
	if !slices.Equal(order, want) {
		t.Errorf("fold order %q, want %q", order, want)
	}
	if got[3].Reverses != got[2].ID || got[3].CauseEventID == got[2].CauseEventID {
		t.Errorf("reversal %+v does not name %s, or is caused by the same event", got[3], got[2].ID)
	}
	if e := got[0]; !slices.Equal(e.Lines, []domain.Line{{Account: domain.AccountProviderBalance, Debit: 800},
		{Account: domain.AccountSales, Credit: 800}}) || e.Currency != "USD" {
		t.Errorf("success entry %+v", e)
	}
	if none, err := q.PaymentLedger(t.Context(), o.provider, o.id); err != nil || none == nil || len(none) != 0 {
		t.Errorf("ledger of a payment without entries = %v, %v; want an empty slice", none, err)
	}
	if _, err := q.PaymentLedger(t.Context(), "stripe", "pi_nobody"); !errors.Is(err, domain.ErrUnknownPayment) {
		t.Errorf("ledger of an unknown payment: err = %v, want ErrUnknownPayment", err)
	}
}
