-- +goose Up
-- Rebuilds that prove themselves (issue 19). A projection's checkpoint row
-- now also says whether it is being rebuilt and whether a later version
-- replaced it:
--   rebuilding_since: set by `ledger projections rebuild NAME` when it
--     empties the read models and moves the checkpoint to the start; the
--     runner clears it when it has caught up with the store. While it is
--     set the read API answers with Ledger-Projection-Rebuilding: true.
--   retired_at: set when another version of the same projection (same
--     name up to its _vN suffix) took over the read models. A runner of a
--     retired name refuses to project, so a process still running the old
--     code cannot write into the new version's tables.
ALTER TABLE projection_checkpoints
    ADD COLUMN rebuilding_since timestamptz,
    ADD COLUMN retired_at       timestamptz;

-- +goose Down
ALTER TABLE projection_checkpoints DROP COLUMN retired_at, DROP COLUMN rebuilding_since;
