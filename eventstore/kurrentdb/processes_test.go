package kurrentdb_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/payledger/payledger/eventstore"
)

// TestTwoProcesses: two Stores (two clients, as two ledger processes have)
// race on one stream. Their appends are not serialised by the in-process
// lock, so the server's expected-revision check and the re-read after
// WrongExpectedVersion keep the stream exact. The Duplicate flag is only
// exact within a process (see the package comment), so the storm checks
// the stream and that nothing failed, and allows one "appended" per store.
func TestTwoProcesses(t *testing.T) {
	srv := newServer(t)
	stores := []eventstore.Store{openStore(t, srv, testOptions), openStore(t, srv, testOptions)}

	t.Run("duplicate-storm", func(t *testing.T) {
		const deliveries = 40
		payment := "pi_3Nk-x_Y2eZvKYlo2Cstorm2"
		ev := event(t, payment, "once")
		results := make([]eventstore.AppendResult, deliveries)
		errs := make([]error, deliveries)
		var wg sync.WaitGroup
		for i := range deliveries {
			expected := eventstore.Any()
			if i%4 >= 2 {
				expected = eventstore.NoStream()
			}
			wg.Go(func() {
				results[i], errs[i] = stores[i%2].Append(t.Context(), stream(payment), expected, []eventstore.EventData{ev})
			})
		}
		wg.Wait()
		appended := 0
		for i := range deliveries {
			switch {
			case errs[i] != nil:
				t.Errorf("delivery %d: %v", i, errs[i])
			case results[i].Revision != 0:
				t.Errorf("delivery %d: %+v, want revision 0", i, results[i])
			case !results[i].Duplicate:
				appended++
			}
		}
		if appended < 1 || appended > len(stores) {
			t.Errorf("%d deliveries say appended, want 1 (at most one per store)", appended)
		}
		if got := ids(t, stores[0], stream(payment)); len(got) != 1 || got[0] != ev.ID {
			t.Fatalf("stream holds %v, want only %v", got, ev.ID)
		}
	})

	t.Run("distinct", func(t *testing.T) {
		const appenders = 12
		payment := "pi_3Nk-x_Y2eZvKYlo2Cdistinct2"
		errs := make([]error, appenders)
		var wg sync.WaitGroup
		for i := range appenders {
			wg.Go(func() {
				var res eventstore.AppendResult
				res, errs[i] = stores[i%2].Append(t.Context(), stream(payment), eventstore.Any(),
					[]eventstore.EventData{event(t, payment, fmt.Sprint("e", i))})
				if errs[i] == nil && res.Duplicate {
					errs[i] = fmt.Errorf("distinct event reported as duplicate: %+v", res)
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("appender %d: %v", i, err)
			}
		}
		if got := ids(t, stores[0], stream(payment)); len(got) != appenders {
			t.Fatalf("stream holds %d events, want %d", len(got), appenders)
		}
	})
}
