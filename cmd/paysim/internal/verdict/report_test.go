package verdict

import (
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var l []time.Duration
	for i := 1; i <= 100; i++ {
		l = append(l, time.Duration(i))
	}
	for p, want := range map[float64]time.Duration{50: 50, 95: 95, 99: 99, 100: 100, 0: 1} {
		if got := percentile(l, p); got != want {
			t.Errorf("p%v = %d, want %d", p, got, want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("empty")
	}
}

// TestReportNamesBookDifferences: a difference in the books fails the run
// and the text report names the account.
func TestReportNamesBookDifferences(t *testing.T) {
	r := &Report{OK: true}
	r.SetBooks(&BooksCheck{StripeFees: true, Accounts: 3, AsOf: "2026-12-01T22:00:00Z",
		Differences: []string{"fees stripe/USD: want 59, got 0 (-59)"},
		Recorded: &Recorded{At: "2026-12-01T21:59:00Z", Accounts: 2,
			Later: []string{"sales stripe/USD: was debits 0, credits 900, balance 900; now 0, 1000, 1000"}}})
	if r.OK {
		t.Fatal("a difference in the books left the run OK")
	}
	var b strings.Builder
	r.WriteText(&b)
	for _, want := range []string{"books       FAILED", "    fees stripe/USD: want 59, got 0 (-59)",
		"recorded    FAILED: balances?as_of=2026-12-01T21:59:00Z&basis=recorded", "at the end, differs from the answer at T: sales stripe/USD"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	ok := &Report{OK: true}
	ok.SetBooks(&BooksCheck{Accounts: 3, AsOf: "x", Recorded: &Recorded{At: "y", Accounts: 2}})
	if !ok.OK {
		t.Error("equal books failed the run")
	}
}
