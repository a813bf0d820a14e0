package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// maxAppendAttempts bounds the appends of one fact that lose a concurrency
// race (ErrConflict) before the job fails and River retries it.
const maxAppendAttempts = 4

// recorder appends the facts jobs derive from a provider's API to the
// payment's stream through eventstore.Recorder (the path webhooks take),
// one fact per append: the store drops a whole batch when any of its IDs is
// stored, so a fact seen before must not take a new one down with it.
type recorder struct {
	rec *eventstore.Recorder
	now func() time.Time
	log *slog.Logger
}

func newRecorder(store Appender, now func() time.Time, log *slog.Logger) *recorder {
	return &recorder{rec: eventstore.NewRecorder(store, eventstore.NewCodec(), maxAppendAttempts, nil), now: now, log: log}
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
	res, err := r.rec.Record(ctx, domain.Notification{Provider: m.Provider, ProviderEventID: m.ProviderEventID,
		ProviderEventType: m.ProviderEventType, Events: []domain.Event{ev}},
		eventstore.Metadata{Provider: m.Provider, ProviderEventType: m.ProviderEventType, ReceivedAt: r.now().UTC(),
			Source: eventstore.SourceAPI})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	r.log.DebugContext(ctx, "recorded a fact from the provider's API", "stream", res.Streams[0],
		"type", ev.EventType(), "duplicate", res.Duplicate())
	return nil
}
