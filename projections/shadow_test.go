package projections

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
)

// doubleRefunds is a changed projection built on purpose: it books every
// refund twice (the amount refunded doubled, capped at the capture).
type doubleRefunds struct{ codec *eventstore.Codec }

func (d doubleRefunds) DecodeData(typ string, data []byte) (domain.Event, error) {
	e, err := d.codec.DecodeData(typ, data)
	if r, ok := e.(*domain.PaymentRefunded); ok && err == nil {
		r.AmountRefunded = min(2*r.AmountRefunded, r.AmountCaptured)
	}
	return e, err
}

// liveLedger is a projected store: 30 payments of every lifecycle, the
// live runner running.
func liveLedger(t *testing.T) (*pgxpool.Pool, *postgres.Store, eventstore.Position) {
	t.Helper()
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond, BatchSize: 16})
	var all []domain.Event
	for n := range 30 {
		all = append(all, lifecycle("stripe", n)...)
	}
	last := appendAll(t, store, all...)
	live := NewRunner(testConfig(DefaultName, nil), pool, store)
	start(t, live)
	waitPosition(t, live, last)
	return pool, store, last
}

// readers queries the live read models in a loop until stopped and
// counts answers that were errors or read as empty.
func readers(t *testing.T, pool *pgxpool.Pool) (stop func() (reads, bad int64)) {
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var n, failed atomic.Int64
	for range 3 {
		wg.Go(func() {
			for ctx.Err() == nil {
				var payments, entries int64
				err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM payments), (SELECT count(*) FROM ledger_entries)`).Scan(&payments, &entries)
				switch {
				case ctx.Err() != nil:
				case err != nil || payments == 0 || entries == 0:
					failed.Add(1)
					t.Logf("reader: %d payments, %d entries, %v", payments, entries, err)
				default:
					n.Add(1)
				}
			}
		})
	}
	return func() (int64, int64) { cancel(); wg.Wait(); return n.Load(), failed.Load() }
}

func indexNames(t *testing.T, pool *pgxpool.Pool) map[string]string {
	return dump(t, pool, `SELECT indexname, tablename FROM pg_indexes WHERE schemaname = 'public'`)
}

// TestShadowRebuildSwitches (issue 19, shadow rebuild): an unchanged
// projection rebuilt in a shadow schema diffs empty and switches while
// readers query the live tables, none of whom sees an error or an empty
// table; the read models, index names and checkpoint are as before, and
// the live runner goes on projecting into the new tables.
func TestShadowRebuildSwitches(t *testing.T) {
	pool, store, _ := liveLedger(t)
	before, beforeEntries, beforeIdx := dumpPayments(t, pool), dump(t, pool, `SELECT id::text, accounts::text || debits::text || credits::text FROM ledger_entries`), indexNames(t, pool)
	sh, err := NewShadow(t.Context(), pool, store, DefaultName, testConfig("", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	stop := readers(t, pool)
	res, err := sh.Switch(t.Context(), false)
	time.Sleep(50 * time.Millisecond) // readers after the switch, too
	reads, bad := stop()
	if err != nil || !res.Switched || len(res.Diff) != 0 || res.Replaced != DefaultName {
		t.Fatalf("Switch: %+v, %v; want a switch with an empty diff", res, err)
	}
	if bad != 0 || reads == 0 {
		t.Errorf("readers: %d good reads, %d errors or empty answers during the switch", reads, bad)
	}
	diffDumps(t, "payments", dumpPayments(t, pool), before)
	diffDumps(t, "ledger entries", dump(t, pool, `SELECT id::text, accounts::text || debits::text || credits::text FROM ledger_entries`), beforeEntries)
	diffDumps(t, "indexes", indexNames(t, pool), beforeIdx)
	var schemas int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shadow\_%' OR nspname LIKE 'retired\_%'`).Scan(&schemas); err != nil || schemas != 0 {
		t.Errorf("%d shadow or retired schemas left (%v)", schemas, err)
	}
	// The live runner projects into the new tables.
	p := pay{"stripe", "pi_after_switch"}
	appendAll(t, store, p.created("evt_after", 0, 777))
	eventually(t, "a payment projected after the switch", func() bool {
		return dumpPayments(t, pool)["stripe/pi_after_switch"] != ""
	})
}

// TestShadowRebuildDiffers: a projection changed on purpose (refunds booked
// twice) diffs on the refunded payments and their ledger accounts, and does
// not switch: the live read models are untouched. --accept-diff switches.
func TestShadowRebuildDiffers(t *testing.T) {
	pool, store, _ := liveLedger(t)
	before := dumpPayments(t, pool)
	cfg := testConfig("", nil)
	cfg.Decoder = doubleRefunds{eventstore.NewCodec()}
	sh, err := NewShadow(t.Context(), pool, store, DefaultName, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	res, err := sh.Switch(t.Context(), false)
	if err != nil || res.Switched {
		t.Fatalf("Switch: %+v, %v; want no switch", res, err)
	}
	seen := map[string]bool{}
	for _, d := range res.Diff {
		seen[d.What] = true
		if d.Live == d.Shadow {
			t.Errorf("a diff line that does not differ: %+v", d)
		}
	}
	if !seen["payments"] || !seen["ledger"] {
		t.Errorf("diff %+v: want payments and ledger lines", res.Diff)
	}
	diffDumps(t, "live payments after a refused switch", dumpPayments(t, pool), before)
	res, err = sh.Switch(t.Context(), true)
	if err != nil || !res.Switched || len(res.Diff) == 0 {
		t.Fatalf("Switch with accept: %+v, %v", res, err)
	}
	if dumpPayments(t, pool)["stripe/"+lifecycle("stripe", 3)[0].EventMeta().ProviderPaymentID] == before["stripe/"+lifecycle("stripe", 3)[0].EventMeta().ProviderPaymentID] {
		t.Errorf("the accepted version's refunds are not live")
	}
}

// TestRebuildInPlace: StartRebuild empties the read models while the
// live runner runs; Rebuilding says so until the runner has caught up,
// and the rebuilt read models equal the first build.
func TestRebuildInPlace(t *testing.T) {
	pool, _, _ := liveLedger(t)
	before := dumpPayments(t, pool)
	q := NewQueries(pool)
	if err := StartRebuild(t.Context(), pool, DefaultName); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rebuild to catch up", func() bool {
		done, _, err := RebuildDone(t.Context(), pool, DefaultName)
		return err == nil && done
	})
	if on, err := q.Rebuilding(t.Context()); err != nil || on {
		t.Errorf("Rebuilding after the catch-up: %v, %v", on, err)
	}
	diffDumps(t, "payments after the rebuild", dumpPayments(t, pool), before)
	if err := StartRebuild(t.Context(), pool, "payments"); err == nil {
		t.Errorf("an unversioned name was accepted")
	}
}

// TestVersionGuards: a runner of a retired name refuses to project, and so
// does a new version while the old one owns the read models.
func TestVersionGuards(t *testing.T) {
	pool := pgtest.NewPool(t)
	if _, err := pool.Exec(t.Context(), `INSERT INTO projection_checkpoints (name, position) VALUES ('payments_v1', '0/0'),
		('payments_v0', '0/0'), ('chain_sealer_v1', '0/0')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `UPDATE projection_checkpoints SET retired_at = now() WHERE name = 'payments_v0'`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want error
	}{{"payments_v0", ErrRetired}, {"payments_v2", ErrNotBuilt}, {"payments_v1", nil}, {"other_v1", nil}} {
		_, _, err := claimCheckpoint(t.Context(), pool, tc.name)
		if !errors.Is(err, tc.want) {
			t.Errorf("claim %s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := StartRebuild(t.Context(), pool, "payments_v2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := claimCheckpoint(t.Context(), pool, "payments_v1"); !errors.Is(err, ErrRetired) {
		t.Errorf("payments_v1 after payments_v2's rebuild: %v, want retired", err)
	}
	if _, rebuilding, err := claimCheckpoint(t.Context(), pool, "payments_v2"); err != nil || !rebuilding {
		t.Errorf("payments_v2 after its rebuild: rebuilding %v, %v", rebuilding, err)
	}
}
