package postgres

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
)

// BenchmarkLoneAppend compares the statements a lone single-event append
// with any revision could take: one appender (latency) and 32 on streams of
// their own (throughput), every connection warm (BENCHMARKS.md, issue 15).
//
//	go test -run '^$' -bench 'LoneAppend/.*/single$' -benchtime 2s ./eventstore/postgres
func BenchmarkLoneAppend(b *testing.B) {
	cfg := newPool(b, 32).Config()
	cfg.AfterConnect = WarmUp
	pool := newPoolWith(b, cfg)
	warmAll(b, pool, 32)
	s := New(pool, Options{})
	template := testEvent(b, "pi_3Nk-x_Ybench", "a")
	paths := []struct {
		name string
		run  func(ctx context.Context, c appendCall) outcome
	}{
		{"single", s.appendSingle},
		{"es_append_group", func(ctx context.Context, c appendCall) outcome {
			return queryGroup(ctx, pool, []appendCall{c})[0]
		}},
		{"es_append", s.appendOnce},
	}
	var runs atomic.Int64 // fresh streams for every run of a benchmark function
	appendOne := func(ctx context.Context, run func(context.Context, appendCall) outcome, stream string) error {
		ev := template
		ev.ID = uuid.New()
		c, err := newAppendCall(stream, eventstore.Any(), []eventstore.EventData{ev})
		if err != nil {
			return err
		}
		if o := run(ctx, c); o.kind != appended {
			_, err := c.answer(o)
			return fmt.Errorf("%s: %w", o.kind, err)
		}
		return nil
	}
	for _, p := range paths {
		b.Run("serial/"+p.name, func(b *testing.B) {
			run, m := runs.Add(1), startCPU(b, pool)
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				if err := appendOne(b.Context(), p.run, fmt.Sprintf("payment-stripe-pi_3Nk%d-x_Y-%d", run, i/4)); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			m.report(b, len(lat))
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
		b.Run("parallel/"+p.name, func(b *testing.B) {
			run, m := runs.Add(1), startCPU(b, pool)
			var workers atomic.Int64
			b.SetParallelism(32 / runtime.GOMAXPROCS(0))
			b.RunParallel(func(pb *testing.PB) {
				w := workers.Add(1)
				for i := 0; pb.Next(); i++ {
					if err := appendOne(b.Context(), p.run, fmt.Sprintf("payment-stripe-pi_3Nk%d-x_Y%d-%d", run, w, i/4)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			m.report(b, b.N)
		})
	}
}

// warmAll opens n connections at once (WarmUp readies each for the
// single-event statement and es_append_group) and calls es_append once on
// each, rolled back.
func warmAll(b *testing.B, pool *pgxpool.Pool, n int) {
	ctx := b.Context()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			conn, err := pool.Acquire(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			defer conn.Release()
			tx, err := conn.Begin(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			stream := fmt.Sprintf("$warm-es_append-%d", i)
			if _, err := appendIn(ctx, tx, stream, testEvent(b, stream, "w")); err != nil {
				b.Error(err)
			}
			time.Sleep(100 * time.Millisecond) // hold it, so that all n are open at once
		})
	}
	wg.Wait()
}

// cpuMeter measures on-CPU time: the database's backends' (schedstat) and
// this process's (getrusage).
type cpuMeter struct {
	pids     []string
	pg0, go0 int64
}

func startCPU(b *testing.B, pool *pgxpool.Pool) *cpuMeter {
	rows, err := pool.Query(b.Context(), `SELECT pid::text FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		b.Fatal(err)
	}
	var m cpuMeter
	for rows.Next() {
		var pid string
		if err := rows.Scan(&pid); err != nil {
			b.Fatal(err)
		}
		m.pids = append(m.pids, pid)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	m.pg0 = m.pg()
	return &m
}

// pg sums the backends' on-CPU nanoseconds; 0 when /proc cannot tell.
func (m *cpuMeter) pg() int64 {
	var t int64
	for _, pid := range m.pids {
		raw, err := os.ReadFile("/proc/" + pid + "/schedstat")
		if err != nil {
			return 0
		}
		ns, _ := strconv.ParseInt(strings.Fields(string(raw))[0], 10, 64)
		t += ns
	}
	return t
}

func (m *cpuMeter) report(b *testing.B, n int) {
	if pg := m.pg(); pg > 0 {
		b.ReportMetric(float64(pg-m.pg0)/1e3/float64(n), "pg-cpu-µs/op")
	}
}
