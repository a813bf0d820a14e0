package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestChainBackfillAndVerifyChains runs `ledger chain backfill` on a ledger
// whose events were stored before the chain began, then `ledger verify
// --chains`: clean, then with one stored event altered by SQL, which must be
// named with its revision and make verify fail.
func TestChainBackfillAndVerifyChains(t *testing.T) {
	cfg, pool := projectedLedger(t)
	env := mapEnv(map[string]string{"LEDGER_DATABASE_URL": cfg.DatabaseURL, "LEDGER_LOG_LEVEL": "error"})
	// As if the ledger had stored these events before the chain began.
	if _, err := pool.Exec(t.Context(), "UPDATE event_seal_epoch SET started_at = clock_timestamp()"); err != nil {
		t.Fatal(err)
	}

	// A run stops when the feed is idle, which it can look while another
	// test's transaction holds the server's xmin horizon: run it again
	// until all 8 are sealed, as an operator would.
	var out bytes.Buffer
	var bf chainBackfillReport
	for runs, sealed := 1, 0; ; runs++ {
		out.Reset()
		if err := run(t.Context(), []string{"chain", "backfill", "--json"}, env, &out, io.Discard); err != nil {
			t.Fatalf("chain backfill: %v\n%s", err, out.String())
		}
		if err := json.Unmarshal(out.Bytes(), &bf); err != nil {
			t.Fatalf("backfill report: %v\n%s", err, out.String())
		}
		if sealed += bf.SealedNow; sealed != bf.Sealed || bf.Backfill != bf.Sealed {
			t.Fatalf("backfill report %+v after %d sealed in %d runs, want all by backfill", bf, sealed, runs)
		}
		if bf.Sealed == 8 || runs == 10 {
			break
		}
	}
	if bf.Sealed != 8 {
		t.Fatalf("backfill report %+v, want 8 sealed", bf)
	}
	out.Reset()
	if err := run(t.Context(), []string{"chain", "backfill"}, env, &out, io.Discard); err != nil || !strings.Contains(out.String(), "sealed 0 events now") {
		t.Fatalf("second backfill: %v\n%s", err, out.String())
	}

	out.Reset()
	if err := run(t.Context(), []string{"verify", "--chains", "--json"}, env, &out, io.Discard); err != nil {
		t.Fatalf("verify --chains on a clean ledger: %v\n%s", err, out.String())
	}
	var rep verifyReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Chains == nil || !rep.Chains.OK || rep.Chains.Streams != 3 || rep.Chains.Events != 8 {
		t.Fatalf("report %+v (%v):\n%s", rep.Chains, err, out.String())
	}

	const stream = "payment-stripe-pi_3QvA-refund_1"
	if _, err := pool.Exec(t.Context(), `UPDATE es_events SET data = jsonb_set(data, '{amount_refunded}', '1')
		WHERE stream = $1 AND revision = 2`, stream); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := run(t.Context(), []string{"verify", "--chains"}, env, &out, io.Discard)
	if !errors.Is(err, errVerifyFailed) {
		t.Fatalf("verify --chains after tampering: %v, want errVerifyFailed\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "chain broken "+stream+" revision 2: expected ") {
		t.Errorf("output does not name %s revision 2:\n%s", stream, out.String())
	}
}

// TestVerifyWithoutChainsHasNoChainsSection: the report is unchanged
// without the flag.
func TestVerifyWithoutChainsHasNoChainsSection(t *testing.T) {
	cfg, _ := projectedLedger(t)
	env := mapEnv(map[string]string{"LEDGER_DATABASE_URL": cfg.DatabaseURL, "LEDGER_LOG_LEVEL": "error"})
	var out bytes.Buffer
	if err := run(t.Context(), []string{"verify"}, env, &out, io.Discard); err != nil {
		t.Fatalf("verify: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "chains:") {
		t.Errorf("chains section without --chains:\n%s", out.String())
	}
}

func TestChainUsage(t *testing.T) {
	for _, args := range [][]string{{"chain"}, {"chain", "seal"}, {"chain", "backfill", "extra"}} {
		err := run(t.Context(), args, mapEnv(map[string]string{"LEDGER_DATABASE_URL": "postgres://127.0.0.1:1/x"}), io.Discard, io.Discard)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestE2EChainSealedByServe: serve seals what its webhooks store, on either
// backend, within seconds, and verify --chains finds every chain intact.
func TestE2EChainSealedByServe(t *testing.T) { forEachBackend(t, testChainSealedByServe) }

func testChainSealedByServe(t *testing.T, env map[string]string) {
	l := startLedger(t, env)
	id := "pi_3QxSeal-chain_01"
	l.deliver(t, piEvent("evt_seal_1", "payment_intent.created", id, base, 4200),
		piEvent("evt_seal_2", "payment_intent.succeeded", id, base+1, 4200))
	l.waitPayment(t, id, statusIs("confirmed"))
	verifyEnv := map[string]string{"LEDGER_DATABASE_URL": env["LEDGER_DATABASE_URL"], "LEDGER_LOG_LEVEL": "error",
		"LEDGER_EVENTSTORE_URL": env["LEDGER_EVENTSTORE_URL"]}
	start := time.Now()
	for {
		var out bytes.Buffer
		err := run(t.Context(), []string{"verify", "--chains", "--json"}, mapEnv(verifyEnv), &out, io.Discard)
		var rep verifyReport
		if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil || rep.Chains == nil {
			t.Fatalf("verify --chains: %v, %v\n%s", err, jerr, out.String())
		}
		if c := rep.Chains; c.Events == 2 && c.UnsealedStreams == 0 {
			if err != nil || !c.OK || c.Streams != 1 || c.Backfill != 0 {
				t.Fatalf("verify --chains: %v, chains %+v", err, c)
			}
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("not sealed within 10s: %+v", rep.Chains)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("sealed within %s", time.Since(start))
}
