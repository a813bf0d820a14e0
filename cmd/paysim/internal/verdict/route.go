package verdict

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// Route is how a matched payment reached its final state.
type Route string

// The routes, as reported.
const (
	ByWebhook        Route = "webhook"        // the webhooks paysim delivered (and the fetches they trigger)
	ByReconciliation Route = "reconciliation" // a status observation that no delivered webhook explains
	ByBackfill       Route = "backfill"       // a webhook paysim withheld, stored all the same
	Unclassified     Route = "unclassified"   // the payment's events could not be read
)

// Convergence is what Converged decides from.
type Convergence struct {
	Payment *truth.Payment
	// Unsent are the payment's webhooks (event IDs) paysim withheld and
	// never delivered (--drop, --outage).
	Unsent []string
	// Events is the payment's stream from GET …/events, in stream order.
	Events []readapi.Event
	// Delivered is when paysim's delivery phase ended.
	Delivered time.Time
}

// Converged is the one rule that says how a matched payment converged.
//
//   - Nothing withheld: by webhook.
//   - Otherwise the converging event decides: the first event from which
//     every state_after is the final truth. If the ledger stored it from a
//     backfill (metadata source "backfill"), or it is a withheld webhook
//     (its own provider event ID, which only Stripe's event list returns),
//     by backfill. If the reconciler stored it (source "reconciliation"), by
//     reconciliation; a background fetch (source "api"), by webhook. On a
//     ledger that records no source: if it is an observation (provider_event_type "api.…",
//     unsigned), by reconciliation, except a Mercado Pago observation
//     recorded before the delivery phase ended: that is the fetch of a
//     delivered notification (the provider's state runs ahead of its
//     webhooks). Anything else was delivered: by webhook.
func Converged(c Convergence) Route {
	if len(c.Unsent) == 0 {
		return ByWebhook
	}
	e, ok := converging(c.Payment.Final(), c.Events)
	switch {
	case !ok:
		return Unclassified
	case e.Metadata.Source == "backfill" || slices.Contains(c.Unsent, e.ProviderEventID):
		return ByBackfill
	case e.Metadata.Source == "reconciliation":
		return ByReconciliation
	case e.Metadata.Source == "api":
		// A background fetch a delivered notification caused (Mercado
		// Pago's enrichment), however late it ran.
		return ByWebhook
	case strings.HasPrefix(e.Metadata.ProviderEventType, "api.") && e.Metadata.SignatureHeader == "":
		if c.Payment.Provider == truth.MercadoPago && e.RecordedAt.Before(c.Delivered) {
			return ByWebhook
		}
		return ByReconciliation
	}
	return ByWebhook
}

// converging returns the first event from which every state_after equals
// want.
func converging(want truth.State, events []readapi.Event) (readapi.Event, bool) {
	at := -1
	for i := len(events) - 1; i >= 0; i-- {
		s := events[i].StateAfter
		if s.Status != string(want.Status) || s.Amount != want.Amount || s.AmountRefunded != want.Refunded || s.Currency != string(want.Currency) {
			break
		}
		at = i
	}
	if at < 0 {
		return readapi.Event{}, false
	}
	return events[at], true
}

// Classify counts the matched payments of readings by Route, reading the
// events of those with withheld webhooks only (the others converged by
// webhook by definition).
func Classify(ctx context.Context, c *readapi.Client, readings Readings, unsent map[string][]string, delivered time.Time, workers int) (map[Route]int, map[string]Route) {
	out := map[Route]int{}
	each := map[string]Route{} // the withheld-from payments' routes, by key
	var todo []*truth.Payment
	for p, r := range readings {
		switch {
		case r.Code != http.StatusOK || r.diff != "":
		case len(unsent[p.Key()]) == 0:
			out[ByWebhook]++
		default:
			todo = append(todo, p)
		}
	}
	var mu sync.Mutex
	next := make(chan *truth.Payment)
	var wg sync.WaitGroup
	for range max(1, min(workers, len(todo))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				route := Unclassified
				if evs, err := c.Events(ctx, p); err == nil {
					route = Converged(Convergence{Payment: p, Unsent: unsent[p.Key()], Events: evs, Delivered: delivered})
				}
				mu.Lock()
				out[route]++
				each[p.Key()] = route
				mu.Unlock()
			}
		}()
	}
	for _, p := range todo {
		next <- p
	}
	close(next)
	wg.Wait()
	return out, each
}
