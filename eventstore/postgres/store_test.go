package postgres

import (
	"testing"
	"time"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/storetest"
)

// TestStore runs the conformance suite on one store shared by its subtests,
// with a pool large enough for the concurrency subtests to race for real.
func TestStore(t *testing.T) {
	s := New(newPool(t, 16), Options{PollInterval: 5 * time.Millisecond})
	storetest.Run(t, func(*testing.T) eventstore.Store { return s })
}
