package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// `ledger replay` answers an auditor's first question, "what happened to
// this payment, in what order, and what did we believe at each moment?",
// from the event store alone: every stored event in fold order with what it
// changed and the journal entries it posts.

// replayReport is what replay prints; --json prints it as is.
type replayReport struct {
	Provider          string       `json:"provider"`
	ProviderPaymentID string       `json:"provider_payment_id"`
	Stream            string       `json:"stream"`
	AsOf              *time.Time   `json:"as_of"` // null: now
	Basis             domain.Basis `json:"basis"`
	Facts             []replayFact `json:"facts"`
	State             replayState  `json:"state"`
	Stored            int          `json:"events_stored"` // in the stream, the view's or not
}

// replayFact is one stored event, in fold order.
type replayFact struct {
	N               int       `json:"n"` // place in fold order, from 1
	Revision        uint64    `json:"revision"`
	EventID         string    `json:"event_id"`
	Type            string    `json:"type"`
	ProviderEventID string    `json:"provider_event_id"`
	Key             string    `json:"key"`
	OccurredAt      time.Time `json:"occurred_at"` // the provider's time
	RecordedAt      time.Time `json:"recorded_at"` // when the store took it
	Source          string    `json:"source"`
	// Repeat: the fact was folded already from an earlier arrival; Late: it
	// arrived after a fact that follows it in fold order.
	Repeat  bool            `json:"repeat"`
	Late    bool            `json:"late"`
	Fields  []replayField   `json:"fields"`
	Changes []replayChange  `json:"changes"`
	Entries []replayEntry   `json:"entries"`
	Data    json.RawMessage `json:"data"`
}

type replayField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type replayChange struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// replayEntry is a journal entry that posts (or reverses) the fact.
type replayEntry struct {
	EffectiveAt time.Time       `json:"effective_at"`
	RecordedAt  time.Time       `json:"recorded_at"`
	Currency    domain.Currency `json:"currency"`
	Reversal    bool            `json:"reversal"`
	Lines       []domain.Line   `json:"lines"`
}

// replayState is the payment once the view's facts are folded.
type replayState struct {
	Status         domain.Status   `json:"status"`
	Amount         int64           `json:"amount"`
	Currency       domain.Currency `json:"currency"`
	AmountCaptured int64           `json:"amount_captured"`
	AmountRefunded int64           `json:"amount_refunded"`
	AmountDisputed int64           `json:"amount_disputed"`
	Fee            int64           `json:"fee"`
	FeeCurrency    domain.Currency `json:"fee_currency"`
	EventCount     int             `json:"event_count"`
	ReviewReasons  []string        `json:"review_reasons"`
	RequiresReview bool            `json:"requires_review"`
}

func replayStateOf(s domain.PaymentState) replayState {
	return replayState{Status: s.Status, Amount: s.Amount, Currency: s.Currency, AmountCaptured: s.AmountCaptured,
		AmountRefunded: s.AmountRefunded, AmountDisputed: s.AmountDisputed, Fee: s.Fee, FeeCurrency: s.FeeCurrency,
		EventCount: s.EventCount, ReviewReasons: slices.Clone(s.ReviewReasons), RequiresReview: s.RequiresReview}
}

// arrival is one stored event, decoded.
type arrival struct {
	rec    eventstore.RecordedEvent
	event  domain.Event
	source string
}

// buildReplay lays out the stream recs as view sees it (nil: now). It is
// KindNotFound when the view folds nothing.
func buildReplay(provider, id string, recs []eventstore.RecordedEvent, codec *eventstore.Codec, view *domain.AsOf) (replayReport, error) {
	rep := replayReport{Provider: provider, ProviderPaymentID: id, Stream: eventstore.PaymentStream(provider, id),
		Basis: domain.BasisEffective, Stored: len(recs), Facts: []replayFact{}}
	if view != nil {
		at := view.At.UTC()
		rep.AsOf, rep.Basis = &at, cmp.Or(view.Basis, domain.BasisEffective)
	}
	all := make([]domain.Arrival, 0, len(recs))
	var seen []arrival
	for _, rec := range recs {
		e, err := codec.Decode(rec)
		if err != nil {
			return rep, fmt.Errorf("replay: %s at %d: %w", rec.Stream, rec.Revision, err)
		}
		md, err := eventstore.DecodeMetadata(rec.Metadata)
		if err != nil {
			return rep, fmt.Errorf("replay: %s at %d: %w", rec.Stream, rec.Revision, err)
		}
		a := domain.Arrival{Event: e, EventID: rec.ID.String(), RecordedAt: rec.RecordedAt}
		all = append(all, a)
		if view == nil || view.Folds(a) {
			seen = append(seen, arrival{rec: rec, event: e, source: md.Source})
		}
	}
	if len(seen) == 0 {
		return rep, &domain.Error{Kind: domain.KindNotFound, Op: "replay " + rep.Stream,
			Msg: "no fact of this payment in that view (unknown payment, or not yet born)"}
	}
	rep.Facts = replayFacts(seen, entriesByFact(all, view))
	evs := make([]domain.Event, len(seen))
	for i, a := range seen {
		evs[i] = a.event
	}
	rep.State = replayStateOf(domain.Fold(evs...).State())
	return rep, nil
}

// entriesByFact derives the payment's journal from every arrival, as the
// projector does, keeps the entries the view holds and files each under the
// fact it posts (a reversal under the fact of the entry it reverses).
func entriesByFact(all []domain.Arrival, view *domain.AsOf) map[string][]replayEntry {
	out := map[string][]replayEntry{}
	for _, e := range domain.Journal(all) {
		if view != nil && !view.Holds(e.EffectiveAt, e.RecordedAt) {
			continue
		}
		out[e.FactKey] = append(out[e.FactKey], replayEntry{EffectiveAt: e.EffectiveAt, RecordedAt: e.RecordedAt,
			Currency: e.Currency, Reversal: e.Reverses >= 0, Lines: e.Lines})
	}
	return out
}

// replayFacts orders the arrivals as the fold does (the first arrival of a
// fact is the one folded; later ones are repeats, listed after it) and
// says what each fact changed.
func replayFacts(seen []arrival, entries map[string][]replayEntry) []replayFact {
	evs := make([]domain.Event, len(seen))
	byKey := map[string][]arrival{}
	for i, a := range seen {
		evs[i] = a.event
		k := a.event.EventMeta().Key()
		byKey[k] = append(byKey[k], a)
	}
	order := domain.Fold(evs...).Events()
	var out []replayFact
	prev := domain.PaymentState{}
	for i, e := range order {
		after := domain.Fold(order[:i+1]...).State()
		for j, a := range byKey[e.EventMeta().Key()] {
			f := newReplayFact(len(out)+1, a)
			if j == 0 {
				f.Changes, f.Entries = stateChanges(prev, after), entries[e.EventMeta().Key()]
			} else {
				f.Repeat = true
			}
			out = append(out, f)
		}
		prev = after
	}
	markLate(out)
	return out
}

func newReplayFact(n int, a arrival) replayFact {
	m := a.event.EventMeta()
	return replayFact{N: n, Revision: a.rec.Revision, EventID: a.rec.ID.String(), Type: a.rec.Type,
		ProviderEventID: m.ProviderEventID, Key: m.Key(), OccurredAt: m.OccurredAt.UTC(), RecordedAt: a.rec.RecordedAt.UTC(),
		Source: cmp.Or(a.source, "-"), Fields: keyFields(a.rec.Data), Changes: []replayChange{}, Entries: []replayEntry{},
		Data: json.RawMessage(a.rec.Data)}
}

// markLate flags the facts stored after a fact that follows them in fold
// order: the deliveries that arrived out of order.
func markLate(facts []replayFact) {
	minAfter := uint64(1<<64 - 1)
	for i := len(facts) - 1; i >= 0; i-- {
		if facts[i].Repeat {
			continue
		}
		facts[i].Late = facts[i].Revision > minAfter
		minAfter = min(minAfter, facts[i].Revision)
	}
}

// metaFields are the data fields every event has (Meta); the key fields
// are the rest.
var metaFields = []string{"provider", "provider_event_id", "sub_key", "provider_event_type", "provider_payment_id", "occurred_at"}

// keyFields are the event's own scalar fields, in name order.
func keyFields(data []byte) []replayField {
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return []replayField{}
	}
	out := []replayField{}
	for name, v := range m {
		if slices.Contains(metaFields, name) {
			continue
		}
		switch v := v.(type) {
		case string, float64, bool:
			if s := fmt.Sprint(v); s != "" && s != "0" && s != "false" {
				out = append(out, replayField{Name: name, Value: s})
			}
		}
	}
	slices.SortFunc(out, func(a, b replayField) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// stateChanges lists the fields of the state that differ (updated_at and
// event_count move with every fact and are left out).
func stateChanges(before, after domain.PaymentState) []replayChange {
	out := []replayChange{}
	add := func(field string, from, to any) {
		if f, t := fmt.Sprint(from), fmt.Sprint(to); f != t {
			out = append(out, replayChange{Field: field, From: f, To: t})
		}
	}
	add("status", before.Status, after.Status)
	add("amount", before.Amount, after.Amount)
	add("currency", before.Currency, after.Currency)
	add("amount_captured", before.AmountCaptured, after.AmountCaptured)
	add("amount_refunded", before.AmountRefunded, after.AmountRefunded)
	add("amount_disputed", before.AmountDisputed, after.AmountDisputed)
	add("fee", before.Fee, after.Fee)
	add("fee_currency", before.FeeCurrency, after.FeeCurrency)
	add("review_reasons", strings.Join(before.ReviewReasons, ","), strings.Join(after.ReviewReasons, ","))
	add("requires_review", before.RequiresReview, after.RequiresReview)
	return out
}

// printReplay writes the report for a terminal: one aligned row per
// stored event, its journal entries under it, then the state. No colour.
func printReplay(w io.Writer, rep replayReport) {
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

func factMarks(f replayFact) string {
	switch {
	case f.Repeat:
		return "="
	case f.Late:
		return "*"
	}
	return ""
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func joinFields(fs []replayField) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Name + "=" + f.Value
	}
	return strings.Join(parts, " ")
}

func joinChanges(f replayFact) string {
	if f.Repeat {
		return "(repeat: nothing)"
	}
	parts := make([]string, len(f.Changes))
	for i, c := range f.Changes {
		parts[i] = c.Field + " " + cmp.Or(c.From, `""`) + " → " + c.To
	}
	return strings.Join(parts, "; ")
}

func entryLine(e replayEntry) string {
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
	rep, err := buildReplay(provider, id, recs, eventstore.NewCodec(), view)
	if err != nil {
		return err
	}
	return e.report(rep, func(w io.Writer) { printReplay(w, rep) })
}
