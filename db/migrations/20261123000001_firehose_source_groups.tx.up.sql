-- Source substring search at any number of sources (issue #10, item 1).
--
-- firehose_source_groups holds every distinct (source, pane, important)
-- of firehose_messages, kept by the triggers below for every writer
-- (import's upserts, seed's COPY, plain SQL). The search finds the groups
-- whose source matches through the trigram index of this small table
-- (one row per group instead of one per message) and reads each matching
-- group's page from firehose_source_pane_important_id_idx, so a rare or
-- absent substring costs what its matches cost, not what the number of
-- sources costs. db/QUERIES.md shows the plans.
--
-- The table may hold more groups than the messages have (a message whose
-- source, pane or important flag changes, or that is deleted, leaves its
-- old group behind): a group without rows costs one index probe and
-- changes no answer. Only TRUNCATE empties it. Removing groups from a
-- trigger would race with a concurrent writer adding a row to the group.
--
-- source_lower is what ILIKE compares (in a UTF-8 database, ILIKE is
-- lower(text) LIKE lower(pattern)), computed once per group: matching it
-- with LIKE costs a tenth of ILIKE's per-row lower() (1.5 µs a row here).
CREATE TABLE firehose_source_groups (
    source       text    NOT NULL,
    pane         text    NOT NULL,
    important    boolean NOT NULL,
    source_lower text    NOT NULL GENERATED ALWAYS AS (lower(source)) STORED,
    PRIMARY KEY (source, pane, important)
);

--bun:split

-- Any substring of three characters or more is served by this index;
-- shorter ones read the table, one row per group. Without fastupdate: new
-- groups are rare, and a pending list (up to 4 MB of new entries, until
-- VACUUM) would be read in full by every search, and priced so by the
-- planner, which then preferred reading the table.
CREATE INDEX firehose_source_groups_source_trgm_idx ON firehose_source_groups USING gin (source_lower gin_trgm_ops)
    WITH (fastupdate = off);

--bun:split

-- One set-based statement per writing statement (a COPY of millions of
-- rows included), not one per row. The groups are inserted in key order,
-- so that two writers adding the same new groups wait for each other
-- instead of deadlocking.
CREATE FUNCTION firehose_source_groups_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO firehose_source_groups (source, pane, important)
    SELECT DISTINCT source, pane, important FROM new_rows
    ORDER BY source, pane, important
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

--bun:split

CREATE FUNCTION firehose_source_groups_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE firehose_source_groups;
    RETURN NULL;
END
$$;

--bun:split

CREATE TRIGGER firehose_source_groups_insert AFTER INSERT ON firehose_messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION firehose_source_groups_add();

--bun:split

CREATE TRIGGER firehose_source_groups_update AFTER UPDATE ON firehose_messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION firehose_source_groups_add();

--bun:split

CREATE TRIGGER firehose_source_groups_truncate AFTER TRUNCATE ON firehose_messages
    FOR EACH STATEMENT EXECUTE FUNCTION firehose_source_groups_truncate();

--bun:split

-- The triggers exist before the existing groups are read, and this runs in
-- one transaction holding the lock CREATE TRIGGER takes: no write is missed.
INSERT INTO firehose_source_groups (source, pane, important)
SELECT DISTINCT source, pane, important FROM firehose_messages;

--bun:split

ANALYZE firehose_source_groups;
