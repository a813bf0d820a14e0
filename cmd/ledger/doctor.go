package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/projections"
)

// `ledger doctor` is the on-call's question "does anything wait for a
// person, and for how long?", answered read-only from the database: open
// reviews, open dead letters, parked payments (and, for context, payments
// awaiting confirmation). It exits 1 when any of the first three has waited
// longer than --max-age, so cron or a deploy gate can run it.

// errDoctorFailed marks a doctor run that found something too old.
var errDoctorFailed = errors.New("doctor: something waits longer than --max-age")

// defaultDoctorMaxAge is --max-age's default: a day is as long as a review
// or a dead letter should wait for someone.
const defaultDoctorMaxAge = 24 * time.Hour

type doctorOptions struct{ MaxAge time.Duration }

// doctorGroup is one line of the report.
type doctorGroup struct {
	What     string    `json:"what"` // review, dead_letter, parked, awaiting
	Provider string    `json:"provider,omitempty"`
	Reason   string    `json:"reason,omitempty"` // reviews
	Kind     string    `json:"kind,omitempty"`   // dead letters
	Cause    string    `json:"cause,omitempty"`  // dead letters
	Open     int64     `json:"open"`
	Oldest   time.Time `json:"oldest"`
	AgeSecs  float64   `json:"age_seconds"`
	TooOld   bool      `json:"too_old"` // never for awaiting: it becomes a review at its deadline
}

// doctorReport is what doctor found; --json prints it as is.
type doctorReport struct {
	OK        bool          `json:"ok"`
	CheckedAt time.Time     `json:"checked_at"`
	MaxAge    string        `json:"max_age"`
	Groups    []doctorGroup `json:"groups"`
}

func doctorFlags(fs *flag.FlagSet) func(context.Context, *environment) error {
	opts := doctorOptions{}
	fs.DurationVar(&opts.MaxAge, "max-age", defaultDoctorMaxAge, "fail (exit status 1) when a review, dead letter or parked payment has waited longer than this")
	return func(ctx context.Context, e *environment) error {
		if opts.MaxAge <= 0 {
			return usageError{fmt.Errorf("doctor: --max-age must be positive, got %s", opts.MaxAge)}
		}
		return doctor(ctx, e, opts)
	}
}

func doctor(ctx context.Context, e *environment, opts doctorOptions) error {
	pool, err := openReadOnly(ctx, e.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	a, err := projections.NewQueries(pool).Attention(ctx)
	if err != nil {
		return fmt.Errorf("doctor: %w", err)
	}
	rep := newDoctorReport(a, time.Now().UTC(), opts.MaxAge)
	if err := e.report(rep, func(w io.Writer) { printDoctor(w, rep) }); err != nil {
		return err
	}
	if !rep.OK {
		return errDoctorFailed
	}
	return nil
}

// newDoctorReport lays a out as report lines, oldest first within each kind.
func newDoctorReport(a domain.Attention, now time.Time, maxAge time.Duration) doctorReport {
	rep := doctorReport{OK: true, CheckedAt: now, MaxAge: maxAge.String(), Groups: []doctorGroup{}}
	add := func(g doctorGroup, judged bool) {
		if g.Open == 0 {
			return
		}
		g.AgeSecs = max(now.Sub(g.Oldest), 0).Seconds()
		g.TooOld = judged && now.Sub(g.Oldest) > maxAge
		if g.TooOld {
			rep.OK = false
		}
		rep.Groups = append(rep.Groups, g)
	}
	for k, c := range a.Reviews {
		add(doctorGroup{What: "review", Provider: k[0], Reason: k[1], Open: c.Count, Oldest: c.Oldest}, true)
	}
	for k, c := range a.DeadLetters {
		add(doctorGroup{What: "dead_letter", Kind: k[0], Cause: k[1], Open: c.Count, Oldest: c.Oldest}, true)
	}
	add(doctorGroup{What: "parked", Open: a.Parked.Count, Oldest: a.Parked.Oldest}, true)
	for p, c := range a.Awaiting {
		add(doctorGroup{What: "awaiting", Provider: p, Open: c.Count, Oldest: c.Oldest}, false)
	}
	order := map[string]int{"review": 0, "dead_letter": 1, "parked": 2, "awaiting": 3}
	slices.SortFunc(rep.Groups, func(x, y doctorGroup) int {
		return cmp.Or(cmp.Compare(order[x.What], order[y.What]), x.Oldest.Compare(y.Oldest),
			cmp.Compare(x.Provider+x.Kind, y.Provider+y.Kind), cmp.Compare(x.Reason+x.Cause, y.Reason+y.Cause))
	})
	return rep
}

func printDoctor(w io.Writer, rep doctorReport) {
	if len(rep.Groups) == 0 {
		fmt.Fprintln(w, "nothing waits for a person: no open review, no open dead letter, no parked payment")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHAT\tGROUP\tOPEN\tOLDEST\tWAITING\t")
	for _, g := range rep.Groups {
		group := "-"
		switch g.What {
		case "review":
			group = g.Provider + " " + g.Reason
		case "dead_letter":
			group = g.Kind + " " + g.Cause
		case "awaiting":
			group = g.Provider
		}
		flag := ""
		if g.TooOld {
			flag = "older than " + rep.MaxAge
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", g.What, group, g.Open, g.Oldest.UTC().Format(time.RFC3339),
			time.Duration(g.AgeSecs*float64(time.Second)).Round(time.Second), flag)
	}
	_ = tw.Flush()
	if !rep.OK {
		fmt.Fprintf(w, "\nsomething has waited longer than %s (exit status 1)\n", rep.MaxAge)
	}
}
