-- +goose Up
-- awaiting_confirmation (issue 18): a payment whose outcome depends on the
-- payer or the network, no money moved yet. It is not final, so the
-- in-doubt indexes of 00008 take it in; projections/reconciliation.go's
-- inDoubt spells the same predicate. Rows keep their stored status until a
-- rebuild re-folds them (ARCHITECTURE.md, "awaiting_confirmation").
DROP INDEX payments_provider_in_doubt_idx;
DROP INDEX payments_in_doubt_idx;
CREATE INDEX payments_in_doubt_idx ON payments (last_recorded_at)
    WHERE status IN ('pending', 'awaiting_confirmation', 'authorized', 'disputed') OR notified_only;
CREATE INDEX payments_provider_in_doubt_idx ON payments (provider, last_recorded_at)
    WHERE status IN ('pending', 'awaiting_confirmation', 'authorized', 'disputed') OR notified_only;

-- +goose Down
DROP INDEX payments_provider_in_doubt_idx;
DROP INDEX payments_in_doubt_idx;
CREATE INDEX payments_in_doubt_idx ON payments (last_recorded_at)
    WHERE status IN ('pending', 'authorized', 'disputed') OR notified_only;
CREATE INDEX payments_provider_in_doubt_idx ON payments (provider, last_recorded_at)
    WHERE status IN ('pending', 'authorized', 'disputed') OR notified_only;
