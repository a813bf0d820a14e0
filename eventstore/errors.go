package eventstore

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// ErrStoredElsewhere matches a *StoredElsewhereError with errors.Is.
var ErrStoredElsewhere = errors.New("eventstore: event ID stored in another stream")

// StoredElsewhereError is an append refused because an event ID of the
// batch is stored already in another stream: two payments claim one
// provider fact. Nothing of the batch was written. Only stores that look
// event IDs up across streams report it (Postgres); KurrentDB checks IDs
// within the stream only and stores the event in both (ARCHITECTURE.md,
// "Deduplication, per store").
type StoredElsewhereError struct {
	EventID  uuid.UUID
	Stream   string // the stream the append was for
	StoredIn string // the stream that holds the event ID
}

func (e *StoredElsewhereError) Error() string {
	return fmt.Sprintf("event %s of stream %s is stored in stream %s", e.EventID, e.Stream, e.StoredIn)
}

// Is makes errors.Is(err, ErrStoredElsewhere) true.
func (e *StoredElsewhereError) Is(target error) bool { return target == ErrStoredElsewhere }
