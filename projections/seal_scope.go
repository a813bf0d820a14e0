package projections

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// VerifyChainsOf is VerifyChains of the named streams only (a slice of the
// ledger, such as `ledger verify --payment`), one page of names at a time.
// A named stream with no seal at all is not counted as checked; if it has
// events they are its unsealed tail. progress, when set, is told the
// sealed events checked out of the slice's total after each stream.
func VerifyChainsOf(ctx context.Context, streams StreamReader, pool *pgxpool.Pool, names []string, progress func(done, total int)) (ChainReport, error) {
	var rep ChainReport
	names = slices.Sorted(slices.Values(names))
	names = slices.Compact(names)
	var total int
	err := pool.QueryRow(ctx, "SELECT count(*) FROM event_seals WHERE stream = ANY($1::text[])", names).Scan(&total)
	if err != nil {
		return rep, fmt.Errorf("projections: verify chains of a slice: count seals: %w", err)
	}
	for page := range slices.Chunk(names, verifyPage) {
		seals, err := sealsOf(ctx, pool, page)
		if err != nil {
			return rep, err
		}
		events, err := readStreams(ctx, streams, page)
		if err != nil {
			return rep, err
		}
		for i, name := range page {
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
	}
	return rep, nil
}

// sealsOf reads the seals of the named streams, in revision order.
func sealsOf(ctx context.Context, pool *pgxpool.Pool, names []string) (map[string][]sealRow, error) {
	rows, _ := pool.Query(ctx, `SELECT stream, revision, hash FROM event_seals
		WHERE stream = ANY($1::text[]) ORDER BY stream, revision`, names)
	seals := map[string][]sealRow{}
	var (
		stream string
		rev    int64
		hash   []byte
	)
	_, err := pgx.ForEachRow(rows, []any{&stream, &rev, &hash}, func() error {
		r := sealRow{rev: uint64(rev)}
		copy(r.hash[:], hash)
		seals[stream] = append(seals[stream], r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("projections: verify chains of a slice: seals: %w", err)
	}
	return seals, nil
}
