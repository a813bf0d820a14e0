-- +goose Up
-- Read models built by the projections package from the event store's
-- all-events feed. They are disposable: projections.Reset empties them and a
-- replay from the start rebuilds them identically.

-- One row per projection: the position in the global feed up to which its
-- read models are complete. Positions are eventstore.Position.String() values
-- ("commit/prepare"); SQL only compares them for equality (the runner's
-- compare-and-set), never orders them as text.
CREATE TABLE projection_checkpoints (
    name       text PRIMARY KEY,
    position   text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The history of every payment as the projector received it. The payments
-- row is re-folded from these rows with the domain fold, so a late or
-- out-of-order event lands exactly where the aggregate puts it.
CREATE TABLE payment_events (
    event_id            uuid PRIMARY KEY,
    provider            text NOT NULL,
    provider_payment_id text NOT NULL,
    stream              text NOT NULL,
    revision            bigint NOT NULL,
    type                text NOT NULL,
    data                jsonb NOT NULL,
    occurred_at         timestamptz NOT NULL,
    recorded_at         timestamptz NOT NULL,
    position            text NOT NULL
);

CREATE INDEX payment_events_payment_idx ON payment_events (provider, provider_payment_id);

-- The folded state of every payment (domain.PaymentState). id is assigned
-- once, when the payment is first projected, and never updated: it orders
-- lists newest first and is the keyset cursor, so pages stay stable while
-- rows are inserted and updated.
CREATE TABLE payments (
    id                  bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    provider            text NOT NULL,
    provider_payment_id text NOT NULL,
    status              text NOT NULL,
    currency            text NOT NULL,
    amount              bigint NOT NULL,
    amount_captured     bigint NOT NULL,
    amount_refunded     bigint NOT NULL,
    amount_disputed     bigint NOT NULL,
    created_at          timestamptz NOT NULL, -- provider time of the first fact
    updated_at          timestamptz NOT NULL, -- provider time of the latest fact
    event_count         integer NOT NULL,
    review_reasons      text[] NOT NULL DEFAULT '{}',
    projected_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, provider_payment_id)
);

-- List queries: ORDER BY id DESC with optional provider and status filters.
-- The UNIQUE constraint on id already serves the unfiltered list (a btree
-- scans backwards as well as forwards).
CREATE INDEX payments_provider_id_idx ON payments (provider, id);
CREATE INDEX payments_status_id_idx ON payments (status, id);
CREATE INDEX payments_provider_status_id_idx ON payments (provider, status, id);

-- +goose Down
DROP TABLE payments;
DROP TABLE payment_events;
DROP TABLE projection_checkpoints;
