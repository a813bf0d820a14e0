package postgres

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore"
)

// BenchmarkAppend measures parallel ingest on real Postgres, one event per
// append as a webhook delivers it, four events per payment stream, each of
// 32 appenders on streams of its own (no two append to one stream at once).
// "append" is the store as configured by default (group commit on),
// "append-ungrouped" the same with GroupSize 1 (a transaction per event). The
// insert-floor case is one plain INSERT per event into the same table (no
// stream lock, no head read, no duplicate classification): the cost of a
// round trip, the row, its three indexes and a commit per event.
//
//	go test -run '^$' -bench Append -benchtime 5s ./eventstore/postgres
func BenchmarkAppend(b *testing.B) {
	pool := newPool(b, 32)
	s := New(pool, Options{})
	ungrouped := New(pool, Options{GroupSize: 1})
	template := testEvent(b, "pi_3Nk-x_Ybench", "a")
	var runs atomic.Int64 // the benchmark function runs several times: fresh streams each time

	bench := func(b *testing.B, appendOne func(ctx context.Context, stream string, rev int, ev eventstore.EventData) error) {
		run := runs.Add(1)
		var workers atomic.Int64
		b.SetParallelism(32 / runtime.GOMAXPROCS(0)) // 32 appenders: Postgres, not the client, is the bottleneck
		b.RunParallel(func(pb *testing.PB) {
			w := workers.Add(1)
			for i := 0; pb.Next(); i++ {
				ev := template
				ev.ID = uuid.New()
				stream := fmt.Sprintf("payment-stripe-pi_3Nk%d-x_Y%d-%d", run, w, i/4)
				if err := appendOne(b.Context(), stream, i%4, ev); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	}

	b.Run("append", func(b *testing.B) {
		bench(b, func(ctx context.Context, stream string, _ int, ev eventstore.EventData) error {
			_, err := s.Append(ctx, stream, eventstore.Any(), []eventstore.EventData{ev})
			return err
		})
	})
	b.Run("append-ungrouped", func(b *testing.B) {
		bench(b, func(ctx context.Context, stream string, _ int, ev eventstore.EventData) error {
			_, err := ungrouped.Append(ctx, stream, eventstore.Any(), []eventstore.EventData{ev})
			return err
		})
	})
	b.Run("insert-floor", func(b *testing.B) {
		bench(b, func(ctx context.Context, stream string, rev int, ev eventstore.EventData) error {
			_, err := pool.Exec(ctx, `INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
				VALUES ($1, $2, $3, $4, $5, $6)`, stream, rev, ev.ID, ev.Type, ev.Data, ev.Metadata)
			return err
		})
	})
}
