package kurrentdb_test

import (
	"testing"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/storetest"
)

// TestConformance runs the suite every adapter passes, unchanged, through
// the official client against the in-memory server.
func TestConformance(t *testing.T) {
	s := openStore(t, newServer(t), testOptions)
	storetest.Run(t, func(*testing.T) eventstore.Store { return s })
}
