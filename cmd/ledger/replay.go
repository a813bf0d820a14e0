package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// `ledger replay` prints api.BuildReplay's report of one payment (see
// api/replay.go), read from the event store.

// printReplay writes the report for a terminal: one aligned row per
// stored event, its journal entries under it, then the state. No colour.
func printReplay(w io.Writer, rep api.Replay) {
	view := "now"
	if rep.AsOf != nil {
		view = rep.AsOf.Format(time.RFC3339Nano) + " (" + string(rep.Basis) + ")"
	}
	fmt.Fprintf(w, "%s/%s  stream %s  as of %s  %d of %d stored events\n\n", rep.Provider, rep.ProviderPaymentID,
		rep.Stream, view, len(rep.Facts), rep.Stored)
	rows := [][]string{{"#", "PROVIDER TIME", "STORED", "REV", "TYPE", "EVENT", "SOURCE", "FIELDS", "CHANGED"}}
	for _, f := range rep.Facts {
		rows = append(rows, []string{fmt.Sprint(f.N) + factMarks(f), stamp(f.OccurredAt), stamp(f.RecordedAt), fmt.Sprint(f.Revision),
			f.Type, f.Key, f.Source, joinFields(f.Fields), joinChanges(f)})
	}
	widths := columnWidths(rows)
	for i, row := range rows {
		writeRow(w, row, widths)
		if i > 0 {
			for _, e := range rep.Facts[i-1].Entries {
				fmt.Fprintf(w, "%s%s\n", strings.Repeat(" ", widths[0]+2), entryLine(e))
			}
		}
	}
	s := rep.State
	fee := "no fee stated"
	if s.FeeCurrency != "" {
		fee = fmt.Sprintf("fee %d %s", s.Fee, s.FeeCurrency)
	}
	fmt.Fprintf(w, "\nstate: %s %d %s, captured %d, refunded %d, disputed %d, %s, %d facts",
		s.Status, s.Amount, s.Currency, s.AmountCaptured, s.AmountRefunded, s.AmountDisputed, fee, s.EventCount)
	if len(s.ReviewReasons) > 0 {
		fmt.Fprintf(w, ", review reasons %s", strings.Join(s.ReviewReasons, ","))
	}
	if s.RequiresReview {
		fmt.Fprint(w, ", requires review")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "marks: * arrived late (after a fact it precedes), = repeat of a fact already folded")
}

func factMarks(f api.ReplayFact) string {
	switch {
	case f.Repeat:
		return "="
	case f.Late:
		return "*"
	}
	return ""
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func joinFields(fs []api.ReplayField) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Name + "=" + f.Value
	}
	return strings.Join(parts, " ")
}

func joinChanges(f api.ReplayFact) string {
	if f.Repeat {
		return "(repeat: nothing)"
	}
	parts := make([]string, len(f.Changes))
	for i, c := range f.Changes {
		parts[i] = c.Field + " " + cmp.Or(c.From, `""`) + " → " + c.To
	}
	return strings.Join(parts, "; ")
}

func entryLine(e api.ReplayEntry) string {
	var b strings.Builder
	kind := "entry"
	if e.Reversal {
		kind = "reversal"
	}
	fmt.Fprintf(&b, "↳ %s %s effective %s recorded %s:", kind, e.Currency, stamp(e.EffectiveAt), stamp(e.RecordedAt))
	for _, l := range e.Lines {
		if l.Debit > 0 {
			fmt.Fprintf(&b, " Dr %s %d", l.Account, l.Debit)
		} else {
			fmt.Fprintf(&b, " Cr %s %d", l.Account, l.Credit)
		}
	}
	return b.String()
}

func columnWidths(rows [][]string) []int {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	return widths
}

func writeRow(w io.Writer, row []string, widths []int) {
	var b strings.Builder
	for i, c := range row {
		b.WriteString(c)
		if i < len(row)-1 {
			b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))+2))
		}
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
}

// replayOptions are `ledger replay`'s flags.
type replayOptions struct {
	AsOf  string
	Basis string
}

func replayFlags(fs *flag.FlagSet) func(context.Context, *environment) error {
	var opts replayOptions
	fs.StringVar(&opts.AsOf, "as-of", "", "show the payment as of this moment (RFC 3339, fractional seconds allowed); default now")
	fs.StringVar(&opts.Basis, "basis", "", "with --as-of: effective (facts whose provider time is at or before it; the default) or recorded (facts stored by then)")
	return func(ctx context.Context, e *environment) error {
		if len(e.args) != 2 {
			return usageError{fmt.Errorf("replay: want PROVIDER PAYMENT_ID, got %d arguments", len(e.args))}
		}
		view, err := parseReplayView(opts)
		if err != nil {
			return usageError{err}
		}
		return replay(ctx, e, e.args[0], e.args[1], view)
	}
}

func parseReplayView(opts replayOptions) (*domain.AsOf, error) {
	if opts.AsOf == "" {
		if opts.Basis != "" {
			return nil, errors.New("replay: --basis needs --as-of")
		}
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339Nano, opts.AsOf)
	if err != nil {
		return nil, fmt.Errorf("replay: --as-of %q is not an RFC 3339 time such as 2026-03-31T23:59:59Z", opts.AsOf)
	}
	b := domain.Basis(cmp.Or(opts.Basis, string(domain.BasisEffective)))
	if !b.Valid() {
		return nil, fmt.Errorf("replay: --basis %q is not effective or recorded", opts.Basis)
	}
	return &domain.AsOf{At: at, Basis: b}, nil
}

// replay reads the payment's stream, read-only, and prints it.
func replay(ctx context.Context, e *environment, provider, id string, view *domain.AsOf) error {
	_, store, closeAll, err := openReadOnlyStores(ctx, e)
	if err != nil {
		return err
	}
	defer closeAll()
	recs, err := store.ReadStream(ctx, eventstore.PaymentStream(provider, id))
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	rep, err := api.BuildReplay(provider, id, recs, eventstore.NewCodec(), view)
	if err != nil {
		return err
	}
	return e.report(rep, func(w io.Writer) { printReplay(w, rep) })
}
