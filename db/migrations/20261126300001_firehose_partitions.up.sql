-- Firehose messages partitioned by month of created_at (UTC), so that an old
-- month is removed by dropping its partition (feedapi retention run) and no
-- index grows for ever.
--
-- Not one transaction: on a database that already holds messages the rows
-- are copied into the partitioned table in batches, each committed, while
-- the service keeps reading and writing the old table (a trigger mirrors its
-- writes); only the final swap takes the table's lock, for a moment. Every
-- step can run again after an interruption.
--
-- The partitioned table is built from whatever columns, checks, indexes,
-- triggers and extended statistics firehose_messages has when this runs
-- (read from the catalog), so that columns and triggers added by earlier
-- migrations survive the move. A unique key of a partitioned table must hold
-- the partition key: the primary key becomes (id, created_at), unique
-- indexes get created_at appended, and firehose_message_ids (one row per
-- id, kept by triggers) keeps ids unique across partitions.

-- The name of the partition of the month that holds at (UTC).
CREATE OR REPLACE FUNCTION firehose_partition_name(at timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 'firehose_messages_' || to_char(date_trunc('month', at AT TIME ZONE 'UTC'), 'YYYY"m"MM');

--bun:split

-- firehose_partition_create_in creates the partition of parent for the month
-- that holds at, unless it exists, and reports whether it did. The
-- partition is built apart and attached (which locks parent only against
-- other schema changes, and the default partition for its check); rows of
-- that month that wait in the default partition move into it, straight
-- from one partition to the other: they stay the same messages, so no
-- trigger of parent fires.
CREATE OR REPLACE FUNCTION firehose_partition_create_in(parent text, at timestamptz) RETURNS boolean
    LANGUAGE plpgsql AS $$
DECLARE
    lo timestamptz := date_trunc('month', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    hi timestamptz := (date_trunc('month', at AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
    part text := firehose_partition_name(at);
BEGIN
    -- Two creators of one month (an import, the service) take turns.
    PERFORM pg_advisory_xact_lock(hashtext(part));
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED)', part, parent);
    -- The partition's own check, so that attaching it needs no scan.
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (created_at >= %L AND created_at < %L)',
        part, part || '_range', lo, hi);
    IF to_regclass('firehose_messages_default') IS NOT NULL THEN
        EXECUTE format('WITH moved AS (DELETE FROM firehose_messages_default WHERE created_at >= %L AND created_at < %L RETURNING *) '
            || 'INSERT INTO %I SELECT * FROM moved', lo, hi, part);
    END IF;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part, lo, hi);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', part, part || '_range');
    RETURN true;
END
$$;

--bun:split

-- firehose_partition_create creates the partition of firehose_messages for
-- the month that holds at (see firehose_partition_create_in); a no-op while
-- the table is not partitioned.
CREATE OR REPLACE FUNCTION firehose_partition_create(at timestamptz) RETURNS boolean
    LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'firehose_messages'::regclass) <> 'p' THEN
        RETURN false;
    END IF;
    RETURN firehose_partition_create_in('firehose_messages', at);
END
$$;

--bun:split

-- firehose_partitions_ensure creates the partitions of the months from the
-- one holding lo to the one holding hi, and of every month whose rows wait
-- in the default partition; it returns how many it created.
CREATE OR REPLACE FUNCTION firehose_partitions_ensure(lo timestamptz, hi timestamptz) RETURNS integer
    LANGUAGE plpgsql AS $$
DECLARE
    m timestamptz;
    n integer := 0;
BEGIN
    m := date_trunc('month', lo AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    WHILE m <= hi LOOP
        IF firehose_partition_create(m) THEN
            n := n + 1;
        END IF;
        m := (m AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC';
    END LOOP;
    IF to_regclass('firehose_messages_default') IS NOT NULL THEN
        FOR m IN SELECT DISTINCT date_trunc('month', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                 FROM firehose_messages_default LOOP
            IF firehose_partition_create(m) THEN
                n := n + 1;
            END IF;
        END LOOP;
    END IF;
    RETURN n;
END
$$;

--bun:split

-- The months that hold rows of table, each read from the created_at index
-- (one probe per month, not a scan).
CREATE OR REPLACE FUNCTION feedapi_months_of(tbl regclass) RETURNS SETOF timestamptz
    LANGUAGE plpgsql AS $$
DECLARE
    m timestamptz;
BEGIN
    EXECUTE format('SELECT min(created_at) FROM %s', tbl) INTO m;
    WHILE m IS NOT NULL LOOP
        m := date_trunc('month', m AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
        RETURN NEXT m;
        EXECUTE format('SELECT min(created_at) FROM %s WHERE created_at >= $1', tbl)
            INTO m USING (m AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC';
    END LOOP;
END
$$;

--bun:split

CREATE TABLE IF NOT EXISTS firehose_message_ids (
    id         bigint      PRIMARY KEY,
    created_at timestamptz NOT NULL
);

--bun:split

CREATE OR REPLACE FUNCTION firehose_message_ids_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO firehose_message_ids (id, created_at) SELECT id, created_at FROM new_rows;
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION firehose_message_ids_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM firehose_message_ids i USING old_rows o
    WHERE i.id = o.id AND NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.id = o.id);
    INSERT INTO firehose_message_ids (id, created_at) SELECT id, created_at FROM new_rows
    ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at
    WHERE firehose_message_ids.created_at IS DISTINCT FROM EXCLUDED.created_at;
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION firehose_message_ids_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM firehose_message_ids i USING old_rows o WHERE i.id = o.id;
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION firehose_message_ids_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE firehose_message_ids;
    RETURN NULL;
END
$$;

--bun:split

-- Mirrors a write of the old table into the partitioned one while rows move.
CREATE OR REPLACE FUNCTION firehose_move_mirror() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM firehose_messages_partitioned WHERE id = OLD.id AND created_at = OLD.created_at;
        DELETE FROM firehose_message_ids WHERE id = OLD.id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO firehose_messages_partitioned SELECT NEW.* ON CONFLICT DO NOTHING;
        INSERT INTO firehose_message_ids (id, created_at) VALUES (NEW.id, NEW.created_at)
        ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at;
    END IF;
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION firehose_move_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE firehose_messages_partitioned, firehose_message_ids;
    RETURN NULL;
END
$$;

--bun:split

-- A row trigger of a partitioned table runs on the partition, whose name
-- TG_TABLE_NAME then is: the table whose rows a transaction counts is named
-- by the trigger's argument instead, so that the rows one transaction
-- inserts into several partitions still get distinct positions.
CREATE OR REPLACE FUNCTION feedapi_stream_pos() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tbl text := coalesce(TG_ARGV[0], TG_TABLE_NAME);
    setting text := 'feedapi.stream_n_' || tbl;
    n bigint := coalesce(nullif(current_setting(setting, true), ''), '0')::bigint + 1;
BEGIN
    IF n >= 16777216 THEN
        RAISE EXCEPTION 'more than 16777215 rows inserted into % in one transaction', tbl
            USING HINT = 'import in smaller transactions';
    END IF;
    PERFORM set_config(setting, n::text, true);
    NEW.stream_pos := 9007199254740992 + (pg_current_xact_id()::text::bigint << 24) + n;
    RETURN NEW;
END $$;

--bun:split

-- Step 1: the partitioned table and its indexes.
DO $$
DECLARE
    r record;
    def text;
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'firehose_messages'::regclass) = 'p' THEN
        RETURN;
    END IF;
    SET LOCAL lock_timeout = '10s';
    IF to_regclass('firehose_messages_partitioned') IS NULL THEN
        CREATE TABLE firehose_messages_partitioned
            (LIKE firehose_messages INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING COMMENTS)
            PARTITION BY RANGE (created_at);
        ALTER TABLE firehose_messages_partitioned ADD CONSTRAINT firehose_messages_partitioned_pkey PRIMARY KEY (id, created_at);
        -- Every other index, as the old table has it, on the new one (named
        -- with a suffix until the swap); a unique one with created_at added.
        FOR r IN SELECT i.indexrelid, c.relname, i.indisunique
                 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                 WHERE i.indrelid = 'firehose_messages'::regclass AND NOT i.indisprimary LOOP
            def := pg_get_indexdef(r.indexrelid);
            def := replace(def, ' INDEX ' || quote_ident(r.relname) || ' ON ', ' INDEX ' || quote_ident(r.relname || '_p') || ' ON ');
            def := regexp_replace(def, ' ON (\S+\.)?firehose_messages ', ' ON firehose_messages_partitioned ');
            IF r.indisunique THEN
                def := regexp_replace(def, '\)((\s+WHERE.*)?)$', ', created_at)\1');
            END IF;
            EXECUTE def;
        END LOOP;
        CREATE TABLE firehose_messages_default PARTITION OF firehose_messages_partitioned DEFAULT;
    END IF;
END
$$;

--bun:split

-- Step 2: one partition per month that holds rows, and the months around
-- now (the service creates the next ones as time goes by).
DO $$
DECLARE
    m timestamptz;
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'firehose_messages'::regclass) = 'p' THEN
        RETURN;
    END IF;
    FOR m IN SELECT * FROM feedapi_months_of('firehose_messages')
             UNION SELECT now() + d * interval '1 month' FROM generate_series(-1, 2) d LOOP
        PERFORM firehose_partition_create_in('firehose_messages_partitioned', m);
    END LOOP;
END
$$;

--bun:split

-- Writes to the old table from now on reach the new one as well. Only now,
-- once the months' partitions exist: a row written into the default
-- partition while the partition of its month is attached fails.
DO $$
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'firehose_messages'::regclass) = 'p' THEN
        RETURN;
    END IF;
    SET LOCAL lock_timeout = '10s';
    CREATE OR REPLACE TRIGGER firehose_move_mirror AFTER INSERT OR UPDATE OR DELETE ON firehose_messages
        FOR EACH ROW EXECUTE FUNCTION firehose_move_mirror();
    CREATE OR REPLACE TRIGGER firehose_move_truncate AFTER TRUNCATE ON firehose_messages
        FOR EACH STATEMENT EXECUTE FUNCTION firehose_move_truncate();
END
$$;

--bun:split

-- Step 3: the rows, in batches of the primary key's order, each committed.
-- FOR SHARE makes a concurrent update or delete of a row of the batch wait
-- for the batch's commit, so that its mirror finds the copied row.
DO $$
DECLARE
    last bigint := 0;
    top bigint;
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'firehose_messages'::regclass) = 'p' THEN
        RETURN;
    END IF;
    SELECT max(id) INTO top FROM firehose_messages;
    WHILE last < top LOOP
        WITH b AS (SELECT * FROM firehose_messages WHERE id > last ORDER BY id LIMIT 20000 FOR SHARE),
        rows AS (INSERT INTO firehose_messages_partitioned SELECT * FROM b ON CONFLICT DO NOTHING),
        ids AS (INSERT INTO firehose_message_ids (id, created_at) SELECT id, created_at FROM b ON CONFLICT DO NOTHING)
        SELECT coalesce(max(id), top) INTO last FROM b;
        COMMIT;
    END LOOP;
END
$$;

--bun:split

-- The partitions' statistics before the swap: the partitions filled by the
-- copy have none until analyzed, and from the swap on every reader plans
-- on them. Analyzed now, while the old table still serves, the readers'
-- plans after the swap are as good as before it.
DO $$
BEGIN
    IF to_regclass('firehose_messages_partitioned') IS NOT NULL THEN
        ANALYZE firehose_messages_partitioned, firehose_message_ids;
    END IF;
END
$$;

--bun:split

-- Step 4: the swap, in one short transaction: the old table is dropped,
-- the partitioned one takes its name, index names and triggers.
DO $$
DECLARE
    r record;
    defs text[] := '{}';
    d text;
    tries integer := 0;
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'firehose_messages'::regclass) = 'p' THEN
        RETURN;
    END IF;
    -- A lock that waits makes every reader queue behind it: wait briefly,
    -- then let them through and try again.
    LOOP
        BEGIN
            SET LOCAL lock_timeout = '200ms';
            LOCK TABLE firehose_messages IN ACCESS EXCLUSIVE MODE;
            EXIT;
        EXCEPTION WHEN lock_not_available THEN
            tries := tries + 1;
            IF tries >= 300 THEN
                RAISE;
            END IF;
            PERFORM pg_sleep(0.2);
        END;
    END LOOP;
    FOR r IN SELECT oid FROM pg_trigger
             WHERE tgrelid = 'firehose_messages'::regclass AND NOT tgisinternal AND tgname NOT LIKE 'firehose\_move\_%'
             ORDER BY tgname LOOP
        defs := defs || pg_get_triggerdef(r.oid);
    END LOOP;
    FOR r IN SELECT oid FROM pg_statistic_ext WHERE stxrelid = 'firehose_messages'::regclass LOOP
        defs := defs || pg_get_statisticsobjdef(r.oid);
    END LOOP;
    DROP TABLE firehose_messages;
    ALTER TABLE firehose_messages_partitioned RENAME TO firehose_messages;
    ALTER TABLE firehose_messages RENAME CONSTRAINT firehose_messages_partitioned_pkey TO firehose_messages_pkey;
    FOR r IN SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
             WHERE i.indrelid = 'firehose_messages'::regclass AND NOT i.indisprimary AND c.relname LIKE '%\_p' LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, left(r.relname, -2));
    END LOOP;
    FOREACH d IN ARRAY defs LOOP
        EXECUTE d;
    END LOOP;
    DROP TRIGGER IF EXISTS firehose_stream_pos ON firehose_messages;
    CREATE TRIGGER firehose_stream_pos BEFORE INSERT ON firehose_messages
        FOR EACH ROW EXECUTE FUNCTION feedapi_stream_pos('firehose_messages');
    CREATE TRIGGER firehose_message_ids_insert AFTER INSERT ON firehose_messages
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION firehose_message_ids_insert();
    CREATE TRIGGER firehose_message_ids_update AFTER UPDATE ON firehose_messages
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION firehose_message_ids_update();
    CREATE TRIGGER firehose_message_ids_delete AFTER DELETE ON firehose_messages
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION firehose_message_ids_delete();
    CREATE TRIGGER firehose_message_ids_truncate AFTER TRUNCATE ON firehose_messages
        FOR EACH STATEMENT EXECUTE FUNCTION firehose_message_ids_truncate();
END
$$;

--bun:split

DROP FUNCTION IF EXISTS firehose_move_mirror();

--bun:split

DROP FUNCTION IF EXISTS firehose_move_truncate();

--bun:split

ANALYZE firehose_messages, firehose_message_ids;
