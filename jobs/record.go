package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/backoff"
)

// maxAppendAttempts bounds the appends of one fact that lose a concurrency
// race (ErrConflict) before the job fails and River retries it; the waits
// between them double from 10 ms.
const maxAppendAttempts = 4

// recorder appends the facts jobs derive from a provider's API to the
// payment's stream, one fact per append: the store drops a whole batch when
// any of its IDs is stored, so an observation seen before must not take a
// new fee down with it.
type recorder struct {
	store Appender
	codec *eventstore.Codec
	now   func() time.Time
	log   *slog.Logger
}

// checkFact refuses a fact that would land in the wrong stream or collapse
// with every other one (no ID). op names the job in the error.
func checkFact(op, provider, paymentID string, ev domain.Event) error {
	if ev == nil {
		return fmt.Errorf("%s: the provider client returned a nil fact", op)
	}
	m := ev.EventMeta()
	switch {
	case m.Provider != provider || m.ProviderPaymentID != paymentID:
		return fmt.Errorf("%s: the provider client returned a fact about payment %s/%s", op, m.Provider, m.ProviderPaymentID)
	case m.ProviderEventID == "":
		return fmt.Errorf("%s: %s fact has no provider event ID", op, ev.EventType())
	}
	return nil
}

// record appends ev to its payment's stream. A duplicate is success: the
// same fact was already recorded, by an earlier run or by another job.
func (r *recorder) record(ctx context.Context, op string, ev domain.Event) error {
	m := ev.EventMeta()
	data, err := r.codec.Encode(ev, eventstore.Metadata{
		Provider: m.Provider, ProviderEventType: m.ProviderEventType, ReceivedAt: r.now().UTC()})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	stream := eventstore.PaymentStream(m.Provider, m.ProviderPaymentID)
	for attempt := 1; ; attempt++ {
		res, err := r.store.Append(ctx, stream, eventstore.Any(), []eventstore.EventData{data})
		if err == nil {
			r.log.DebugContext(ctx, "recorded a fact from the provider's API", "stream", stream,
				"type", ev.EventType(), "duplicate", res.Duplicate)
			return nil
		}
		if !errors.Is(err, domain.ErrConflict) || attempt == maxAppendAttempts {
			return fmt.Errorf("%s: append: %w", op, err)
		}
		if err := backoff.Sleep(ctx, backoff.Exponential{Min: 10 * time.Millisecond, Max: 40 * time.Millisecond}.Delay(attempt)); err != nil {
			return fmt.Errorf("%s: append: %w", op, err)
		}
	}
}
