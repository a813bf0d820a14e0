-- +goose Up
-- Reconciliation (issue 17). The reconciler asks a provider about the
-- payments in doubt: not final (or known only from notifications) and quiet
-- for LEDGER_RECONCILE_AFTER. Each check is a payment.reconciliation_checked.v1
-- fact in the payment's stream, which the projector also lands in the
-- reconciliation log below.

-- last_recorded_at: recorded time of the payment's newest fact, checks
-- included (a payment just checked is quiet again for AFTER).
-- last_fact_at: recorded time of its newest provider fact (checks
-- excluded): "finished in the last 24 h" for the sample of final payments.
-- notified_only: every provider fact is a bare notification (Mercado Pago
-- whose fetch never succeeded), so nothing states its status.
ALTER TABLE payments
    ADD COLUMN last_recorded_at timestamptz,
    ADD COLUMN last_fact_at timestamptz,
    ADD COLUMN notified_only boolean NOT NULL DEFAULT false;

UPDATE payments p SET
    last_recorded_at = e.last,
    last_fact_at = e.last,
    notified_only = e.notified_only
FROM (SELECT provider, provider_payment_id, max(recorded_at) AS last,
             bool_and(type = 'payment.notified.v1') AS notified_only
      FROM payment_events GROUP BY provider, provider_payment_id) e
WHERE p.provider = e.provider AND p.provider_payment_id = e.provider_payment_id;

UPDATE payments SET last_recorded_at = projected_at, last_fact_at = projected_at WHERE last_recorded_at IS NULL;

ALTER TABLE payments
    ALTER COLUMN last_recorded_at SET NOT NULL,
    ALTER COLUMN last_fact_at SET NOT NULL;

-- The selection of payments in doubt, oldest doubt first. The predicate is
-- domain.Status.Final's complement; a status added later that waits on the
-- provider needs a migration that redefines this index and the query with it.
CREATE INDEX payments_in_doubt_idx ON payments (last_recorded_at)
    WHERE status IN ('pending', 'authorized', 'disputed') OR notified_only;
-- … of one provider (`ledger reconcile --provider`).
CREATE INDEX payments_provider_in_doubt_idx ON payments (provider, last_recorded_at)
    WHERE status IN ('pending', 'authorized', 'disputed') OR notified_only;
-- The sample of recently finished payments.
CREATE INDEX payments_last_fact_idx ON payments (last_fact_at);

-- The reconciliation log: one row per check, only ever inserted (a rebuild
-- reproduces it from the checks in the streams). id orders it newest first
-- and is the keyset cursor.
CREATE TABLE reconciliation_checks (
    id                  bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    event_id            uuid PRIMARY KEY, -- the check's stored event ID
    provider            text NOT NULL,
    provider_payment_id text NOT NULL,
    checked_at          timestamptz NOT NULL,
    run                 text NOT NULL,
    trigger             text NOT NULL,
    status_before       text NOT NULL,
    status_observed     text NOT NULL DEFAULT '',
    provider_status     text NOT NULL DEFAULT '',
    status_after        text NOT NULL,
    outcome             text NOT NULL,
    cause               text NOT NULL DEFAULT '',
    observed_event_id   text NOT NULL DEFAULT '',
    error               text NOT NULL DEFAULT ''
);

CREATE INDEX reconciliation_checks_provider_id_idx ON reconciliation_checks (provider, id);
CREATE INDEX reconciliation_checks_outcome_id_idx ON reconciliation_checks (outcome, id);
CREATE INDEX reconciliation_checks_checked_at_idx ON reconciliation_checks (checked_at);
CREATE INDEX reconciliation_checks_payment_idx ON reconciliation_checks (provider, provider_payment_id);

-- +goose Down
DROP TABLE reconciliation_checks;
DROP INDEX payments_last_fact_idx;
DROP INDEX payments_provider_in_doubt_idx;
DROP INDEX payments_in_doubt_idx;
ALTER TABLE payments
    DROP COLUMN notified_only,
    DROP COLUMN last_fact_at,
    DROP COLUMN last_recorded_at;
