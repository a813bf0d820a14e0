package deliver

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// Stats collects the delivery records of a run; safe for concurrent use.
type Stats struct {
	mu        sync.Mutex
	planned   int            // sends planned, copies included
	done      int            // sends finished (acknowledged or given up)
	acked     int            // sends acknowledged
	attempts  int            // attempts made
	retried   int            // sends that needed more than one attempt
	givenUp   int            // sends whose retry budget ran out
	outcomes  map[string]int // the ledger's outcome per acknowledged send
	ackedBy   map[string]int // webhook (provider/event ID) → acknowledged sends
	accepted  map[string]int // webhook → "accepted" answers; more than 1 means stored twice
	latencies []time.Duration
	failures  []string       // the first few give-ups, for the report
	tried     map[string]int // webhook → sends made to the ledger
	withheld  []Withheld     // sends the provider never made, in order
	heldBy    map[string]int // webhook → sends withheld
}

// NewStats returns empty stats.
func NewStats() *Stats {
	return &Stats{outcomes: map[string]int{}, ackedBy: map[string]int{}, accepted: map[string]int{},
		tried: map[string]int{}, heldBy: map[string]int{}}
}

// plan counts sends about to be made.
func (s *Stats) plan(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.planned += n
}

// record files one finished send of webhook key.
func (s *Stats) record(key string, d Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done++
	s.tried[key]++
	s.attempts += d.Attempts
	if d.Attempts > 1 {
		s.retried++
	}
	if !d.Acked {
		s.givenUp++
		if len(s.failures) < 10 {
			s.failures = append(s.failures, key+": "+d.LastError)
		}
		return
	}
	s.acked++
	s.outcomes[d.Outcome]++
	s.ackedBy[key]++
	if d.Outcome == "accepted" {
		s.accepted[key]++
	}
	s.latencies = append(s.latencies, d.AckLatency)
}

// withhold files a send of p's step the provider never made, for reason.
func (s *Stats) withhold(p *truth.Payment, step int, reason string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := p.Steps[step].Webhook
	s.withheld = append(s.withheld, Withheld{Payment: p.Key(), EventID: w.EventID, Type: w.Type, Reason: reason,
		At: at.UTC(), ProviderAt: p.Steps[step].At.UTC()})
	s.heldBy[p.Provider+"/"+w.EventID]++
}

// progress is a snapshot for the progress line; withheld sends count as done.
func (s *Stats) progress() (planned, done, acked, givenUp, retried int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.planned, s.done + len(s.withheld), s.acked, s.givenUp, s.retried
}

// Totals are a run's delivery figures, for the report.
type Totals struct {
	Planned, Done, Attempts, Retried, GivenUp int
	Undelivered                               int // webhooks never acknowledged
	AcceptedTwice                             int // webhooks the ledger said it stored more than once
	Outcomes                                  map[string]int
	Failures                                  []string
	Latencies                                 []time.Duration // acknowledgement latencies, sorted
	// What the providers withheld (Loss): payments dropped and their
	// webhooks never sent, sends lost in the outage, and the webhooks whose
	// every send was lost. Such webhooks are not Undelivered: only a
	// reconciliation or a backfill can bring what they say.
	DroppedPayments, DroppedWebhooks int
	LostDeliveries, LostWebhooks     int
	LostPayments                     int
	Lost                             []Withheld          // every lost send
	Unsent                           map[string][]string // payment key → its webhooks (event IDs) never acknowledged because withheld
	Dropped                          map[string]bool     // payment keys whose final webhooks were dropped
}

// Totals sums the records up, checking every webhook of payments.
func (s *Stats) Totals(payments []*truth.Payment) Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := Totals{Planned: s.planned, Done: s.done, Attempts: s.attempts, Retried: s.retried, GivenUp: s.givenUp,
		Outcomes: s.outcomes, Failures: s.failures, Latencies: slices.Clone(s.latencies)}
	t.Unsent = map[string][]string{}
	dropped := map[string]bool{}
	for _, w := range s.withheld {
		if w.Reason == Lost {
			t.Lost = append(t.Lost, w)
		}
	}
	t.LostDeliveries = len(t.Lost)
	reasons := s.reasons()
	for _, p := range payments {
		lost := false
		for _, step := range p.Steps {
			key := p.Provider + "/" + step.Webhook.EventID
			switch {
			case s.ackedBy[key] > 0:
			case s.heldBy[key] > 0 && s.tried[key] == 0:
				// Every send withheld: by design, not the ledger's failure.
				t.Unsent[p.Key()] = append(t.Unsent[p.Key()], step.Webhook.EventID)
				if reasons[key] == Dropped {
					t.DroppedWebhooks++
					dropped[p.Key()] = true
				} else {
					t.LostWebhooks++
					lost = true
				}
			default:
				t.Undelivered++
			}
			if s.accepted[key] > 1 {
				t.AcceptedTwice++
			}
		}
		if lost {
			t.LostPayments++
		}
	}
	t.DroppedPayments, t.Dropped = len(dropped), dropped
	slices.Sort(t.Latencies)
	return t
}

// reasons maps each withheld webhook to why: dropped wins over lost, as a
// dropped webhook was never to be sent at all.
func (s *Stats) reasons() map[string]string {
	out := map[string]string{}
	for _, w := range s.withheld {
		key := strings.SplitN(w.Payment, "/", 2)[0] + "/" + w.EventID
		if out[key] != Dropped {
			out[key] = w.Reason
		}
	}
	return out
}
