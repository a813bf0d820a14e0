package kurrentdb_test

import (
	"os"
	"testing"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrentdb"
	"github.com/payledger/payledger/eventstore/storetest"
)

// TestConformance runs the suite every adapter passes, unchanged, through
// the official client against the in-memory server.
func TestConformance(t *testing.T) {
	s := openStore(t, newServer(t), testOptions)
	storetest.Run(t, func(*testing.T) eventstore.Store { return s })
}

// TestConformanceRealKurrentDB runs the same suite against a real KurrentDB
// when KURRENTDB_TEST_URL names one (e.g. the docker-compose.yml node:
// esdb://127.0.0.1:2113?tls=false). CI has no Docker, so there it skips,
// saying why; the in-memory run above is the gate.
func TestConformanceRealKurrentDB(t *testing.T) {
	url := os.Getenv("KURRENTDB_TEST_URL")
	if url == "" {
		t.Skip("KURRENTDB_TEST_URL unset: no real KurrentDB to run the conformance suite against (optional; the in-memory run is the gate)")
	}
	s, err := kurrentdb.Open(t.Context(), url, testOptions)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	storetest.Run(t, func(*testing.T) eventstore.Store { return s })
}
