package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/backoff"
)

// Sources of a fact, kept in Metadata.Source: how it reached the store.
const (
	SourceWebhook  = "webhook"  // a verified delivery
	SourceAPI      = "api"      // a background fetch from the provider's API (status, fee)
	SourceBackfill = "backfill" // `ledger backfill`: the provider's list API, mapped as its webhooks or fetches are
	// SourceReconciliation: the reconciler's check of a payment in doubt:
	// the provider's status API, and the check itself.
	SourceReconciliation = "reconciliation"
	// SourceOperator: a person's decision through the admin API (a review
	// resolved), named by Metadata.RequestID and the fact's own fields.
	SourceOperator = "operator"
)

// ErrNotStored marks a Record failure of the store itself (after the
// conflict retries): nothing of the failed batch was stored, and trying
// again later is safe.
var ErrNotStored = errors.New("not stored")

// Appender is the part of Store that records facts.
type Appender interface {
	Append(ctx context.Context, stream string, expected ExpectedRevision, events []EventData) (AppendResult, error)
}

// Recorder is the one path by which provider facts are stored, whether a
// webhook delivered them, a background job fetched them or a backfill
// listed them: the events of a notification are grouped by payment stream,
// encoded with their deterministic IDs and appended with Any, so the store,
// not a read-then-write, rejects what it already holds. A concurrent writer
// to the same stream (ErrConflict) is retried a bounded number of times.
type Recorder struct {
	store    Appender
	codec    *Codec
	attempts int
	onRetry  func(provider string)
}

// NewRecorder returns a recorder that tries each append up to attempts
// times (at least once); onRetry, if not nil, is told of every retry.
func NewRecorder(store Appender, codec *Codec, attempts int, onRetry func(provider string)) *Recorder {
	return &Recorder{store: store, codec: codec, attempts: max(1, attempts), onRetry: onRetry}
}

// Recorded is what Record did with a notification.
type Recorded struct {
	FirstEventID uuid.UUID // ID of the notification's first event
	Streams      []string  // in the order the notification first names them
	// Duplicates counts the streams whose batch was already stored. A batch
	// is stored whole or not at all, so Duplicates == len(Streams) means
	// nothing new was stored.
	Duplicates int
	// Collisions are the streams whose batch was not stored because an event
	// ID of it is stored in another stream (Record's error then wraps
	// ErrStoredElsewhere); the other streams' batches were still appended.
	Collisions []StoredElsewhereError
}

// Duplicate reports whether nothing new was stored.
func (r Recorded) Duplicate() bool { return r.Duplicates == len(r.Streams) }

// Record stores the events of n with meta. An event that does not belong
// to meta's provider, names no payment or provider event, or repeats another
// fact of n is KindInvalid, and nothing is stored. Store failures wrap
// ErrNotStored: the caller decides what they mean to its caller (a webhook
// answers 503 so that the provider retries). A batch refused because its
// event ID is stored in another stream does not stop the others, which are
// distinct facts: Record then returns what it stored, with Collisions, and
// an error wrapping ErrNotStored and ErrStoredElsewhere.
func (r *Recorder) Record(ctx context.Context, n domain.Notification, meta Metadata) (Recorded, error) {
	batches, err := r.encode(n, meta)
	if err != nil {
		return Recorded{}, err
	}
	out := Recorded{FirstEventID: batches[0].events[0].ID}
	var collided []error
	for _, b := range batches {
		res, err := r.appendRetry(ctx, meta.Provider, b)
		out.Streams = append(out.Streams, b.stream)
		if se, ok := errors.AsType[*StoredElsewhereError](err); ok {
			out.Collisions = append(out.Collisions, *se)
			collided = append(collided, err)
			continue
		}
		if err != nil {
			return Recorded{}, fmt.Errorf("%w: %w", ErrNotStored, err)
		}
		if res.Duplicate {
			out.Duplicates++
		}
	}
	if len(collided) > 0 {
		return out, fmt.Errorf("%w: %w", ErrNotStored, errors.Join(collided...))
	}
	return out, nil
}

// batch is the events of one notification that go to one stream.
type batch struct {
	stream string
	events []EventData
}

func (r *Recorder) encode(n domain.Notification, meta Metadata) ([]batch, error) {
	const op = "eventstore: record"
	if len(n.Events) == 0 {
		return nil, domain.Invalid(op, "the notification has no events", nil)
	}
	var batches []batch
	index := make(map[string]int)
	seen := make(map[uuid.UUID]bool, len(n.Events))
	for i, e := range n.Events {
		if e == nil {
			return nil, domain.Invalid(op, fmt.Sprintf("event %d is empty", i), nil)
		}
		m := e.EventMeta()
		switch {
		case m.Provider != meta.Provider:
			return nil, domain.Invalid(op, fmt.Sprintf("event %d belongs to provider %q, not %q", i, m.Provider, meta.Provider), nil)
		case m.ProviderPaymentID == "":
			return nil, domain.Invalid(op, fmt.Sprintf("event %d has no payment ID", i), nil)
		case m.ProviderEventID == "":
			return nil, domain.Invalid(op, fmt.Sprintf("event %d has no provider event ID", i), nil)
		}
		md := meta
		if m.ProviderEventType != "" {
			md.ProviderEventType = m.ProviderEventType
		}
		data, err := r.codec.Encode(e, md)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err) // an adapter emitting an unknown type is a bug
		}
		if seen[data.ID] {
			return nil, domain.Invalid(op, fmt.Sprintf("event %d repeats fact %q", i, m.Key()), nil)
		}
		seen[data.ID] = true
		stream := PaymentStream(m.Provider, m.ProviderPaymentID)
		j, ok := index[stream]
		if !ok {
			j = len(batches)
			index[stream] = j
			batches = append(batches, batch{stream: stream})
		}
		batches[j].events = append(batches[j].events, data)
	}
	return batches, nil
}

// Backoff bounds of the conflict retry: jitter spreads writers that
// collided on a stream so they do not collide again in lockstep.
const (
	retryBase = 10 * time.Millisecond
	retryMax  = 200 * time.Millisecond
)

func (r *Recorder) appendRetry(ctx context.Context, provider string, b batch) (AppendResult, error) {
	var err error
	for attempt := 1; attempt <= r.attempts; attempt++ {
		if attempt > 1 {
			if r.onRetry != nil {
				r.onRetry(provider)
			}
			if werr := backoff.Sleep(ctx, backoff.Exponential{Min: retryBase, Max: retryMax}.Delay(attempt-1)); werr != nil {
				return AppendResult{}, fmt.Errorf("eventstore: append %s: %w (after %w)", b.stream, werr, err)
			}
		}
		var res AppendResult
		res, err = r.store.Append(ctx, b.stream, Any(), b.events)
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, domain.ErrConflict) {
			return AppendResult{}, fmt.Errorf("eventstore: append %s: %w", b.stream, err)
		}
	}
	return AppendResult{}, fmt.Errorf("eventstore: append %s: gave up after %d attempts: %w", b.stream, r.attempts, err)
}
