package deliver

import (
	"slices"
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
	failures  []string // the first few give-ups, for the report
}

// NewStats returns empty stats.
func NewStats() *Stats {
	return &Stats{outcomes: map[string]int{}, ackedBy: map[string]int{}, accepted: map[string]int{}}
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

// progress is a snapshot for the progress line.
func (s *Stats) progress() (planned, done, acked, givenUp, retried int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.planned, s.done, s.acked, s.givenUp, s.retried
}

// Totals are a run's delivery figures, for the report.
type Totals struct {
	Planned, Done, Attempts, Retried, GivenUp int
	Undelivered                               int // webhooks never acknowledged
	AcceptedTwice                             int // webhooks the ledger said it stored more than once
	Outcomes                                  map[string]int
	Failures                                  []string
	Latencies                                 []time.Duration // acknowledgement latencies, sorted
}

// Totals sums the records up, checking every webhook of payments.
func (s *Stats) Totals(payments []*truth.Payment) Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := Totals{Planned: s.planned, Done: s.done, Attempts: s.attempts, Retried: s.retried, GivenUp: s.givenUp,
		Outcomes: s.outcomes, Failures: s.failures, Latencies: slices.Clone(s.latencies)}
	for _, p := range payments {
		for _, step := range p.Steps {
			key := p.Provider + "/" + step.Webhook.EventID
			if s.ackedBy[key] == 0 {
				t.Undelivered++
			}
			if s.accepted[key] > 1 {
				t.AcceptedTwice++
			}
		}
	}
	slices.Sort(t.Latencies)
	return t
}
