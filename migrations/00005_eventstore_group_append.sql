-- +goose Up

-- es_append_group appends many single events, each to its own stream or
-- several to one stream, in one transaction: the Postgres store's group
-- commit. Under load, webhook appends that arrive together share one
-- round trip, one transaction and one WAL flush instead of paying for one
-- each; each caller is still answered only after the commit.
--
-- Every element is its own append with "any revision": elements do not
-- depend on each other. Per element (ord is its 1-based position):
--   revision, commit_tx, prepare_seq  set: appended now;
--   stored_stream, stored_revision    set: the event ID was stored already
--                                     (a redelivery when stored_stream is
--                                     the element's stream; otherwise the
--                                     caller's error), nothing written.
-- The caller passes each event ID at most once.
--
-- All or nothing, so that no stream ever gets a gap: when an element that
-- was new could not be inserted (a writer that skipped the stream locks
-- took its revision, or a copy of its ID committed meanwhile) the whole
-- group raises ES004, and when a stream's head belongs to a transaction
-- younger than this one (which would put the new event before its
-- predecessor in the feed) it raises ES005. Both roll everything back; the
-- caller then appends the elements one by one.
--
-- Stream locks are taken in hash order, so two groups sharing streams, and
-- a group and a single append, wait for each other but never deadlock.
-- +goose StatementBegin
CREATE FUNCTION es_append_group(
    p_streams text[],
    p_ids     uuid[],
    p_types   text[],
    p_data    jsonb[],
    p_meta    jsonb[]
)
RETURNS TABLE (
    ord             bigint,
    revision        bigint,
    commit_tx       bigint,
    prepare_seq     bigint,
    stored_stream   text,
    stored_revision bigint
)
LANGUAGE plpgsql
-- Plans are cached per connection; even one made while es_events was tiny
-- must never scan it (see the lookups below).
SET enable_seqscan = off
AS $$
DECLARE
    n        int := coalesce(cardinality(p_ids), 0);
    my_tx    bigint;
    wanted   bigint;
    head_tx  bigint;
    r_ord    bigint[];
    r_rev    bigint[];
    r_tx     bigint[];
    r_seq    bigint[];
    r_stream text[];
    r_srev   bigint[];
BEGIN
    IF n = 0 OR n IS DISTINCT FROM cardinality(p_streams)
       OR n IS DISTINCT FROM cardinality(p_types)
       OR n IS DISTINCT FROM cardinality(p_data)
       OR n IS DISTINCT FROM cardinality(p_meta) THEN
        RAISE EXCEPTION 'es_append_group: % ids, % streams, % types, % data, % metadata',
            n, cardinality(p_streams), cardinality(p_types), cardinality(p_data), cardinality(p_meta)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- The same lock es_lock_stream takes, one per distinct hash, in hash
    -- order: a subquery with DISTINCT is never flattened, so its sorted
    -- rows reach the outer call in that order.
    PERFORM pg_advisory_xact_lock(1702060400, x.h)
       FROM (SELECT DISTINCT hashtext(s) AS h FROM unnest(p_streams) AS s ORDER BY 1) AS x;
    -- After the locks and before reading the heads, as in es_append.
    my_tx := pg_current_xact_id()::text::bigint;

    -- READ COMMITTED: this statement's snapshot is taken after the locks,
    -- so it sees every head a previous lock holder committed.
    --
    -- Every lookup is a LATERAL … LIMIT 1 (never flattened into a join), so
    -- it stays an index probe per element: as a plain join, the plan cached
    -- while es_events was small (a new deployment) hash-joins a sequential
    -- scan, and keeps doing so as the table grows.
    WITH input AS (
        SELECT t.stream, t.id, t.typ, t.dat, t.meta, t.ord, st.stream AS s_stream, st.revision AS s_rev
          FROM unnest(p_streams, p_ids, p_types, p_data, p_meta)
               WITH ORDINALITY AS t(stream, id, typ, dat, meta, ord)
          LEFT JOIN LATERAL (
                SELECT e.stream, e.revision
                  FROM es_events e
                 WHERE e.event_id = t.id
                 LIMIT 1) st ON true
    ), fresh AS (
        SELECT i.stream, i.id, i.typ, i.dat, i.meta, i.ord
          FROM input i
         WHERE i.s_stream IS NULL
    ), heads AS (
        SELECT d.stream, coalesce(hd.revision, -1) AS rev, coalesce(hd.tx_id, 0) AS tx
          FROM (SELECT DISTINCT f.stream FROM fresh f) d
          LEFT JOIN LATERAL (
                SELECT e.revision, e.tx_id
                  FROM es_events e
                 WHERE e.stream = d.stream
                 ORDER BY e.revision DESC
                 LIMIT 1) hd ON true
    ), numbered AS (
        SELECT f.*, hs.rev + row_number() OVER (PARTITION BY f.stream ORDER BY f.ord) AS rev
          FROM fresh f
          JOIN heads hs ON hs.stream = f.stream
    ), ins AS (
        -- No conflict target: every unique constraint arbitrates, and a row
        -- clashing with an uncommitted one waits for that transaction. Rows
        -- go in revision order within a stream, so seq (the feed's order
        -- within this transaction) agrees with the revisions.
        INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
        SELECT nb.stream, nb.rev, nb.id, nb.typ, nb.dat, nb.meta
          FROM numbered nb
         ORDER BY nb.stream, nb.rev
        ON CONFLICT DO NOTHING
        RETURNING es_events.event_id, es_events.revision, es_events.tx_id, es_events.seq
    )
    SELECT (SELECT count(*) FROM numbered),
           (SELECT coalesce(max(hs.tx), 0) FROM heads hs),
           array_agg(i.ord ORDER BY i.ord),
           array_agg(ins.revision ORDER BY i.ord),
           array_agg(ins.tx_id ORDER BY i.ord),
           array_agg(ins.seq ORDER BY i.ord),
           array_agg(i.s_stream ORDER BY i.ord),
           array_agg(i.s_rev ORDER BY i.ord)
      INTO wanted, head_tx, r_ord, r_rev, r_tx, r_seq, r_stream, r_srev
      FROM input i
      LEFT JOIN ins ON ins.event_id = i.id;

    IF head_tx > my_tx THEN
        RAISE EXCEPTION 'es_append_group: a stream head belongs to a younger transaction'
            USING ERRCODE = 'ES005';
    END IF;
    IF (SELECT count(x) FROM unnest(r_rev) AS x) <> wanted THEN
        RAISE EXCEPTION 'es_append_group: % of % new events could not be inserted',
            wanted - (SELECT count(x) FROM unnest(r_rev) AS x), wanted
            USING ERRCODE = 'ES004';
    END IF;

    RETURN QUERY
        SELECT u.o, u.r, u.t, u.q, u.s, u.sr
          FROM unnest(r_ord, r_rev, r_tx, r_seq, r_stream, r_srev) AS u(o, r, t, q, s, sr);
END
$$;
-- +goose StatementEnd

-- es_append's duplicate lookups (event_id = ANY (…)) get the same guard:
-- a plan cached on a small table must not turn into a scan of a big one.
ALTER FUNCTION es_append(text, bigint, uuid[], text[], jsonb[], jsonb[]) SET enable_seqscan = off;

-- +goose Down
ALTER FUNCTION es_append(text, bigint, uuid[], text[], jsonb[], jsonb[]) RESET enable_seqscan;
DROP FUNCTION es_append_group(text[], uuid[], text[], jsonb[], jsonb[]);
