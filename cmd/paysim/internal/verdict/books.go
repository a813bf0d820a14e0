package verdict

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/backoff"
)

// CompareBooks names every difference between the truth's books and what a
// balances answer adds to the baseline (the answer before the run; nil for
// an empty ledger): an account's balance other than the truth's (an account
// the answer leaves out is 0, right only when the truth is 0), a normal side
// other than the chart's, a balance that is not its debits and credits on
// that side, an account not in the chart or listed twice. Nil: equal.
func CompareBooks(want truth.Books, got, baseline []readapi.Balance) []string {
	diffs := checkAnswer(got)
	have := truth.Books{}
	for _, b := range got {
		have[keyOf(b)] += b.Balance
	}
	for _, b := range baseline {
		have[keyOf(b)] -= b.Balance
	}
	keys := want.Keys()
	for _, k := range have.Keys() {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, truth.CompareKeys)
	for _, k := range keys {
		w, g := want[k], have[k]
		_, listed := have[k]
		switch {
		case w == g:
		case !listed:
			diffs = append(diffs, fmt.Sprintf("%s: want %d, absent from the answer", k, w))
		default:
			diffs = append(diffs, fmt.Sprintf("%s: want %d, got %d (%+d)", k, w, g, g-w))
		}
	}
	return diffs
}

// checkAnswer names the accounts of an answer that contradict the chart:
// unknown, on the wrong normal side, a balance not on that side, or twice.
func checkAnswer(got []readapi.Balance) []string {
	var diffs []string
	chart := truth.Chart()
	seen := map[truth.AccountKey]bool{}
	for _, b := range got {
		k := keyOf(b)
		normal, known := chart[k.Account]
		switch {
		case seen[k]:
			diffs = append(diffs, fmt.Sprintf("%s: listed twice", k))
		case !known:
			diffs = append(diffs, fmt.Sprintf("%s: not an account of the chart", k))
		case b.Normal != normal:
			diffs = append(diffs, fmt.Sprintf("%s: normal side %q, the chart says %q", k, b.Normal, normal))
		case b.Balance != onSide(normal, b.Debits, b.Credits):
			diffs = append(diffs, fmt.Sprintf("%s: balance %d is not debits %d, credits %d on the %s side",
				k, b.Balance, b.Debits, b.Credits, normal))
		}
		seen[k] = true
	}
	return diffs
}

func onSide(normal string, debits, credits int64) int64 {
	if normal == "credit" {
		return credits - debits
	}
	return debits - credits
}

func keyOf(b readapi.Balance) truth.AccountKey {
	return truth.AccountKey{Account: truth.Account(b.Account), Provider: b.Provider, Currency: domain.Currency(b.Currency)}
}

// SameBalances names every account whose debits, credits or balance differ
// between two answers (an account one leaves out differs unless the other
// lists it at zero). Nil: the same books.
func SameBalances(before, after []readapi.Balance) []string {
	index := func(bs []readapi.Balance) map[truth.AccountKey]readapi.Balance {
		m := make(map[truth.AccountKey]readapi.Balance, len(bs))
		for _, b := range bs {
			m[keyOf(b)] = b
		}
		return m
	}
	a, b := index(before), index(after)
	keys := truth.Books{}
	for k := range a {
		keys[k] = 0
	}
	for k := range b {
		keys[k] = 0
	}
	var diffs []string
	for _, k := range keys.Keys() {
		x, y := a[k], b[k]
		if x.Debits != y.Debits || x.Credits != y.Credits || x.Balance != y.Balance {
			diffs = append(diffs, fmt.Sprintf("%s: was debits %d, credits %d, balance %d; now %d, %d, %d",
				k, x.Debits, x.Credits, x.Balance, y.Debits, y.Credits, y.Balance))
		}
	}
	return diffs
}

// BooksCheck is the ledger check of a run: GET /v1/ledger/balances against
// the truth's books, and the recorded-basis check when a snapshot was taken.
type BooksCheck struct {
	StripeFees bool `json:"stripe_fees"` // Stripe fees expected (--stripe-fees)
	Accounts   int  `json:"accounts"`    // accounts the truth books
	// Baseline is how many accounts the ledger had before the run: the run
	// must change the books by the truth's.
	Baseline    int       `json:"baseline_accounts"`
	AsOf        string    `json:"as_of"` // of the final read, effective basis
	Differences []string  `json:"differences,omitempty"`
	Error       string    `json:"error,omitempty"`
	Recorded    *Recorded `json:"recorded,omitempty"`
}

// OK reports whether the books equal the truth and the recorded-basis
// check, if taken, found nothing.
func (b *BooksCheck) OK() bool {
	return b.Error == "" && len(b.Differences) == 0 && (b.Recorded == nil || b.Recorded.OK())
}

// maxDifferences bounds the differences a report keeps.
const maxDifferences = 100

// CheckBooks reads balances until they equal want or deadline passes (fees
// and enrichments arrive from background jobs), then reads them once more
// as of now on the effective basis and compares that answer.
func CheckBooks(ctx context.Context, c *readapi.Client, want truth.Books, baseline []readapi.Balance, deadline time.Time, pause time.Duration) *BooksCheck {
	b := &BooksCheck{Accounts: len(want), Baseline: len(baseline)}
	for {
		got, err := c.Balances(ctx, readapi.BalanceQuery{})
		var se *readapi.StatusError
		if errors.As(err, &se) && se.Code < 500 {
			b.Error = "GET /v1/ledger/balances: " + err.Error()
			return b // the ledger cannot answer: waiting will not help
		}
		if err == nil && CompareBooks(want, got.Balances, baseline) == nil || time.Now().Add(pause).After(deadline) {
			break
		}
		if backoff.Sleep(ctx, pause) != nil {
			break
		}
	}
	q := readapi.BalanceQuery{AsOf: time.Now().UTC().Truncate(time.Microsecond), Basis: "effective"}
	b.AsOf = q.AsOf.Format(time.RFC3339Nano)
	got, err := readBalances(ctx, c, q, time.Now().Add(time.Minute))
	if err != nil {
		b.Error = "GET " + q.URL() + ": " + err.Error()
		return b
	}
	b.Differences = CompareBooks(want, got, baseline)
	if len(b.Differences) > maxDifferences {
		b.Differences = append(b.Differences[:maxDifferences], fmt.Sprintf("… and %d more", len(b.Differences)-maxDifferences))
	}
	return b
}

// writeText prints the ledger check (nothing when it was not made).
func (b *BooksCheck) writeText(w io.Writer) {
	if b == nil {
		return
	}
	fees := "Stripe fees expected"
	if !b.StripeFees {
		fees = "Stripe fees not expected (--stripe-fees=false)"
	}
	switch {
	case b.Error != "":
		fmt.Fprintf(w, "  books       FAILED: %s\n", b.Error)
	case len(b.Differences) > 0:
		fmt.Fprintf(w, "  books       FAILED: balances as of %s (effective) differ from the truth's %d accounts (%s):\n", b.AsOf, b.Accounts, fees)
	default:
		fmt.Fprintf(w, "  books       balances as of %s (effective) equal the truth: %d accounts (%s)\n", b.AsOf, b.Accounts, fees)
	}
	if b.Baseline > 0 {
		fmt.Fprintf(w, "    (the ledger had %d accounts before the run: compared is what the run added)\n", b.Baseline)
	}
	for _, d := range b.Differences {
		fmt.Fprintf(w, "    %s\n", d)
	}
	b.Recorded.writeText(w)
}

// writeText prints the recorded-basis check (nothing when not taken).
func (r *Recorded) writeText(w io.Writer) {
	if r == nil {
		return
	}
	switch {
	case r.Error != "":
		fmt.Fprintf(w, "  recorded    FAILED: snapshot at %q: %s\n", r.At, r.Error)
		return
	case !r.OK():
		fmt.Fprintf(w, "  recorded    FAILED: balances?as_of=%s&basis=recorded (%d accounts):\n", r.At, r.Accounts)
	default:
		fmt.Fprintf(w, "  recorded    balances?as_of=%s&basis=recorded: %d accounts, the same at T and at the end (deliveries held %.1f s)\n",
			r.At, r.Accounts, r.Seconds)
	}
	if r.Moved {
		fmt.Fprintf(w, "    (balances moved while T was taken: the answer at T was not compared)\n")
	}
	for _, d := range r.AtT {
		fmt.Fprintf(w, "    at T, differs from what balances answered then: %s\n", d)
	}
	for _, d := range r.Later {
		fmt.Fprintf(w, "    at the end, differs from the answer at T: %s\n", d)
	}
}
