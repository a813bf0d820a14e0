package eventstore

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
)

// PaymentStreamPrefix starts every payment stream's name; projections filter
// the global feed on it.
const PaymentStreamPrefix = "payment-"

// PaymentStream names a payment's stream: payment-{provider}-{provider payment ID}.
// Never parse a name back: IDs may contain '-' and travel in the event body.
func PaymentStream(provider, providerPaymentID string) string {
	return PaymentStreamPrefix + provider + "-" + providerPaymentID
}

// eventNamespace is the UUIDv5 namespace of payledger event IDs. Changing it
// would make every redelivered webhook look new: never change it.
var eventNamespace = uuid.MustParse("5b1e0c1e-3a7d-4f43-9c1e-7061796c6564")

// EventID derives a stored event's ID from the provider and the fact's key
// (provider event ID, plus a sub-key when one provider event yields several
// facts): UUIDv5 over "provider:key". The same delivery always gets the same
// ID, so the store rejects the repeat.
func EventID(m domain.Meta) uuid.UUID {
	return uuid.NewSHA1(eventNamespace, []byte(m.Provider+":"+m.Key()))
}

// DeadLetterRetryID is the event ID of the retry-th retry fact of dead
// letter id: UUIDv5 over "deadletter:{id}:{retry}", so a retry that was
// killed after its append and run again appends nothing twice.
func DeadLetterRetryID(id int64, retry int) uuid.UUID {
	return uuid.NewSHA1(eventNamespace, []byte(fmt.Sprintf("deadletter:%d:%d", id, retry)))
}

// DeadLetterStream is the stream of dead letter id's retry facts.
func DeadLetterStream(id int64) string { return fmt.Sprintf("%s%d", domain.DeadLetterStreamHead, id) }
