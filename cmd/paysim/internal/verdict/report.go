package verdict

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/deliver"
	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// Report is the outcome of a run; --json prints it as is.
type Report struct {
	OK              bool             `json:"ok"`
	Verified        bool             `json:"verified"` // false with --ack-only: payments not read back
	Seed            uint64           `json:"seed"`
	Payments        int              `json:"payments"`
	Matched         int              `json:"matched"`
	Wrong           int              `json:"wrong"`
	Missing         int              `json:"missing"`
	Mismatches      []Mismatch       `json:"mismatches,omitempty"` // the first few wrong or missing
	ByProvider      map[string]int   `json:"payments_by_provider"`
	Lifecycles      map[string]int   `json:"lifecycles"`
	Webhooks        int              `json:"webhooks"`       // distinct webhooks
	Deliveries      int              `json:"deliveries"`     // sends, copies included
	Duplicated      int              `json:"duplicated"`     // sends beyond the first of a webhook
	Attempts        int              `json:"attempts"`       // HTTP attempts
	Retried         int              `json:"retried"`        // sends that needed more than one attempt
	GivenUp         int              `json:"given_up"`       // sends whose retry budget ran out
	Undelivered     int              `json:"undelivered"`    // webhooks never acknowledged
	AcceptedTwice   int              `json:"accepted_twice"` // webhooks the ledger said it stored more than once
	Outcomes        map[string]int   `json:"outcomes"`       // the ledger's answers: accepted, duplicate, ignored
	Failures        []string         `json:"failures,omitempty"`
	AckLatencyMS    Latency          `json:"ack_latency_ms"`
	LagMS           Latency          `json:"lag_ms"`         // send of an accepted webhook → visible in the read API
	LagSamples      int              `json:"lag_samples"`    // sampled deliveries seen visible
	LagUnresolved   int              `json:"lag_unresolved"` // samples not visible by the end of --settle
	LagErrors       int              `json:"lag_errors"`     // samples abandoned on a read error
	LagFirstError   string           `json:"lag_first_error,omitempty"`
	LagResolutionMS float64          `json:"lag_resolution_ms"`  // median ± of a sample (half its bracketing interval)
	LagReads        int              `json:"lag_reads"`          // read-API requests the lag measurement made
	LagReadRate     float64          `json:"lag_reads_per_s"`    // … per second while sampling
	Throughput      float64          `json:"throughput_per_s"`   // deliveries per second of the delivery phase
	Rate            float64          `json:"rate_per_s"`         // --rate: target offered load; 0 closed loop
	OfferedRate     float64          `json:"offered_rate_per_s"` // starts per second achieved with --rate
	LateStarts      int              `json:"late_starts"`        // --rate starts that found --concurrency sends in flight
	APIFetches      map[string]int64 `json:"api_fetches"`        // provider API calls the ledger made
	Books           *BooksCheck      `json:"books,omitempty"`    // the ledger check; nil when not made (--books=false, --ack-only)
	Withheld                         // what the providers never delivered (--drop, --outage)
	Converged       map[Route]int    `json:"converged,omitempty"`      // matched payments by how they converged (Converged)
	Reconciliation  *LogCheck        `json:"reconciliation,omitempty"` // the reconciliation log check (--reconciliation-log)
	DeliverySeconds float64          `json:"delivery_seconds"`
	SettleSeconds   float64          `json:"settle_seconds"`
	DurationSeconds float64          `json:"duration_seconds"`
}

// Withheld is what the providers never delivered: payments whose final
// webhooks were dropped, sends lost in the outage (every one of them,
// with the provider-time span a backfill must cover).
type Withheld struct {
	DroppedPayments int                `json:"payments_dropped"`
	DroppedWebhooks int                `json:"webhooks_dropped"`
	LostDeliveries  int                `json:"deliveries_lost"`
	LostWebhooks    int                `json:"webhooks_lost"` // every send of it lost
	LostPayments    int                `json:"payments_lost"`
	Outage          *Outage            `json:"outage,omitempty"`
	Lost            []deliver.Withheld `json:"lost,omitempty"`
}

// Outage is the window of lost sends: when (wall clock) and the provider
// times of the webhooks it lost.
type Outage struct {
	deliver.Window
	ProviderSince time.Time `json:"provider_since,omitzero"`
	ProviderUntil time.Time `json:"provider_until,omitzero"`
}

// SetOutage records the outage window w (nothing when none opened).
func (r *Report) SetOutage(w deliver.Window) {
	if w.Start.IsZero() {
		return
	}
	o := &Outage{Window: w}
	for _, l := range r.Lost {
		if o.ProviderSince.IsZero() || l.ProviderAt.Before(o.ProviderSince) {
			o.ProviderSince = l.ProviderAt
		}
		if l.ProviderAt.After(o.ProviderUntil) {
			o.ProviderUntil = l.ProviderAt
		}
	}
	r.Outage = o
}

// Mismatch is one payment whose read model differs from the truth.
type Mismatch struct {
	Payment   string           `json:"payment"`
	Lifecycle string           `json:"lifecycle"`
	Want      truth.State      `json:"want"`
	Got       *readapi.Payment `json:"got,omitempty"`
	Problem   string           `json:"problem"`
}

// Latency holds percentiles in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Percentiles returns p50, p95, p99 and the maximum of sorted (zero when empty).
func Percentiles(sorted []time.Duration) Latency {
	if len(sorted) == 0 {
		return Latency{}
	}
	return Latency{P50: ms(percentile(sorted, 50)), P95: ms(percentile(sorted, 95)), P99: ms(percentile(sorted, 99)), Max: ms(sorted[len(sorted)-1])}
}

// percentile returns the p-th percentile (0–100) of sorted, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Build assembles a run's figures from the payments, their last readings
// (nil: not read back, --ack-only), the delivery totals and the provider
// API calls served.
func Build(seed uint64, payments []*truth.Payment, readings Readings, sent deliver.Totals, fetches map[string]int64) *Report {
	r := &Report{Verified: readings != nil, Seed: seed, Payments: len(payments), ByProvider: map[string]int{},
		Lifecycles: map[string]int{}, APIFetches: fetches}
	for _, p := range payments {
		r.ByProvider[p.Provider]++
		r.Lifecycles[p.Provider+"/"+p.Lifecycle]++
		r.Webhooks += len(p.Steps)
		if readings != nil {
			r.judge(p, readings[p])
		}
	}
	r.Deliveries, r.Attempts, r.Retried, r.GivenUp = sent.Done, sent.Attempts, sent.Retried, sent.GivenUp
	r.Duplicated = sent.Planned - r.Webhooks
	r.Outcomes, r.Failures = sent.Outcomes, sent.Failures
	r.Undelivered, r.AcceptedTwice = sent.Undelivered, sent.AcceptedTwice
	r.Withheld = Withheld{DroppedPayments: sent.DroppedPayments, DroppedWebhooks: sent.DroppedWebhooks,
		LostDeliveries: sent.LostDeliveries, LostWebhooks: sent.LostWebhooks, LostPayments: sent.LostPayments, Lost: sent.Lost}
	r.AckLatencyMS = Percentiles(sent.Latencies)
	r.OK = r.Wrong == 0 && r.Missing == 0 && r.Undelivered == 0 && r.AcceptedTwice == 0
	return r
}

// judge counts p matched, missing or wrong from its last reading c, and
// keeps the first few mismatches.
func (r *Report) judge(p *truth.Payment, c check) {
	var problem string
	switch {
	case c.Code == http.StatusOK && c.diff == "":
		r.Matched++
		return
	case c.Code == http.StatusNotFound:
		r.Missing++
		problem = "missing (404)"
	case c.Err != "":
		r.Wrong++
		problem = c.Err
	default:
		r.Wrong++
		problem = strings.TrimSpace(c.diff)
	}
	if len(r.Mismatches) < 10 {
		m := Mismatch{Payment: p.Key(), Lifecycle: p.Lifecycle, Want: p.Final(), Problem: problem}
		if c.Code == http.StatusOK {
			got := c.Got
			m.Got = &got
		}
		r.Mismatches = append(r.Mismatches, m)
	}
}

// WriteJSON prints the report as indented JSON (--json).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) {
	verdict := "OK"
	if !r.OK {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "paysim report (seed %d): %s\n", r.Seed, verdict)
	if r.Verified {
		fmt.Fprintf(w, "  payments    %d: %d matched, %d wrong, %d missing   (%s)\n", r.Payments, r.Matched, r.Wrong, r.Missing, counts(r.ByProvider))
	} else {
		fmt.Fprintf(w, "  payments    %d, not read back (--ack-only)   (%s)\n", r.Payments, counts(r.ByProvider))
	}
	for _, m := range r.Mismatches {
		fmt.Fprintf(w, "    %s [%s]: %s\n      want %+v\n", m.Payment, m.Lifecycle, m.Problem, m.Want)
		if m.Got != nil {
			fmt.Fprintf(w, "      got  %+v\n", *m.Got)
		}
	}
	fmt.Fprintf(w, "  webhooks    %d distinct, %d deliveries (%d duplicated), %d attempts, %d retried, %d given up, %d never acknowledged\n",
		r.Webhooks, r.Deliveries, r.Duplicated, r.Attempts, r.Retried, r.GivenUp, r.Undelivered)
	r.Withheld.writeText(w)
	if len(r.Converged) > 0 && r.DroppedPayments+r.LostDeliveries > 0 {
		fmt.Fprintf(w, "  converged   %d by webhook, %d by reconciliation, %d by backfill", r.Converged[ByWebhook], r.Converged[ByReconciliation], r.Converged[ByBackfill])
		if n := r.Converged[Unclassified]; n > 0 {
			fmt.Fprintf(w, ", %d unclassified (events unreadable)", n)
		}
		fmt.Fprintln(w)
	}
	r.Reconciliation.writeText(w)
	fmt.Fprintf(w, "  ledger said %s; accepted twice: %d\n", counts(r.Outcomes), r.AcceptedTwice)
	for _, f := range r.Failures {
		fmt.Fprintf(w, "    gave up: %s\n", f)
	}
	fmt.Fprintf(w, "  ack latency p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms\n", r.AckLatencyMS.P50, r.AckLatencyMS.P95, r.AckLatencyMS.P99, r.AckLatencyMS.Max)
	if r.LagSamples+r.LagUnresolved+r.LagErrors > 0 {
		fmt.Fprintf(w, "  lag         send → visible in the read API p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms (±%.1f ms); %d samples, %d unresolved, %d errors; %d reads (%.0f/s)\n",
			r.LagMS.P50, r.LagMS.P95, r.LagMS.P99, r.LagMS.Max, r.LagResolutionMS, r.LagSamples, r.LagUnresolved, r.LagErrors, r.LagReads, r.LagReadRate)
		if r.LagFirstError != "" {
			fmt.Fprintf(w, "    lag error: %s\n", r.LagFirstError)
		}
	}
	if r.Verified {
		fmt.Fprintf(w, "  throughput  %.0f deliveries/s over %.1f s; converged in %.1f s; total %.1f s\n", r.Throughput, r.DeliverySeconds, r.SettleSeconds, r.DurationSeconds)
	} else {
		fmt.Fprintf(w, "  throughput  %.0f deliveries/s over %.1f s\n", r.Throughput, r.DeliverySeconds)
	}
	if r.Rate > 0 {
		fmt.Fprintf(w, "  offered rate %.0f/s (target %.0f/s), %d late starts (--concurrency in flight)\n", r.OfferedRate, r.Rate, r.LateStarts)
	}
	if len(r.APIFetches) > 0 {
		fmt.Fprintf(w, "  provider API calls by the ledger: %s\n", counts64(r.APIFetches))
	}
	r.Books.writeText(w)
}

// writeText prints what was withheld; nothing when nothing was.
func (h Withheld) writeText(w io.Writer) {
	if h.DroppedPayments > 0 {
		fmt.Fprintf(w, "  dropped     %d payments' final webhooks never sent (%d webhooks)\n", h.DroppedPayments, h.DroppedWebhooks)
	}
	if o := h.Outage; o != nil {
		fmt.Fprintf(w, "  outage      %s to %s: %d deliveries lost (%d webhooks, %d payments)", o.Start.Format(time.RFC3339Nano),
			o.End.Format(time.RFC3339Nano), h.LostDeliveries, h.LostWebhooks, h.LostPayments)
		if !o.ProviderSince.IsZero() {
			fmt.Fprintf(w, "; provider times %s to %s", o.ProviderSince.Format(time.RFC3339), o.ProviderUntil.Format(time.RFC3339))
		}
		fmt.Fprintln(w)
	}
}

// SetConverged attaches how the matched payments converged.
func (r *Report) SetConverged(c map[Route]int) { r.Converged = c }

// SetBooks attaches the ledger check; the run fails unless it is OK.
func (r *Report) SetBooks(b *BooksCheck) {
	r.Books = b
	r.OK = r.OK && b.OK()
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func counts64(m map[string]int64) string {
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = int(v)
	}
	return counts(c)
}
