package projections

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/eventstore"
)

// DiffLine is one difference between the live and the shadow read models:
// What is the aggregate ("payments" per provider, currency and status;
// "ledger" per provider, currency and account; "reviews", "reconciliation",
// "parked"), Key its group, Live and Shadow its figures ("" when the group
// is absent on that side).
type DiffLine struct {
	What   string `json:"what"`
	Key    string `json:"key"`
	Live   string `json:"live"`
	Shadow string `json:"shadow"`
}

// SwitchResult is what Switch found and did.
type SwitchResult struct {
	// Position is where the two were compared: the live checkpoint, frozen.
	Position eventstore.Position
	// Replaced is the live version's name ("" when none had run).
	Replaced string
	Diff     []DiffLine
	Switched bool
}

// diffQueries summarise a schema's read models; each row is a group and its
// figures as text, so any difference, in a count or a sum, shows.
var diffQueries = []struct{ what, sql string }{
	{"payments", `SELECT provider || ' ' || currency || ' ' || status, format('count %s amount %s captured %s refunded %s disputed %s fee %s',
		count(*), sum(amount), sum(amount_captured), sum(amount_refunded), sum(amount_disputed), sum(fee))
		FROM {schema}.payments GROUP BY provider, currency, status`},
	{"ledger", `SELECT l.provider || ' ' || l.currency || ' ' || a.account, format('debits %s credits %s balance %s',
		sum(a.debit), sum(a.credit), sum(a.debit - a.credit))
		FROM {schema}.ledger_entries l, unnest(l.accounts, l.debits, l.credits) AS a(account, debit, credit)
		GROUP BY l.provider, l.currency, a.account`},
	{"reviews", `SELECT provider, format('open %s resolved %s', count(*) FILTER (WHERE resolved_at IS NULL),
		count(*) FILTER (WHERE resolved_at IS NOT NULL)) FROM {schema}.reviews GROUP BY provider`},
	{"reconciliation", `SELECT provider || ' ' || outcome, format('checks %s', count(*))
		FROM {schema}.reconciliation_checks GROUP BY provider, outcome`},
	{"parked", `SELECT stream, 'parked' FROM {schema}.parked_streams`},
}

// Diff compares the live read models with the shadow's as they stand now.
func (s *Shadow) Diff(ctx context.Context) ([]DiffLine, error) {
	var out []DiffLine
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		out, err = s.diff(ctx, tx)
		return err
	})
	return out, err
}

func (s *Shadow) diff(ctx context.Context, tx pgx.Tx) ([]DiffLine, error) {
	var out []DiffLine
	for _, d := range diffQueries {
		live, err := summarize(ctx, tx, d.sql, "public")
		if err != nil {
			return nil, fmt.Errorf("projections: shadow %s: diff %s: %w", s.name, d.what, err)
		}
		shadow, err := summarize(ctx, tx, d.sql, ident(s.schema))
		if err != nil {
			return nil, fmt.Errorf("projections: shadow %s: diff %s: %w", s.name, d.what, err)
		}
		var keys []string
		for k := range live {
			keys = append(keys, k)
		}
		for k := range shadow {
			if _, ok := live[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if live[k] != shadow[k] {
				out = append(out, DiffLine{What: d.what, Key: k, Live: live[k], Shadow: shadow[k]})
			}
		}
	}
	return out, nil
}

func summarize(ctx context.Context, tx pgx.Tx, sql, schema string) (map[string]string, error) {
	rows, _ := tx.Query(ctx, strings.ReplaceAll(sql, "{schema}", schema))
	out := map[string]string{}
	var k, v string
	_, err := pgx.ForEachRow(rows, []any{&k, &v}, func() error { out[k] = v; return nil })
	return out, err
}

// Switch freezes the live projection (its checkpoint row, which every
// batch of the live runner takes first), catches the shadow up to exactly
// that position, diffs the two, and when the diff is empty or accept is
// set, swaps the tables in the same transaction: readers wait the few
// milliseconds of the swap and then see the new tables, never an empty
// or half-built one. The replaced tables and the shadow schema are dropped
// after the commit; without a switch the shadow stays for Diff or Drop.
func (s *Shadow) Switch(ctx context.Context, accept bool) (SwitchResult, error) {
	var res SwitchResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, familyRowsSQL+" FOR UPDATE", s.name, family(s.name)); err != nil {
			return err
		}
		pos, live, err := livePosition(ctx, tx, s.name, "")
		if err != nil {
			return err
		}
		res.Position, res.Replaced = pos, live
		if _, err := s.CatchUp(ctx, pos); err != nil {
			return err
		}
		if res.Diff, err = s.diff(ctx, tx); err != nil {
			return err
		}
		if len(res.Diff) > 0 && !accept {
			return nil // rolled back: nothing changed
		}
		if err := s.swap(ctx, tx, pos); err != nil {
			return err
		}
		res.Switched = true
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("projections: shadow %s: switch: %w", s.name, err)
	}
	if res.Switched {
		_, err = s.pool.Exec(ctx, "DROP SCHEMA "+ident(s.retired)+" CASCADE; DROP SCHEMA "+ident(s.schema)+" CASCADE")
		if err != nil {
			return res, fmt.Errorf("projections: shadow %s: switched, but dropping the old tables failed (drop schema %s by hand): %w",
				s.name, s.retired, err)
		}
	}
	return res, nil
}

// swap moves the live tables out and the shadow's in, gives the new ones
// the old index names, and hands the checkpoint at pos to name.
func (s *Shadow) swap(ctx context.Context, tx pgx.Tx, pos eventstore.Position) error {
	stmts := []string{
		"LOCK TABLE " + tableList("public") + " IN ACCESS EXCLUSIVE MODE",
		"CREATE SCHEMA " + ident(s.retired),
	}
	for _, t := range readModelTables {
		stmts = append(stmts, "ALTER TABLE public."+t+" SET SCHEMA "+ident(s.retired))
	}
	for _, t := range readModelTables {
		stmts = append(stmts, "ALTER TABLE "+ident(s.schema)+"."+t+" SET SCHEMA public")
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", strings.SplitN(q, " IN ", 2)[0], err)
		}
	}
	if err := renameIndexes(ctx, tx, s.retired); err != nil {
		return fmt.Errorf("rename indexes: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO public.projection_checkpoints (name, position) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET position = $2, rebuilding_since = NULL, retired_at = NULL, updated_at = now()`,
		s.name, pos.String()); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return retireOthers(ctx, tx, s.name)
}
