package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/projections"
)

// `ledger projections` lists the projections and rebuilds one: in place
// (the service replays it while it serves, the read API saying so), or in
// a shadow schema that is diffed against the live read models and switched
// in only when they agree (projections_shadow.go).

// projectionRow is one projection as `projections list` shows it.
type projectionRow struct {
	Name string `json:"name"`
	// Kind: read_models (the payments runner), chain_seals (the sealer) or
	// unknown (a row this build has no code for).
	Kind string `json:"kind"`
	// State: live, rebuilding, retired, or not_started (no row yet).
	State      string `json:"state"`
	ThisBuild  bool   `json:"this_build"` // this binary's code runs it
	Checkpoint string `json:"checkpoint"`
	// LagEvents counts the events after the checkpoint it projects; -1 when
	// not measured (KurrentDB, or a retired projection).
	LagEvents       int64      `json:"lag_events"`
	LastAppliedAt   *time.Time `json:"last_applied_at"`
	RebuildingSince *time.Time `json:"rebuilding_since"`
	RetiredAt       *time.Time `json:"retired_at"`
}

type projectionList struct {
	Projections []projectionRow `json:"projections"`
}

const projectionsArgs = "list | rebuild NAME"

func projectionsFlags(fs *flag.FlagSet) func(context.Context, *environment) error {
	var opts rebuildOptions
	fs.BoolVar(&opts.shadow, "shadow", false, "rebuild: build the new read models in a shadow schema while the live ones serve, diff them, and switch only when they agree")
	fs.BoolVar(&opts.acceptDiff, "accept-diff", false, "rebuild --shadow: switch even when the diff is not empty (after a person has read it)")
	fs.BoolVar(&opts.noWait, "no-wait", false, "rebuild without --shadow: return once the read models are emptied instead of following the replay")
	return func(ctx context.Context, e *environment) error {
		switch {
		case len(e.args) == 1 && e.args[0] == "list":
			if opts != (rebuildOptions{}) {
				return usageError{errors.New("projections list: takes no rebuild flags")}
			}
			return listProjections(ctx, e)
		case len(e.args) == 2 && e.args[0] == "rebuild":
			if err := rebuildable(e.args[1], opts); err != nil {
				return usageError{err}
			}
			if opts.shadow {
				return shadowRebuild(ctx, e, e.args[1], opts.acceptDiff)
			}
			return rebuildInPlace(ctx, e, e.args[1], opts.noWait)
		}
		return usageError{fmt.Errorf("projections: want %s, got %v", projectionsArgs, e.args)}
	}
}

type rebuildOptions struct{ shadow, acceptDiff, noWait bool }

// rebuildable says why name cannot be rebuilt by this build, if it cannot.
func rebuildable(name string, opts rebuildOptions) error {
	switch {
	case opts.acceptDiff && !opts.shadow:
		return errors.New("projections rebuild: --accept-diff needs --shadow")
	case opts.noWait && opts.shadow:
		return errors.New("projections rebuild: --no-wait is for an in-place rebuild, not --shadow")
	case name == projections.DefaultSealerName:
		return fmt.Errorf("projections rebuild: %s holds the chain seals, which prove the past and are never rebuilt; "+
			"`ledger chain backfill` seals what is missing", name)
	case !projections.ValidName(name):
		return fmt.Errorf("projections rebuild: %q is not a versioned projection name such as %s", name, projections.DefaultName)
	case name != projections.DefaultName:
		return fmt.Errorf("projections rebuild: this build's projection is %s, not %s: rebuild with the build that defines it", projections.DefaultName, name)
	}
	return nil
}

// listProjections prints every projection this build runs and every row
// the database holds.
func listProjections(ctx context.Context, e *environment) error {
	pool, store, closeAll, err := openReadOnlyStores(ctx, e)
	if err != nil {
		return err
	}
	defer closeAll()
	stored, err := projections.ListProjections(ctx, pool)
	if err != nil {
		return err
	}
	list := projectionList{Projections: []projectionRow{}}
	for _, p := range stored {
		row, err := projectionRowOf(ctx, store, p)
		if err != nil {
			return err
		}
		list.Projections = append(list.Projections, row)
	}
	for _, name := range []string{projections.DefaultName, projections.DefaultSealerName} {
		if !slices.ContainsFunc(stored, func(p projections.Projection) bool { return p.Name == name }) {
			list.Projections = append(list.Projections, projectionRow{Name: name, Kind: projectionKind(name), State: "not_started",
				ThisBuild: true, Checkpoint: eventstore.Start.String(), LagEvents: -1})
		}
	}
	return e.report(list, func(w io.Writer) { printProjections(w, list) })
}

func projectionKind(name string) string {
	switch {
	case name == projections.DefaultSealerName:
		return "chain_seals"
	case projections.SameFamily(name, projections.DefaultName):
		return "read_models"
	}
	return "unknown"
}

func projectionRowOf(ctx context.Context, store openedStore, p projections.Projection) (projectionRow, error) {
	at := p.UpdatedAt.UTC()
	row := projectionRow{Name: p.Name, Kind: projectionKind(p.Name), State: "live", Checkpoint: p.Position.String(), LagEvents: -1,
		ThisBuild: p.Name == projections.DefaultName || p.Name == projections.DefaultSealerName, LastAppliedAt: &at,
		RebuildingSince: utcOrNil(p.RebuildingSince), RetiredAt: utcOrNil(p.RetiredAt)}
	switch {
	case p.RetiredAt != nil:
		row.State = "retired"
		return row, nil
	case p.RebuildingSince != nil:
		row.State = "rebuilding"
	}
	if store.pg != nil {
		prefix := eventstore.PaymentStreamPrefix
		if row.Kind == "chain_seals" {
			prefix = ""
		}
		_, lag, err := store.pg.Lag(ctx, prefix, p.Position)
		if err != nil {
			return row, fmt.Errorf("projections list: %w", err)
		}
		row.LagEvents = lag
	}
	return row, nil
}

func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func printProjections(w io.Writer, list projectionList) {
	rows := [][]string{{"NAME", "KIND", "STATE", "CHECKPOINT", "LAG", "LAST APPLIED", "THIS BUILD"}}
	for _, p := range list.Projections {
		lag, last, mine := "-", "-", "no"
		if p.LagEvents >= 0 {
			lag = fmt.Sprint(p.LagEvents)
		}
		if p.LastAppliedAt != nil {
			last = stamp(*p.LastAppliedAt)
		}
		if p.ThisBuild {
			mine = "yes"
		}
		rows = append(rows, []string{p.Name, p.Kind, p.State, p.Checkpoint, lag, last, mine})
	}
	widths := columnWidths(rows)
	for _, row := range rows {
		writeRow(w, row, widths)
	}
}

// rebuildWatch is how often an in-place rebuild's progress is read, and
// how long without progress before it asks whether a projector runs.
const (
	rebuildWatch = 500 * time.Millisecond
	rebuildStall = time.Minute
)

// rebuildInPlace empties the read models and follows the service's replay
// until it has caught up (or returns at once with noWait).
func rebuildInPlace(ctx context.Context, e *environment, name string, noWait bool) error {
	pool, store, err := openCommandStores(ctx, e)
	if err != nil {
		return err
	}
	defer pool.Close()
	defer store.close()
	if err := projections.StartRebuild(ctx, pool, name); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: read models emptied and the checkpoint moved to the start; `ledger serve` (projector role) replays it,\n"+
		"and the read API answers with Ledger-Projection-Rebuilding: true until it has caught up\n", name)
	if noWait {
		return nil
	}
	return followRebuild(ctx, e, pool, store, name)
}

// followRebuild shows the replay's progress until the runner clears the
// rebuild mark.
func followRebuild(ctx context.Context, e *environment, pool *pgxpool.Pool, store openedStore, name string) error {
	bar := newEventsBar(e.stderr, "rebuild "+name, e.json)
	start, lastMove, lastLag := time.Now(), time.Now(), int64(-1)
	warned := false
	for {
		done, pos, err := projections.RebuildDone(ctx, pool, name)
		if err != nil {
			return err
		}
		if done {
			bar.finish()
			fmt.Fprintf(e.stdout, "%s caught up at %s in %s\n", name, pos, time.Since(start).Round(time.Second))
			return nil
		}
		if store.pg != nil {
			done, total, lag, err := replayed(ctx, store.pg, pos)
			if err != nil {
				return err
			}
			bar.show(done, total)
			if lag != lastLag {
				lastMove, lastLag = time.Now(), lag
			}
		}
		if !warned && time.Since(lastMove) > rebuildStall {
			fmt.Fprintf(e.stderr, "ledger: no progress for %s: is `ledger serve` with the projector role running?\n", rebuildStall)
			warned = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("projections rebuild: stopped following (the rebuild goes on in the service): %w", ctx.Err())
		case <-time.After(rebuildWatch):
		}
	}
}

// replayed says how many of the store's payment events lie at or before
// pos, of how many, and how many after.
func replayed(ctx context.Context, pg *postgres.Store, pos eventstore.Position) (done, total, lag int64, err error) {
	if _, lag, err = pg.Lag(ctx, eventstore.PaymentStreamPrefix, pos); err != nil {
		return 0, 0, 0, fmt.Errorf("projections rebuild: %w", err)
	}
	if _, total, err = pg.Lag(ctx, eventstore.PaymentStreamPrefix, eventstore.Start); err != nil {
		return 0, 0, 0, fmt.Errorf("projections rebuild: %w", err)
	}
	return max(total-lag, 0), total, lag, nil
}

// eventsBar draws progress over events (count, events/s, ETA once the
// total is known: verify --chains, rebuilds) on a terminal only.
type eventsBar struct{ bar *progressbar.ProgressBar }

func newEventsBar(w io.Writer, what string, asJSON bool) eventsBar {
	f, ok := w.(*os.File)
	if asJSON || !ok || !term.IsTerminal(int(f.Fd())) {
		return eventsBar{}
	}
	return eventsBar{bar: progressbar.NewOptions64(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("events"),
		progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))}
}

func (b eventsBar) show(done, total int64) {
	if b.bar == nil {
		return
	}
	b.bar.ChangeMax64(total)
	_ = b.bar.Set64(done)
}

func (b eventsBar) finish() {
	if b.bar != nil {
		_ = b.bar.Finish()
	}
}
