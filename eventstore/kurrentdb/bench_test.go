package kurrentdb_test

import (
	"fmt"
	"testing"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/payledger/payledger/eventstore"
)

// The adapter pays a stream read before every append (two round trips);
// the raw client's Any append is the one-round-trip floor it gives up for
// exact deduplication.

func BenchmarkAppendNewStream(b *testing.B) {
	s := openStore(b, newServer(b), testOptions)
	evs := benchEvents(b, b.N)
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Append(b.Context(), stream(fmt.Sprint("pi_bench-new-", i)), eventstore.Any(), evs[i:i+1]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendDuplicate(b *testing.B) {
	s := openStore(b, newServer(b), testOptions)
	ev := benchEvents(b, 1)
	if _, err := s.Append(b.Context(), stream("pi_bench-dup"), eventstore.Any(), ev); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if res, err := s.Append(b.Context(), stream("pi_bench-dup"), eventstore.Any(), ev); err != nil || !res.Duplicate {
			b.Fatalf("append = %+v, %v; want duplicate", res, err)
		}
	}
}

func BenchmarkRawAppendAny(b *testing.B) {
	srv := newServer(b)
	cfg, err := esdb.ParseConnectionString(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	cfg.Logger = esdb.NoopLogging()
	c, err := esdb.NewClient(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	evs := benchEvents(b, b.N)
	b.ResetTimer()
	for i := range b.N {
		if _, err := c.AppendToStream(b.Context(), stream(fmt.Sprint("pi_bench-raw-", i)), esdb.AppendToStreamOptions{ExpectedRevision: esdb.Any{}}, toEsdb(evs[i])); err != nil {
			b.Fatal(err)
		}
	}
}

// benchEvents builds n distinct events.
func benchEvents(b *testing.B, n int) []eventstore.EventData {
	evs := make([]eventstore.EventData, n)
	for i := range evs {
		evs[i] = event(b, "pi_bench", fmt.Sprint("e", i))
	}
	return evs
}
