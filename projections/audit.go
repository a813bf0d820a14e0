package projections

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// StreamReader reads one stream; every eventstore.Store is one.
type StreamReader interface {
	ReadStream(ctx context.Context, stream string) ([]eventstore.RecordedEvent, error)
}

// AuditReport is what Audit found.
type AuditReport struct {
	Checkpoint      eventstore.Position // the projection's checkpoint the rows were read at
	PaymentsChecked int
	EventsFolded    int
	Mismatched      int // payments with at least one mismatch
	Mismatches      []AuditMismatch
	Streams         map[string]bool // the stream of every payments row checked
	// Payments names every payment checked, provider/provider_payment_id,
	// in order.
	Payments []string
}

// AuditScope selects the payments an audit covers; the zero value is all.
type AuditScope struct {
	Provider  string    // "": every provider
	PaymentID string    // "": every payment (of Provider)
	Since     time.Time // zero: any time; else payments with an event recorded at or after it
}

// All reports whether s covers every payment.
func (s AuditScope) All() bool { return s.Provider == "" && s.PaymentID == "" && s.Since.IsZero() }

// names reports whether the payment is in s as far as its name tells.
func (s AuditScope) names(provider, id string) bool {
	return (s.Provider == "" || s.Provider == provider) && (s.PaymentID == "" || s.PaymentID == id)
}

// Recorded reports whether recs (one stream's events) are in s's time.
func (s AuditScope) Recorded(recs []eventstore.RecordedEvent) bool {
	if s.Since.IsZero() {
		return true
	}
	for _, r := range recs {
		if !r.RecordedAt.Before(s.Since) {
			return true
		}
	}
	return false
}

// MatchStream reports whether the payment stream, named by provider and
// id and read from store, is in s.
func (s AuditScope) MatchStream(ctx context.Context, store StreamReader, provider, id string) (bool, error) {
	if !s.names(provider, id) {
		return false, nil
	}
	if s.Since.IsZero() {
		return true, nil
	}
	stream := eventstore.PaymentStream(provider, id)
	recs, err := store.ReadStream(ctx, stream)
	if err != nil {
		return false, fmt.Errorf("projections: audit scope: read %s: %w", stream, err)
	}
	return s.Recorded(recs), nil
}

// AuditMismatch is one field of one payment where the read model and the
// fold of its stream differ.
type AuditMismatch struct {
	Payment   string // provider/provider_payment_id
	Field     string
	ReadModel string
	Fold      string
}

// Audit checks that every payments row equals the domain fold of its
// stream, read from store, up to the checkpoint of the projection name. The
// rows and the checkpoint are read in one snapshot, so it is exact while a
// runner is applying batches; it only reads.
func Audit(ctx context.Context, pool *pgxpool.Pool, name string, store StreamReader) (AuditReport, error) {
	return AuditOf(ctx, pool, name, store, AuditScope{})
}

// AuditOf is Audit of the payments in scope only: rows, reconciliation
// log rows and reviews of other payments are not checked.
func AuditOf(ctx context.Context, pool *pgxpool.Pool, name string, store StreamReader, scope AuditScope) (AuditReport, error) {
	reviews := map[paymentKey]map[string]domain.Review{}
	checkpoint, rows, checks, err := auditSnapshot(ctx, pool, name, reviews)
	if err != nil {
		return AuditReport{}, err
	}
	rep := AuditReport{Checkpoint: checkpoint, Mismatches: []AuditMismatch{}, Streams: make(map[string]bool, len(rows))}
	a := auditor{store: store, codec: eventstore.NewCodec(), checkpoint: checkpoint, seen: map[uuid.UUID]string{}, checks: checks,
		reviews: reviews}
	for _, row := range rows {
		stream := eventstore.PaymentStream(row.Provider, row.ProviderPaymentID)
		if !scope.names(row.Provider, row.ProviderPaymentID) {
			continue
		}
		recs, err := store.ReadStream(ctx, stream)
		if err != nil {
			return rep, fmt.Errorf("projections: audit: read %s: %w", stream, err)
		}
		if !scope.Recorded(recs) {
			continue
		}
		rep.Streams[stream] = true
		rep.Payments = append(rep.Payments, row.Provider+"/"+row.ProviderPaymentID)
		n, diffs := a.check(row, stream, recs)
		rep.PaymentsChecked++
		rep.EventsFolded += n
		if len(diffs) > 0 {
			rep.Mismatched++
			rep.Mismatches = append(rep.Mismatches, diffs...)
		}
	}
	// Checks logged for a payment without a payments row: no stream was
	// read for them, and a check always follows a provider fact.
	if err := addExtras(ctx, &rep, store, scope, checks, extraChecks); err != nil {
		return rep, err
	}
	return rep, addExtras(ctx, &rep, store, scope, reviews, extraReviews)
}

// addExtras adds the rows of payments in scope that no payments row
// accounted for, as listed by extra.
func addExtras[V any](ctx context.Context, rep *AuditReport, store StreamReader, scope AuditScope,
	rows map[paymentKey]map[string]V, extra func(string, map[string]V) []AuditMismatch) error {
	for _, k := range slices.SortedFunc(maps.Keys(rows), comparePaymentKeys) {
		in, err := scope.MatchStream(ctx, store, k.provider, k.id)
		if err != nil {
			return err
		}
		if in {
			rep.Mismatched++
			rep.Mismatches = append(rep.Mismatches, extra(k.provider+"/"+k.id, rows[k])...)
		}
	}
	return nil
}

// Checkpoint returns the committed checkpoint of the projection name, or
// Start when it has none yet.
func Checkpoint(ctx context.Context, pool *pgxpool.Pool, name string) (eventstore.Position, error) {
	return readCheckpoint(ctx, pool, name)
}

// auditSnapshot reads the checkpoint of name, every payments row and the
// reconciliation log (by payment and event ID) in one REPEATABLE READ
// snapshot, so the rows are exactly the fold of the events up to it. The
// review rows go into reviews.
func auditSnapshot(ctx context.Context, pool *pgxpool.Pool, name string, reviews map[paymentKey]map[string]domain.Review) (eventstore.Position, []domain.PaymentState, map[paymentKey]map[string]domain.ReconciliationCheck, error) {
	var (
		checkpoint = eventstore.Start
		rows       []domain.PaymentState
		checks     = map[paymentKey]map[string]domain.ReconciliationCheck{}
	)
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		if checkpoint, err = readCheckpoint(ctx, tx, name); err != nil {
			return err
		}
		if rows, err = readPaymentStates(ctx, tx); err != nil {
			return err
		}
		if err = readAuditReviews(ctx, tx, reviews); err != nil {
			return err
		}
		rs, _ := tx.Query(ctx, "SELECT "+checkColumnList+" FROM reconciliation_checks")
		_, err = pgx.CollectRows(rs, func(r pgx.CollectableRow) (struct{}, error) {
			_, c, err := scanCheck(r)
			k := paymentKey{c.Provider, c.ProviderPaymentID}
			if checks[k] == nil {
				checks[k] = map[string]domain.ReconciliationCheck{}
			}
			checks[k][c.ID] = c
			return struct{}{}, err
		})
		return err
	})
	if err != nil {
		return checkpoint, nil, nil, fmt.Errorf("projections: audit snapshot: %w", err)
	}
	return checkpoint, rows, checks, nil
}

func readPaymentStates(ctx context.Context, tx pgx.Tx) ([]domain.PaymentState, error) {
	const q = `SELECT provider, provider_payment_id, status, currency, amount, amount_captured,
		amount_refunded, amount_disputed, fee, fee_currency, created_at, updated_at, event_count,
		review_reasons, requires_review FROM payments ORDER BY provider, provider_payment_id`
	rows, _ := tx.Query(ctx, q) // CollectRows reports the error
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.PaymentState, error) {
		var s domain.PaymentState
		var status, currency, feeCurrency string
		err := r.Scan(&s.Provider, &s.ProviderPaymentID, &status, &currency, &s.Amount, &s.AmountCaptured,
			&s.AmountRefunded, &s.AmountDisputed, &s.Fee, &feeCurrency, &s.CreatedAt, &s.UpdatedAt,
			&s.EventCount, &s.ReviewReasons, &s.RequiresReview)
		s.Status, s.Currency = domain.Status(status), domain.Currency(currency)
		s.FeeCurrency = domain.Currency(feeCurrency)
		return s, err
	})
}

// auditor holds one Audit run's state: seen maps every event ID read so far
// to its stream, so an ID stored twice is found across streams; checks holds
// the reconciliation log rows not yet matched with a check in a stream.
type auditor struct {
	store      StreamReader
	codec      *eventstore.Codec
	checkpoint eventstore.Position
	seen       map[uuid.UUID]string
	checks     map[paymentKey]map[string]domain.ReconciliationCheck
	reviews    map[paymentKey]map[string]domain.Review
}

// check folds the stream's events, recs, up to the checkpoint and compares
// the result with the row. It returns the number of events folded.
func (a auditor) check(row domain.PaymentState, stream string, recs []eventstore.RecordedEvent) (int, []AuditMismatch) {
	name := row.Provider + "/" + row.ProviderPaymentID
	var diffs []AuditMismatch
	events := make([]domain.Event, 0, len(recs))
	for i, rec := range recs {
		if rec.Revision != uint64(i) {
			diffs = append(diffs, AuditMismatch{name, "revision", fmt.Sprint(rec.Revision), fmt.Sprintf("%d (contiguous from 0)", i)})
		}
		if other, dup := a.seen[rec.ID]; dup {
			diffs = append(diffs, AuditMismatch{name, "event_id", rec.ID.String(), "also stored in " + other})
		}
		a.seen[rec.ID] = stream
		if rec.Position.Compare(a.checkpoint) > 0 {
			continue // not projected yet: the row cannot show it
		}
		e, err := a.codec.Decode(rec)
		if err != nil {
			diffs = append(diffs, AuditMismatch{name, "decode", rec.ID.String(), err.Error()})
			continue
		}
		events = append(events, e)
		if c, ok := e.(*domain.ReconciliationChecked); ok {
			diffs = append(diffs, a.matchCheck(name, row, rec.ID.String(), c)...)
		}
	}
	k := paymentKey{row.Provider, row.ProviderPaymentID}
	diffs = append(diffs, extraChecks(name, a.checks[k])...)
	delete(a.checks, k)
	if len(events) == 0 {
		return 0, append(diffs, AuditMismatch{name, "stream", "row present", "no events in " + stream})
	}
	p := domain.Fold(events...)
	diffs = append(diffs, a.matchReviews(name, k, p.Reviews())...)
	return len(events), append(diffs, compareStates(name, row, p.State())...)
}

// compareStates lists the fields where the row differs from the fold.
// Timestamps are compared at Postgres's microsecond precision (pgx
// truncates when it encodes).
func compareStates(name string, row, fold domain.PaymentState) []AuditMismatch {
	var diffs []AuditMismatch
	check := func(field string, equal bool, r, f any) {
		if !equal {
			diffs = append(diffs, AuditMismatch{Payment: name, Field: field, ReadModel: fmt.Sprint(r), Fold: fmt.Sprint(f)})
		}
	}
	sameTime := func(r, f time.Time) bool { return r.Equal(f.Truncate(time.Microsecond)) }
	check("status", row.Status == fold.Status, row.Status, fold.Status)
	check("currency", row.Currency == fold.Currency, row.Currency, fold.Currency)
	check("amount", row.Amount == fold.Amount, row.Amount, fold.Amount)
	check("amount_captured", row.AmountCaptured == fold.AmountCaptured, row.AmountCaptured, fold.AmountCaptured)
	check("amount_refunded", row.AmountRefunded == fold.AmountRefunded, row.AmountRefunded, fold.AmountRefunded)
	check("amount_disputed", row.AmountDisputed == fold.AmountDisputed, row.AmountDisputed, fold.AmountDisputed)
	check("fee", row.Fee == fold.Fee, row.Fee, fold.Fee)
	check("fee_currency", row.FeeCurrency == fold.FeeCurrency, row.FeeCurrency, fold.FeeCurrency)
	check("event_count", row.EventCount == fold.EventCount, row.EventCount, fold.EventCount)
	check("created_at", sameTime(row.CreatedAt, fold.CreatedAt), row.CreatedAt.UTC(), fold.CreatedAt.UTC())
	check("updated_at", sameTime(row.UpdatedAt, fold.UpdatedAt), row.UpdatedAt.UTC(), fold.UpdatedAt.UTC())
	check("review_reasons", slices.Equal(row.ReviewReasons, fold.ReviewReasons), row.ReviewReasons, fold.ReviewReasons)
	check("requires_review", row.RequiresReview == fold.RequiresReview, row.RequiresReview, fold.RequiresReview)
	return diffs
}

// matchCheck compares the reconciliation log row of the check c, stored as
// id, with what the projector writes for it, and consumes the row.
func (a auditor) matchCheck(name string, row domain.PaymentState, id string, c *domain.ReconciliationChecked) []AuditMismatch {
	want := checkOf(id, c)
	rows := a.checks[paymentKey{row.Provider, row.ProviderPaymentID}]
	got, ok := rows[id]
	if !ok {
		return []AuditMismatch{{name, "reconciliation_check", "no row", "check " + id}}
	}
	delete(rows, id)
	g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want)
	sameTime := got.CheckedAt.Equal(want.CheckedAt)
	got.CheckedAt, want.CheckedAt = time.Time{}, time.Time{}
	if !sameTime || got != want {
		return []AuditMismatch{{name, "reconciliation_check " + id, g, w}}
	}
	return nil
}

// extraChecks reports reconciliation log rows no check in the stream
// accounts for, by ID.
func extraChecks(name string, rows map[string]domain.ReconciliationCheck) []AuditMismatch {
	var diffs []AuditMismatch
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		diffs = append(diffs, AuditMismatch{name, "reconciliation_check", "row " + id, "no such check in the stream"})
	}
	return diffs
}
