-- +goose Up

-- es_append_group's statements take their parameters from arrays of unknown
-- length, so Postgres's plan cache never finds the generic plan cheaper than
-- a custom one and replans the big statement on every call: measured with
-- pgbench on a three-event group without the commit flush, 0.68-0.94 ms a
-- call, of which the planning was more than half (0.38 ms with generic
-- plans). The generic plan is the one the function is written for: every
-- lookup is a LATERAL … LIMIT 1 index probe whatever the array lengths, and
-- enable_seqscan is off inside it (00005), so one plan per connection serves
-- every call. A merged call is what the appends queued behind it wait for,
-- so its cost is their latency too.
ALTER FUNCTION es_append_group(text[], uuid[], text[], jsonb[], jsonb[]) SET plan_cache_mode = force_generic_plan;

-- +goose Down
ALTER FUNCTION es_append_group(text[], uuid[], text[], jsonb[], jsonb[]) RESET plan_cache_mode;
