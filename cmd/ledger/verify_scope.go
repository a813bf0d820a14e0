package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/projections"
)

// A slice of the ledger (issue 19, item 5): `ledger verify --payment`,
// `--provider` and `--since` check only the payments they match, and the
// report leads with one row per check.

// verifyScope is the report's account of the slice checked.
type verifyScope struct {
	All      bool   `json:"all"` // no slice flag: the whole ledger
	Payment  string `json:"payment,omitempty"`
	Provider string `json:"provider,omitempty"`
	Since    string `json:"since,omitempty"` // RFC 3339: payments with an event recorded at or after it
	Matched  int    `json:"matched"`         // payments (rows and streams without a row) in the slice
}

// verifyCheck is one row of the checks table.
type verifyCheck struct {
	Name     string `json:"name"`
	Checked  int    `json:"checked"`
	Problems int    `json:"problems"`
	OK       bool   `json:"ok"`
	Status   string `json:"status"` // PASS, FAIL, "not run", or "nothing matched"
}

// parseVerifyScope checks the slice flags; a bad value is a usage error.
func parseVerifyScope(payment, provider, since string) (projections.AuditScope, error) {
	var s projections.AuditScope
	known := providerNames()
	if provider != "" && !slices.Contains(known, provider) {
		return s, usageError{fmt.Errorf("verify: --provider %q: unknown provider (known: %s)", provider, strings.Join(known, ", "))}
	}
	s.Provider = provider
	if payment != "" {
		p, id, ok := strings.Cut(payment, "/")
		if !ok || p == "" || id == "" {
			return s, usageError{fmt.Errorf("verify: --payment %q: want PROVIDER/ID, e.g. stripe/pi_123", payment)}
		}
		if !slices.Contains(known, p) {
			return s, usageError{fmt.Errorf("verify: --payment %q: unknown provider %q (known: %s)", payment, p, strings.Join(known, ", "))}
		}
		if provider != "" && provider != p {
			return s, usageError{fmt.Errorf("verify: --payment %q is not of --provider %q", payment, provider)}
		}
		s.Provider, s.PaymentID = p, id
	}
	if since != "" {
		t, err := time.Parse(time.RFC3339, since)
		if err != nil {
			return s, usageError{fmt.Errorf("verify: --since %q: want an RFC 3339 time, e.g. 2026-03-01T00:00:00Z: %w", since, err)}
		}
		s.Since = t
	}
	return s, nil
}

// newScopeReport describes s before anything is matched.
func newScopeReport(s projections.AuditScope) verifyScope {
	out := verifyScope{All: s.All(), Provider: s.Provider}
	if s.PaymentID != "" {
		out.Payment, out.Provider = s.Provider+"/"+s.PaymentID, ""
	}
	if !s.Since.IsZero() {
		out.Since = s.Since.UTC().Format(time.RFC3339Nano)
	}
	return out
}

// inScope reports whether stream, a payment stream without a payments row,
// is in s: its name first, then (--since) its events' recorded times.
func inScope(ctx context.Context, store projections.StreamReader, s projections.AuditScope, stream string) (bool, error) {
	switch {
	case s.PaymentID != "" && stream != eventstore.PaymentStream(s.Provider, s.PaymentID):
		return false, nil
	case s.Provider != "" && !strings.HasPrefix(stream, eventstore.PaymentStream(s.Provider, "")):
		return false, nil
	case s.Since.IsZero():
		return true, nil
	}
	recs, err := store.ReadStream(ctx, stream)
	if err != nil {
		return false, fmt.Errorf("verify: read %s: %w", stream, err)
	}
	return s.Recorded(recs), nil
}

// checkChainsOf re-computes the chains of the slice's streams.
func checkChainsOf(ctx context.Context, pool *pgxpool.Pool, store projections.StreamReader, names []string,
	progress func(done, total int)) (*chainsReport, error) {
	return chainsOf(ctx, pool, func() (projections.ChainReport, error) {
		return projections.VerifyChainsOf(ctx, store, pool, names, progress)
	})
}

// sliceStreams are the streams of the slice: every checked row's and every
// stream without a row.
func (r verifyReport) sliceStreams(a projections.AuditReport) []string {
	return slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(a.Streams)), r.Orphans...)))
}

// addChecks fills the checks table and OK from the report's findings.
func (r *verifyReport) addChecks() {
	empty := !r.Scope.All && r.Scope.Matched == 0
	row := func(name string, checked, problems int) verifyCheck {
		c := verifyCheck{Name: name, Checked: checked, Problems: problems, OK: problems == 0, Status: "PASS"}
		switch {
		case empty:
			c.Status = "nothing matched"
		case !c.OK:
			c.Status = "FAIL"
		}
		return c
	}
	r.Checks = []verifyCheck{
		row("read models = fold", r.PaymentsChecked+r.StreamsWithoutRow, r.Mismatched+r.StreamsWithoutRow),
		row("entries balance", r.LedgerEntries, len(r.LedgerProblems)),
	}
	if r.Chains == nil {
		r.Checks = append(r.Checks, verifyCheck{Name: "chains intact", OK: true, Status: "not run"})
	} else {
		r.Checks = append(r.Checks, row("chains intact", r.Chains.Streams, r.Chains.BrokenStreams))
	}
	r.Checks = append(r.Checks, row("no duplicate IDs", r.EventsFolded, r.DuplicateEventIDs))
	// A named payment the ledger does not know is a failure: an auditor who
	// mistyped an ID must not read "nothing wrong". An empty --provider or
	// --since slice is an answer.
	r.OK = !(empty && r.Scope.Payment != "")
	for _, c := range r.Checks {
		r.OK = r.OK && c.OK
	}
}

// printChecks writes the slice line and the checks table.
func (r verifyReport) printChecks(w io.Writer) {
	switch {
	case r.Scope.All:
		fmt.Fprintln(w, "slice: the whole ledger")
	case r.Scope.Matched == 0:
		fmt.Fprintf(w, "slice: %s: no payment matched, nothing was checked\n", r.Scope.describe())
	default:
		fmt.Fprintf(w, "slice: %s: %d payments matched\n", r.Scope.describe(), r.Scope.Matched)
	}
	fmt.Fprintf(w, "%-20s %8s %9s  %s\n", "check", "checked", "problems", "result")
	for _, c := range r.Checks {
		if c.Status == "not run" {
			fmt.Fprintf(w, "%-20s %8s %9s  %s\n", c.Name, "-", "-", "not run (--chains)")
			continue
		}
		fmt.Fprintf(w, "%-20s %8d %9d  %s\n", c.Name, c.Checked, c.Problems, c.Status)
	}
}

// describe names the slice's flags.
func (s verifyScope) describe() string {
	var parts []string
	if s.Payment != "" {
		parts = append(parts, "--payment "+s.Payment)
	}
	if s.Provider != "" {
		parts = append(parts, "--provider "+s.Provider)
	}
	if s.Since != "" {
		parts = append(parts, "--since "+s.Since)
	}
	return strings.Join(parts, " ")
}
