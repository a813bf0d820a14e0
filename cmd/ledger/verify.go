package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/projections"
)

// `ledger verify` proves the ledger's promise after the fact: every payments
// row equals the domain fold of its stream, no event ID is stored twice, and
// every stream has a row. It is read-only (its sessions run with
// default_transaction_read_only) and applies no migrations, so it may run
// against a live ledger, a replica or a production database.
//
// It is exact while the ledger runs: the payments rows and the projector's
// checkpoint are read in one REPEATABLE READ snapshot, and each stream is
// folded only up to that checkpoint. Events at or below a checkpoint are
// final (the Postgres feed reads below the oldest running transaction), and
// the rows are exactly their fold, so a webhook arriving mid-check changes
// nothing. The rows are held in memory, about 200 bytes each.

// errVerifyFailed marks a verify run that found a problem (exit status 1).
var errVerifyFailed = errors.New("verify failed")

// verifyOptions are `ledger verify`'s flags.
type verifyOptions struct {
	JSON bool
	// Wait polls until the projection has caught up with the store (lag 0)
	// before checking; 0 checks at once. Postgres store only.
	Wait time.Duration
}

// verifyReport is what verify found; --json prints it as is.
type verifyReport struct {
	OK                bool             `json:"ok"`
	Backend           string           `json:"backend"`
	Checkpoint        string           `json:"checkpoint"`
	StoreHead         string           `json:"store_head,omitempty"`
	LagEvents         int64            `json:"projection_lag_events"` // -1: not measured (KurrentDB)
	PaymentsChecked   int              `json:"payments_checked"`
	EventsFolded      int              `json:"events_folded"`
	Mismatched        int              `json:"mismatched"` // payments with at least one differing field
	StreamsWithoutRow int              `json:"streams_without_row"`
	DuplicateEventIDs int              `json:"duplicate_event_ids"`
	DuplicateScope    string           `json:"duplicate_scope"`
	UniqueEventID     bool             `json:"unique_event_id_constraint"` // es_events_event_id_key present
	Mismatches        []verifyMismatch `json:"mismatches"`
	Orphans           []string         `json:"streams_without_row_list,omitempty"`
	Duplicates        []string         `json:"duplicate_event_id_list,omitempty"`
	NotChecked        []string         `json:"not_checked,omitempty"`
	// Jobs counts follow-up jobs (status fetches) by state, except
	// completed ones. Informational: a running or available job may still
	// append an observation and change its payment; discarded ones are the
	// dead-letter queue.
	Jobs map[string]int `json:"jobs_not_completed,omitempty"`
	// OldestRunningJob is when the oldest still-running job was attempted:
	// a job whose process was killed stays running until the queue rescues it.
	OldestRunningJob *time.Time `json:"oldest_running_job_attempted_at,omitempty"`
}

// verifyMismatch is one field of one payment where the read model and the
// fold of the stream differ.
type verifyMismatch struct {
	Payment   string `json:"payment"` // provider/provider_payment_id
	Field     string `json:"field"`
	ReadModel string `json:"read_model"`
	Fold      string `json:"fold"`
}

// verify runs `ledger verify [--json] [--wait D]`.
func verify(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("ledger verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts verifyOptions
	fs.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	fs.DurationVar(&opts.Wait, "wait", 0, "wait up to this long for the projection to catch up before checking")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("verify: unexpected arguments %q", fs.Args())
	}
	rep, err := verifyLedger(ctx, cfg, opts, logger)
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
	} else {
		rep.print(stdout)
	}
	if !rep.OK {
		return fmt.Errorf("verify: %d payments mismatched, %d streams without a row, %d duplicate event IDs: %w",
			rep.Mismatched, rep.StreamsWithoutRow, rep.DuplicateEventIDs, errVerifyFailed)
	}
	return nil
}

// verifyLedger opens the configured databases read-only and checks them.
func verifyLedger(ctx context.Context, cfg Config, opts verifyOptions, logger *slog.Logger) (verifyReport, error) {
	pool, err := openReadOnly(ctx, cfg.DatabaseURL)
	if err != nil {
		return verifyReport{}, err
	}
	defer pool.Close()
	store, err := openEventStore(ctx, cfg, pool, openReadOnly, logger)
	if err != nil {
		return verifyReport{}, err
	}
	defer store.close()
	v := verifier{pool: pool, esPool: store.pool, store: store.Store, codec: eventstore.NewCodec()}
	return v.run(ctx, opts)
}

// openReadOnly connects without applying migrations; every transaction of
// the pool is read-only, so verify cannot write even by mistake.
func openReadOnly(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("verify: database: %w", err)
	}
	pcfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	pcfg.ConnConfig.RuntimeParams["application_name"] = "ledger verify"
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("verify: database %s: %w", redact(dbURL), err)
	}
	return pool, nil
}

// verifier holds one verify run's connections.
type verifier struct {
	pool   *pgxpool.Pool // read models and checkpoint
	esPool *pgxpool.Pool // the Postgres event store's database; nil for KurrentDB
	store  eventstore.Store
	codec  *eventstore.Codec
}

func (v verifier) run(ctx context.Context, opts verifyOptions) (verifyReport, error) {
	rep := verifyReport{Backend: "kurrentdb", LagEvents: -1, Mismatches: []verifyMismatch{}}
	if v.esPool != nil {
		rep.Backend = "postgres"
		if err := v.waitCaughtUp(ctx, opts.Wait); err != nil {
			return rep, err
		}
	} else {
		rep.NotChecked = append(rep.NotChecked,
			"projection lag and streams without a row: KurrentDB has no cheap list of streams; only the read model's streams are read")
		if opts.Wait > 0 {
			rep.NotChecked = append(rep.NotChecked, "--wait: the lag is not measured on KurrentDB; checked at once")
		}
	}
	checkpoint, rows, err := v.snapshot(ctx)
	if err != nil {
		return rep, err
	}
	if err := v.jobs(ctx, &rep); err != nil {
		return rep, err
	}
	rep.Checkpoint = checkpoint.String()
	streams := make(map[string]bool, len(rows))
	seen := make(map[uuid.UUID]string)
	for _, row := range rows {
		stream := eventstore.PaymentStream(row.Provider, row.ProviderPaymentID)
		streams[stream] = true
		n, diffs, err := v.checkPayment(ctx, row, stream, checkpoint, seen)
		if err != nil {
			return rep, err
		}
		rep.PaymentsChecked++
		rep.EventsFolded += n
		if len(diffs) > 0 {
			rep.Mismatched++
			rep.Mismatches = append(rep.Mismatches, diffs...)
		}
	}
	if v.esPool != nil {
		if err := v.storeChecks(ctx, checkpoint, streams, &rep); err != nil {
			return rep, err
		}
	} else {
		rep.DuplicateScope = "the read model's streams"
		for _, m := range rep.Mismatches {
			if m.Field == "event_id" {
				rep.DuplicateEventIDs++
			}
		}
	}
	rep.OK = rep.Mismatched == 0 && rep.StreamsWithoutRow == 0 && rep.DuplicateEventIDs == 0
	return rep, nil
}

// snapshot reads the projector's checkpoint and every payments row in one
// snapshot, so the rows are exactly the fold of the events up to it.
func (v verifier) snapshot(ctx context.Context) (eventstore.Position, []domain.PaymentState, error) {
	var (
		checkpoint = eventstore.Start
		rows       []domain.PaymentState
	)
	err := pgx.BeginTxFunc(ctx, v.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		if checkpoint, err = readCheckpointTx(ctx, tx); err != nil {
			return err
		}
		rows, err = readPaymentRows(ctx, tx)
		return err
	})
	if err != nil {
		return checkpoint, nil, fmt.Errorf("verify: read model snapshot: %w", err)
	}
	return checkpoint, rows, nil
}

func readCheckpointTx(ctx context.Context, tx pgx.Tx) (eventstore.Position, error) {
	var s string
	err := tx.QueryRow(ctx, "SELECT position FROM projection_checkpoints WHERE name = $1", projections.DefaultName).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return eventstore.Start, nil
	}
	if err != nil {
		return eventstore.Start, fmt.Errorf("checkpoint %s: %w", projections.DefaultName, err)
	}
	return eventstore.ParsePosition(s)
}

func readPaymentRows(ctx context.Context, tx pgx.Tx) ([]domain.PaymentState, error) {
	const q = `SELECT provider, provider_payment_id, status, currency, amount, amount_captured,
		amount_refunded, amount_disputed, created_at, updated_at, event_count, review_reasons
		FROM payments ORDER BY provider, provider_payment_id`
	rows, _ := tx.Query(ctx, q) // CollectRows reports the error
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.PaymentState, error) {
		var s domain.PaymentState
		var status, currency string
		err := r.Scan(&s.Provider, &s.ProviderPaymentID, &status, &currency, &s.Amount, &s.AmountCaptured,
			&s.AmountRefunded, &s.AmountDisputed, &s.CreatedAt, &s.UpdatedAt, &s.EventCount, &s.ReviewReasons)
		s.Status, s.Currency = domain.Status(status), domain.Currency(currency)
		return s, err
	})
}

// checkPayment folds the stream's events up to checkpoint and compares the
// result with the row. It returns the number of events folded.
func (v verifier) checkPayment(ctx context.Context, row domain.PaymentState, stream string, checkpoint eventstore.Position, seen map[uuid.UUID]string) (int, []verifyMismatch, error) {
	recs, err := v.store.ReadStream(ctx, stream)
	if err != nil {
		return 0, nil, fmt.Errorf("verify: read %s: %w", stream, err)
	}
	name := row.Provider + "/" + row.ProviderPaymentID
	var diffs []verifyMismatch
	events := make([]domain.Event, 0, len(recs))
	for i, rec := range recs {
		if rec.Revision != uint64(i) {
			diffs = append(diffs, verifyMismatch{name, "revision", fmt.Sprint(rec.Revision), fmt.Sprintf("%d (contiguous from 0)", i)})
		}
		if other, dup := seen[rec.ID]; dup {
			diffs = append(diffs, verifyMismatch{name, "event_id", rec.ID.String(), "also stored in " + other})
		}
		seen[rec.ID] = stream
		if rec.Position.Compare(checkpoint) > 0 {
			continue // not projected yet: the row cannot show it
		}
		e, err := v.codec.Decode(rec)
		if err != nil {
			diffs = append(diffs, verifyMismatch{name, "decode", rec.ID.String(), err.Error()})
			continue
		}
		events = append(events, e)
	}
	if len(events) == 0 {
		return 0, append(diffs, verifyMismatch{name, "stream", "row present", "no events in " + stream}), nil
	}
	return len(events), append(diffs, compareStates(name, row, domain.Fold(events...).State())...), nil
}

// compareStates lists the fields where the row differs from the fold.
// Timestamps are compared at Postgres's microsecond precision (pgx
// truncates when it encodes).
func compareStates(name string, row, fold domain.PaymentState) []verifyMismatch {
	var diffs []verifyMismatch
	check := func(field string, equal bool, r, f any) {
		if !equal {
			diffs = append(diffs, verifyMismatch{Payment: name, Field: field, ReadModel: fmt.Sprint(r), Fold: fmt.Sprint(f)})
		}
	}
	sameTime := func(r, f time.Time) bool { return r.Equal(f.Truncate(time.Microsecond)) }
	check("status", row.Status == fold.Status, row.Status, fold.Status)
	check("currency", row.Currency == fold.Currency, row.Currency, fold.Currency)
	check("amount", row.Amount == fold.Amount, row.Amount, fold.Amount)
	check("amount_captured", row.AmountCaptured == fold.AmountCaptured, row.AmountCaptured, fold.AmountCaptured)
	check("amount_refunded", row.AmountRefunded == fold.AmountRefunded, row.AmountRefunded, fold.AmountRefunded)
	check("amount_disputed", row.AmountDisputed == fold.AmountDisputed, row.AmountDisputed, fold.AmountDisputed)
	check("event_count", row.EventCount == fold.EventCount, row.EventCount, fold.EventCount)
	check("created_at", sameTime(row.CreatedAt, fold.CreatedAt), row.CreatedAt.UTC(), fold.CreatedAt.UTC())
	check("updated_at", sameTime(row.UpdatedAt, fold.UpdatedAt), row.UpdatedAt.UTC(), fold.UpdatedAt.UTC())
	check("review_reasons", slices.Equal(row.ReviewReasons, fold.ReviewReasons), row.ReviewReasons, fold.ReviewReasons)
	return diffs
}

// storeChecks are the Postgres store's whole-store checks: duplicate event
// IDs, streams without a row, and the projection's lag.
func (v verifier) storeChecks(ctx context.Context, checkpoint eventstore.Position, streams map[string]bool, rep *verifyReport) error {
	const constraintSQL = `SELECT EXISTS (SELECT 1 FROM pg_constraint
		WHERE conrelid = 'es_events'::regclass AND conname = 'es_events_event_id_key' AND contype = 'u')`
	if err := v.esPool.QueryRow(ctx, constraintSQL).Scan(&rep.UniqueEventID); err != nil {
		return fmt.Errorf("verify: event ID constraint: %w", err)
	}
	// The UNIQUE constraint makes a duplicate impossible; counting anyway is
	// the point of an audit (a dropped constraint, a restored dump).
	const dupSQL = `SELECT event_id::text || ' ×' || count(*) FROM es_events GROUP BY event_id HAVING count(*) > 1`
	dups, err := collectStrings(ctx, v.esPool, dupSQL)
	if err != nil {
		return fmt.Errorf("verify: duplicate event IDs: %w", err)
	}
	rep.Duplicates, rep.DuplicateEventIDs = dups, len(dups)
	rep.DuplicateScope = "the whole store (es_events)"

	// Streams with an event at or below the checkpoint must have a row.
	const streamsSQL = `SELECT DISTINCT stream FROM es_events
		WHERE starts_with(stream, $3) AND (tx_id, seq) <= ($1, $2)`
	all, err := collectStrings(ctx, v.esPool, streamsSQL, checkpoint.Commit, checkpoint.Prepare, eventstore.PaymentStreamPrefix)
	if err != nil {
		return fmt.Errorf("verify: streams: %w", err)
	}
	for _, s := range all {
		if !streams[s] {
			rep.Orphans = append(rep.Orphans, s)
		}
	}
	slices.Sort(rep.Orphans)
	rep.StreamsWithoutRow = len(rep.Orphans)

	head, lag, err := v.lag(ctx, checkpoint)
	if err != nil {
		return err
	}
	rep.StoreHead, rep.LagEvents = head.String(), lag
	return nil
}

// lag returns the store's head (the last event a subscriber can see) and
// how many payment events lie after checkpoint.
func (v verifier) lag(ctx context.Context, checkpoint eventstore.Position) (eventstore.Position, int64, error) {
	const headSQL = `SELECT tx_id, seq FROM es_events
		WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
		ORDER BY tx_id DESC, seq DESC LIMIT 1`
	const lagSQL = `SELECT count(*) FROM es_events WHERE starts_with(stream, $3) AND (tx_id, seq) > ($1, $2)`
	var head eventstore.Position
	err := v.esPool.QueryRow(ctx, headSQL).Scan(&head.Commit, &head.Prepare)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return head, 0, fmt.Errorf("verify: store head: %w", err)
	}
	var n int64
	if err := v.esPool.QueryRow(ctx, lagSQL, checkpoint.Commit, checkpoint.Prepare, eventstore.PaymentStreamPrefix).Scan(&n); err != nil {
		return head, 0, fmt.Errorf("verify: projection lag: %w", err)
	}
	return head, n, nil
}

// waitCaughtUp polls until no payment event lies after the checkpoint, or
// fails when wait passes. wait 0 returns at once.
func (v verifier) waitCaughtUp(ctx context.Context, wait time.Duration) error {
	if wait <= 0 {
		return nil
	}
	deadline := time.Now().Add(wait)
	for {
		var s string
		err := v.pool.QueryRow(ctx, "SELECT position FROM projection_checkpoints WHERE name = $1", projections.DefaultName).Scan(&s)
		checkpoint := eventstore.Start
		switch {
		case err == nil:
			if checkpoint, err = eventstore.ParsePosition(s); err != nil {
				return fmt.Errorf("verify: %w", err)
			}
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("verify: checkpoint: %w", err)
		}
		_, lag, err := v.lag(ctx, checkpoint)
		if err != nil || lag == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("verify: projection still %d events behind after %s: %w", lag, wait, errVerifyFailed)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("verify: wait: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// jobs reads the follow-up queue's unfinished jobs, when River's tables
// exist (serve creates them; a database only migrated by `ledger migrate`
// has none).
func (v verifier) jobs(ctx context.Context, rep *verifyReport) error {
	var exists bool
	if err := v.pool.QueryRow(ctx, "SELECT to_regclass('river_job') IS NOT NULL").Scan(&exists); err != nil || !exists {
		return err
	}
	const q = `SELECT state::text, count(*), min(attempted_at) FILTER (WHERE state = 'running')
		FROM river_job WHERE state <> 'completed' GROUP BY state`
	rows, _ := v.pool.Query(ctx, q) // ForEachRow reports the error
	var (
		state  string
		n      int
		oldest *time.Time
	)
	_, err := pgx.ForEachRow(rows, []any{&state, &n, &oldest}, func() error {
		if rep.Jobs == nil {
			rep.Jobs = map[string]int{}
		}
		rep.Jobs[state] = n
		if oldest != nil {
			t := oldest.UTC()
			rep.OldestRunningJob = &t
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("verify: follow-up jobs: %w", err)
	}
	return nil
}

func collectStrings(ctx context.Context, pool *pgxpool.Pool, q string, args ...any) ([]string, error) {
	rows, _ := pool.Query(ctx, q, args...) // CollectRows reports the error
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// print writes the human report: the summary, then one line per problem.
func (r verifyReport) print(w io.Writer) {
	lag := "not measured"
	if r.LagEvents >= 0 {
		lag = fmt.Sprintf("%d events (store head %s)", r.LagEvents, r.StoreHead)
	}
	fmt.Fprintf(w, "ledger verify: %s event store, checkpoint %s at %s, projection lag %s\n",
		r.Backend, projections.DefaultName, r.Checkpoint, lag)
	fmt.Fprintf(w, "payments checked %d, mismatched %d, streams without a row %d, duplicate event IDs %d\n",
		r.PaymentsChecked, r.Mismatched, r.StreamsWithoutRow, r.DuplicateEventIDs)
	fmt.Fprintf(w, "  events folded %d; duplicates counted over %s", r.EventsFolded, r.DuplicateScope)
	if r.UniqueEventID {
		fmt.Fprint(w, " (UNIQUE es_events_event_id_key is in place, so a duplicate is impossible; counted anyway)")
	}
	fmt.Fprintln(w)
	for _, m := range r.Mismatches {
		fmt.Fprintf(w, "mismatch %s %s: read model %s, fold of stream %s\n", m.Payment, m.Field, m.ReadModel, m.Fold)
	}
	for _, s := range r.Orphans {
		fmt.Fprintf(w, "stream without a row: %s\n", s)
	}
	for _, d := range r.Duplicates {
		fmt.Fprintf(w, "duplicate event ID: %s\n", d)
	}
	if len(r.Jobs) > 0 {
		states := slices.Sorted(maps.Keys(r.Jobs))
		parts := make([]string, 0, len(states))
		for _, st := range states {
			parts = append(parts, fmt.Sprintf("%s %d", st, r.Jobs[st]))
		}
		fmt.Fprintf(w, "follow-up jobs not completed: %s", strings.Join(parts, ", "))
		if r.OldestRunningJob != nil {
			fmt.Fprintf(w, " (oldest running since %s: a killed process's job stays running until the queue rescues it)",
				r.OldestRunningJob.Format(time.RFC3339))
		}
		fmt.Fprintln(w)
	}
	for _, n := range r.NotChecked {
		fmt.Fprintf(w, "not checked: %s\n", n)
	}
	if r.OK {
		fmt.Fprintln(w, "OK")
	} else {
		fmt.Fprintln(w, "FAILED")
	}
}
