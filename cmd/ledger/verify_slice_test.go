package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/pb33f/jsonschema/v6"
)

// validateSchema validates doc against the JSON Schema testdata/name.
func validateSchema(t *testing.T, name string, doc []byte) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, schemaDoc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s: %v\n%s", name, err, doc)
	}
}

// TestVerifySlice corrupts one payment and checks slices of the ledger
// through run: the other payment passes, the corrupted one fails naming
// it, --provider and --since restrict the counts, bad flags exit 2; every
// --json report fits the schema, and the text form matches its golden file.
func TestVerifySlice(t *testing.T) {
	cfg, pool := projectedLedger(t)
	env := mapEnv(map[string]string{"LEDGER_DATABASE_URL": cfg.DatabaseURL, "LEDGER_LOG_LEVEL": "error"})
	verifyRun := func(args ...string) (verifyReport, int) {
		var out bytes.Buffer
		err := run(t.Context(), append([]string{"verify", "--json"}, args...), env, &out, io.Discard)
		var rep verifyReport
		if exitCode(err) != exitUsage {
			validateSchema(t, "verify.schema.json", out.Bytes())
			if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
				t.Fatalf("%v: %v (%v)\n%s", args, jerr, err, out.String())
			}
		}
		return rep, exitCode(err)
	}
	if _, err := pool.Exec(t.Context(), `UPDATE payments SET amount_refunded = 1 WHERE provider_payment_id = 'pi_3QvA-refund_1'`); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args    []string
		code    int
		checked int
	}{
		{[]string{"--payment", "stripe/pi_3QvB-failed_2"}, exitOK, 1},
		{[]string{"--payment", "stripe/pi_3QvA-refund_1"}, exitProblems, 1},
		{[]string{"--provider", "stripe"}, exitProblems, 3},
		{[]string{"--provider", "asaas"}, exitOK, 0},
		{[]string{"--payment", "asaas/pay_none"}, exitProblems, 0}, // a named payment that is unknown fails
		{[]string{"--since", "2000-01-01T00:00:00Z"}, exitProblems, 3},
		{[]string{"--since", "2999-01-01T00:00:00Z"}, exitOK, 0},
		{[]string{"--provider", "nope"}, exitUsage, 0},
		{[]string{"--payment", "stripe"}, exitUsage, 0},
		{[]string{"--since", "yesterday"}, exitUsage, 0},
	} {
		rep, code := verifyRun(tt.args...)
		if code != tt.code || rep.PaymentsChecked != tt.checked || rep.Scope.Matched != tt.checked {
			t.Errorf("%v: exit %d, checked %d, matched %d; want %d, %d", tt.args, code, rep.PaymentsChecked, rep.Scope.Matched, tt.code, tt.checked)
		}
		if code == exitProblems && tt.checked > 0 && (len(rep.Mismatches) == 0 || rep.Mismatches[0].Payment != "stripe/pi_3QvA-refund_1") {
			t.Errorf("%v: mismatches %+v do not name the corrupted payment", tt.args, rep.Mismatches)
		}
	}
	for _, tc := range []struct{ golden, payment string }{
		{"verify_all.golden", ""}, {"verify_payment.golden", "stripe/pi_3QvB-failed_2"}, {"verify_nothing.golden", "asaas/pay_none"},
	} {
		scope, err := parseVerifyScope(tc.payment, "", "")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := verifyLedger(t.Context(), cfg, verifyOptions{Scope: scope}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		rep.Checkpoint, rep.StoreHead = "<checkpoint>", "<head>" // positions differ run to run
		var out bytes.Buffer
		rep.print(&out)
		checkGolden(t, tc.golden, out.Bytes())
	}
}
