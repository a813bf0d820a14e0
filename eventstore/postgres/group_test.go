package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore"
)

// entry builds a queued append of ev to stream for flush and lead.
func entry(t *testing.T, ctx context.Context, stream string, ev eventstore.EventData) *groupEntry {
	t.Helper()
	c, err := newAppendCall(stream, eventstore.Any(), []eventstore.EventData{ev})
	if err != nil {
		t.Fatal(err)
	}
	return &groupEntry{ctx: ctx, call: c, done: make(chan groupAnswer, 1)}
}

// storedRevision is where event id is stored, or -1.
func storedRevision(t *testing.T, s *Store, id uuid.UUID) (string, int64) {
	t.Helper()
	var stream string
	var rev int64 = -1
	err := s.pool.QueryRow(t.Context(), `SELECT stream, revision FROM es_events WHERE event_id = $1`, id).Scan(&stream, &rev)
	if err != nil && rev != -1 {
		t.Fatal(err)
	}
	return stream, rev
}

// TestGroupFlushOutcomes: one merged call answers every kind of element
// on its own: new events on new and existing streams (several on one
// stream take consecutive revisions), a redelivery of a stored event, the
// same event twice in the call, an event ID stored in another stream.
func TestGroupFlushOutcomes(t *testing.T) {
	ctx := t.Context()
	s := New(newPool(t, 4), Options{})
	const (
		sA = "payment-stripe-pi_grpA"
		sB = "payment-stripe-pi_grpB"
		sC = "payment-stripe-pi_grpC"
	)
	stored := testEvent(t, sA, "stored")
	if _, err := s.Append(ctx, sA, eventstore.Any(), []eventstore.EventData{stored}); err != nil {
		t.Fatal(err)
	}
	elsewhere := testEvent(t, sC, "elsewhere")
	if _, err := s.Append(ctx, sC, eventstore.Any(), []eventstore.EventData{elsewhere}); err != nil {
		t.Fatal(err)
	}
	a1, a2, b1 := testEvent(t, sA, "a1"), testEvent(t, sA, "a2"), testEvent(t, sB, "b1")
	batch := []*groupEntry{
		entry(t, ctx, sA, a1),
		entry(t, ctx, sB, b1),
		entry(t, ctx, sA, stored),    // redelivery of a stored event
		entry(t, ctx, sA, a1),        // the same event twice in one call
		entry(t, ctx, sB, elsewhere), // an ID stored in another stream
		entry(t, ctx, sA, a2),
		entry(t, ctx, sC, a1), // the first copy's ID, another stream
	}
	g := newGroup(s, 64, 1, time.Minute)
	answers := g.flush(ctx, batch)

	tests := []struct {
		name    string
		dup     bool
		rev     uint64
		wantErr bool
	}{
		{name: "new on existing stream", rev: 1},
		{name: "new stream", rev: 0},
		{name: "redelivery", dup: true, rev: 0},
		{name: "repeat within the call", dup: true, rev: 1},
		{name: "stored in another stream", wantErr: true},
		{name: "second new on one stream", rev: 2},
		{name: "repeat within the call, another stream", wantErr: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := answers[i]
			if tt.wantErr {
				if a.err == nil {
					t.Fatalf("answer = %+v, want an error", a.res)
				}
				return
			}
			if a.err != nil {
				t.Fatal(a.err)
			}
			if a.res.Duplicate != tt.dup || a.res.Revision != tt.rev {
				t.Fatalf("answer = %+v, want duplicate %t revision %d", a.res, tt.dup, tt.rev)
			}
			if !tt.dup && a.res.Position.Commit == 0 {
				t.Fatalf("answer %+v has no position", a.res)
			}
		})
	}
	if stream, rev := storedRevision(t, s, a2.ID); stream != sA || rev != 2 {
		t.Fatalf("a2 stored at %s@%d, want %s@2", stream, rev, sA)
	}
	if stream, _ := storedRevision(t, s, elsewhere.ID); stream != sC {
		t.Fatalf("the event stored elsewhere moved to %s", stream)
	}
	// Within a stream the feed (transaction, then seq) follows revisions.
	assertFeedFollowsRevisions(t, s)
}

// assertFeedFollowsRevisions fails when a stream's revisions have a gap or
// do not follow the global feed's order.
func assertFeedFollowsRevisions(t *testing.T, s *Store) {
	t.Helper()
	var bad int
	err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM (
		SELECT revision, row_number() OVER (PARTITION BY stream ORDER BY tx_id, seq) - 1 AS pos
		  FROM es_events) x WHERE revision <> pos`).Scan(&bad)
	if err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Fatalf("%d events are out of their stream's revision order in the feed, or after a gap", bad)
	}
}

// TestGroupFallsBackOneByOne: an event whose revision a writer outside the
// stream locks takes meanwhile cannot be inserted; the merged call rolls
// back (no gap, nothing half-written) and every element is appended on its
// own instead.
func TestGroupFallsBackOneByOne(t *testing.T) {
	ctx := t.Context()
	pool := newPool(t, 4)
	s := New(pool, Options{})
	const sA, sB = "payment-stripe-pi_grpFallA", "payment-stripe-pi_grpFallB"

	// A writer that skips es_lock_stream holds revision 0 of sA, uncommitted.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	rogue := testEvent(t, sA, "rogue")
	if _, err := tx.Exec(ctx, `INSERT INTO es_events (stream, revision, event_id, type, data) VALUES ($1, 0, $2, $3, $4)`,
		sA, rogue.ID, rogue.Type, rogue.Data); err != nil {
		t.Fatal(err)
	}

	a, a2, b := testEvent(t, sA, "a"), testEvent(t, sA, "a2"), testEvent(t, sB, "b")
	g := newGroup(s, 64, 1, time.Minute)
	done := make(chan []groupAnswer, 1)
	go func() {
		done <- g.flush(ctx, []*groupEntry{entry(t, ctx, sB, b), entry(t, ctx, sA, a), entry(t, ctx, sA, a2)})
	}()

	// Once the merged insert waits on the rogue row's index entry, commit it.
	waitForLockWait(t, pool)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	answers := <-done
	for i, want := range []uint64{0, 1, 2} {
		if answers[i].err != nil || answers[i].res.Duplicate || answers[i].res.Revision != want {
			t.Fatalf("answer %d = %+v, %v; want appended at %d", i, answers[i].res, answers[i].err, want)
		}
	}
	assertFeedFollowsRevisions(t, s)
}

// TestGroupCancelled: a caller that gives up while queued is withdrawn and
// never appended; one that gave up before its call was sent is skipped by
// the leader, while the rest of the call is appended.
func TestGroupCancelled(t *testing.T) {
	ctx := t.Context()
	s := New(newPool(t, 4), Options{})
	g := newGroup(s, 64, 1, time.Minute)
	l := &g.lanes[0]

	// The lane is busy: a new append queues; cancelling it withdraws it.
	l.busy = true
	queued, cancel := context.WithCancel(ctx)
	const stream = "payment-stripe-pi_grpCancel"
	withdrawn := testEvent(t, stream, "withdrawn")
	c, err := newAppendCall(stream, eventstore.Any(), []eventstore.EventData{withdrawn})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { _, err := g.append(queued, c); errc <- err }()
	for {
		l.mu.Lock()
		n := len(l.queue)
		l.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled append = %v, want context.Canceled", err)
	}
	if len(l.queue) != 0 {
		t.Fatalf("queue holds %d entries after the withdrawal", len(l.queue))
	}

	// Queued behind a leader: one gave up already, one did not.
	gaveUp, cancelled := context.WithCancel(ctx)
	cancelled()
	skipped, kept := testEvent(t, stream, "skipped"), testEvent(t, stream, "kept")
	skippedEntry, keptEntry := entry(t, gaveUp, stream, skipped), entry(t, ctx, stream, kept)
	l.queue = []*groupEntry{skippedEntry, keptEntry}
	lead := testEvent(t, stream, "lead")
	res, err := g.lead(ctx, l, entry(t, ctx, stream, lead))
	if err != nil || res.Revision != 0 {
		t.Fatalf("leader's append = %+v, %v", res, err)
	}
	if a := <-skippedEntry.done; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("the entry that gave up got %+v, %v; want context.Canceled", a.res, a.err)
	}
	if a := <-keptEntry.done; a.err != nil || a.res.Revision != 1 {
		t.Fatalf("the queued entry got %+v, %v; want appended at 1", a.res, a.err)
	}
	for _, ev := range []struct {
		e    eventstore.EventData
		want int64
	}{{withdrawn, -1}, {skipped, -1}, {kept, 1}} {
		if _, rev := storedRevision(t, s, ev.e.ID); rev != ev.want {
			t.Fatalf("event %s stored at revision %d, want %d", ev.e.ID, rev, ev.want)
		}
	}
	if l.busy || len(l.queue) != 0 {
		t.Fatalf("lane busy %t with %d queued after the leader finished", l.busy, len(l.queue))
	}
}

// TestGroupConcurrentStorm: many callers, few streams, every event
// delivered three times in random order and all at once, mixed with
// multi-event appends that bypass the group. Every event is stored once,
// exactly one delivery of each is not a duplicate, every answer names the
// stored revision, and every stream is gapless in feed order.
func TestGroupConcurrentStorm(t *testing.T) {
	ctx := t.Context()
	s := New(newPool(t, 16), Options{})
	const streams, perStream, copies = 12, 25, 3
	type delivery struct {
		stream string
		ev     eventstore.EventData
	}
	var all []delivery
	for i := range streams {
		stream := fmt.Sprintf("payment-stripe-pi_storm%d", i)
		for j := range perStream {
			ev := testEvent(t, stream, fmt.Sprint(j))
			for range copies {
				all = append(all, delivery{stream, ev})
			}
		}
	}
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })

	type answer struct {
		id  uuid.UUID
		res eventstore.AppendResult
	}
	answers := make(chan answer, len(all))
	var wg sync.WaitGroup
	next := make(chan delivery)
	for range 48 {
		wg.Go(func() {
			for d := range next {
				res, err := s.Append(ctx, d.stream, eventstore.Any(), []eventstore.EventData{d.ev})
				if err != nil {
					t.Error(err)
					continue
				}
				answers <- answer{d.ev.ID, res}
			}
		})
	}
	// Batches through es_append on the same streams, at the same time.
	for i := range streams {
		wg.Go(func() {
			stream := fmt.Sprintf("payment-stripe-pi_storm%d", i)
			batch := []eventstore.EventData{testEvent(t, stream, "batch-x"), testEvent(t, stream, "batch-y")}
			if _, err := s.Append(ctx, stream, eventstore.Any(), batch); err != nil {
				t.Error(err)
			}
		})
	}
	for _, d := range all {
		next <- d
	}
	close(next)
	wg.Wait()
	close(answers)

	fresh := make(map[uuid.UUID]int)
	for a := range answers {
		if !a.res.Duplicate {
			fresh[a.id]++
		}
		_, rev := storedRevision(t, s, a.id)
		if uint64(rev) != a.res.Revision {
			t.Errorf("event %s answered revision %d, stored at %d", a.id, a.res.Revision, rev)
		}
	}
	for id, n := range fresh {
		if n != 1 {
			t.Errorf("event %s appended %d times", id, n)
		}
	}
	if len(fresh) != streams*perStream {
		t.Errorf("%d events answered as new, want %d", len(fresh), streams*perStream)
	}
	var rows int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM es_events`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if want := streams * (perStream + 2); rows != want {
		t.Errorf("%d rows stored, want %d", rows, want)
	}
	assertFeedFollowsRevisions(t, s)
}

// TestGroupOneRoundTrip: a merged call is one round trip however many
// appends it carries, once pgx has prepared its statement.
func TestGroupOneRoundTrip(t *testing.T) {
	ctx := t.Context()
	pool, writes := countingPool(t)
	s := New(pool, Options{})
	g := newGroup(s, 64, 1, time.Minute)
	batch := func(key string) []*groupEntry {
		var b []*groupEntry
		for i := range 5 {
			stream := fmt.Sprintf("payment-stripe-pi_grpTrip%d", i%2)
			b = append(b, entry(t, ctx, stream, testEvent(t, stream, fmt.Sprint(key, i))))
		}
		return b
	}
	for _, a := range g.flush(ctx, batch("warm")) {
		if a.err != nil {
			t.Fatal(a.err)
		}
	}
	before := writes.Load()
	for _, a := range g.flush(ctx, batch("measured")) {
		if a.err != nil || a.res.Duplicate {
			t.Fatalf("answer %+v, %v", a.res, a.err)
		}
	}
	if n := writes.Load() - before; n != 1 {
		t.Fatalf("a merged call of 5 appends took %d round trips, want 1", n)
	}
}

// TestGroupPanicDoesNotWedgeTheLane: a bug that panics inside a merged call
// answers every caller in it with an error and hands the lane on, instead
// of leaving the callers waiting and the lane busy for good.
func TestGroupPanicDoesNotWedgeTheLane(t *testing.T) {
	ctx := t.Context()
	s := New(newPool(t, 2), Options{})
	g := newGroup(s, 64, 1, time.Minute)
	l := &g.lanes[0]
	const stream = "payment-stripe-pi_grpPanic"
	queued := entry(t, ctx, stream, testEvent(t, stream, "queued"))
	broken := &groupEntry{ctx: ctx, call: appendCall{op: "broken"}, done: make(chan groupAnswer, 1)} // no event: flush panics
	l.busy = true
	l.queue = []*groupEntry{queued}
	if _, err := g.lead(ctx, l, broken); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("leader's answer = %v, want the panic as an error", err)
	}
	if a := <-queued.done; a.err == nil {
		t.Fatalf("queued caller got %+v, want an error", a.res)
	}
	if l.busy || len(l.queue) != 0 {
		t.Fatalf("lane busy %t with %d queued after the panic", l.busy, len(l.queue))
	}
	// The lane works again.
	if _, err := g.append(ctx, queued.call); err != nil {
		t.Fatal(err)
	}
}
