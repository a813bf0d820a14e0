package deliver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/gen"
	"github.com/payledger/payledger/cmd/paysim/internal/sign"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// TestPauseHoldsEveryDelivery: Pause runs once, after PauseAfter sends,
// with nothing in flight and nothing sent until it returns; every send
// still happens once.
func TestPauseHoldsEveryDelivery(t *testing.T) {
	var posts, inflight atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inflight.Add(1)
		defer inflight.Add(-1)
		_, _ = io.Copy(io.Discard, r.Body)
		posts.Add(1)
		_, _ = w.Write([]byte(`{"outcome":"accepted"}`))
	}))
	defer srv.Close()
	var pauses, atPause, during atomic.Int64
	cfg := Config{Ledger: srv.URL, Seed: 1, Chaos: Chaos{Dup: 0.3, MaxDelay: time.Millisecond}, Concurrency: 8,
		Retry:   Retry{Attempts: 3, Budget: 10 * time.Second, Base: 10 * time.Millisecond, Max: 50 * time.Millisecond, Timeout: 5 * time.Second},
		PauseAt: 0.3, Pause: func(context.Context) {
			pauses.Add(1)
			atPause.Store(posts.Load())
			if inflight.Load() != 0 {
				t.Error("a send in flight during the pause")
			}
			time.Sleep(100 * time.Millisecond)
			during.Store(posts.Load() - atPause.Load())
		}}
	payments, err := gen.Generate(cfg.Seed, 60, truth.Providers(), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := sign.LoadKey("")
	if err != nil {
		t.Fatal(err)
	}
	st := NewStats()
	New(cfg, srv.Client(), sign.New(sign.Secrets{}, key), noProvider{}).Run(context.Background(), payments, st, nil)
	planned, done, acked, _, _ := st.progress()
	if pauses.Load() != 1 || atPause.Load() < int64(0.3*float64(planned)) || during.Load() != 0 {
		t.Errorf("%d pauses, after %d posts, %d posts during the pause", pauses.Load(), atPause.Load(), during.Load())
	}
	if done != planned || acked != planned || int(posts.Load()) != planned {
		t.Errorf("planned %d, done %d, acked %d, posts %d", planned, done, acked, posts.Load())
	}
}
