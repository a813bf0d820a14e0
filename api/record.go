package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// record is the command path of a verified delivery: eventstore.Recorder,
// the path every provider fact takes (webhook, fetch, backfill), stores its
// events by payment stream. A failure to store is KindUnavailable (503): the
// provider keeps the delivery and retries, and the retry is idempotent even
// when some of the streams were already written; a malformed notification
// keeps its kind (400), a bug in encoding is a 500.
func (s *Server) record(ctx context.Context, n domain.Notification, meta eventstore.Metadata) (eventstore.Recorded, error) {
	meta.Source = eventstore.SourceWebhook
	res, err := s.recorder.Record(ctx, n, meta)
	if errors.Is(err, eventstore.ErrStoredElsewhere) && len(res.Collisions) > 0 && s.deadLetters != nil {
		return res, err // the webhook keeps it as a dead letter (parkCollisions)
	}
	if errors.Is(err, eventstore.ErrNotStored) {
		return eventstore.Recorded{}, domain.Unavailable("api: record "+n.ProviderEventID, "could not store the delivery", err)
	}
	if err != nil {
		return eventstore.Recorded{}, fmt.Errorf("api: record %s: %w", n.ProviderEventID, err)
	}
	return res, nil
}
