package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/projections"
)

// The chain seals (issue 19): the sealer as a serve component, `ledger
// chain backfill`, and the chains section of `ledger verify --chains`. The
// sealer, its table and the verifier are projections'; ARCHITECTURE.md
// ("Tamper-evident streams") has the reasoning.

// chainsReport is verify --chains' section of the report.
type chainsReport struct {
	OK              bool           `json:"ok"`
	Streams         int            `json:"streams_checked"`
	Events          int            `json:"events_checked"`
	Sealed          int            `json:"sealed"`
	Backfill        int            `json:"sealed_by_backfill"`
	BrokenStreams   int            `json:"broken_streams"`
	UnsealedStreams int            `json:"unsealed_streams"`
	Broken          []chainFinding `json:"broken"`
	Unsealed        []chainFinding `json:"unsealed"`
}

// chainFinding is one stream's first finding; expected is the sealed hash,
// found the recomputed one (hex; empty when there is none).
type chainFinding struct {
	Kind     string `json:"kind"`
	Stream   string `json:"stream"`
	Revision uint64 `json:"revision"`
	Expected string `json:"expected,omitempty"`
	Found    string `json:"found,omitempty"`
	Events   int    `json:"events,omitempty"` // unsealed tail length
}

// checkChains re-computes every sealed chain (see projections.VerifyChains)
// and, when events holds the Postgres store's es_events, lists its streams
// without a seal at all.
func checkChains(ctx context.Context, pool *pgxpool.Pool, store projections.StreamReader, events *pgxpool.Pool, progress func(done, total int)) (*chainsReport, error) {
	var opts []projections.ChainOption
	if events != nil {
		opts = append(opts, projections.WithEventTable(events))
	}
	return chainsOf(ctx, pool, func() (projections.ChainReport, error) {
		return projections.VerifyChains(ctx, store, pool, progress, opts...)
	})
}

// chainsOf runs one chain verification and reports it with the seal counts.
func chainsOf(ctx context.Context, pool *pgxpool.Pool, run func() (projections.ChainReport, error)) (*chainsReport, error) {
	counts, err := projections.CountSeals(ctx, pool)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	rep, err := run()
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	out := &chainsReport{OK: rep.OK(), Streams: rep.Streams, Events: rep.Events, Sealed: counts.Sealed, Backfill: counts.Backfill,
		BrokenStreams: rep.BrokenStreams, UnsealedStreams: rep.UnsealedStreams, Broken: []chainFinding{}, Unsealed: []chainFinding{}}
	for _, f := range rep.Broken {
		out.Broken = append(out.Broken, newChainFinding(f))
	}
	for _, f := range rep.Unsealed {
		out.Unsealed = append(out.Unsealed, newChainFinding(f))
	}
	return out, nil
}

func newChainFinding(f projections.ChainFinding) chainFinding {
	hexOf := func(h [32]byte) string {
		if h == [32]byte{} {
			return ""
		}
		return hex.EncodeToString(h[:])
	}
	return chainFinding{Kind: string(f.Kind), Stream: f.Stream, Revision: f.Revision,
		Expected: hexOf(f.Expected), Found: hexOf(f.Found), Events: f.Events}
}

// print writes the chains section: a summary, then one line per finding.
func (r *chainsReport) print(w io.Writer) {
	fmt.Fprintf(w, "chains: streams checked %d, sealed events %d (%d by backfill), broken streams %d, unsealed tails %d\n",
		r.Streams, r.Sealed, r.Backfill, r.BrokenStreams, r.UnsealedStreams)
	for _, f := range r.Broken {
		fmt.Fprintf(w, "chain %s %s revision %d: expected %s, found %s\n", f.Kind, f.Stream, f.Revision, orNone(f.Expected), orNone(f.Found))
	}
	for _, f := range r.Unsealed {
		fmt.Fprintf(w, "chain not sealed yet: %s from revision %d (%d events; the sealer is behind, not a break)\n", f.Stream, f.Revision, f.Events)
	}
	if n := r.BrokenStreams - len(r.Broken); n > 0 {
		fmt.Fprintf(w, "chain: %d more broken streams not listed\n", n)
	}
}

// chainsSummary is the chains part of verify's error, empty without --chains.
func (r verifyReport) chainsSummary() string {
	if r.Chains == nil {
		return ""
	}
	return fmt.Sprintf(", %d broken chains", r.Chains.BrokenStreams)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// chainIdle is how long `ledger chain backfill` waits for another event
// before it calls the store sealed.
const chainIdle = 2 * time.Second

func chainFlags(*flag.FlagSet) func(context.Context, *environment) error {
	return func(ctx context.Context, e *environment) error {
		if len(e.args) != 1 || e.args[0] != "backfill" {
			return usageError{errors.New("chain: want `ledger chain backfill`")}
		}
		return chainBackfill(ctx, e)
	}
}

// chainBackfillReport is what `ledger chain backfill --json` prints.
type chainBackfillReport struct {
	SealedNow  int       `json:"sealed_now"`
	Sealed     int       `json:"sealed"`
	Backfill   int       `json:"sealed_by_backfill"`
	Epoch      time.Time `json:"epoch"` // when the chain began
	Checkpoint string    `json:"checkpoint"`
}

// chainBackfill seals every event not sealed yet, from the sealer's
// checkpoint (so a killed run resumes), until the feed is idle; events
// recorded before the chain began are sealed as backfill.
func chainBackfill(ctx context.Context, e *environment) error {
	pool, store, err := openCommandStores(ctx, e)
	if err != nil {
		return err
	}
	defer pool.Close()
	defer store.close()
	before, err := projections.CountSeals(ctx, pool)
	if err != nil {
		return err
	}
	sealer := projections.NewSealer(projections.SealerConfig{Logger: e.logger}, pool, store)
	if err := sealer.SealUntilIdle(ctx, chainIdle); err != nil {
		return fmt.Errorf("chain backfill: %w", err)
	}
	after, err := projections.CountSeals(ctx, pool)
	if err != nil {
		return err
	}
	pos, err := sealer.Position(ctx)
	if err != nil {
		return err
	}
	out := chainBackfillReport{SealedNow: after.Sealed - before.Sealed, Sealed: after.Sealed,
		Backfill: after.Backfill, Epoch: after.Epoch, Checkpoint: pos.String()}
	if e.json {
		return json.NewEncoder(e.stdout).Encode(out)
	}
	fmt.Fprintf(e.stdout, "chain backfill: sealed %d events now; %d sealed in all, %d by backfill (recorded before %s); checkpoint %s\n",
		after.Sealed-before.Sealed, after.Sealed, after.Backfill, after.Epoch.UTC().Format(time.RFC3339), pos)
	return nil
}
