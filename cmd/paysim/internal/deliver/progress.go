package deliver

import (
	"fmt"
	"io"
	"time"
)

// StartProgress redraws a one-line progress bar on w (nil: none) every
// 200 ms until the returned stop is called.
func StartProgress(w io.Writer, st *Stats, start time.Time) (stop func()) {
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				drawProgress(w, st, start)
				fmt.Fprintln(w)
				return
			case <-t.C:
				drawProgress(w, st, start)
			}
		}
	}()
	return func() { close(done); <-finished }
}

func drawProgress(w io.Writer, st *Stats, start time.Time) {
	planned, done, acked, givenUp, retried := st.progress()
	const width = 30
	frac := 0.0
	if planned > 0 {
		frac = float64(done) / float64(planned)
	}
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = ' '
		if float64(i) < frac*width {
			bar[i] = '#'
		}
	}
	rate := float64(done) / max(time.Since(start).Seconds(), 0.001)
	fmt.Fprintf(w, "\r[%s] %3.0f%% %d/%d deliveries, %d acked, %d retried, %d given up, %.0f/s   ",
		bar, frac*100, done, planned, acked, retried, givenUp, rate)
}
