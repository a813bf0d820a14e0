package projections

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
)

// A projection's name carries its version ("payments_v1"). Deploying a
// changed projection is renaming it; its read models are then built by
// `ledger projections rebuild NAME [--shadow]`, and the name it replaced is
// retired so that a process still running the old code stops writing.

// ErrRetired: the projection's name was replaced by a later version.
var ErrRetired = errors.New("projections: projection retired by a later version")

// ErrNotBuilt: another version of the projection owns the read models and
// this one has not been built yet.
var ErrNotBuilt = errors.New("projections: projection not built yet")

// nameRE is what a projection name may be: it becomes part of a schema
// name in a shadow rebuild, so it is kept to plain identifiers.
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*_v[0-9]+$`)

// ValidName reports whether name is a versioned projection name.
func ValidName(name string) bool { return len(name) <= 48 && nameRE.MatchString(name) }

// family is name without its version suffix.
func family(name string) string {
	if i := strings.LastIndex(name, "_v"); i > 0 {
		return name[:i]
	}
	return name
}

// familyRowsSQL selects the checkpoint rows of every version of $1's family.
const familyRowsSQL = `SELECT name, position, retired_at FROM projection_checkpoints
	WHERE name = $1 OR (left(name, length($2) + 2) = $2 || '_v' AND substr(name, length($2) + 3) ~ '^[0-9]+$')`

// claimCheckpoint is loadCheckpoint for the payments runner: it refuses a
// retired name, and a name that has no row while another version of its
// family is live (that one owns the read models until a rebuild), and
// reports whether a rebuild is under way.
func claimCheckpoint(ctx context.Context, pool *pgxpool.Pool, name string) (eventstore.Position, bool, error) {
	rows, _ := pool.Query(ctx, familyRowsSQL, name, family(name))
	type row struct {
		Name      string
		Position  string
		RetiredAt *time.Time
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return eventstore.Start, false, fmt.Errorf("projections: claim checkpoint %s: %w", name, err)
	}
	for _, r := range got {
		if r.Name == name && r.RetiredAt != nil {
			return eventstore.Start, false, fmt.Errorf("projections: %s was retired at %s (this process runs old code; deploy the new build): %w",
				name, r.RetiredAt.UTC().Format(time.RFC3339), ErrRetired)
		}
	}
	mine := false
	for _, r := range got {
		mine = mine || r.Name == name
	}
	for _, r := range got {
		if !mine && r.RetiredAt == nil {
			return eventstore.Start, false, fmt.Errorf("projections: the read models are %s's; build %s with `ledger projections rebuild %s [--shadow]`: %w",
				r.Name, name, name, ErrNotBuilt)
		}
	}
	pos, err := loadCheckpoint(ctx, pool, name)
	if err != nil {
		return pos, false, err
	}
	var rebuilding bool
	err = pool.QueryRow(ctx, "SELECT rebuilding_since IS NOT NULL FROM projection_checkpoints WHERE name = $1", name).Scan(&rebuilding)
	if err != nil {
		return pos, false, fmt.Errorf("projections: claim checkpoint %s: %w", name, err)
	}
	return pos, rebuilding, nil
}

// clearRebuilding ends name's rebuild: the runner caught up.
func clearRebuilding(ctx context.Context, pool *pgxpool.Pool, name string) error {
	if _, err := pool.Exec(ctx, "UPDATE projection_checkpoints SET rebuilding_since = NULL WHERE name = $1", name); err != nil {
		return fmt.Errorf("projections: %s caught up: %w", name, err)
	}
	return nil
}

// readModelTables are the tables the payments runner writes and a rebuild
// empties or replaces, in the fixed order every lock takes them.
var readModelTables = []string{"payment_events", "payments", "ledger_entries", "ledger_totals", "reconciliation_checks", "reviews"}

// StartRebuild empties the read models and moves name's checkpoint to the
// start, marked as rebuilding, and retires every other version of its
// family, in one transaction. A runner of name (in `ledger serve`) notices
// through its compare-and-set and replays from the start; the read API says
// "rebuilding" until it has caught up.
func StartRebuild(ctx context.Context, pool *pgxpool.Pool, name string) error {
	if !ValidName(name) {
		return fmt.Errorf("projections: rebuild %q: not a versioned projection name such as payments_v1", name)
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// The family's rows first, as a runner's batch takes its row
		// before the tables: no deadlock with a batch in flight.
		if _, err := tx.Exec(ctx, familyRowsSQL+" FOR UPDATE", name, family(name)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "TRUNCATE "+strings.Join(readModelTables, ", ")); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO projection_checkpoints (name, position, rebuilding_since) VALUES ($1, $2, now())
			ON CONFLICT (name) DO UPDATE SET position = $2, rebuilding_since = now(), retired_at = NULL, updated_at = now()`,
			name, eventstore.Start.String()); err != nil {
			return err
		}
		return retireOthers(ctx, tx, name)
	})
	if err != nil {
		return fmt.Errorf("projections: rebuild %s: %w", name, err)
	}
	return nil
}

// retireOthers retires the live versions of name's family but name.
func retireOthers(ctx context.Context, tx pgx.Tx, name string) error {
	_, err := tx.Exec(ctx, `UPDATE projection_checkpoints SET retired_at = now(), rebuilding_since = NULL
		WHERE name IN (SELECT name FROM (`+familyRowsSQL+`) f) AND name <> $1 AND retired_at IS NULL`, name, family(name))
	return err
}

// Projection is one checkpoint row, as `ledger projections list` shows it.
type Projection struct {
	Name            string
	Position        eventstore.Position
	UpdatedAt       time.Time
	RebuildingSince *time.Time
	RetiredAt       *time.Time
}

// ListProjections reads every checkpoint row, by name.
func ListProjections(ctx context.Context, q pgxQuerier) ([]Projection, error) {
	rows, _ := q.Query(ctx, `SELECT name, position, updated_at, rebuilding_since, retired_at
		FROM projection_checkpoints ORDER BY name`)
	var out []Projection
	var (
		p   Projection
		pos string
	)
	_, err := pgx.ForEachRow(rows, []any{&p.Name, &pos, &p.UpdatedAt, &p.RebuildingSince, &p.RetiredAt}, func() error {
		parsed, err := parseCheckpoint(p.Name, pos)
		if err != nil {
			return err
		}
		p.Position = parsed
		out = append(out, p)
		p = Projection{}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("projections: list: %w", err)
	}
	return out, nil
}

// pgxQuerier is a pool or a transaction.
type pgxQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Rebuilding reports whether any live projection is being rebuilt from the
// start (api.RebuildReader).
func (q *Queries) Rebuilding(ctx context.Context) (bool, error) {
	var v bool
	err := q.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projection_checkpoints
		WHERE rebuilding_since IS NOT NULL AND retired_at IS NULL)`).Scan(&v)
	if err != nil {
		return false, fmt.Errorf("projections: rebuilding: %w", err)
	}
	return v, nil
}

// SameFamily reports whether a and b are versions of one projection.
func SameFamily(a, b string) bool { return family(a) == family(b) }

// RebuildDone reports whether name's rebuild has caught up (its mark is
// cleared) and where its checkpoint is.
func RebuildDone(ctx context.Context, pool *pgxpool.Pool, name string) (bool, eventstore.Position, error) {
	var (
		pos        string
		rebuilding bool
	)
	err := pool.QueryRow(ctx, "SELECT position, rebuilding_since IS NOT NULL FROM projection_checkpoints WHERE name = $1", name).
		Scan(&pos, &rebuilding)
	if err != nil {
		return false, eventstore.Start, fmt.Errorf("projections: rebuild of %s: %w", name, err)
	}
	p, err := parseCheckpoint(name, pos)
	return !rebuilding, p, err
}

// checkUnmoved fails with errCheckpointMoved when the stored checkpoint is
// no longer pos, or the name was retired: a rebuild or a switch happened
// while the session was idle.
func (r *Runner) checkUnmoved(ctx context.Context, pos eventstore.Position) error {
	var stored string
	var retired bool
	err := r.pool.QueryRow(ctx, "SELECT position, retired_at IS NOT NULL FROM projection_checkpoints WHERE name = $1", r.cfg.Name).
		Scan(&stored, &retired)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("projections: checkpoint %s deleted: %w", r.cfg.Name, errCheckpointMoved)
	case err != nil:
		return fmt.Errorf("projections: read checkpoint %s: %w", r.cfg.Name, err)
	case retired || stored != pos.String():
		return fmt.Errorf("projections: checkpoint %s at %s, not %s: %w", r.cfg.Name, stored, pos, errCheckpointMoved)
	}
	return nil
}
