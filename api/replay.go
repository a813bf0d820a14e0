package api

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// A replay answers an auditor's first question, "what happened to this
// payment, in what order, and what did we believe at each moment?", from
// the event store alone: every stored event in fold order with what it
// changed and the journal entries it posts. `ledger replay` prints it,
// GET …/replay answers it, and the console's timeline shows it.

// Replay is a payment's facts in fold order as a view sees them.
type Replay struct {
	Provider          string       `json:"provider"`
	ProviderPaymentID string       `json:"provider_payment_id"`
	Stream            string       `json:"stream"`
	AsOf              *time.Time   `json:"as_of"` // null: now
	Basis             domain.Basis `json:"basis"`
	Facts             []ReplayFact `json:"facts"`
	State             ReplayState  `json:"state"`
	Stored            int          `json:"events_stored"` // in the stream, the view's or not
}

// ReplayFact is one stored event, in fold order.
type ReplayFact struct {
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
	Fields  []ReplayField   `json:"fields"`
	Changes []ReplayChange  `json:"changes"`
	Entries []ReplayEntry   `json:"entries"`
	Data    json.RawMessage `json:"data"`
}

type ReplayField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type ReplayChange struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// ReplayEntry is a journal entry that posts (or reverses) the fact.
type ReplayEntry struct {
	EffectiveAt time.Time       `json:"effective_at"`
	RecordedAt  time.Time       `json:"recorded_at"`
	Currency    domain.Currency `json:"currency"`
	Reversal    bool            `json:"reversal"`
	Lines       []ReplayLine    `json:"lines"`
}

// ReplayLine is one line of an entry: exactly one of Debit and Credit is
// positive.
type ReplayLine struct {
	Account domain.Account `json:"account"`
	Debit   int64          `json:"debit"`
	Credit  int64          `json:"credit"`
}

func replayLines(ls []domain.Line) []ReplayLine {
	out := make([]ReplayLine, len(ls))
	for i, l := range ls {
		out[i] = ReplayLine{Account: l.Account, Debit: l.Debit, Credit: l.Credit}
	}
	return out
}

// ReplayState is the payment once the view's facts are folded.
type ReplayState struct {
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

func replayStateOf(s domain.PaymentState) ReplayState {
	return ReplayState{Status: s.Status, Amount: s.Amount, Currency: s.Currency, AmountCaptured: s.AmountCaptured,
		AmountRefunded: s.AmountRefunded, AmountDisputed: s.AmountDisputed, Fee: s.Fee, FeeCurrency: s.FeeCurrency,
		EventCount: s.EventCount, ReviewReasons: slices.Clone(s.ReviewReasons), RequiresReview: s.RequiresReview}
}

// arrival is one stored event, decoded.
type arrival struct {
	rec    eventstore.RecordedEvent
	event  domain.Event
	source string
}

// BuildReplay lays out the stream recs as view sees it (nil: now). It is
// KindNotFound when the view folds nothing.
func BuildReplay(provider, id string, recs []eventstore.RecordedEvent, codec *eventstore.Codec, view *domain.AsOf) (Replay, error) {
	rep := Replay{Provider: provider, ProviderPaymentID: id, Stream: eventstore.PaymentStream(provider, id),
		Basis: domain.BasisEffective, Stored: len(recs), Facts: []ReplayFact{}}
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
func entriesByFact(all []domain.Arrival, view *domain.AsOf) map[string][]ReplayEntry {
	out := map[string][]ReplayEntry{}
	for _, e := range domain.Journal(all) {
		if view != nil && !view.Holds(e.EffectiveAt, e.RecordedAt) {
			continue
		}
		out[e.FactKey] = append(out[e.FactKey], ReplayEntry{EffectiveAt: e.EffectiveAt, RecordedAt: e.RecordedAt,
			Currency: e.Currency, Reversal: e.Reverses >= 0, Lines: replayLines(e.Lines)})
	}
	return out
}

// replayFacts orders the arrivals as the fold does (the first arrival of a
// fact is the one folded; later ones are repeats, listed after it) and
// says what each fact changed.
func replayFacts(seen []arrival, entries map[string][]ReplayEntry) []ReplayFact {
	evs := make([]domain.Event, len(seen))
	byKey := map[string][]arrival{}
	for i, a := range seen {
		evs[i] = a.event
		k := a.event.EventMeta().Key()
		byKey[k] = append(byKey[k], a)
	}
	order := domain.Fold(evs...).Events()
	var out []ReplayFact
	prev := domain.PaymentState{}
	for i, e := range order {
		after := domain.Fold(order[:i+1]...).State()
		for j, a := range byKey[e.EventMeta().Key()] {
			f := newReplayFact(len(out)+1, a)
			if j == 0 {
				f.Changes = stateChanges(prev, after)
				if es := entries[e.EventMeta().Key()]; es != nil {
					f.Entries = es
				}
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

func newReplayFact(n int, a arrival) ReplayFact {
	m := a.event.EventMeta()
	return ReplayFact{N: n, Revision: a.rec.Revision, EventID: a.rec.ID.String(), Type: a.rec.Type,
		ProviderEventID: m.ProviderEventID, Key: m.Key(), OccurredAt: m.OccurredAt.UTC(), RecordedAt: a.rec.RecordedAt.UTC(),
		Source: cmp.Or(a.source, "-"), Fields: keyFields(a.rec.Data), Changes: []ReplayChange{}, Entries: []ReplayEntry{},
		Data: json.RawMessage(a.rec.Data)}
}

// markLate flags the facts stored after a fact that follows them in fold
// order: the deliveries that arrived out of order.
func markLate(facts []ReplayFact) {
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
func keyFields(data []byte) []ReplayField {
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return []ReplayField{}
	}
	out := []ReplayField{}
	for name, v := range m {
		if slices.Contains(metaFields, name) {
			continue
		}
		switch v := v.(type) {
		case string, float64, bool:
			if s := fmt.Sprint(v); s != "" && s != "0" && s != "false" {
				out = append(out, ReplayField{Name: name, Value: s})
			}
		}
	}
	slices.SortFunc(out, func(a, b ReplayField) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// stateChanges lists the fields of the state that differ (updated_at and
// event_count move with every fact and are left out).
func stateChanges(before, after domain.PaymentState) []ReplayChange {
	out := []ReplayChange{}
	add := func(field string, from, to any) {
		if f, t := fmt.Sprint(from), fmt.Sprint(to); f != t {
			out = append(out, ReplayChange{Field: field, From: f, To: t})
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

// getReplay serves GET /v1/payments/{provider}/{provider_payment_id}/replay:
// the payment's facts in fold order as the view (as_of, basis) sees them,
// with what each changed and the entries it posts, then the state.
func (s *Server) getReplay(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	at, err := parseAsOf("api: replay", r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	stream := eventstore.PaymentStream(v["provider"], v["provider_payment_id"])
	recs, err := s.store.ReadStream(r.Context(), stream)
	if err != nil {
		s.writeError(w, r, fmt.Errorf("api: read %s: %w", stream, err))
		return
	}
	if len(recs) == 0 {
		s.writeError(w, r, fmt.Errorf("api: replay %s: %w", stream, domain.ErrUnknownPayment))
		return
	}
	rep, err := BuildReplay(v["provider"], v["provider_payment_id"], recs, s.codec, at.view)
	if domain.KindOf(err) == domain.KindNotFound {
		err = fmt.Errorf("api: replay %s: %w", stream, domain.ErrUnknownPayment)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, rep)
}
