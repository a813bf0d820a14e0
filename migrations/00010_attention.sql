-- +goose Up
-- What needs a human (issue 18): reviews, parked payments and dead letters.

-- Reviews, projected from the payment.review_opened.v1 and
-- payment.review_resolved.v1 facts of the payment streams (a rebuild
-- reproduces them). seq orders the queue (oldest first) and is its keyset
-- cursor.
CREATE TABLE reviews (
    seq                 bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id                  text PRIMARY KEY, -- domain.ReviewID
    provider            text NOT NULL,
    provider_payment_id text NOT NULL,
    reason              text NOT NULL,
    cause               text NOT NULL,
    status_at_open      text NOT NULL,
    deadline            timestamptz,
    opened_at           timestamptz NOT NULL,
    resolved_at         timestamptz,
    resolution          text NOT NULL DEFAULT '',
    note                text NOT NULL DEFAULT '',
    resolved_by         text NOT NULL DEFAULT ''
);
CREATE INDEX reviews_open_idx ON reviews (seq) WHERE resolved_at IS NULL;
CREATE INDEX reviews_payment_idx ON reviews (provider, provider_payment_id);

-- requires_review: some review of the payment is open.
-- unreviewed_anomalies: the fold found an anomaly no review was opened for
-- yet (domain.AnomalyReviews is not empty); the review sweep opens them.
ALTER TABLE payments
    ADD COLUMN requires_review boolean NOT NULL DEFAULT false,
    ADD COLUMN unreviewed_anomalies boolean NOT NULL DEFAULT false;
CREATE INDEX payments_requires_review_idx ON payments (id) WHERE requires_review;
CREATE INDEX payments_unreviewed_anomalies_idx ON payments (id) WHERE unreviewed_anomalies;
-- Payments projected before this migration with anomalies get their
-- reviews from the first sweep.
UPDATE payments SET unreviewed_anomalies = true WHERE cardinality(review_reasons) > 0;

-- The dead-letter queue: one row per thing that failed for good, whatever
-- its kind (job, projection, collision). Operational state, not a read
-- model: a rebuild does not touch it. Rows are never deleted; a retry sets
-- state 'retried' (and appends a deadletter.retried.v1 fact), a new failure
-- of the same key sets it 'open' again. dedupe_key makes a repeated failure
-- (a redelivered collision, a job discarded again) update its row.
CREATE TABLE dead_letters (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dedupe_key          text NOT NULL UNIQUE,
    kind                text NOT NULL CHECK (kind IN ('job', 'projection', 'collision')),
    cause               text NOT NULL,
    provider            text NOT NULL DEFAULT '',
    provider_payment_id text NOT NULL DEFAULT '',
    streams             text[] NOT NULL DEFAULT '{}',
    attempts            integer NOT NULL,
    first_failed_at     timestamptz NOT NULL,
    last_failed_at      timestamptz NOT NULL,
    last_error          text NOT NULL,
    payload             jsonb NOT NULL DEFAULT '{}',
    state               text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'retried')),
    retries             integer NOT NULL DEFAULT 0,
    retried_at          timestamptz,
    retried_by          text NOT NULL DEFAULT ''
);
CREATE INDEX dead_letters_open_idx ON dead_letters (kind, cause, id) WHERE state = 'open';
CREATE INDEX dead_letters_kind_idx ON dead_letters (kind, id);

-- Payments the projector parked: an event of the stream could not be
-- decoded or applied, so the stream's events wait here (skipped by the live
-- projection) while every other payment goes on. retry_requested asks the
-- projector to re-project the stream from the store.
CREATE TABLE parked_streams (
    stream              text PRIMARY KEY,
    provider            text NOT NULL DEFAULT '',
    provider_payment_id text NOT NULL DEFAULT '',
    dead_letter_id      bigint NOT NULL REFERENCES dead_letters (id),
    event_id            uuid NOT NULL,   -- the event that could not be projected
    position            text NOT NULL,   -- its place in the feed
    parked_at           timestamptz NOT NULL,
    retry_requested     boolean NOT NULL DEFAULT false
);
CREATE INDEX parked_streams_payment_idx ON parked_streams (provider, provider_payment_id);

-- +goose Down
DROP TABLE parked_streams;
DROP TABLE dead_letters;
DROP INDEX payments_unreviewed_anomalies_idx;
DROP INDEX payments_requires_review_idx;
ALTER TABLE payments DROP COLUMN unreviewed_anomalies, DROP COLUMN requires_review;
DROP TABLE reviews;
