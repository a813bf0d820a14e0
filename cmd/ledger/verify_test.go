package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrentdb"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/projections"
)

// verifyT0 is the provider time the fixtures start at; the nanoseconds make
// the microsecond comparison of timestamps part of every run.
var verifyT0 = time.Date(2026, 2, 3, 4, 5, 6, 789_123_456, time.UTC)

// verifyFixture is three Stripe payments whose IDs look real ('_' and '-').
func verifyFixture() [][]domain.Event {
	meta := func(pi, evt string, at time.Duration) domain.Meta {
		return domain.Meta{Provider: "stripe", ProviderEventID: evt, ProviderEventType: "fixture",
			ProviderPaymentID: pi, OccurredAt: verifyT0.Add(at)}
	}
	const a, b, c = "pi_3QvA-refund_1", "pi_3QvB-failed_2", "pi_3QvC-dispute_3"
	return [][]domain.Event{
		{
			&domain.PaymentCreated{Meta: meta(a, "evt_a1", 0), Amount: 5000, Currency: "BRL"},
			&domain.PaymentSucceeded{Meta: meta(a, "evt_a2", time.Second), Amount: 5000, AmountReceived: 5000, Currency: "BRL"},
			&domain.PaymentRefunded{Meta: meta(a, "evt_a3", time.Hour), AmountCaptured: 5000, AmountRefunded: 1200, Currency: "BRL"},
		},
		{
			&domain.PaymentCreated{Meta: meta(b, "evt_b1", 0), Amount: 900, Currency: "USD"},
			&domain.PaymentFailed{Meta: meta(b, "evt_b2", time.Minute), Amount: 900, Currency: "USD", Code: "card_declined"},
		},
		{
			&domain.PaymentCreated{Meta: meta(c, "evt_c1", 0), Amount: 7300, Currency: "USD"},
			&domain.PaymentSucceeded{Meta: meta(c, "evt_c2", time.Second), Amount: 7300, AmountReceived: 7300, Currency: "USD"},
			&domain.DisputeOpened{Meta: meta(c, "evt_c3", time.Hour), DisputeID: "du_1", Amount: 7300, Currency: "USD"},
		},
	}
}

// projectedLedger returns a fresh database holding the fixture's events in
// the Postgres event store, projected by the real runner, which is stopped
// before it returns.
func projectedLedger(t *testing.T) (Config, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond})
	return project(t, pool, store, map[string]string{}), pool
}

// project appends the fixture to store, runs the projector until verify
// --wait (Postgres) or the payments rows (KurrentDB) say it caught up, and
// returns the configuration verify reads with env added.
func project(t *testing.T, pool *pgxpool.Pool, store eventstore.Store, env map[string]string) Config {
	t.Helper()
	ctx := t.Context()
	codec := eventstore.NewCodec()
	for _, events := range verifyFixture() {
		for _, e := range events {
			data, err := codec.Encode(e, eventstore.Metadata{Provider: "stripe"})
			if err != nil {
				t.Fatal(err)
			}
			m := e.EventMeta()
			if _, err := store.Append(ctx, eventstore.PaymentStream(m.Provider, m.ProviderPaymentID), eventstore.Any(), []eventstore.EventData{data}); err != nil {
				t.Fatal(err)
			}
		}
	}
	env["LEDGER_DATABASE_URL"] = pool.Config().ConnString()
	cfg, err := configFromEnv(mapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = projections.NewRunner(projections.RunnerConfig{}, pool, store).Run(runCtx)
	}()
	defer func() { stop(); wg.Wait() }()
	if cfg.EventStoreURL == "" {
		// verify's own wait is how the test knows the projector caught up.
		if _, err := verifyLedger(ctx, cfg, verifyOptions{Wait: 60 * time.Second}, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatalf("projector did not catch up: %v", err)
		}
		return cfg
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		audit, err := projections.Audit(ctx, pool, projections.DefaultName, store)
		if err != nil {
			t.Fatal(err)
		}
		if audit.EventsFolded == 8 {
			return cfg
		}
		if time.Now().After(deadline) {
			t.Fatal("projector did not catch up within 60s")
		}
	}
}

func mapEnv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestVerify(t *testing.T) {
	tests := []struct {
		name       string
		corrupt    []string // SQL run after projection
		mismatches []verifyMismatch
		orphans    int
		duplicates int
		lag        int64
		jobs       map[string]int
		ledger     string // a payment a ledger problem must name ("-": any problem)
	}{
		{name: "clean"},
		{
			// One line of one entry changed: the entry no longer balances,
			// the payment's entries no longer equal its books, and the
			// running totals no longer equal the lines.
			name: "a journal line altered",
			corrupt: []string{`UPDATE ledger_entries SET debits[1] = debits[1] + 1
				WHERE id = (SELECT id FROM ledger_entries WHERE provider_payment_id = 'pi_3QvA-refund_1' AND debits[1] > 0 LIMIT 1)`},
			ledger: "stripe/pi_3QvA-refund_1",
		},
		{
			name:    "refund amount off by one",
			corrupt: []string{`UPDATE payments SET amount_refunded = amount_refunded + 1 WHERE provider_payment_id = 'pi_3QvA-refund_1'`},
			mismatches: []verifyMismatch{
				{Payment: "stripe/pi_3QvA-refund_1", Field: "amount_refunded", ReadModel: "1201", Fold: "1200"},
			},
		},
		{
			name:    "status and event count",
			corrupt: []string{`UPDATE payments SET status = 'confirmed', event_count = 3 WHERE provider_payment_id = 'pi_3QvB-failed_2'`},
			mismatches: []verifyMismatch{
				{Payment: "stripe/pi_3QvB-failed_2", Field: "status", ReadModel: "confirmed", Fold: "failed"},
				{Payment: "stripe/pi_3QvB-failed_2", Field: "event_count", ReadModel: "3", Fold: "2"},
			},
		},
		{
			name:    "row lost",
			corrupt: []string{`DELETE FROM payments WHERE provider_payment_id = 'pi_3QvC-dispute_3'`},
			orphans: 1,
		},
		{
			// The constraint makes this impossible; dropping it shows the
			// count is a real check. The copy's transaction is after the
			// checkpoint, so it is also one event of lag, and its stream
			// is not expected to have a row yet.
			name: "event ID stored twice once the constraint is gone",
			corrupt: []string{
				`ALTER TABLE es_events DROP CONSTRAINT es_events_event_id_key`,
				`INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
				 SELECT 'payment-stripe-pi_copy', 0, event_id, type, data, metadata FROM es_events ORDER BY tx_id LIMIT 1`,
			},
			duplicates: 1,
			lag:        1,
		},
		{
			// An event appended after the checkpoint is not in the row yet;
			// verify folds up to the checkpoint, so a live ledger checks clean.
			name: "event after the checkpoint",
			corrupt: []string{
				`INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
				 SELECT stream, revision + 1, gen_random_uuid(), type, data, metadata
				 FROM es_events WHERE stream = 'payment-stripe-pi_3QvB-failed_2' ORDER BY revision DESC LIMIT 1`,
			},
			lag: 1,
		},
		{
			// A status fetch whose process was kill -9ed stays running
			// until River rescues it: reported, not a failure.
			name: "follow-up job left running",
			corrupt: []string{`INSERT INTO river_job (kind, args, state, attempt, attempted_at, max_attempts, queue, priority)
				VALUES ('enrich_payment', '{"provider":"mercadopago","payment_id":"1654467000529"}', 'running', 1, now(), 12, 'default', 1)`},
			jobs: map[string]int{"running": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, pool := projectedLedger(t)
			for _, q := range tt.corrupt {
				if _, err := pool.Exec(t.Context(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			rep, err := verifyLedger(t.Context(), cfg, verifyOptions{}, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if rep.PaymentsChecked != 3-tt.orphans || rep.Backend != "postgres" || rep.UniqueEventID != (tt.duplicates == 0) {
				t.Errorf("checked %d on %s, unique constraint %v", rep.PaymentsChecked, rep.Backend, rep.UniqueEventID)
			}
			if len(rep.Mismatches) != len(tt.mismatches) {
				t.Fatalf("mismatches = %+v, want %+v", rep.Mismatches, tt.mismatches)
			}
			for i := range tt.mismatches {
				if rep.Mismatches[i] != tt.mismatches[i] {
					t.Errorf("mismatch %d = %+v, want %+v", i, rep.Mismatches[i], tt.mismatches[i])
				}
			}
			if rep.StreamsWithoutRow != tt.orphans || rep.DuplicateEventIDs != tt.duplicates || rep.LagEvents != tt.lag {
				t.Errorf("streams without a row %d, duplicates %d, lag %d; want %d, %d, %d",
					rep.StreamsWithoutRow, rep.DuplicateEventIDs, rep.LagEvents, tt.orphans, tt.duplicates, tt.lag)
			}
			if !maps.Equal(rep.Jobs, tt.jobs) || (rep.OldestRunningJob != nil) != (tt.jobs["running"] > 0) {
				t.Errorf("jobs = %v (oldest running %v), want %v", rep.Jobs, rep.OldestRunningJob, tt.jobs)
			}
			named := tt.ledger == ""
			for _, p := range rep.LedgerProblems {
				named = named || p.Payment == tt.ledger
			}
			if !named {
				t.Errorf("ledger problems %+v name no %s", rep.LedgerProblems, tt.ledger)
			}
			if tt.name == "clean" && len(rep.LedgerProblems) > 0 || rep.LedgerEntries == 0 {
				t.Errorf("%d ledger entries checked, problems %+v", rep.LedgerEntries, rep.LedgerProblems)
			}
			wantOK := len(tt.mismatches) == 0 && tt.orphans == 0 && tt.duplicates == 0 && tt.ledger == ""
			if rep.OK != wantOK {
				t.Errorf("ok = %v, want %v", rep.OK, wantOK)
			}
		})
	}
}

// TestVerifyCommand runs `ledger verify` through run, as main does: the exit
// error, the JSON report, and the human summary.
func TestVerifyCommand(t *testing.T) {
	cfg, pool := projectedLedger(t)
	env := mapEnv(map[string]string{"LEDGER_DATABASE_URL": cfg.DatabaseURL, "LEDGER_LOG_LEVEL": "error"})

	var out bytes.Buffer
	if err := run(t.Context(), []string{"verify", "--json"}, env, &out, io.Discard); err != nil {
		t.Fatalf("clean ledger: %v\n%s", err, out.String())
	}
	var rep verifyReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || !rep.OK || rep.PaymentsChecked != 3 || rep.EventsFolded != 8 {
		t.Fatalf("report %+v (%v):\n%s", rep, err, out.String())
	}

	if _, err := pool.Exec(t.Context(), `UPDATE payments SET currency = 'EUR' WHERE provider_payment_id = 'pi_3QvA-refund_1'`); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := run(t.Context(), []string{"verify"}, env, &out, io.Discard)
	if !errors.Is(err, errVerifyFailed) {
		t.Fatalf("corrupted ledger: err = %v, want errVerifyFailed\n%s", err, out.String())
	}
	for _, want := range []string{
		"payments checked 3, mismatched 1, streams without a row 0, duplicate event IDs 0",
		"mismatch stripe/pi_3QvA-refund_1 currency: read model EUR, fold of stream BRL",
		"FAILED",
	} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestVerifyKurrentDB checks the fold comparison against KurrentDB (through
// the official client and kurrenttest): the read model's streams are read
// from it, and the whole-store checks say they were not made.
func TestVerifyKurrentDB(t *testing.T) {
	srv := newKurrent(t)
	store, err := kurrentdb.Open(t.Context(), srv.URL(), kurrentdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	pool := pgtest.NewPool(t)
	cfg := project(t, pool, store, map[string]string{"LEDGER_EVENTSTORE_URL": srv.URL()})

	for _, tt := range []struct {
		corrupt string
		want    int
	}{
		{"", 0},
		{`UPDATE payments SET updated_at = updated_at + interval '1 second' WHERE provider_payment_id = 'pi_3QvC-dispute_3'`, 1},
	} {
		if tt.corrupt != "" {
			if _, err := pool.Exec(t.Context(), tt.corrupt); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := verifyLedger(t.Context(), cfg, verifyOptions{}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Backend != "kurrentdb" || rep.PaymentsChecked != 3 || rep.EventsFolded != 8 || rep.LagEvents != -1 ||
			len(rep.NotChecked) == 0 || rep.Mismatched != tt.want || rep.OK != (tt.want == 0) {
			t.Errorf("after %q: report %+v", tt.corrupt, rep)
		}
	}
}
