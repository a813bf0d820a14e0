package stripe

import (
	"context"
	"errors"
	"net/url"
	"sync"

	"github.com/payledger/payledger/domain"
)

// opCharge prefixes the charge lookup's own errors.
const opCharge = "stripe: look up charge"

// chargeCacheSize bounds the charge → PaymentIntent cache: old-version
// dispute and refund events are rare, and an entry is two short strings.
const chargeCacheSize = 10_000

// ChargeResolver finds the PaymentIntent of a charge, for the dispute and
// refund events of old API versions that name only the charge. StatusClient
// implements it; Config.Resolver takes it.
type ChargeResolver interface {
	// PaymentIntentOf returns the ID of the charge's PaymentIntent, or ""
	// when it has none (a legacy Charges API charge). An unknown charge
	// wraps domain.ErrUnknownPayment; any other error may pass on retry.
	PaymentIntentOf(ctx context.Context, chargeID string) (string, error)
}

var _ ChargeResolver = (*StatusClient)(nil)

// PaymentIntentOf implements ChargeResolver with GET /v1/charges/{id}.
// Answers are cached: a charge's PaymentIntent never changes.
func (c *StatusClient) PaymentIntentOf(ctx context.Context, chargeID string) (string, error) {
	if err := checkID("charge ID", chargeID); err != nil {
		return "", domain.Invalid(opCharge, domain.MessageOf(err), nil)
	}
	if pi, ok := c.charges.get(chargeID); ok {
		return pi, nil
	}
	var ch struct {
		ID            string       `json:"id"`
		PaymentIntent expandableID `json:"payment_intent"`
	}
	if err := c.api.GetJSON(ctx, "v1/charges/"+url.PathEscape(chargeID), chargeID, &ch); err != nil {
		return "", err
	}
	if ch.ID != chargeID {
		return "", domain.Invalid(opCharge, "asked for charge "+chargeID+", got "+truncate(ch.ID), nil)
	}
	c.charges.put(chargeID, string(ch.PaymentIntent))
	return string(ch.PaymentIntent), nil
}

// intentOf returns the PaymentIntent an event's object belongs to: named
// when the event names one, else the charge's, found through r. It returns
// "" and why the event is to be ignored when there is none to find, and a
// KindUnavailable error when the lookup failed, so that the delivery is not
// acknowledged and Stripe sends it again. subject ("charge ch_…") names the
// object in reasons.
func intentOf(ctx context.Context, r ChargeResolver, subject, named, chargeID string) (string, string, error) {
	if named != "" {
		if err := checkID("data.object.payment_intent", named); err != nil {
			return "", "", err
		}
		return named, "", nil
	}
	switch {
	case chargeID == "":
		return "", subject + " has no payment_intent and names no charge; payledger tracks PaymentIntents", nil
	case r == nil:
		return "", subject + " has no payment_intent (legacy Charges API, or an old API version): looking up the PaymentIntent of charge " +
			chargeID + " needs a Stripe API key (LEDGER_STRIPE_API_KEY)", nil
	}
	if err := checkID("data.object.charge", chargeID); err != nil {
		return "", "", err
	}
	pi, err := r.PaymentIntentOf(ctx, chargeID)
	switch {
	case errors.Is(err, domain.ErrUnknownPayment):
		return "", subject + " has no payment_intent and Stripe does not know its charge " + chargeID, nil
	case err != nil:
		return "", "", domain.Unavailable(opParse, "looking up the PaymentIntent of charge "+chargeID+" failed; retry later", err)
	case pi == "":
		return "", subject + " has no payment_intent (legacy Charges API: charge " + chargeID + " has none); payledger tracks PaymentIntents", nil
	}
	if err := checkID("payment_intent of charge "+chargeID, pi); err != nil {
		return "", "", err
	}
	return pi, "", nil
}

// chargeCache maps charge IDs to PaymentIntent IDs ("" for none). It holds
// at most max entries and evicts the oldest first: no TTL is needed, since
// the mapping never changes. Unknown charges are not cached.
type chargeCache struct {
	mu    sync.Mutex
	max   int
	pis   map[string]string
	order []string // keys in insertion order, a ring once full
	next  int      // the ring slot to evict next
}

func newChargeCache(max int) *chargeCache {
	return &chargeCache{max: max, pis: make(map[string]string, min(max, 1024))}
}

func (c *chargeCache) get(chargeID string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pi, ok := c.pis[chargeID]
	return pi, ok
}

func (c *chargeCache) put(chargeID, pi string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pis[chargeID]; ok {
		return
	}
	if len(c.order) < c.max {
		c.order = append(c.order, chargeID)
	} else {
		delete(c.pis, c.order[c.next])
		c.order[c.next] = chargeID
		c.next = (c.next + 1) % c.max
	}
	c.pis[chargeID] = pi
}
