package projections

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
)

// errSealTaken says a seal the batch planned was already stored: another
// writer sealed meanwhile, so the batch is rolled back and the session
// restarts from the database, where those events read as re-deliveries.
var errSealTaken = errors.New("projections: seal: a planned seal is stored already")

// sealEpoch returns when the chain began; the migration records it, and a
// lost row is recorded again as now.
func sealEpoch(ctx context.Context, pool *pgxpool.Pool) (time.Time, error) {
	var t time.Time
	_, err := pool.Exec(ctx, "INSERT INTO event_seal_epoch DEFAULT VALUES ON CONFLICT DO NOTHING")
	if err == nil {
		err = pool.QueryRow(ctx, "SELECT started_at FROM event_seal_epoch").Scan(&t)
	}
	if err != nil {
		return t, fmt.Errorf("projections: seal epoch: %w", err)
	}
	return t, nil
}

// sealRows holds planned seals column by column for unnest.
type sealRows struct {
	streams  []string
	revs     []int64
	ids      []uuid.UUID
	hashes   [][]byte
	backfill []bool
}

// seal seals the batch's events on top of checkpoint from in one
// transaction and returns the new checkpoint. The heads it chains on come
// from the cache or, for streams it does not hold, from event_seals in the
// same transaction; they enter the cache only after the commit.
func (s *Sealer) seal(ctx context.Context, from eventstore.Position, batch []eventstore.Message, epoch time.Time) (eventstore.Position, error) {
	to, events := from, make([]*eventstore.RecordedEvent, 0, len(batch))
	for _, m := range batch {
		pos := m.Checkpoint
		if m.Event != nil {
			pos = m.Event.Position
			if pos.Compare(from) > 0 {
				events = append(events, m.Event)
			}
		}
		if pos.Compare(to) > 0 {
			to = pos
		}
	}
	if to == from {
		return from, nil
	}
	heads := map[string]sealHead{}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := advanceSealCheckpoint(ctx, tx, s.cfg.Name, from, to); err != nil {
			return err
		}
		if err := s.loadHeads(ctx, tx, events, heads); err != nil {
			return err
		}
		rows, redelivered := s.plan(ctx, events, heads, epoch)
		if err := insertSeals(ctx, tx, rows); err != nil {
			return err
		}
		return s.recheck(ctx, tx, redelivered)
	})
	if err != nil {
		clear(s.heads)
		return from, fmt.Errorf("projections: seal %d events after %s: %w", len(events), from, err)
	}
	if len(s.heads)+len(heads) > s.cfg.Heads {
		clear(s.heads)
	}
	maps.Copy(s.heads, heads)
	return to, nil
}

// advanceSealCheckpoint is the checkpoint's compare-and-set.
func advanceSealCheckpoint(ctx context.Context, tx pgx.Tx, name string, from, to eventstore.Position) error {
	tag, err := tx.Exec(ctx, `UPDATE projection_checkpoints SET position = $3, updated_at = now()
		WHERE name = $1 AND position = $2`, name, from.String(), to.String())
	if err != nil {
		return fmt.Errorf("advance checkpoint %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return errCheckpointMoved
	}
	return nil
}

// loadHeads fills heads with the head of every stream of events, from the
// cache or event_seals; a stream with no seal gets no entry.
func (s *Sealer) loadHeads(ctx context.Context, tx pgx.Tx, events []*eventstore.RecordedEvent, heads map[string]sealHead) error {
	var missing []string
	asked := map[string]bool{}
	for _, e := range events {
		if h, ok := s.heads[e.Stream]; ok {
			heads[e.Stream] = h
		} else if !asked[e.Stream] {
			asked[e.Stream] = true
			missing = append(missing, e.Stream)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	rows, _ := tx.Query(ctx, `SELECT DISTINCT ON (stream) stream, revision, hash FROM event_seals
		WHERE stream = ANY($1) ORDER BY stream, revision DESC`, missing)
	var (
		stream string
		rev    int64
		hash   []byte
	)
	_, err := pgx.ForEachRow(rows, []any{&stream, &rev, &hash}, func() error {
		h := sealHead{rev: uint64(rev)}
		copy(h.hash[:], hash)
		heads[stream] = h
		return nil
	})
	if err != nil {
		return fmt.Errorf("load heads: %w", err)
	}
	return nil
}

// plan chains each event on its stream's head, advancing heads. An event at
// or below its stream's head was sealed before (a re-delivery): it is
// returned for recheck, never sealed again.
func (s *Sealer) plan(ctx context.Context, events []*eventstore.RecordedEvent, heads map[string]sealHead, epoch time.Time) (sealRows, []*eventstore.RecordedEvent) {
	var rows sealRows
	var redelivered []*eventstore.RecordedEvent
	for _, e := range events {
		prev := eventstore.ChainSeed
		if h, ok := heads[e.Stream]; ok {
			if e.Revision <= h.rev {
				redelivered = append(redelivered, e)
				continue
			}
			if e.Revision != h.rev+1 {
				s.log.WarnContext(ctx, "sealing across a revision gap", "stream", e.Stream, "revision", e.Revision, "head", h.rev)
			}
			prev = h.hash
		}
		hash := eventstore.ChainHash(prev, *e)
		heads[e.Stream] = sealHead{rev: e.Revision, hash: hash}
		rows.streams = append(rows.streams, e.Stream)
		rows.revs = append(rows.revs, int64(e.Revision))
		rows.ids = append(rows.ids, e.ID)
		rows.hashes = append(rows.hashes, hash[:])
		rows.backfill = append(rows.backfill, e.RecordedAt.Before(epoch))
	}
	return rows, redelivered
}

// insertSeals inserts rows; a row already stored fails the batch with
// errSealTaken instead of being overwritten.
func insertSeals(ctx context.Context, tx pgx.Tx, rows sealRows) error {
	if len(rows.streams) == 0 {
		return nil
	}
	tag, err := tx.Exec(ctx, `INSERT INTO event_seals (stream, revision, event_id, hash, backfill)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::uuid[], $4::bytea[], $5::boolean[])
		ON CONFLICT DO NOTHING`, rows.streams, rows.revs, rows.ids, rows.hashes, rows.backfill)
	if err != nil {
		return fmt.Errorf("insert seals: %w", err)
	}
	if int(tag.RowsAffected()) != len(rows.streams) {
		return errSealTaken
	}
	return nil
}

// recheck recomputes the seal of each re-delivered event from the seal
// before it and compares it with the stored one. A difference is a finding,
// logged; the stored seal is kept (ledger verify --chains reports the break).
func (s *Sealer) recheck(ctx context.Context, tx pgx.Tx, events []*eventstore.RecordedEvent) error {
	for _, e := range events {
		var stored, prev []byte
		err := tx.QueryRow(ctx, `SELECT s.hash, (SELECT p.hash FROM event_seals p WHERE p.stream = s.stream
				AND p.revision < s.revision ORDER BY p.revision DESC LIMIT 1)
			FROM event_seals s WHERE s.stream = $1 AND s.revision = $2`, e.Stream, int64(e.Revision)).Scan(&stored, &prev)
		if errors.Is(err, pgx.ErrNoRows) {
			s.log.WarnContext(ctx, "chain finding: a re-delivered event below its stream's sealed head has no seal",
				"stream", e.Stream, "revision", e.Revision)
			continue
		}
		if err != nil {
			return fmt.Errorf("recheck %s@%d: %w", e.Stream, e.Revision, err)
		}
		p := eventstore.ChainSeed
		if prev != nil {
			copy(p[:], prev)
		}
		if h := eventstore.ChainHash(p, *e); string(h[:]) != string(stored) {
			s.log.WarnContext(ctx, "chain finding: a re-delivered event does not match its seal; the seal is kept",
				"stream", e.Stream, "revision", e.Revision, "sealed", fmt.Sprintf("%x", stored), "found", fmt.Sprintf("%x", h))
		}
	}
	return nil
}
