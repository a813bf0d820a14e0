package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/projections"
)

// errNotSwitched: the shadow's diff was not empty and not accepted.
var errNotSwitched = errors.New("the shadow differs from the live read models; not switched")

// shadowReport is what `projections rebuild --shadow` prints; --json as is.
type shadowReport struct {
	Name     string                 `json:"name"`
	Schema   string                 `json:"schema"`
	Replaced string                 `json:"replaced"` // the live version ("" none)
	Position string                 `json:"position"` // where the two were compared
	Seconds  float64                `json:"build_seconds"`
	Diff     []projections.DiffLine `json:"diff"`
	Accepted bool                   `json:"accepted"` // --accept-diff was given
	Switched bool                   `json:"switched"`
}

// shadowRounds bounds the catch-up rounds before the switch; each chases
// the live checkpoint, so the switch's own catch-up (while the live
// projection waits) has little left to do.
const (
	shadowRounds   = 5
	shadowCloseLag = 1000
)

// shadowRebuild builds name in a shadow schema with this build's code,
// diffs it with the live read models and switches when they agree.
func shadowRebuild(ctx context.Context, e *environment, name string, accept bool) error {
	pool, store, err := openCommandStores(ctx, e)
	if err != nil {
		return err
	}
	defer pool.Close()
	defer store.close()
	sh, err := projections.NewShadow(ctx, pool, store, name, projections.RunnerConfig{Logger: e.logger})
	if err != nil {
		return err
	}
	defer sh.Close()
	rep := shadowReport{Name: name, Schema: sh.Schema(), Accepted: accept, Diff: []projections.DiffLine{}}
	if !e.json {
		fmt.Fprintf(e.stdout, "building %s from the start in schema %s while the live read models serve\n", name, sh.Schema())
	}
	start := time.Now()
	if err := buildShadow(ctx, e, sh, store); err != nil {
		return errors.Join(err, sh.Drop(context.WithoutCancel(ctx)))
	}
	rep.Seconds = time.Since(start).Seconds()
	res, err := sh.Switch(ctx, accept)
	if err != nil {
		return errors.Join(err, sh.Drop(context.WithoutCancel(ctx)))
	}
	rep.Replaced, rep.Position, rep.Switched = res.Replaced, res.Position.String(), res.Switched
	if res.Diff != nil {
		rep.Diff = res.Diff
	}
	if !res.Switched {
		// A later run builds afresh: an accepted diff must be the one read.
		if err := sh.Drop(ctx); err != nil {
			return err
		}
	}
	if err := e.report(rep, func(w io.Writer) { printShadow(w, rep) }); err != nil {
		return err
	}
	if !rep.Switched {
		return fmt.Errorf("projections rebuild %s: %d differences: %w", name, len(rep.Diff), errNotSwitched)
	}
	return nil
}

// buildShadow catches the shadow up with the live checkpoint, in rounds,
// drawing its progress.
func buildShadow(ctx context.Context, e *environment, sh *projections.Shadow, store openedStore) error {
	bar := newEventsBar(e.stderr, "shadow "+sh.Schema(), e.json)
	defer bar.finish()
	stop := make(chan struct{})
	defer close(stop)
	if store.pg != nil {
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(rebuildWatch):
				}
				if pos, err := sh.Position(ctx); err == nil {
					if done, total, _, err := replayed(ctx, store.pg, pos); err == nil {
						bar.show(done, total)
					}
				}
			}
		}()
	}
	for range shadowRounds {
		live, _, err := sh.LivePosition(ctx)
		if err != nil {
			return err
		}
		pos, err := sh.CatchUp(ctx, live)
		if err != nil {
			return err
		}
		if store.pg == nil {
			continue // no cheap lag on KurrentDB: every round
		}
		_, lag, err := store.pg.Lag(ctx, eventstore.PaymentStreamPrefix, pos)
		if err != nil {
			return fmt.Errorf("projections rebuild: %w", err)
		}
		if lag < shadowCloseLag {
			return nil
		}
	}
	return nil
}

func printShadow(w io.Writer, rep shadowReport) {
	against := rep.Replaced
	if against == "" {
		against = "(no live version)"
	}
	fmt.Fprintf(w, "built in %.1fs; compared with %s at %s: %d differences\n", rep.Seconds, against, rep.Position, len(rep.Diff))
	if len(rep.Diff) > 0 {
		rows := [][]string{{"WHAT", "GROUP", "LIVE", "SHADOW"}}
		for _, d := range rep.Diff {
			rows = append(rows, []string{d.What, d.Key, dash(d.Live), dash(d.Shadow)})
		}
		widths := columnWidths(rows)
		for _, row := range rows {
			writeRow(w, row, widths)
		}
	}
	switch {
	case rep.Switched && len(rep.Diff) > 0:
		fmt.Fprintf(w, "switched: the live read models are %s's now (--accept-diff)\n", rep.Name)
	case rep.Switched:
		fmt.Fprintf(w, "switched: the live read models are %s's now\n", rep.Name)
	default:
		fmt.Fprintf(w, "not switched: the live read models are unchanged and the shadow is dropped; read the diff, and run again with\n"+
			"--accept-diff to switch to %s all the same\n", rep.Name)
	}
}
