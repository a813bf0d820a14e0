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
	rep, err := newChainReport(ctx, pool)
	if err != nil {
		return rep, err
	}
	names = slices.Sorted(slices.Values(names))
	names = slices.Compact(names)
	var total int
	err = pool.QueryRow(ctx, "SELECT count(*) FROM event_seals WHERE stream = ANY($1::text[])", names).Scan(&total)
	if err != nil {
		return rep, fmt.Errorf("projections: verify chains of a slice: count seals: %w", err)
	}
	for page := range slices.Chunk(names, verifyPage) {
		seals, err := sealsOf(ctx, pool, page)
		if err != nil {
			return rep, err
		}
		if err := rep.checkPage(ctx, streams, page, seals, progress, total); err != nil {
			return rep, err
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
