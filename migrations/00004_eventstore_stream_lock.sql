-- +goose Up

-- Appenders of one stream take turns. Without this, concurrent appends to
-- one stream (a provider sends a payment's webhooks within milliseconds)
-- all read the same head, all but one wait on the winner's uncommitted
-- revision, find it taken, and go round again, often in a new transaction
-- (a second round trip) when the winner's transaction ID is younger. With a
-- per-stream transaction-level advisory lock taken before the head is read,
-- the second appender waits once, then reads the new head and inserts.
--
-- The lock is advisory: it only orders appenders that take it (es_append
-- and the Postgres store's single-event statement). Uniqueness still lives
-- in the constraints, and es_append still loops, classifies and checks the
-- head's transaction ID, so a writer that skips the lock can slow an append
-- down but never break it.
--
-- Streams hash to 32 bits under a class of their own (1702060400, "esap"),
-- apart from the single-bigint keys goose and River lock with; two streams
-- sharing a hash only take turns, which is harmless.
-- +goose StatementBegin
CREATE FUNCTION es_lock_stream(p_stream text) RETURNS void
LANGUAGE sql
AS $$
    SELECT pg_advisory_xact_lock(1702060400, hashtext(p_stream))
$$;
-- +goose StatementEnd

-- es_append as in 00002, except that it takes the stream's lock, and only
-- then its transaction ID, before reading the head. Outcomes and errors are
-- unchanged.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION es_append(
    p_stream        text,
    p_expected      bigint,
    p_ids           uuid[],
    p_types         text[],
    p_data          jsonb[],
    p_meta          jsonb[],
    OUT outcome          text,
    OUT last_revision    bigint,
    OUT commit_tx        bigint,
    OUT prepare_seq      bigint
)
LANGUAGE plpgsql
AS $$
DECLARE
    n          int    := coalesce(cardinality(p_ids), 0);
    my_tx      bigint;
    attempt    int    := 0;
    head       bigint;
    head_tx    bigint;
    inserted   uuid[];
    dup_stream text;
    dup_rev    bigint;
BEGIN
    IF n = 0 OR n IS DISTINCT FROM cardinality(p_types)
       OR n IS DISTINCT FROM cardinality(p_data)
       OR n IS DISTINCT FROM cardinality(p_meta) THEN
        RAISE EXCEPTION 'es_append: % ids, % types, % data, % metadata',
            n, cardinality(p_types), cardinality(p_data), cardinality(p_meta)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- Appenders of one stream take turns (the lock is held to commit), so
    -- the head read below sees the previous appender's commit and the
    -- insert does not collide with it. The transaction ID is taken after
    -- the lock and before reading the head: that is what lets the head
    -- check below keep the feed in revision order.
    PERFORM es_lock_stream(p_stream);
    my_tx := pg_current_xact_id()::text::bigint;

    LOOP
        attempt := attempt + 1;
        -- READ COMMITTED: every statement sees what committed before it, so
        -- each pass reads the current head.
        SELECT e.revision, e.tx_id INTO head, head_tx
          FROM es_events e
         WHERE e.stream = p_stream
         ORDER BY e.revision DESC
         LIMIT 1;
        IF NOT FOUND THEN
            head := -1;
            head_tx := 0;
        END IF;
        EXIT WHEN p_expected <> -2 AND p_expected <> head;
        IF head_tx > my_tx THEN
            outcome := 'retry';
            RETURN;
        END IF;

        -- No conflict target: every unique constraint arbitrates, and a row
        -- clashing with an uncommitted one waits for that transaction.
        WITH ins AS (
            INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
            SELECT p_stream, head + b.ord, b.id, b.typ, b.dat, b.meta
              FROM unnest(p_ids, p_types, p_data, p_meta)
                   WITH ORDINALITY AS b(id, typ, dat, meta, ord)
             ORDER BY b.ord
            ON CONFLICT DO NOTHING
            RETURNING es_events.event_id, es_events.revision, es_events.seq
        )
        SELECT array_agg(ins.event_id), max(ins.revision), max(ins.seq)
          INTO inserted, last_revision, prepare_seq
          FROM ins;

        IF cardinality(inserted) = n THEN
            outcome := 'appended';
            commit_tx := my_tx;
            RETURN;
        END IF;
        -- Partly inserted, out of attempts, or an event already stored:
        -- classify below. Otherwise another append took head+1: go again.
        EXIT WHEN inserted IS NOT NULL OR attempt >= 10
               OR EXISTS (SELECT 1 FROM es_events e WHERE e.event_id = ANY (p_ids));
    END LOOP;

    -- Which event of the batch, if any, is stored already (not by us)?
    -- A copy in another stream sorts first: it is an error, not a repeat.
    SELECT e.stream, e.revision INTO dup_stream, dup_rev
      FROM es_events e
     WHERE e.event_id = ANY (p_ids)
       AND e.event_id <> ALL (coalesce(inserted, '{}'))
     ORDER BY e.stream <> p_stream DESC, e.revision DESC
     LIMIT 1;
    IF FOUND AND dup_stream <> p_stream THEN
        RAISE EXCEPTION 'es_append: an event of the batch is stored in stream %', dup_stream
            USING ERRCODE = 'ES003';
    END IF;
    IF inserted IS NOT NULL THEN
        IF dup_rev IS NOT NULL THEN
            RAISE EXCEPTION 'es_append: part of the batch is stored already'
                USING ERRCODE = 'ES001', DETAIL = dup_rev::text;
        END IF;
        RAISE EXCEPTION 'es_append: a concurrent append took a revision of the batch'
            USING ERRCODE = 'ES002';
    END IF;
    IF dup_rev IS NOT NULL THEN
        outcome := 'duplicate';
        last_revision := dup_rev;
        RETURN;
    END IF;
    outcome := 'conflict';
    last_revision := head;
END
$$;
-- +goose StatementEnd

-- +goose Down

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION es_append(
    p_stream        text,
    p_expected      bigint,
    p_ids           uuid[],
    p_types         text[],
    p_data          jsonb[],
    p_meta          jsonb[],
    OUT outcome          text,
    OUT last_revision    bigint,
    OUT commit_tx        bigint,
    OUT prepare_seq      bigint
)
LANGUAGE plpgsql
AS $$
DECLARE
    n          int    := coalesce(cardinality(p_ids), 0);
    -- Taking the transaction ID before reading the head is what lets the
    -- head check below keep the feed in revision order.
    my_tx      bigint := pg_current_xact_id()::text::bigint;
    attempt    int    := 0;
    head       bigint;
    head_tx    bigint;
    inserted   uuid[];
    dup_stream text;
    dup_rev    bigint;
BEGIN
    IF n = 0 OR n IS DISTINCT FROM cardinality(p_types)
       OR n IS DISTINCT FROM cardinality(p_data)
       OR n IS DISTINCT FROM cardinality(p_meta) THEN
        RAISE EXCEPTION 'es_append: % ids, % types, % data, % metadata',
            n, cardinality(p_types), cardinality(p_data), cardinality(p_meta)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    LOOP
        attempt := attempt + 1;
        -- READ COMMITTED: every statement sees what committed before it, so
        -- each pass reads the current head.
        SELECT e.revision, e.tx_id INTO head, head_tx
          FROM es_events e
         WHERE e.stream = p_stream
         ORDER BY e.revision DESC
         LIMIT 1;
        IF NOT FOUND THEN
            head := -1;
            head_tx := 0;
        END IF;
        EXIT WHEN p_expected <> -2 AND p_expected <> head;
        IF head_tx > my_tx THEN
            outcome := 'retry';
            RETURN;
        END IF;

        -- No conflict target: every unique constraint arbitrates, and a row
        -- clashing with an uncommitted one waits for that transaction.
        WITH ins AS (
            INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
            SELECT p_stream, head + b.ord, b.id, b.typ, b.dat, b.meta
              FROM unnest(p_ids, p_types, p_data, p_meta)
                   WITH ORDINALITY AS b(id, typ, dat, meta, ord)
             ORDER BY b.ord
            ON CONFLICT DO NOTHING
            RETURNING es_events.event_id, es_events.revision, es_events.seq
        )
        SELECT array_agg(ins.event_id), max(ins.revision), max(ins.seq)
          INTO inserted, last_revision, prepare_seq
          FROM ins;

        IF cardinality(inserted) = n THEN
            outcome := 'appended';
            commit_tx := my_tx;
            RETURN;
        END IF;
        -- Partly inserted, out of attempts, or an event already stored:
        -- classify below. Otherwise another append took head+1: go again.
        EXIT WHEN inserted IS NOT NULL OR attempt >= 10
               OR EXISTS (SELECT 1 FROM es_events e WHERE e.event_id = ANY (p_ids));
    END LOOP;

    -- Which event of the batch, if any, is stored already (not by us)?
    -- A copy in another stream sorts first: it is an error, not a repeat.
    SELECT e.stream, e.revision INTO dup_stream, dup_rev
      FROM es_events e
     WHERE e.event_id = ANY (p_ids)
       AND e.event_id <> ALL (coalesce(inserted, '{}'))
     ORDER BY e.stream <> p_stream DESC, e.revision DESC
     LIMIT 1;
    IF FOUND AND dup_stream <> p_stream THEN
        RAISE EXCEPTION 'es_append: an event of the batch is stored in stream %', dup_stream
            USING ERRCODE = 'ES003';
    END IF;
    IF inserted IS NOT NULL THEN
        IF dup_rev IS NOT NULL THEN
            RAISE EXCEPTION 'es_append: part of the batch is stored already'
                USING ERRCODE = 'ES001', DETAIL = dup_rev::text;
        END IF;
        RAISE EXCEPTION 'es_append: a concurrent append took a revision of the batch'
            USING ERRCODE = 'ES002';
    END IF;
    IF dup_rev IS NOT NULL THEN
        outcome := 'duplicate';
        last_revision := dup_rev;
        RETURN;
    END IF;
    outcome := 'conflict';
    last_revision := head;
END
$$;
-- +goose StatementEnd

DROP FUNCTION es_lock_stream(text);
