package projections

import (
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/eventstore"
)

// insertHistorySQL records the events. ON CONFLICT DO NOTHING makes a
// replayed batch a no-op, and the stored row is never rewritten.
const insertHistorySQL = `INSERT INTO payment_events
	(event_id, provider, provider_payment_id, revision, type, data, recorded_at)
	SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[],
		$7::timestamptz[])
	ON CONFLICT (event_id) DO NOTHING`

// queueInsertHistory queues the insert of the events into payment_events.
func queueInsertHistory(b *pgx.Batch, events []decoded) {
	n := len(events)
	var (
		ids                   = make([][16]byte, n) // bytes: a UUID string encodes several times slower
		providers, paymentIDs = make([]string, n), make([]string, n)
		types, data           = make([]string, n), make([]string, n)
		revisions             = make([]int64, n)
		recordedAt            = make([]time.Time, n)
	)
	for i, d := range events {
		ids[i] = d.rec.ID
		providers[i], paymentIDs[i] = d.meta.Provider, d.meta.ProviderPaymentID
		types[i], data[i] = d.rec.Type, string(d.rec.Data)
		revisions[i], recordedAt[i] = int64(d.rec.Revision), d.rec.RecordedAt
	}
	queueExec(b, fmt.Sprintf("record %d events", n), nil, insertHistorySQL, ids, providers, paymentIDs,
		revisions, types, data, recordedAt)
}

// ofPayments selects the payment_events rows of the payments in $1 and $2
// (providers and IDs, index by index). The keys are joined as an unnest of
// two arrays, the composite form of = ANY, so the (provider,
// provider_payment_id) index serves it.
const ofPayments = `
	FROM unnest($1::text[], $2::text[]) AS k(provider, provider_payment_id)
	JOIN payment_events e USING (provider, provider_payment_id)`

// keyArrays returns ofPayments' arguments for keys.
func keyArrays(keys []paymentKey) (providers, ids []string) {
	providers, ids = make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		providers[i], ids[i] = k.provider, k.id
	}
	return providers, ids
}

// queueLoadHistories queues the read of every key's full history into
// into. Queued after the insert, it reads the batch's events too.
func queueLoadHistories(b *pgx.Batch, codec *eventstore.Codec, keys []paymentKey, into map[paymentKey][]recorded) {
	providers, ids := keyArrays(keys)
	const sql = `SELECT e.provider, e.provider_payment_id, e.event_id::text, e.type, e.data, e.revision,
		e.recorded_at` + ofPayments + ` ORDER BY e.revision, e.recorded_at, e.event_id`
	b.Queue(sql, providers, ids).Query(func(rows pgx.Rows) error {
		var (
			k    paymentKey
			r    recorded
			typ  string
			data []byte
		)
		dest := []any{&k.provider, &k.id, &r.id, &typ, &data, &r.revision, &r.recordedAt}
		_, err := pgx.ForEachRow(rows, dest, func() error {
			e, err := codec.DecodeData(typ, data)
			if err != nil {
				return fmt.Errorf("%w %s of %s/%s: %w", errUndecodable, r.id, k.provider, k.id, err)
			}
			r.event = e
			into[k] = append(into[k], r)
			return nil
		})
		if err != nil {
			return fmt.Errorf("load histories of %d payments: %w", len(keys), err)
		}
		return nil
	})
}

// queueCheckFresh queues the check of the fresh payments' histories (see
// plan.fresh): after the insert, payment_events must hold exactly the event
// IDs of hs for each of them. The payments where it does not are added to
// stale, to be read back.
func queueCheckFresh(b *pgx.Batch, fresh []paymentKey, hs map[paymentKey][]recorded, stale *[]paymentKey) {
	providers, ids := keyArrays(fresh)
	b.Queue(`SELECT e.provider, e.provider_payment_id, e.event_id::text`+ofPayments, providers, ids).Query(func(rows pgx.Rows) error {
		stored := make(map[paymentKey][]string, len(fresh))
		var (
			k       paymentKey
			eventID string
		)
		_, err := pgx.ForEachRow(rows, []any{&k.provider, &k.id, &eventID}, func() error {
			stored[k] = append(stored[k], eventID)
			return nil
		})
		if err != nil {
			return fmt.Errorf("check %d new payments: %w", len(fresh), err)
		}
		for _, k := range fresh {
			if !sameIDs(stored[k], hs[k]) {
				*stale = append(*stale, k)
			}
		}
		return nil
	})
}

// sameIDs reports whether ids and rs name the same events (neither list has
// repeats: event_id is unique, and plan dedups rs).
func sameIDs(ids []string, rs []recorded) bool {
	if len(ids) != len(rs) {
		return false
	}
	for _, r := range rs {
		if !slices.Contains(ids, r.id) {
			return false
		}
	}
	return true
}
