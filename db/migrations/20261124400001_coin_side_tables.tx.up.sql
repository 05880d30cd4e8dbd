-- Per-ticker side tables of the coins filter (issue 14, targets): one row
-- per (ticker, item), in primary key order, so that the items about one
-- ticker are an index range read newest first (db/search.go): a rare
-- ticker's page costs the page, not a bitmap of all its matches and a sort
-- of them. The items are joined back by id.
--
-- Kept by statement triggers on the items' coins (every writer: import's
-- upserts, seed's COPY, the coins backfill, plain SQL), in the writer's
-- transaction. Rows written before this migration get their side rows from
-- `feedapi backfill coins` (batched); until then the coins filter does not
-- match them, as it did not match rows whose coins were not yet derived.
CREATE TABLE IF NOT EXISTS post_coins (
    ticker text   NOT NULL,
    id     bigint NOT NULL,
    PRIMARY KEY (ticker, id)
);

--bun:split

CREATE TABLE IF NOT EXISTS firehose_coins (
    ticker text   NOT NULL,
    id     bigint NOT NULL,
    PRIMARY KEY (ticker, id)
);

--bun:split

-- The insert, update and delete functions take the side table's name as
-- their argument; the statements are set-based, one per writing statement.
CREATE OR REPLACE FUNCTION coin_side_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('INSERT INTO %I (ticker, id) SELECT DISTINCT t, n.id FROM new_rows n, unnest(n.coins) AS t ON CONFLICT DO NOTHING',
        TG_ARGV[0]);
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION coin_side_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DELETE FROM %I s USING ('
        || 'SELECT o.id, t FROM old_rows o, unnest(o.coins) AS t '
        || 'EXCEPT SELECT n.id, t FROM new_rows n, unnest(n.coins) AS t) d '
        || 'WHERE s.ticker = d.t AND s.id = d.id', TG_ARGV[0]);
    EXECUTE format('INSERT INTO %I (ticker, id) SELECT DISTINCT t, n.id FROM new_rows n, unnest(n.coins) AS t ON CONFLICT DO NOTHING',
        TG_ARGV[0]);
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION coin_side_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DELETE FROM %I s USING (SELECT o.id, t FROM old_rows o, unnest(o.coins) AS t) d '
        || 'WHERE s.ticker = d.t AND s.id = d.id', TG_ARGV[0]);
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION coin_side_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('TRUNCATE %I', TG_ARGV[0]);
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE TRIGGER posts_coin_side_insert AFTER INSERT ON posts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coin_side_insert('post_coins');

--bun:split

CREATE OR REPLACE TRIGGER posts_coin_side_update AFTER UPDATE ON posts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coin_side_update('post_coins');

--bun:split

CREATE OR REPLACE TRIGGER posts_coin_side_delete AFTER DELETE ON posts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION coin_side_delete('post_coins');

--bun:split

CREATE OR REPLACE TRIGGER posts_coin_side_truncate AFTER TRUNCATE ON posts
    FOR EACH STATEMENT EXECUTE FUNCTION coin_side_truncate('post_coins');

--bun:split

CREATE OR REPLACE TRIGGER firehose_coin_side_insert AFTER INSERT ON firehose_messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coin_side_insert('firehose_coins');

--bun:split

CREATE OR REPLACE TRIGGER firehose_coin_side_update AFTER UPDATE ON firehose_messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coin_side_update('firehose_coins');

--bun:split

CREATE OR REPLACE TRIGGER firehose_coin_side_delete AFTER DELETE ON firehose_messages
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION coin_side_delete('firehose_coins');

--bun:split

CREATE OR REPLACE TRIGGER firehose_coin_side_truncate AFTER TRUNCATE ON firehose_messages
    FOR EACH STATEMENT EXECUTE FUNCTION coin_side_truncate('firehose_coins');

--bun:split

-- No reader uses the GIN indexes on coins any more (db/search.go reads the
-- side tables); dropping them takes their maintenance off every write.
DROP INDEX IF EXISTS posts_coins_idx;

--bun:split

DROP INDEX IF EXISTS firehose_coins_idx;
