package projections

import (
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
)

// entryNamespace is the uuid v5 namespace of journal entry IDs.
func entryNamespace() uuid.UUID {
	return uuid.UUID{0x6c, 0x65, 0x64, 0x67, 0x65, 0x72, 0x5f, 0x65, 0x6e, 0x74, 0x72, 0x69, 0x65, 0x73, 0x5f, 0x31}
}

// entryID names the seq-th entry posted by the arrival of event eventID: a
// pure function of the event store, so a rebuild gives every entry the ID it
// had, and a reversal can name the entry it reverses.
func entryID(eventID string, seq int) string {
	return uuid.NewSHA1(entryNamespace(), []byte(eventID+":"+strconv.Itoa(seq))).String()
}

// ledgerRows holds journal entries and their lines column by column for
// insertLedgerSQL's unnest.
type ledgerRows struct {
	id, provider, paymentID, currency, cause, factKey []string
	reverses                                          []*string
	effectiveAt, recordedAt                           []time.Time
	rank, seq                                         []int32
	revision                                          []int64
	lineEntry, lineAccount                            []string
	debit, credit                                     []int64
}

// addPayment adds the entries posted by the arrivals of payment k whose
// event is in the batch (inBatch), derived with domain.Journal from the
// payment's whole history in store order. Deriving from the history, never
// from the batch, makes the entries the same whatever the batch boundaries;
// an arrival of an earlier batch posts entries that are already stored.
func (lr *ledgerRows) addPayment(k paymentKey, hist []recorded, inBatch map[string]bool) {
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
		id := entryID(arrival.id, e.Seq)
		var reverses *string
		if e.Reverses >= 0 {
			r := journal[e.Reverses]
			s := entryID(hist[r.Arrival].id, r.Seq)
			reverses = &s
		}
		lr.id = append(lr.id, id)
		lr.provider, lr.paymentID = append(lr.provider, k.provider), append(lr.paymentID, k.id)
		lr.currency = append(lr.currency, string(e.Currency))
		lr.cause, lr.factKey = append(lr.cause, e.CauseEventID), append(lr.factKey, e.FactKey)
		lr.reverses = append(lr.reverses, reverses)
		lr.effectiveAt, lr.recordedAt = append(lr.effectiveAt, e.EffectiveAt), append(lr.recordedAt, e.RecordedAt)
		lr.rank, lr.seq = append(lr.rank, int32(e.Rank)), append(lr.seq, int32(e.Seq))
		lr.revision = append(lr.revision, int64(arrival.revision))
		for _, l := range e.Lines {
			lr.lineEntry, lr.lineAccount = append(lr.lineEntry, id), append(lr.lineAccount, string(l.Account))
			lr.debit, lr.credit = append(lr.debit, l.Debit), append(lr.credit, l.Credit)
		}
	}
}

// insertLedgerSQL inserts entries with their lines and adds the lines to
// the running totals, in one statement: only the entries it actually
// inserted (ON CONFLICT DO NOTHING skips the stored ones) reach the totals, so a replayed batch or a redelivered event changes nothing. Hours
// are UTC hours whatever the session's time zone.
const insertLedgerSQL = `WITH ls AS (
	SELECT u.entry_id, array_agg(u.account ORDER BY u.n) AS accounts, array_agg(u.debit ORDER BY u.n) AS debits,
		array_agg(u.credit ORDER BY u.n) AS credits
	FROM unnest($13::uuid[], $14::text[], $15::bigint[], $16::bigint[]) WITH ORDINALITY
		AS u(entry_id, account, debit, credit, n)
	GROUP BY u.entry_id
), e AS (
	INSERT INTO ledger_entries (id, provider, provider_payment_id, currency, effective_at, recorded_at,
		cause_event_id, reverses, fact_key, fact_rank, arrival_revision, seq, accounts, debits, credits)
	SELECT u.*, ls.accounts, ls.debits, ls.credits
	FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[],
		$7::uuid[], $8::uuid[], $9::text[], $10::int[], $11::bigint[], $12::int[])
		AS u(id, provider, payment_id, currency, effective_at, recorded_at, cause, reverses, fact_key, rank, revision, seq)
	JOIN ls ON ls.entry_id = u.id
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
// running totals it adds to: its UTC hour and day on both bases, whatever
// the session's time zone.
const bucketsSQL = `CROSS JOIN LATERAL (VALUES
	('effective', 'hour', date_trunc('hour', l.effective_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'),
	('effective', 'day', date_trunc('day', l.effective_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'),
	('recorded', 'hour', date_trunc('hour', l.recorded_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'),
	('recorded', 'day', date_trunc('day', l.recorded_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')) AS b(basis, unit, bucket)`

// queueInsertLedger queues the ledger of the batch's arrivals of keys.
func queueInsertLedger(b *pgx.Batch, keys []paymentKey, hs map[paymentKey][]recorded, events []decoded) {
	inBatch := make(map[string]bool, len(events))
	for _, d := range events {
		inBatch[d.rec.ID.String()] = true
	}
	var lr ledgerRows
	for _, k := range keys {
		lr.addPayment(k, hs[k], inBatch)
	}
	if len(lr.id) == 0 {
		return
	}
	queueExec(b, fmt.Sprintf("post %d journal entries", len(lr.id)), nil, insertLedgerSQL,
		lr.id, lr.provider, lr.paymentID, lr.currency, lr.effectiveAt, lr.recordedAt, lr.cause, lr.reverses,
		lr.factKey, lr.rank, lr.revision, lr.seq, lr.lineEntry, lr.lineAccount, lr.debit, lr.credit)
}
