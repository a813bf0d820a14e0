-- +goose Up
-- Tamper-evident streams (issue 19): the seal of every stored event, written
-- by the chain sealer (projections.Sealer) from the event store's global
-- feed, for either store. hash is eventstore.ChainHash of the event chained
-- on the seal of the stream's previous event (eventstore.ChainSeed for the
-- first); ARCHITECTURE.md ("Tamper-evident streams") defines it. Seals are
-- only inserted, never updated: a re-delivered event whose hash differs is
-- logged as a finding and the stored seal kept.
CREATE TABLE event_seals (
    stream    text        NOT NULL,
    revision  bigint      NOT NULL CHECK (revision >= 0),
    event_id  uuid        NOT NULL,
    hash      bytea       NOT NULL CHECK (length(hash) = 32),
    -- backfill: the event was recorded before this migration ran
    -- (event_seal_epoch), so its seal was written after the fact by the
    -- one-time catch-up, not within seconds of its append.
    backfill  boolean     NOT NULL DEFAULT false,
    sealed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (stream, revision)
);

-- The moment the chain began (this migration): events recorded before it
-- are sealed as backfill. One row, written once.
CREATE TABLE event_seal_epoch (
    one        boolean     PRIMARY KEY DEFAULT true CHECK (one),
    started_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO event_seal_epoch DEFAULT VALUES;

-- +goose Down
DROP TABLE event_seal_epoch;
DROP TABLE event_seals;
