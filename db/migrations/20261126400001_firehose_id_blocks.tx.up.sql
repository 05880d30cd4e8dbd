-- Which months of the firehose hold ids of which block of 65536 ids, so
-- that a page in id order reads only the months that can hold its rows
-- (db/firehosewindow.go). Ids mostly grow with created_at, and most blocks
-- belong to one month; a message that comes late (an old created_at, a
-- new id) adds its block to its own month, and pages near its id read that
-- month too.
--
-- One row per (block, month) ever written, none updated: a writer adds a
-- row only for a block new to its month (a few times a month), found first
-- by a plain read, so that writers never wait for each other here. A
-- deleted message leaves its row (a page then reads a month that may hold
-- no row of it, never the reverse); retention removes a month's rows with
-- its partition. Rows of the default partition count in the month of
-- their created_at, like every other row.
CREATE TABLE IF NOT EXISTS firehose_id_blocks (
    block bigint      NOT NULL,
    month timestamptz NOT NULL,
    PRIMARY KEY (block, month)
);

--bun:split

CREATE OR REPLACE FUNCTION firehose_id_blocks_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO firehose_id_blocks (block, month)
    SELECT n.block, n.month FROM (
        SELECT DISTINCT id >> 16 AS block, date_trunc('month', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS month
        FROM new_rows) n
    WHERE NOT EXISTS (SELECT 1 FROM firehose_id_blocks b WHERE b.block = n.block AND b.month = n.month)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION firehose_id_blocks_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE firehose_id_blocks;
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE TRIGGER firehose_id_blocks_insert AFTER INSERT ON firehose_messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION firehose_id_blocks_add();

--bun:split

CREATE OR REPLACE TRIGGER firehose_id_blocks_update AFTER UPDATE ON firehose_messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION firehose_id_blocks_add();

--bun:split

CREATE OR REPLACE TRIGGER firehose_id_blocks_truncate AFTER TRUNCATE ON firehose_messages
    FOR EACH STATEMENT EXECUTE FUNCTION firehose_id_blocks_truncate();

--bun:split

-- The blocks of the rows already stored, in this transaction, after the
-- triggers (which keep writers waiting until it commits). A month's
-- partition is walked block by block on its primary key (one probe per
-- block, not a scan); the default partition (normally empty) is read.
DO $$
DECLARE
    r record;
    m timestamptz;
BEGIN
    FOR r IN SELECT c.oid::regclass AS part, c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             WHERE i.inhparent = 'firehose_messages'::regclass LOOP
        IF r.relname = 'firehose_messages_default' THEN
            INSERT INTO firehose_id_blocks (block, month)
            SELECT DISTINCT id >> 16, date_trunc('month', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
            FROM firehose_messages_default
            ON CONFLICT DO NOTHING;
            CONTINUE;
        END IF;
        EXECUTE format('SELECT min(created_at) FROM %s', r.part) INTO m;
        IF m IS NULL THEN
            CONTINUE;
        END IF;
        EXECUTE format('WITH RECURSIVE b AS (SELECT (SELECT min(id) FROM %1$s) >> 16 AS block '
            || 'UNION ALL SELECT (SELECT min(id) FROM %1$s WHERE id >= (b.block + 1) << 16) >> 16 FROM b WHERE b.block IS NOT NULL) '
            || 'INSERT INTO firehose_id_blocks (block, month) SELECT block, $1 FROM b WHERE block IS NOT NULL ON CONFLICT DO NOTHING',
            r.part) USING date_trunc('month', m AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    END LOOP;
END
$$;

--bun:split

ANALYZE firehose_id_blocks;
