-- +goose Up
-- The first migration only marks the start of payledger's schema history;
-- the event store and read models follow in their own files.
SELECT 1;

-- +goose Down
SELECT 1;
