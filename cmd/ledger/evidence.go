package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/projections"
)

// `ledger evidence` answers "is this record exactly what the provider sent
// us?" from the command line: what GET …/evidence answers, built by the
// same code from the store, the seals and this process's configured
// secrets, and with --out the zip an auditor takes away.

// errEvidenceProblems: a fact failed re-verification or broke its chain.
var errEvidenceProblems = errors.New("evidence shows a problem")

func evidenceFlags(fs *flag.FlagSet) func(context.Context, *environment) error {
	var out string
	fs.StringVar(&out, "out", "", "also write the evidence zip (manifest.json, the raw bodies, README.txt with the openssl recipe) to this file")
	return func(ctx context.Context, e *environment) error {
		if len(e.args) != 2 {
			return usageError{fmt.Errorf("evidence: want PROVIDER PAYMENT_ID, got %d arguments", len(e.args))}
		}
		if !slices.Contains(providerNames(), e.args[0]) {
			return usageError{fmt.Errorf("evidence: provider %q is not one of %v", e.args[0], providerNames())}
		}
		return evidence(ctx, e, e.args[0], e.args[1], out)
	}
}

// evidence builds the payment's evidence read-only, writes the zip when
// asked, and prints it.
func evidence(ctx context.Context, e *environment, provider, id, out string) error {
	providers, err := wireProviders(e.cfg, dlQuiet())
	if err != nil {
		return err
	}
	pool, store, closeAll, err := openReadOnlyStores(ctx, e)
	if err != nil {
		return err
	}
	defer closeAll()
	ev, err := api.BuildEvidence(ctx, api.EvidenceSource{Store: store, Seals: projections.NewQueries(pool),
		Providers: providers.webhooks, Now: time.Now}, provider, id)
	if err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	if out != "" {
		if err := writeZipFile(out, ev); err != nil {
			return err
		}
	}
	if err := e.report(ev, func(w io.Writer) { printEvidence(w, ev, out) }); err != nil {
		return err
	}
	if failed, broken := evidenceProblems(ev); failed+broken > 0 {
		return fmt.Errorf("evidence: %d facts failed re-verification, %d chain links broken: %w", failed, broken, errEvidenceProblems)
	}
	return nil
}

// writeZipFile writes the zip beside its destination and renames it into
// place, so an interrupted run never leaves a truncated zip under that name.
func writeZipFile(path string, ev api.Evidence) error {
	var buf bytes.Buffer
	if err := api.WriteEvidenceZip(&buf, ev); err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".evidence-*.zip")
	if err != nil {
		return fmt.Errorf("evidence: --out: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("evidence: --out: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("evidence: --out: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("evidence: --out: %w", err)
	}
	return nil
}

func evidenceProblems(ev api.Evidence) (failed, broken int) {
	for _, f := range ev.Facts {
		if f.Verification.Result == domain.AuthFailed {
			failed++
		}
		if f.Chain.Intact != nil && !*f.Chain.Intact {
			broken++
		}
	}
	return failed, broken
}

// printEvidence writes the evidence for a terminal: one aligned row per
// fact, then the reasons behind any result other than verified.
func printEvidence(w io.Writer, ev api.Evidence, out string) {
	fmt.Fprintf(w, "%s/%s  stream %s  %d facts  generated %s\n\n", ev.Provider, ev.ProviderPaymentID, ev.Stream,
		len(ev.Facts), ev.GeneratedAt)
	rows := [][]string{{"REV", "TYPE", "EVENT", "SOURCE", "RECEIVED", "VERIFICATION", "BY", "CHAIN"}}
	var reasons []string
	for _, f := range ev.Facts {
		rows = append(rows, []string{fmt.Sprint(f.Revision), f.Type, dash(f.ProviderEventID), dash(f.Source),
			f.Delivery.ReceivedAt, string(f.Verification.Result), dash(verifiedBy(f.Verification)), chainState(f.Chain)})
		if f.Verification.Reason != "" {
			reasons = append(reasons, fmt.Sprintf("  rev %d: %s", f.Revision, f.Verification.Reason))
		}
	}
	widths := columnWidths(rows)
	for _, row := range rows {
		writeRow(w, row, widths)
	}
	if len(reasons) > 0 {
		fmt.Fprintln(w, "\nwhy:")
		for _, r := range reasons {
			fmt.Fprintln(w, r)
		}
	}
	failed, broken := evidenceProblems(ev)
	fmt.Fprintf(w, "\n%d failed re-verification, %d chain links broken\n", failed, broken)
	if out != "" {
		fmt.Fprintf(w, "wrote %s (manifest.json, the bodies, README.txt)\n", out)
	}
}

func verifiedBy(a domain.Authenticity) string {
	if a.KeyID != "" {
		return "kid " + a.KeyID
	}
	return a.SecretID
}

func chainState(c api.EvidenceChain) string {
	switch {
	case c.Intact == nil:
		return "not sealed yet"
	case *c.Intact:
		return "intact"
	}
	return "BROKEN"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
