package api

import (
	"context"
	"fmt"
	"net/url"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// asOfParams are what the payment routes accept: the moment and the axis.
var asOfParams = []string{"as_of", "basis"}

// asOf is a payment route's view in time (domain.AsOf); the zero value is
// now, as the read models hold it.
type asOf struct{ view *domain.AsOf }

func (a asOf) now() bool { return a.view == nil }

// parseAsOf reads as_of (RFC 3339, fractional seconds allowed) and basis
// (effective, the default, or recorded). A basis without as_of is refused
// rather than ignored: the caller meant a moment.
func parseAsOf(op string, q url.Values) (asOf, error) {
	if err := checkParams(op, q, asOfParams); err != nil {
		return asOf{}, err
	}
	s := q.Get("as_of")
	if s == "" {
		if q.Get("basis") != "" {
			return asOf{}, domain.Invalid(op, "basis needs as_of", nil)
		}
		return asOf{}, nil
	}
	at, err := parseInstant(op, "as_of", s)
	if err != nil {
		return asOf{}, err
	}
	b, err := parseBasis(op, q.Get("basis"))
	return asOf{view: &domain.AsOf{At: at, Basis: b}}, err
}

// folds reports whether the view folds a stored event.
func (a asOf) folds(rec eventstore.RecordedEvent, e domain.Event) bool {
	return a.now() || a.view.Folds(domain.Arrival{Event: e, RecordedAt: rec.RecordedAt})
}

// holds reports whether the view holds a journal entry.
func (a asOf) holds(e domain.LedgerEntry) bool {
	return a.now() || a.view.Holds(e.EffectiveAt, e.RecordedAt)
}

// facts reads a payment's stream from the event store and decodes the
// events the view folds, in stream order. A payment with none (unknown, or
// not yet born at the moment) is domain.ErrUnknownPayment. An event this
// build cannot decode fails the read: skipping it would show a wrong state.
func (s *Server) facts(ctx context.Context, provider, paymentID string, a asOf) ([]eventstore.RecordedEvent, []domain.Event, error) {
	return readFacts(ctx, s.store, s.codec, provider, paymentID, a)
}

func readFacts(ctx context.Context, store StreamReader, codec *eventstore.Codec, provider, paymentID string, a asOf) ([]eventstore.RecordedEvent, []domain.Event, error) {
	stream := eventstore.PaymentStream(provider, paymentID)
	recs, err := store.ReadStream(ctx, stream)
	if err != nil {
		return nil, nil, fmt.Errorf("api: read %s: %w", stream, err)
	}
	kept, evs := recs[:0:0], make([]domain.Event, 0, len(recs))
	for _, rec := range recs {
		e, err := codec.Decode(rec)
		if err != nil {
			return nil, nil, fmt.Errorf("api: read %s at %d: %w", rec.Stream, rec.Revision, err)
		}
		if a.folds(rec, e) {
			kept, evs = append(kept, rec), append(evs, e)
		}
	}
	if len(evs) == 0 {
		return nil, nil, fmt.Errorf("api: read %s: %w", stream, domain.ErrUnknownPayment)
	}
	return kept, evs, nil
}
