package projections

import (
	"fmt"
	"time"

	"github.com/payledger/payledger/domain"
)

// t0 is the provider time fixtures start at.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// pay builds the events of one payment. IDs look like real ones, with '_'
// and '-', because stream names must never be parsed back. Provider event
// IDs get the payment ID appended, since a provider never reuses one across
// payments (and the event store's IDs are unique across streams).
type pay struct {
	provider, id string
}

func (p pay) meta(evt string, at time.Duration, providerType string) domain.Meta {
	return domain.Meta{
		Provider: p.provider, ProviderEventID: evt + "_" + p.id, ProviderEventType: providerType,
		ProviderPaymentID: p.id, OccurredAt: t0.Add(at),
	}
}

func (p pay) created(evt string, at time.Duration, amount int64) domain.Event {
	return &domain.PaymentCreated{Meta: p.meta(evt, at, "payment_intent.created"), Amount: amount, Currency: "USD"}
}

func (p pay) failed(evt string, at time.Duration, amount int64) domain.Event {
	return &domain.PaymentFailed{Meta: p.meta(evt, at, "payment_intent.payment_failed"), Amount: amount,
		Currency: "USD", Code: "card_declined"}
}

func (p pay) succeeded(evt string, at time.Duration, amount int64) domain.Event {
	return &domain.PaymentSucceeded{Meta: p.meta(evt, at, "payment_intent.succeeded"), Amount: amount,
		AmountReceived: amount, Currency: "USD"}
}

func (p pay) cancelled(evt string, at time.Duration, amount int64) domain.Event {
	return &domain.PaymentCancelled{Meta: p.meta(evt, at, "payment_intent.canceled"), Amount: amount,
		Currency: "USD", Reason: "abandoned"}
}

func (p pay) refunded(evt string, at time.Duration, captured, refunded int64) domain.Event {
	return &domain.PaymentRefunded{Meta: p.meta(evt, at, "charge.refunded"), AmountCaptured: captured,
		AmountRefunded: refunded, Currency: "USD"}
}

func (p pay) disputeOpened(evt string, at time.Duration, amount int64) domain.Event {
	return &domain.DisputeOpened{Meta: p.meta(evt, at, "charge.dispute.created"), DisputeID: "du_" + p.id,
		Amount: amount, Currency: "USD", Reason: "fraudulent"}
}

func (p pay) disputeClosed(evt string, at time.Duration, amount int64, outcome domain.DisputeOutcome) domain.Event {
	return &domain.DisputeClosed{Meta: p.meta(evt, at, "charge.dispute.closed"), DisputeID: "du_" + p.id,
		Outcome: outcome, Amount: amount, Currency: "USD"}
}

// lifecycle returns the events of payment n of a synthetic workload: every
// payment is created, and by n it fails, succeeds, gets refunded or disputed,
// so a replay exercises every status.
func lifecycle(provider string, n int) []domain.Event {
	p := pay{provider, fmt.Sprintf("pi_3Q%06d-x_%d", n, n%7)}
	evt := func(k int) string { return fmt.Sprintf("evt_%d", k) }
	amount := int64(1000 + n)
	at := time.Duration(n) * time.Second
	evs := []domain.Event{p.created(evt(0), at, amount)}
	switch n % 6 {
	case 0:
	case 1:
		evs = append(evs, p.failed(evt(1), at+time.Minute, amount))
	case 2:
		evs = append(evs, p.succeeded(evt(1), at+time.Minute, amount))
	case 3:
		evs = append(evs, p.succeeded(evt(1), at+time.Minute, amount), p.refunded(evt(2), at+time.Hour, amount, amount/2))
	case 4:
		evs = append(evs, p.succeeded(evt(1), at+time.Minute, amount), p.disputeOpened(evt(2), at+time.Hour, amount))
	case 5:
		evs = append(evs, p.failed(evt(1), at+time.Minute, amount), p.succeeded(evt(2), at+2*time.Minute, amount),
			p.refunded(evt(3), at+time.Hour, amount, amount))
	}
	return evs
}
