package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/projections"
)

// TestProjectionsText: the text forms of `projections list` and of a
// shadow rebuild that found differences and did not switch.
func TestProjectionsText(t *testing.T) {
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	list := projectionList{Projections: []projectionRow{
		{Name: "chain_sealer_v1", Kind: "chain_seals", State: "live", ThisBuild: true, Checkpoint: "812/3", LagEvents: 0, LastAppliedAt: &at},
		{Name: "payments_v0", Kind: "read_models", State: "retired", Checkpoint: "700/1", LagEvents: -1, LastAppliedAt: &at, RetiredAt: &at},
		{Name: "payments_v1", Kind: "read_models", State: "rebuilding", ThisBuild: true, Checkpoint: "120/0", LagEvents: 4211,
			LastAppliedAt: &at, RebuildingSince: &at},
	}}
	var out bytes.Buffer
	printProjections(&out, list)
	out.WriteString("\n")
	printShadow(&out, shadowReport{Name: "payments_v1", Schema: "shadow_payments_v1", Replaced: "payments_v1", Position: "812/3", Seconds: 4.2,
		Diff: []projections.DiffLine{
			{What: "payments", Key: "stripe USD refunded", Live: "count 2 amount 2010 captured 2010 refunded 1010 disputed 0 fee 0",
				Shadow: "count 2 amount 2010 captured 2010 refunded 2010 disputed 0 fee 0"},
			{What: "ledger", Key: "stripe USD refunds", Live: "debits 1010 credits 0 balance 1010", Shadow: "debits 2010 credits 0 balance 2010"},
			{What: "parked", Key: "payment-stripe-pi_x", Shadow: "parked"},
		}})
	checkGolden(t, "projections.golden", out.Bytes())
}

// TestProjectionsCommand runs `ledger projections` on a projected
// database: list (--json against its schema), an in-place rebuild followed
// to its end while a projector runs, a shadow rebuild that switches with an
// empty diff (after which verify passes), and the usage errors.
func TestProjectionsCommand(t *testing.T) {
	cfg, pool := projectedLedger(t)
	env := map[string]string{"LEDGER_DATABASE_URL": cfg.DatabaseURL, "LEDGER_LOG_LEVEL": "error"}
	ledger := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(t.Context(), append([]string{"projections"}, args...), mapEnv(env), &out, io.Discard)
		return out.String(), err
	}
	out, err := ledger("list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	validateSchema(t, "projections.schema.json", []byte(out))
	var list projectionList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, p := range list.Projections {
		states[p.Name] = p.State + "/" + p.Kind
	}
	if states["payments_v1"] != "live/read_models" || states["chain_sealer_v1"] != "not_started/chain_seals" {
		t.Errorf("list: %v", states)
	}

	// In place, followed while a projector runs.
	store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond})
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = projections.NewRunner(projections.RunnerConfig{RetryMax: 100 * time.Millisecond}, pool, store).Run(ctx)
	})
	out, err = ledger("rebuild", "payments_v1")
	stop()
	wg.Wait()
	if err != nil || !strings.Contains(out, "payments_v1 caught up at") {
		t.Fatalf("rebuild in place: %v\n%s", err, out)
	}

	out, err = ledger("rebuild", "payments_v1", "--shadow", "--json")
	if err != nil {
		t.Fatalf("rebuild --shadow: %v\n%s", err, out)
	}
	validateSchema(t, "projections_shadow.schema.json", []byte(out))
	var rep shadowReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.Switched || len(rep.Diff) != 0 || rep.Replaced != "payments_v1" {
		t.Errorf("shadow report %+v (%v)", rep, err)
	}
	if vr, err := verifyLedger(t.Context(), cfg, verifyOptions{}, slog.New(slog.DiscardHandler)); err != nil || !vr.OK {
		t.Errorf("verify after the switch: %+v, %v", vr, err)
	}

	for _, args := range [][]string{{}, {"list", "extra"}, {"rebuild"}, {"rebuild", "chain_sealer_v1"}, {"rebuild", "payments_v9"},
		{"rebuild", "payments"}, {"rebuild", "payments_v1", "--accept-diff"}, {"rebuild", "payments_v1", "--shadow", "--no-wait"},
		{"list", "--shadow"}} {
		if _, err := ledger(args...); exitCode(err) != exitUsage {
			t.Errorf("projections %v: exit %d (%v), want 2", args, exitCode(err), err)
		}
	}
}
