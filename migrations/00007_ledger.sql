-- +goose Up
-- The ledger read model (issue 16): journal entries derived by the projector
-- from every payment's arrivals with domain.Journal, with their lines, and running
-- totals per hour that make a balance a sum of a few thousand rows. Entries
-- and lines are only ever inserted (a correction is a reversing entry);
-- projections.Reset empties them with the other read models.

-- payment_events keeps what the projector reads back (the fold's input and
-- the ledger's store order): the columns nothing read are dropped, and the
-- event's JSON is kept as the store wrote it, as text, not parsed into jsonb
-- again (the event store already holds it).
ALTER TABLE payment_events
    DROP COLUMN stream,
    DROP COLUMN occurred_at,
    DROP COLUMN position,
    ALTER COLUMN data TYPE text USING data::text;

-- The fee the provider stated (domain.PaymentState.Fee, FeeCurrency).
ALTER TABLE payments
    ADD COLUMN fee bigint NOT NULL DEFAULT 0,
    ADD COLUMN fee_currency text NOT NULL DEFAULT '';

-- One row per journal entry. id is uuid v5 of the posting arrival's event ID
-- and the entry's place among that arrival's entries, so a rebuild
-- reproduces it. (effective_at, fact_rank, fact_key, arrival_revision, seq)
-- is the fold order; arrival_revision is the stream revision of the arrival
-- that posted the entry.
CREATE TABLE ledger_entries (
    id                  uuid PRIMARY KEY,
    provider            text NOT NULL,
    provider_payment_id text NOT NULL,
    currency            text NOT NULL,
    effective_at        timestamptz NOT NULL,
    recorded_at         timestamptz NOT NULL,
    cause_event_id      uuid NOT NULL,
    reverses            uuid,
    fact_key            text NOT NULL,
    fact_rank           integer NOT NULL,
    arrival_revision    bigint NOT NULL,
    seq                 integer NOT NULL,
    -- The lines, in chart order: accounts[i] is debited debits[i] and
    -- credited credits[i], exactly one of them positive. Arrays, not a
    -- table of lines: a third of the rows and index entries per entry.
    accounts            text[] NOT NULL,
    debits              bigint[] NOT NULL,
    credits             bigint[] NOT NULL
);

CREATE INDEX ledger_entries_payment_idx ON ledger_entries (provider, provider_payment_id);
-- Entry pages and the partial hour of a balance, on either basis.
CREATE INDEX ledger_entries_effective_idx ON ledger_entries (effective_at, id);
CREATE INDEX ledger_entries_recorded_idx ON ledger_entries (recorded_at, id);

-- Running totals: the debits and credits of the lines of every
-- (basis, provider, currency, account) whose basis time falls in the UTC
-- hour (unit 'hour') or UTC day ('day') starting at bucket. Added to only by
-- the statement that inserts the lines, from the rows it actually inserted.
-- A balance sums the whole days before as_of, the whole hours of its day,
-- and the lines of its hour.
CREATE TABLE ledger_totals (
    basis    text NOT NULL CHECK (basis IN ('effective', 'recorded')),
    unit     text NOT NULL CHECK (unit IN ('hour', 'day')),
    provider text NOT NULL,
    currency text NOT NULL,
    account  text NOT NULL,
    bucket   timestamptz NOT NULL,
    debits   bigint NOT NULL,
    credits  bigint NOT NULL,
    PRIMARY KEY (basis, unit, bucket, provider, currency, account)
);

-- +goose Down
DROP TABLE ledger_totals;
DROP TABLE ledger_entries;
ALTER TABLE payments DROP COLUMN fee_currency, DROP COLUMN fee;
ALTER TABLE payment_events
    ALTER COLUMN data TYPE jsonb USING data::jsonb,
    ADD COLUMN stream text NOT NULL DEFAULT '',
    ADD COLUMN occurred_at timestamptz NOT NULL DEFAULT 'epoch',
    ADD COLUMN position text NOT NULL DEFAULT '';
