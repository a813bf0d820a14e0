-- +goose Up

-- es_events is the Postgres event store: every stream's events in one table.
-- Uniqueness lives in the two named constraints, never in a query: the same
-- event ID is stored once (the webhook dedupe net), and a stream revision is
-- taken once (optimistic concurrency).
CREATE TABLE es_events (
    -- seq orders the rows of one transaction; its values have gaps (a row
    -- skipped by ON CONFLICT still consumes one) and say nothing across
    -- transactions.
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    -- tx_id is the inserting transaction's 64-bit ID. The global feed orders
    -- by (tx_id, seq) and reads only below the oldest running transaction
    -- (pg_snapshot_xmin), so a slow transaction's rows can never appear
    -- below a position a subscriber already passed.
    tx_id       bigint      NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
    stream      text        NOT NULL,
    revision    bigint      NOT NULL,
    event_id    uuid        NOT NULL,
    type        text        NOT NULL,
    data        jsonb       NOT NULL,
    metadata    jsonb,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    -- The primary key is the global feed's index: the subscription's keyset
    -- scan WHERE (tx_id, seq) > (…) ORDER BY tx_id, seq walks it.
    CONSTRAINT es_events_pkey PRIMARY KEY (tx_id, seq),
    CONSTRAINT es_events_event_id_key UNIQUE (event_id),
    -- Also the index es_append reads a stream's head from (backwards).
    CONSTRAINT es_events_stream_revision_key UNIQUE (stream, revision),
    CONSTRAINT es_events_revision_check CHECK (revision >= 0)
);

-- es_append appends a batch to one stream in one statement, so one round
-- trip. p_expected is -2 for any revision, -1 for "no stream", n >= 0 for
-- "the stream's last revision is n". Outcomes:
--   appended  last_revision, commit_tx, prepare_seq are the last event's;
--   duplicate an event of the batch is stored already (this wins over the
--             expected revision); nothing was written; last_revision is the
--             stored copy's highest revision;
--   conflict  the expected revision does not hold (last_revision is the
--             stream's head), or, for any revision, appenders kept taking
--             the next revision first;
--   retry     nothing was written; call again in a new transaction. The
--             stream's head belongs to a transaction younger than this one,
--             so appending here would put this event before its
--             predecessor in the global feed (ordered by transaction ID).
-- A batch only partly inserted raises, so the statement rolls back and no
-- partial batch is ever stored: ES001 when an event of it was stored
-- already (DETAIL carries the stored copy's revision), ES002 when a
-- concurrent append took one of its revisions. ES003 means an event ID is
-- stored in another stream.
-- +goose StatementBegin
CREATE FUNCTION es_append(
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

-- +goose Down
DROP FUNCTION es_append(text, bigint, uuid[], text[], jsonb[], jsonb[]);
DROP TABLE es_events;
