package projections

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/logtest"
	"github.com/payledger/payledger/internal/pgtest"
)

// sealFixture is a Postgres store and a sealer on one fresh database.
type sealFixture struct {
	pool   *pgxpool.Pool
	store  *postgres.Store
	sealer *Sealer
	log    *logtest.Recorder
}

func newSealFixture(t testing.TB) sealFixture {
	t.Helper()
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond, BatchSize: 16})
	log := &logtest.Recorder{}
	cfg := SealerConfig{BatchSize: 3, RetryMin: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond, Logger: log.Logger()}
	return sealFixture{pool: pool, store: store, sealer: NewSealer(cfg, pool, store), log: log}
}

// sealStreams are the fixture's streams; IDs look real, dashes included.
var sealStreams = []string{"payment-stripe-pi_3Nk-x_Y2eZ", "payment-asaas-pay_8f-2a", "deadletter-17"}

// appendEvents appends n events to stream, one append each, with distinct
// data and metadata (none on every third) and returns the last position.
func (f sealFixture) appendEvents(t testing.TB, stream string, n int) eventstore.Position {
	t.Helper()
	var last eventstore.Position
	for i := range n {
		meta := []byte(fmt.Sprintf(`{"source": "webhook", "request_id": "req_%d"}`, i))
		if i%3 == 2 {
			meta = nil
		}
		res, err := f.store.Append(t.Context(), stream, eventstore.Any(), []eventstore.EventData{{
			ID: uuid.New(), Type: "payment.succeeded.v1", Metadata: meta,
			Data: []byte(fmt.Sprintf(`{"amount": %d, "currency": "BRL", "note": "é \u00e9"}`, 1000+i)),
		}})
		if err != nil {
			t.Fatalf("append %s: %v", stream, err)
		}
		last = res.Position
	}
	return last
}

// sealAll seals until the sealer's checkpoint is the store's last event.
// SealUntilIdle may return early when the feed holds back (a transaction of
// another test on the server holds the xmin horizon), so it loops.
func (f sealFixture) sealAll(t testing.TB) {
	t.Helper()
	var head eventstore.Position
	err := f.pool.QueryRow(t.Context(), "SELECT tx_id, seq FROM es_events ORDER BY tx_id DESC, seq DESC LIMIT 1").
		Scan(&head.Commit, &head.Prepare)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "sealed up to "+head.String(), func() bool {
		if err := f.sealer.SealUntilIdle(t.Context(), 300*time.Millisecond); err != nil {
			t.Fatalf("SealUntilIdle: %v", err)
		}
		p, err := f.sealer.Position(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return p.Compare(head) >= 0
	})
}

func (f sealFixture) verify(t testing.TB) ChainReport {
	t.Helper()
	rep, err := VerifyChains(t.Context(), f.store, f.pool, nil)
	if err != nil {
		t.Fatalf("VerifyChains: %v", err)
	}
	return rep
}

func (f sealFixture) count(t testing.TB, where string) int {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(t.Context(), "SELECT count(*) FROM event_seals WHERE "+where).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// populate appends 4 events to each fixture stream, as stored before the
// chain began (the epoch is moved after them), and seals them.
func (f sealFixture) populate(t testing.TB) {
	t.Helper()
	for _, s := range sealStreams {
		f.appendEvents(t, s, 4)
	}
	if _, err := f.pool.Exec(t.Context(), "UPDATE event_seal_epoch SET started_at = clock_timestamp()"); err != nil {
		t.Fatal(err)
	}
	f.sealAll(t)
}

func TestSealAndVerifyChainsClean(t *testing.T) {
	f := newSealFixture(t)
	f.populate(t)
	rep := f.verify(t)
	if !rep.OK() || rep.Streams != 3 || rep.Events != 12 || rep.UnsealedStreams != 0 {
		t.Fatalf("report %+v, want 3 intact streams of 12 sealed events", rep)
	}
	// Recorded before the chain began: sealed as backfill.
	if n := f.count(t, "backfill"); n != 12 {
		t.Errorf("%d backfill seals, want 12", n)
	}
	// Appended after: sealed as they come, not as backfill.
	f.appendEvents(t, sealStreams[0], 2)
	f.sealAll(t)
	if n, b := f.count(t, "true"), f.count(t, "backfill"); n != 14 || b != 12 {
		t.Errorf("%d seals, %d backfill; want 14, 12", n, b)
	}
	if rep := f.verify(t); !rep.OK() || rep.Events != 14 || rep.UnsealedStreams != 0 {
		t.Errorf("report after more events %+v", rep)
	}
	// Pages of 1 and 2 streams (a full last page, a short one) see the
	// same, and progress reaches the total.
	for _, page := range []int{1, 2} {
		var done, total int
		rep, err := verifyChains(t.Context(), f.store, f.pool, func(d, n int) { done, total = d, n }, page)
		if err != nil || !rep.OK() || rep.Streams != 3 || rep.Events != 14 || done != 14 || total != 14 {
			t.Errorf("page %d: %+v, %v, progress %d/%d", page, rep, err, done, total)
		}
	}
}

// TestVerifyChainsNamesTheFirstBrokenLink alters one stream by SQL, as an
// attacker with write access to the store would, and expects exactly that
// stream and revision to be named.
func TestVerifyChainsNamesTheFirstBrokenLink(t *testing.T) {
	target := sealStreams[1]
	tests := []struct {
		name     string
		sql      []string
		kind     ChainFindingKind
		revision uint64
	}{
		{"data", []string{`UPDATE es_events SET data = jsonb_set(data, '{amount}', '999999') WHERE stream = $1 AND revision = 1`}, ChainBroken, 1},
		{"metadata", []string{`UPDATE es_events SET metadata = '{"source": "api"}' WHERE stream = $1 AND revision = 2`}, ChainBroken, 2},
		{"metadata removed", []string{`UPDATE es_events SET metadata = NULL WHERE stream = $1 AND revision = 0`}, ChainBroken, 0},
		{"type", []string{`UPDATE es_events SET type = 'payment.failed.v1' WHERE stream = $1 AND revision = 3`}, ChainBroken, 3},
		{"order", []string{
			`UPDATE es_events SET revision = 100 WHERE stream = $1 AND revision = 1`,
			`UPDATE es_events SET revision = 1 WHERE stream = $1 AND revision = 2`,
			`UPDATE es_events SET revision = 2 WHERE stream = $1 AND revision = 100`,
		}, ChainBroken, 1},
		{"deleted", []string{`DELETE FROM es_events WHERE stream = $1 AND revision = 2`}, ChainMissing, 2},
		{"seal rewritten", []string{`UPDATE event_seals SET hash = sha256(hash) WHERE stream = $1 AND revision = 1`}, ChainBroken, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSealFixture(t)
			f.populate(t)
			for _, q := range tt.sql {
				if _, err := f.pool.Exec(t.Context(), q, target); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			rep := f.verify(t)
			if rep.OK() || rep.BrokenStreams != 1 || len(rep.Broken) != 1 {
				t.Fatalf("report %+v, want one broken stream", rep)
			}
			got := rep.Broken[0]
			if got.Kind != tt.kind || got.Stream != target || got.Revision != tt.revision {
				t.Errorf("finding %s %s@%d, want %s %s@%d", got.Kind, got.Stream, got.Revision, tt.kind, target, tt.revision)
			}
			if got.Expected == got.Found {
				t.Errorf("expected and found are both %x", got.Expected)
			}
		})
	}
}

func TestVerifyChainsReportsAnUnsealedTailAsUnsealed(t *testing.T) {
	f := newSealFixture(t)
	f.populate(t)
	f.appendEvents(t, sealStreams[2], 2) // not sealed: the sealer is not running
	rep := f.verify(t)
	if !rep.OK() || rep.UnsealedStreams != 1 || len(rep.Unsealed) != 1 {
		t.Fatalf("report %+v, want intact with one unsealed tail", rep)
	}
	checkFindings(t, "unsealed", rep.Unsealed, rep.UnsealedStreams,
		[]ChainFinding{{Kind: ChainUnsealed, Stream: sealStreams[2], Revision: 4, Events: 2}})
}

// TestSealerIsIdempotent runs the sealer again, then replays the whole feed
// from the start (a lost checkpoint): no seal is added or changed, and a
// re-delivered event altered meanwhile keeps its seal.
func TestSealerIsIdempotent(t *testing.T) {
	f := newSealFixture(t)
	f.populate(t)
	before := dump(t, f.pool, `SELECT stream || '@' || revision, encode(hash, 'hex') || sealed_at::text FROM event_seals`)
	f.sealAll(t)
	if _, err := f.pool.Exec(t.Context(), `UPDATE es_events SET data = '{"amount": 1}' WHERE stream = $1 AND revision = 3`, sealStreams[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(t.Context(), `DELETE FROM projection_checkpoints WHERE name = $1`, DefaultSealerName); err != nil {
		t.Fatal(err)
	}
	f.sealAll(t)
	diffDumps(t, "seals", dump(t, f.pool, `SELECT stream || '@' || revision, encode(hash, 'hex') || sealed_at::text FROM event_seals`), before)
	if n := f.log.Count("chain finding", "does not match its seal", "stream="+sealStreams[0], "revision=3"); n != 1 {
		t.Errorf("%d findings logged for the altered event, want 1", n)
	}
	if n := f.log.Count("chain finding"); n != 1 {
		t.Errorf("%d findings logged, want 1", n)
	}
	rep := f.verify(t)
	if rep.BrokenStreams != 1 || rep.Broken[0].Stream != sealStreams[0] || rep.Broken[0].Revision != 3 {
		t.Errorf("report %+v, want %s@3 broken", rep, sealStreams[0])
	}
}

// TestSealerResumesFromItsCheckpoint stops Run after the first events are
// sealed and starts a new sealer: it seals only what came after, and the
// first seals are not written again.
func TestSealerResumesFromItsCheckpoint(t *testing.T) {
	f := newSealFixture(t)
	first := f.appendEvents(t, sealStreams[0], 5)
	runSealerUntil(t, f.sealer, first)
	before := dump(t, f.pool, `SELECT stream || '@' || revision, encode(hash, 'hex') || sealed_at::text FROM event_seals`)

	f.appendEvents(t, sealStreams[1], 3)
	last := f.appendEvents(t, sealStreams[0], 2)
	next := NewSealer(f.sealer.cfg, f.pool, f.store)
	runSealerUntil(t, next, last)
	after := dump(t, f.pool, `SELECT stream || '@' || revision, encode(hash, 'hex') || sealed_at::text FROM event_seals`)
	if len(after) != 10 {
		t.Errorf("%d seals, want 10", len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("seal %s: %s, then %s", k, v, after[k])
		}
	}
	if rep := f.verify(t); !rep.OK() || rep.Events != 10 || rep.UnsealedStreams != 0 {
		t.Errorf("report %+v", rep)
	}
}

// runSealerUntil runs s until its checkpoint reaches want, then cancels it.
func runSealerUntil(t *testing.T, s *Sealer, want eventstore.Position) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	eventually(t, "sealer at "+want.String(), func() bool {
		p, err := s.Position(t.Context())
		if err != nil {
			t.Fatalf("Position: %v", err)
		}
		return p.Compare(want) >= 0
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v", err)
	}
}

// TestSealerSealsNewEventsWithinSeconds: on an idle system a running
// sealer seals an event well within the 10 s issue 19 allows.
func TestSealerSealsNewEventsWithinSeconds(t *testing.T) {
	f := newSealFixture(t)
	f.populate(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.sealer.Run(ctx) }()
	defer func() { cancel(); <-done }()
	time.Sleep(200 * time.Millisecond) // the sealer is idle, caught up
	start := time.Now()
	f.appendEvents(t, sealStreams[1], 1)
	for f.count(t, "true") != 13 {
		if time.Since(start) > 10*time.Second {
			t.Fatal("not sealed within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("sealed after %s", time.Since(start))
	if c, err := CountSeals(t.Context(), f.pool); err != nil || c.Sealed != 13 || c.Backfill != 12 || c.Epoch.IsZero() {
		t.Errorf("CountSeals = %+v, %v; want 13 sealed, 12 by backfill", c, err)
	}
}
