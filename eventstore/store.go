package eventstore

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Store is an append-only event store of many small streams plus one global,
// totally ordered feed of all events.
//
// Semantics every adapter honours (checked by storetest):
//   - Append writes all events of one call or none, at consecutive revisions
//     starting at 0 for a new stream.
//   - Append is idempotent by event ID: when any event ID of the batch is
//     already stored in the stream, nothing is written and the result says
//     Duplicate, whatever the expected revision. The store enforces this
//     (a unique constraint, or a read-check guarded by the expected revision),
//     never a caller's query.
//   - Expected revision: Any appends at the end; NoStream requires an empty
//     stream; Exact(n) requires the last revision to be n. A mismatch returns
//     an error wrapping domain.ErrConflict.
//   - ReadStream of a missing stream returns no events and no error.
//   - SubscribeAll delivers every event committed after from, exactly once,
//     in the global order, never skipping one that a slower transaction
//     committed late. Positions round-trip through Position.String/ParsePosition
//     so projections can store them as checkpoints.
type Store interface {
	Append(ctx context.Context, stream string, expected ExpectedRevision, events []EventData) (AppendResult, error)
	ReadStream(ctx context.Context, stream string) ([]RecordedEvent, error)
	SubscribeAll(ctx context.Context, from Position, filter Filter) (Subscription, error)
	// Ping reports whether the store can be reached and is ready (for /readyz).
	Ping(ctx context.Context) error
}

// EventData is an event to append.
type EventData struct {
	ID       uuid.UUID
	Type     string // wire name, e.g. "payment.succeeded.v1"
	Data     []byte // JSON
	Metadata []byte // JSON
}

// RecordedEvent is a stored event.
type RecordedEvent struct {
	ID         uuid.UUID
	Stream     string
	Revision   uint64 // 0-based position within the stream
	Type       string
	Data       []byte
	Metadata   []byte
	RecordedAt time.Time // when the store committed it (store clock)
	Position   Position  // place in the global feed
}

// AppendResult says what Append did.
type AppendResult struct {
	// Duplicate is true when the batch was already stored; nothing was written.
	Duplicate bool
	// Revision is the revision of the batch's last event: just written, or,
	// for a duplicate, the stored copy's (when the adapter knows it cheaply).
	Revision uint64
	// Position is the global position of the last event written (zero for a
	// duplicate).
	Position Position
}

// Filter narrows SubscribeAll. The zero Filter passes every event.
type Filter struct {
	// StreamPrefix keeps events whose stream name starts with it ("payment-").
	StreamPrefix string
}

// Match reports whether a stream passes the filter.
func (f Filter) Match(stream string) bool {
	return len(stream) >= len(f.StreamPrefix) && stream[:len(f.StreamPrefix)] == f.StreamPrefix
}

// Subscription is a live feed of the global order. Next blocks until an event
// or a checkpoint is available, ctx is done, or the subscription fails.
type Subscription interface {
	Next(ctx context.Context) (Message, error)
	Close() error
}

// Message is one item of a subscription: an event, or (Event == nil) a
// checkpoint saying every matching event up to Checkpoint has been delivered,
// so a consumer may advance its stored position even when nothing matched.
type Message struct {
	Event      *RecordedEvent
	Checkpoint Position
}
