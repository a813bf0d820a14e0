package jobs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/riverqueue/river/rivertype"
)

// TestDeadLetters: a fetch failing every attempt is retried MaxAttempts
// times, then kept as a dead letter with every attempt's error; once the
// cause is fixed an operator retries it and it completes.
func TestDeadLetters(t *testing.T) {
	const pi = "pi_3QDead-letter_1"
	tests := []struct {
		name       string
		fail       action
		wantError  string
		wantWarned int // "does not know" warnings
	}{
		{name: "provider outage", fail: outage, wantError: "HTTP 503"},
		// Not knowing a payment may be the provider's indexing delay, so it
		// is retried like an outage, with a warning each time.
		{name: "payment unknown to the provider", fail: notFound, wantError: "unknown payment", wantWarned: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.api.set(pi, "succeeded", 2000, 2000, 0)
			e.api.setScript(func(int) action { return tt.fail })
			cfg := e.config()
			cfg.MaxAttempts = 3
			j := e.startJobs(cfg)
			enqueue(t, e, cfg, "stripe", pi)

			var dead []DeadLetter
			eventually(t, "the job dead-lettered", func() bool {
				var err error
				dead, err = DeadLetters(t.Context(), e.pool, 10)
				if err != nil {
					t.Fatal(err)
				}
				return len(dead) > 0
			})
			d := dead[0]
			var args EnrichArgs
			if err := json.Unmarshal(d.Args, &args); err != nil {
				t.Fatal(err)
			}
			if len(dead) != 1 || d.Kind != EnrichKind || args != (EnrichArgs{Provider: "stripe", PaymentID: pi}) ||
				d.Attempts != 3 || d.MaxAttempts != 3 || len(d.Errors) != 3 || d.FinalizedAt.IsZero() {
				t.Fatalf("dead letters %+v (args %s)", dead, d.Args)
			}
			for i, ae := range d.Errors {
				if ae.Attempt != i+1 || !strings.Contains(ae.Error, "jobs: enrich stripe/"+pi) ||
					!strings.Contains(ae.Error, tt.wantError) {
					t.Errorf("attempt error %d = %+v, want attempt %d naming the payment and %q", i, ae, i+1, tt.wantError)
				}
			}
			if n := e.log.Count("does not know the notified payment", pi); n != tt.wantWarned {
				t.Errorf("%d warnings about an unknown payment, want %d", n, tt.wantWarned)
			}
			if n := e.api.callCount(); n != 3 {
				t.Errorf("API called %d times, want 3", n)
			}
			if got := e.observed("stripe", pi); len(got) != 0 {
				t.Errorf("observations %v recorded by a failing fetch", got)
			}

			e.api.setScript(nil)
			if err := j.RetryDeadLetter(t.Context(), d.ID); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the retried job completed", func() bool {
				jobs := e.jobs(j)
				return len(jobs) == 1 && jobs[0].State == rivertype.JobStateCompleted
			})
			if got := e.observed("stripe", pi); got["confirmed/succeeded 2000/2000/0 BRL"] != 1 || len(got) != 1 {
				t.Errorf("observations after the retry: %v", got)
			}
			if dead, err := DeadLetters(t.Context(), e.pool, 10); err != nil || len(dead) != 0 {
				t.Errorf("dead letters after the retry: %+v, %v", dead, err)
			}
		})
	}
}
