package verdict

import (
	"fmt"
	"io"
	"slices"

	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
)

// LogCheck compares the ledger's reconciliation log with what paysim
// withheld: every payment whose final webhooks were dropped and that
// converged by reconciliation is corrected exactly once, for a missing
// webhook (or, when what the ledger held already looked final, such as a
// Mercado Pago payment whose one fetch saw it paid before its refund was
// dropped, as diverged: found by the sample of finished payments); a payment nothing was withheld from is never corrected (its
// webhooks told the ledger everything). A dropped Mercado Pago payment may
// have converged by the fetch of its one delivered notification (the
// provider's state runs ahead of its webhooks: Converged), and a payment
// that lost sends in an outage by a backfill: neither needs a correction.
type LogCheck struct {
	Checks     int      `json:"checks"`               // rows in the log
	Corrected  int      `json:"corrected"`            // corrected rows
	Expected   int      `json:"expected"`             // dropped payments
	Missing    []string `json:"missing,omitempty"`    // dropped payments never corrected
	Repeated   []string `json:"repeated,omitempty"`   // payments corrected more than once
	Unexpected []string `json:"unexpected,omitempty"` // corrections of payments nothing was withheld from, or not for a missing webhook
}

// OK reports whether the log is as the run demands.
func (c *LogCheck) OK() bool {
	return c == nil || len(c.Missing)+len(c.Repeated)+len(c.Unexpected) == 0
}

// CheckLog builds the check from the whole log, the dropped payments,
// every payment's withheld webhooks and how each withheld-from payment
// converged (Classify; keys "provider/id").
func CheckLog(rows []readapi.Check, dropped map[string]bool, unsent map[string][]string, routes map[string]Route) *LogCheck {
	c := &LogCheck{Checks: len(rows), Expected: len(dropped)}
	corrections := map[string]int{}
	for _, r := range rows {
		if r.Outcome != "corrected" {
			continue
		}
		c.Corrected++
		k := r.Key()
		corrections[k]++
		switch {
		case len(unsent[k]) == 0:
			c.Unexpected = append(c.Unexpected, k+" (nothing was withheld)")
		case dropped[k] && r.Cause != "missing_webhook" && r.Cause != "diverged":
			c.Unexpected = append(c.Unexpected, k+" (cause "+r.Cause+")")
		}
	}
	for k, n := range corrections {
		if n > 1 && dropped[k] {
			c.Repeated = append(c.Repeated, fmt.Sprintf("%s (%d times)", k, n))
		}
	}
	for k := range dropped {
		if corrections[k] == 0 && routes[k] != ByWebhook && routes[k] != ByBackfill {
			c.Missing = append(c.Missing, k)
		}
	}
	for _, s := range [][]string{c.Missing, c.Repeated, c.Unexpected} {
		slices.Sort(s)
	}
	return c
}

// SetLogCheck attaches the reconciliation log check; the run fails unless
// it is OK.
func (r *Report) SetLogCheck(c *LogCheck) {
	r.Reconciliation = c
	r.OK = r.OK && c.OK()
}

func (c *LogCheck) writeText(w io.Writer) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "  reconciled  %d checks logged, %d corrections for %d dropped payments", c.Checks, c.Corrected, c.Expected)
	if c.OK() {
		fmt.Fprintln(w, ": one each, none for the others")
		return
	}
	fmt.Fprintln(w)
	for _, l := range []struct {
		what string
		keys []string
	}{{"never corrected", c.Missing}, {"corrected more than once", c.Repeated}, {"corrected unexpectedly", c.Unexpected}} {
		for i, k := range l.keys {
			if i == 10 {
				fmt.Fprintf(w, "    … %d more %s\n", len(l.keys)-i, l.what)
				break
			}
			fmt.Fprintf(w, "    %s: %s\n", l.what, k)
		}
	}
}
