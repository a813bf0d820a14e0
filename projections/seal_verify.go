package projections

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
)

// ChainFindingKind says what VerifyChains found wrong with a stream.
type ChainFindingKind string

// Kinds of ChainFinding. All but ChainUnsealed break the chain.
const (
	// ChainBroken: the event's recomputed hash differs from its seal.
	ChainBroken ChainFindingKind = "broken"
	// ChainMissing: a sealed revision has no event in the store.
	ChainMissing ChainFindingKind = "missing"
	// ChainUnsealedGap: an event has no seal though later ones do.
	ChainUnsealedGap ChainFindingKind = "unsealed_gap"
	// ChainUnsealed: the stream's last events are not sealed yet (the
	// sealer is behind); not a break.
	ChainUnsealed ChainFindingKind = "unsealed"
	// ChainSealMissing: an event the sealer has passed (it lies at or
	// before the sealer's checkpoint, which commits with its seals) has no
	// seal: seals were deleted.
	ChainSealMissing ChainFindingKind = "seal_missing"
)

// ChainFinding is the first finding of one stream. Expected is the sealed
// hash, Found the recomputed one (zero when there is none to compare).
// For ChainUnsealed and ChainSealMissing, Revision is the first unsealed
// revision, Position its place in the store and Events the length of the
// unsealed tail.
type ChainFinding struct {
	Kind     ChainFindingKind
	Stream   string
	Revision uint64
	Expected [32]byte
	Found    [32]byte
	Events   int
	Position eventstore.Position
}

// MaxChainFindings bounds each list of a ChainReport; the counts go on.
const MaxChainFindings = 1000

// ChainReport is what VerifyChains found.
type ChainReport struct {
	Streams  int // sealed streams checked
	Events   int // sealed events checked
	Broken   []ChainFinding
	Unsealed []ChainFinding
	// BrokenStreams and UnsealedStreams count every finding, listed or not.
	BrokenStreams, UnsealedStreams int
	// sealedUpTo is the sealer's checkpoint when the run began: an
	// unsealed event at or before it lost its seal.
	sealedUpTo eventstore.Position
}

// OK reports whether no chain is broken (unsealed tails are not breaks).
func (r ChainReport) OK() bool { return r.BrokenStreams == 0 }

// sealRow is one stored seal.
type sealRow struct {
	rev  uint64
	hash [32]byte
}

// verifyPage is how many stream names one keyset page reads.
const verifyPage = 500

// ChainOption is an optional input of VerifyChains.
type ChainOption func(*chainOptions)

type chainOptions struct {
	events *pgxpool.Pool
}

// WithEventTable says the event store is Postgres with its es_events in
// events (the seals' pool or a database of its own). VerifyChains then also
// lists every stream there without a single seal as ChainUnsealed from its
// first revision: a walk of the seals cannot see such a stream (the sealer
// far behind, or its seals deleted). KurrentDB has no cheap list of
// streams, so there the walk of the seals is all.
func WithEventTable(events *pgxpool.Pool) ChainOption {
	return func(o *chainOptions) { o.events = events }
}

// VerifyChains re-computes the chain of every sealed stream from the
// store's events and compares it with the seals, one page of streams (their
// seals and events) in memory at a time. progress, when set, is told
// the sealed events checked out of the total after each stream.
func VerifyChains(ctx context.Context, streams StreamReader, pool *pgxpool.Pool, progress func(done, total int), opts ...ChainOption) (ChainReport, error) {
	var o chainOptions
	for _, opt := range opts {
		opt(&o)
	}
	rep, err := verifyChains(ctx, streams, pool, progress, verifyPage)
	if err != nil || o.events == nil {
		return rep, err
	}
	return rep, rep.addUnsealedStreams(ctx, o.events, pool, verifyPage)
}

// newChainReport starts a report from the sealer's checkpoint.
func newChainReport(ctx context.Context, pool *pgxpool.Pool) (ChainReport, error) {
	var rep ChainReport
	var err error
	rep.sealedUpTo, err = readCheckpoint(ctx, pool, DefaultSealerName)
	return rep, err
}

// verifyChains is VerifyChains with page streams a page.
func verifyChains(ctx context.Context, streams StreamReader, pool *pgxpool.Pool, progress func(done, total int), page int) (ChainReport, error) {
	rep, err := newChainReport(ctx, pool)
	if err != nil {
		return rep, err
	}
	var total int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM event_seals").Scan(&total); err != nil {
		return rep, fmt.Errorf("projections: verify chains: count seals: %w", err)
	}
	after := ""
	for {
		names, seals, err := sealPage(ctx, pool, after, page)
		if err != nil {
			return rep, err
		}
		if err := rep.checkPage(ctx, streams, names, seals, progress, total); err != nil {
			return rep, err
		}
		if len(names) < page {
			return rep, nil
		}
		after = names[len(names)-1]
	}
}

// checkPage reads the page's streams and checks each against its seals. A
// stream with neither seals nor events is skipped, and one with events but
// no seal is its unsealed tail, not a checked stream.
func (rep *ChainReport) checkPage(ctx context.Context, streams StreamReader, names []string,
	seals map[string][]sealRow, progress func(done, total int), total int) error {
	events, err := readStreams(ctx, streams, names)
	if err != nil {
		return err
	}
	for i, name := range names {
		if len(seals[name]) == 0 && len(events[i]) == 0 {
			continue
		}
		rep.add(verifyStream(name, seals[name], events[i]))
		if len(seals[name]) > 0 {
			rep.Streams++
		}
		rep.Events += len(seals[name])
		events[i] = nil
		if progress != nil {
			progress(rep.Events, total)
		}
	}
	return nil
}

// sealPage reads the seals of the next page streams after after, in
// stream and revision order.
func sealPage(ctx context.Context, pool *pgxpool.Pool, after string, page int) ([]string, map[string][]sealRow, error) {
	rows, _ := pool.Query(ctx, `SELECT s.stream, s.revision, s.hash FROM event_seals s
		WHERE s.stream IN (SELECT DISTINCT stream FROM event_seals WHERE stream > $1 ORDER BY stream LIMIT $2)
		ORDER BY s.stream, s.revision`, after, page)
	var names []string
	seals := map[string][]sealRow{}
	var (
		stream string
		rev    int64
		hash   []byte
	)
	_, err := pgx.ForEachRow(rows, []any{&stream, &rev, &hash}, func() error {
		if len(names) == 0 || names[len(names)-1] != stream {
			names = append(names, stream)
		}
		r := sealRow{rev: uint64(rev)}
		copy(r.hash[:], hash)
		seals[stream] = append(seals[stream], r)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("projections: verify chains: seals after %q: %w", after, err)
	}
	return names, seals, nil
}

// verifyReaders is how many streams of a page are read at once: reads are
// round trips, and overlapping a few keeps the verifier from waiting on each.
const verifyReaders = 4

// readStreams reads the page's streams, verifyReaders at a time.
func readStreams(ctx context.Context, streams StreamReader, names []string) ([][]eventstore.RecordedEvent, error) {
	out := make([][]eventstore.RecordedEvent, len(names))
	errs := make([]error, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(verifyReaders, len(names)) {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = streams.ReadStream(ctx, names[i])
			}
		})
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("projections: verify chains: read %s: %w", names[i], err)
		}
	}
	return out, nil
}

// add counts a stream's finding, if any, listing it while there is room.
func (rep *ChainReport) add(f ChainFinding, ok bool) {
	if ok && f.Kind == ChainUnsealed && f.Position != eventstore.Start && f.Position.Compare(rep.sealedUpTo) <= 0 {
		f.Kind = ChainSealMissing
	}
	switch {
	case !ok:
	case f.Kind == ChainUnsealed:
		rep.UnsealedStreams++
		if len(rep.Unsealed) < MaxChainFindings {
			rep.Unsealed = append(rep.Unsealed, f)
		}
	default:
		rep.BrokenStreams++
		if len(rep.Broken) < MaxChainFindings {
			rep.Broken = append(rep.Broken, f)
		}
	}
}

// verifyStream walks seals and events (both in revision order) together
// and returns the stream's first finding, if any.
func verifyStream(stream string, seals []sealRow, events []eventstore.RecordedEvent) (ChainFinding, bool) {
	prev := eventstore.ChainSeed
	i, j := 0, 0
	for i < len(seals) || j < len(events) {
		switch {
		case i == len(seals):
			return ChainFinding{Kind: ChainUnsealed, Stream: stream, Revision: events[j].Revision, Events: len(events) - j,
				Position: events[j].Position}, true
		case j == len(events) || seals[i].rev < events[j].Revision:
			return ChainFinding{Kind: ChainMissing, Stream: stream, Revision: seals[i].rev, Expected: seals[i].hash}, true
		case events[j].Revision < seals[i].rev:
			found := eventstore.ChainHash(prev, events[j])
			return ChainFinding{Kind: ChainUnsealedGap, Stream: stream, Revision: events[j].Revision, Found: found}, true
		}
		h := eventstore.ChainHash(prev, events[j])
		if h != seals[i].hash {
			return ChainFinding{Kind: ChainBroken, Stream: stream, Revision: events[j].Revision, Expected: seals[i].hash, Found: h}, true
		}
		prev = h
		i++
		j++
	}
	return ChainFinding{}, false
}

// SealCounts is how many events are sealed, and how many of those by the
// backfill (recorded before the chain began).
type SealCounts struct {
	Sealed, Backfill int
	// Epoch is when the chain began (the migration of event_seals).
	Epoch time.Time
}

// CountSeals counts the seals.
func CountSeals(ctx context.Context, pool *pgxpool.Pool) (SealCounts, error) {
	var c SealCounts
	var epoch *time.Time
	err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE backfill),
		(SELECT started_at FROM event_seal_epoch) FROM event_seals`).Scan(&c.Sealed, &c.Backfill, &epoch)
	if err != nil {
		return c, fmt.Errorf("projections: count seals: %w", err)
	}
	if epoch != nil {
		c.Epoch = *epoch
	}
	return c, nil
}

// storedStream is one stream of es_events: its first revision and how many
// events it holds.
type storedStream struct {
	Name   string
	First  int64
	Events int
	At     []int64 // the first event's (tx_id, seq)
}

// addUnsealedStreams walks the streams of es_events in events, a keyset
// page at a time, and adds each one with no seal in seals as unsealed. The
// two may be different databases, so each page's names are looked up in
// seals rather than joined.
func (rep *ChainReport) addUnsealedStreams(ctx context.Context, events, seals *pgxpool.Pool, page int) error {
	after := ""
	for {
		rows, _ := events.Query(ctx, `SELECT stream, min(revision), count(*), min(ARRAY[tx_id, seq]) FROM es_events
			WHERE stream > $1 GROUP BY stream ORDER BY stream LIMIT $2`, after, page)
		stored, err := pgx.CollectRows(rows, pgx.RowToStructByPos[storedStream])
		if err != nil {
			return fmt.Errorf("projections: verify chains: streams after %q: %w", after, err)
		}
		unsealed, err := unsealedOf(ctx, seals, stored)
		if err != nil {
			return err
		}
		for _, s := range stored {
			if unsealed[s.Name] {
				rep.add(ChainFinding{Kind: ChainUnsealed, Stream: s.Name, Revision: uint64(s.First), Events: s.Events,
					Position: eventstore.Position{Commit: uint64(s.At[0]), Prepare: uint64(s.At[1])}}, true)
			}
		}
		if len(stored) < page {
			return nil
		}
		after = stored[len(stored)-1].Name
	}
}

// unsealedOf returns which of the stored streams have no seal at all.
func unsealedOf(ctx context.Context, seals *pgxpool.Pool, stored []storedStream) (map[string]bool, error) {
	names := make([]string, len(stored))
	for i, s := range stored {
		names[i] = s.Name
	}
	rows, _ := seals.Query(ctx, `SELECT n FROM unnest($1::text[]) n
		WHERE NOT EXISTS (SELECT 1 FROM event_seals s WHERE s.stream = n)`, names)
	out := map[string]bool{}
	var name string
	_, err := pgx.ForEachRow(rows, []any{&name}, func() error {
		out[name] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("projections: verify chains: streams without seals: %w", err)
	}
	return out, nil
}
