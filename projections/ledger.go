package projections

import (
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/payledger/payledger/domain"
)

// entryNamespace is the uuid v5 namespace of journal entry IDs.
func entryNamespace() uuid.UUID {
	return uuid.UUID{0x6c, 0x65, 0x64, 0x67, 0x65, 0x72, 0x5f, 0x65, 0x6e, 0x74, 0x72, 0x69, 0x65, 0x73, 0x5f, 0x31}
}

// entryID names the seq-th entry posted by the arrival of event eventID: a
// pure function of the event store, so a rebuild gives every entry the ID it
// had, and a reversal can name the entry it reverses.
func entryID(eventID string, seq int) uuid.UUID {
	return uuid.NewSHA1(entryNamespace(), []byte(eventID+":"+strconv.Itoa(seq)))
}

// ledgerRows holds journal entries and their lines column by column for
// insertLedgerSQL's unnest. UUIDs travel as bytes: pgx encodes a UUID
// string several times slower. A line names its entry by its 1-based index.
type ledgerRows struct {
	id, cause                     [][16]byte
	provider, paymentID, currency []string
	factKey                       []string
	reverses                      []pgtype.UUID
	effectiveAt, recordedAt       []time.Time
	rank, seq                     []int32
	revision                      []int64
	lineEntry                     []int32
	lineAccount                   []string
	debit, credit                 []int64
}

// addPayment adds the entries posted by the arrivals of payment k whose
// event is in the batch (inBatch), derived with domain.Journal from the
// payment's whole history in store order. Deriving from the history, never
// from the batch, makes the entries the same whatever the batch boundaries;
// an arrival of an earlier batch posts entries that are already stored.
func (lr *ledgerRows) addPayment(k paymentKey, hist []recorded, inBatch map[string]bool) error {
	arrivals := make([]domain.Arrival, len(hist))
	for i, r := range hist {
		arrivals[i] = domain.Arrival{Event: r.event, EventID: r.id, RecordedAt: r.recordedAt}
	}
	journal := domain.Journal(arrivals)
	for _, e := range journal {
		arrival := hist[e.Arrival]
		if !inBatch[arrival.id] {
			continue
		}
		var reverses pgtype.UUID
		if e.Reverses >= 0 {
			r := journal[e.Reverses]
			reverses = pgtype.UUID{Bytes: entryID(hist[r.Arrival].id, r.Seq), Valid: true}
		}
		lr.id = append(lr.id, entryID(arrival.id, e.Seq))
		n := int32(len(lr.id))
		lr.provider, lr.paymentID = append(lr.provider, k.provider), append(lr.paymentID, k.id)
		lr.currency = append(lr.currency, string(e.Currency))
		cause, err := uuid.Parse(e.CauseEventID)
		if err != nil {
			return fmt.Errorf("journal of %s/%s: cause event ID: %w", k.provider, k.id, err)
		}
		lr.cause, lr.factKey = append(lr.cause, cause), append(lr.factKey, e.FactKey)
		lr.reverses = append(lr.reverses, reverses)
		lr.effectiveAt, lr.recordedAt = append(lr.effectiveAt, e.EffectiveAt), append(lr.recordedAt, e.RecordedAt)
		lr.rank, lr.seq = append(lr.rank, int32(e.Rank)), append(lr.seq, int32(e.Seq))
		lr.revision = append(lr.revision, int64(arrival.revision))
		for _, l := range e.Lines {
			lr.lineEntry, lr.lineAccount = append(lr.lineEntry, n), append(lr.lineAccount, string(l.Account))
			lr.debit, lr.credit = append(lr.debit, l.Debit), append(lr.credit, l.Credit)
		}
	}
	return nil
}

// insertLedgerSQL inserts entries with their lines and adds the lines to
// the running totals, in one statement: only the entries it actually
// inserted (ON CONFLICT DO NOTHING skips the stored ones) reach the totals, so a replayed batch or a redelivered event changes nothing. Hours
// are UTC hours whatever the session's time zone.
const insertLedgerSQL = `WITH ls AS (
	SELECT u.entry_id, array_agg(u.account ORDER BY u.n) AS accounts, array_agg(u.debit ORDER BY u.n) AS debits,
		array_agg(u.credit ORDER BY u.n) AS credits
	FROM unnest($13::int[], $14::text[], $15::bigint[], $16::bigint[]) WITH ORDINALITY
		AS u(entry_id, account, debit, credit, n)
	GROUP BY u.entry_id
), e AS (
	INSERT INTO ledger_entries (id, provider, provider_payment_id, currency, effective_at, recorded_at,
		cause_event_id, reverses, fact_key, fact_rank, arrival_revision, seq, accounts, debits, credits)
	SELECT u.id, u.provider, u.payment_id, u.currency, u.effective_at, u.recorded_at, u.cause, u.reverses,
		u.fact_key, u.rank, u.revision, u.seq, ls.accounts, ls.debits, ls.credits
	FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[],
		$7::uuid[], $8::uuid[], $9::text[], $10::int[], $11::bigint[], $12::int[]) WITH ORDINALITY
		AS u(id, provider, payment_id, currency, effective_at, recorded_at, cause, reverses, fact_key, rank, revision, seq, n)
	JOIN ls ON ls.entry_id = u.n
	ON CONFLICT (id) DO NOTHING
	RETURNING provider, currency, effective_at, recorded_at, accounts, debits, credits
), l AS (
	SELECT e.provider, e.currency, e.effective_at, e.recorded_at, a.account, a.debit, a.credit
	FROM e CROSS JOIN LATERAL unnest(e.accounts, e.debits, e.credits) AS a(account, debit, credit)
)
INSERT INTO ledger_totals AS t (basis, unit, bucket, provider, currency, account, debits, credits)
SELECT b.basis, b.unit, b.bucket, l.provider, l.currency, l.account, sum(l.debit), sum(l.credit)
FROM l ` + bucketsSQL + `
GROUP BY 1, 2, 3, 4, 5, 6
ON CONFLICT (basis, unit, bucket, provider, currency, account) DO UPDATE
	SET debits = t.debits + excluded.debits, credits = t.credits + excluded.credits`

// bucketsSQL puts a line l (with effective_at and recorded_at) in the
// running totals it adds to: its UTC hour and day on both bases. date_bin
// is arithmetic on the absolute time (no time zone, so no session setting
// matters), several times cheaper than date_trunc … AT TIME ZONE 'UTC'.
const bucketsSQL = `CROSS JOIN LATERAL (VALUES
	('effective', 'hour', date_bin('1 hour', l.effective_at, timestamptz '2000-01-01 00:00:00+00')),
	('effective', 'day', date_bin('1 day', l.effective_at, timestamptz '2000-01-01 00:00:00+00')),
	('recorded', 'hour', date_bin('1 hour', l.recorded_at, timestamptz '2000-01-01 00:00:00+00')),
	('recorded', 'day', date_bin('1 day', l.recorded_at, timestamptz '2000-01-01 00:00:00+00'))) AS b(basis, unit, bucket)`

// queueInsertLedger queues the ledger of the batch's arrivals of keys.
func queueInsertLedger(b *pgx.Batch, keys []paymentKey, hs map[paymentKey][]recorded, events []decoded) error {
	inBatch := make(map[string]bool, len(events))
	for _, d := range events {
		inBatch[d.rec.ID.String()] = true
	}
	var lr ledgerRows
	for _, k := range keys {
		if err := lr.addPayment(k, hs[k], inBatch); err != nil {
			return err
		}
	}
	if len(lr.id) == 0 {
		return nil
	}
	queueExec(b, fmt.Sprintf("post %d journal entries", len(lr.id)), nil, insertLedgerSQL,
		lr.id, lr.provider, lr.paymentID, lr.currency, lr.effectiveAt, lr.recordedAt, lr.cause, lr.reverses,
		lr.factKey, lr.rank, lr.revision, lr.seq, lr.lineEntry, lr.lineAccount, lr.debit, lr.credit)
	return nil
}
