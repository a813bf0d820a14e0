package main

import (
	"slices"
	"sync"
	"time"
)

// stats collects the delivery records of a run; safe for concurrent use.
type stats struct {
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

func newStats() *stats {
	return &stats{outcomes: map[string]int{}, ackedBy: map[string]int{}, accepted: map[string]int{}}
}

// plan counts sends about to be made.
func (s *stats) plan(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.planned += n
}

// record files one finished send of webhook key.
func (s *stats) record(key string, d Delivery) {
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
func (s *stats) progress() (planned, done, acked, givenUp, retried int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.planned, s.done, s.acked, s.givenUp, s.retried
}

// percentile returns the p-th percentile (0–100) of sorted, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// sortedLatencies returns a sorted copy of the acknowledgement latencies.
func (s *stats) sortedLatencies() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := slices.Clone(s.latencies)
	slices.Sort(l)
	return l
}
