package projections

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
)

// A shadow rebuild builds a projection's read models from zero in a schema
// of their own (shadow_<name>) while the live ones keep serving, diffs the
// two at one position and swaps the tables in one transaction when they
// agree. ARCHITECTURE.md ("Rebuilds that prove themselves") has the why.

// shadowOnly are the tables the shadow runner writes but that stay live at
// the switch: dead letters and parked streams are operations' state (a
// person may be working on them), and the checkpoints are per schema. The
// shadow's parked streams are diffed all the same.
var shadowOnly = []string{"dead_letters", "parked_streams", "projection_checkpoints"}

// Shadow is one shadow rebuild of a projection.
type Shadow struct {
	pool    *pgxpool.Pool // the live schema
	sp      *pgxpool.Pool // search_path: the shadow schema, then public
	name    string
	schema  string // shadow_<name>
	retired string // retired_<name>, for the switch's moment
	runner  *Runner
}

// NewShadow creates the shadow schema of name afresh (dropping what an
// earlier, interrupted run left) and a runner that projects sub into it with
// cfg (its Name, LockName, FollowUp and Streams are set here: a shadow
// enqueues no jobs and retries no parked stream).
func NewShadow(ctx context.Context, pool *pgxpool.Pool, sub Subscriber, name string, cfg RunnerConfig) (*Shadow, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("projections: shadow %q: not a versioned projection name such as payments_v1", name)
	}
	s := &Shadow{pool: pool, name: name, schema: "shadow_" + name, retired: "retired_" + name}
	if err := s.create(ctx); err != nil {
		return nil, err
	}
	pcfg := pool.Config().Copy()
	pcfg.ConnConfig.RuntimeParams["search_path"] = s.schema + ", public"
	pcfg.MaxConns = 4
	sp, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("projections: shadow %s: pool: %w", name, err)
	}
	s.sp = sp
	cfg.Name, cfg.LockName, cfg.FollowUp, cfg.Streams, cfg.Metrics = name, "shadow:"+name, nil, nil, nil
	s.runner = NewRunner(cfg, sp, sub)
	return s, nil
}

// Schema is the shadow schema's name.
func (s *Shadow) Schema() string { return s.schema }

// Close releases the shadow's connections (the schema stays until Drop or
// Switch).
func (s *Shadow) Close() { s.sp.Close() }

func (s *Shadow) create(ctx context.Context) error {
	stmts := []string{
		"DROP SCHEMA IF EXISTS " + ident(s.schema) + " CASCADE",
		"DROP SCHEMA IF EXISTS " + ident(s.retired) + " CASCADE",
		"CREATE SCHEMA " + ident(s.schema),
	}
	for _, t := range append(slicesClone(readModelTables), shadowOnly...) {
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s.%s (LIKE public.%s INCLUDING ALL)", ident(s.schema), t, t))
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("projections: shadow %s: create: %w", s.name, err)
	}
	return nil
}

// Drop removes the shadow schema: the rebuild did not switch.
func (s *Shadow) Drop(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident(s.schema)+" CASCADE"); err != nil {
		return fmt.Errorf("projections: shadow %s: drop: %w", s.name, err)
	}
	return nil
}

// Position is the shadow's committed checkpoint.
func (s *Shadow) Position(ctx context.Context) (eventstore.Position, error) {
	return s.runner.Position(ctx)
}

// LivePosition is the checkpoint of the live version of the projection's
// family (the one that is not retired), and its name; Start and "" when
// none has run.
func (s *Shadow) LivePosition(ctx context.Context) (eventstore.Position, string, error) {
	return livePosition(ctx, s.pool, s.name, "")
}

func livePosition(ctx context.Context, q rowQuerier, name, lock string) (eventstore.Position, string, error) {
	var live, pos string
	err := q.QueryRow(ctx, `SELECT name, position FROM (`+familyRowsSQL+`) f WHERE retired_at IS NULL ORDER BY name = $1 DESC LIMIT 1`+lock,
		name, family(name)).Scan(&live, &pos)
	if errors.Is(err, pgx.ErrNoRows) {
		return eventstore.Start, "", nil
	}
	if err != nil {
		return eventstore.Start, "", fmt.Errorf("projections: shadow %s: live checkpoint: %w", name, err)
	}
	p, err := parseCheckpoint(live, pos)
	return p, live, err
}

// CatchUp projects into the shadow up to until (see Runner.RunUntil).
func (s *Shadow) CatchUp(ctx context.Context, until eventstore.Position) (eventstore.Position, error) {
	return s.runner.RunUntil(ctx, until)
}

// ident quotes a schema name (ValidName keeps them plain, but quoting costs
// nothing and is what a reader expects to see).
func ident(s string) string { return pgx.Identifier{s}.Sanitize() }

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// indexNameRE finds an index's own name and its table's schema in
// pg_indexes.indexdef, so that two definitions compare without them.
var indexNameRE = regexp.MustCompile(`^(CREATE (?:UNIQUE )?INDEX )\S+ ON \S+?\.`)

func indexShape(def string) string { return indexNameRE.ReplaceAllString(def, "${1}ON ") }

// renameIndexes gives the tables now in public the index names the
// replaced ones had, matched by definition, so migrations that name an
// index find it. Temporary names first: a generated name may be another
// index's final one.
func renameIndexes(ctx context.Context, tx pgx.Tx, from string) error {
	const q = `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = ANY($2) ORDER BY indexname`
	read := func(schema string) (map[string]string, error) {
		rows, _ := tx.Query(ctx, q, schema, readModelTables)
		out := map[string]string{}
		var name, def string
		_, err := pgx.ForEachRow(rows, []any{&name, &def}, func() error { out[indexShape(def)] = name; return nil })
		return out, err
	}
	old, err := read(from)
	if err != nil {
		return err
	}
	cur, err := read("public")
	if err != nil {
		return err
	}
	var renames [][2]string
	for shape, name := range cur {
		if want, ok := old[shape]; ok && want != name {
			renames = append(renames, [2]string{name, want})
		}
	}
	for i, r := range renames {
		if _, err := tx.Exec(ctx, fmt.Sprintf("ALTER INDEX public.%s RENAME TO %s", ident(r[0]), ident(fmt.Sprintf("shadow_tmp_%d", i)))); err != nil {
			return err
		}
	}
	for i, r := range renames {
		if _, err := tx.Exec(ctx, fmt.Sprintf("ALTER INDEX public.%s RENAME TO %s", ident(fmt.Sprintf("shadow_tmp_%d", i)), ident(r[1]))); err != nil {
			return err
		}
	}
	return nil
}

// tableList is readModelTables qualified by schema, for LOCK.
func tableList(schema string) string {
	q := make([]string, len(readModelTables))
	for i, t := range readModelTables {
		q[i] = ident(schema) + "." + t
	}
	return strings.Join(q, ", ")
}
