-- Coins and full-text search on posts and firehose messages (issue 14,
-- items 1 to 3). In one transaction, like the other migrations: CREATE
-- INDEX CONCURRENTLY cannot run under the migration lock (it waits for
-- the other replicas' sessions, which wait for the lock: a deadlock), so
-- on a live database with millions of rows writers to posts and
-- firehose_messages wait for the index builds (24 minutes on the
-- reference data set under heavy load); readers are not blocked.
--
-- coins is NULL until derived: adding a nullable column without a
-- default rewrites nothing (instant at any size). Writers (import, seed)
-- store the derived tickers, '{}' when none; rows written before this
-- migration are derived by `feedapi backfill coins`, in batches. The API
-- shows NULL as [].
ALTER TABLE posts ADD COLUMN IF NOT EXISTS coins text[];

--bun:split

ALTER TABLE firehose_messages ADD COLUMN IF NOT EXISTS coins text[];

--bun:split

-- coins && ARRAY[...] (any-of). db/QUERIES.md shows the plans.
CREATE INDEX IF NOT EXISTS posts_coins_idx ON posts USING gin (coins);

--bun:split

CREATE INDEX IF NOT EXISTS firehose_coins_idx ON firehose_messages USING gin (coins);

--bun:split

-- Full-text search: expression indexes, not stored tsvector columns. A
-- stored column would rewrite both tables (5 GB here) and add its size to
-- every row; the expression costs one to_tsvector per written row, here
-- and nowhere else, and a query that matches the expression exactly (see
-- db/search.go) uses the index. The text search configuration is given
-- explicitly: the expression must not depend on default_text_search_config.
CREATE INDEX IF NOT EXISTS posts_fts_idx ON posts
    USING gin (to_tsvector('english'::regconfig, body));

--bun:split

CREATE INDEX IF NOT EXISTS firehose_fts_idx ON firehose_messages
    USING gin (to_tsvector('english'::regconfig,
        coalesce(title, '') || ' ' || coalesce(body, '') || ' ' || coalesce(summary_ai, '')));

--bun:split

-- Every ticker that occurs in posts or firehose messages, for /v1/sources:
-- kept by the statement triggers below for every writer (import's
-- upserts, seed's COPY, the backfill, plain SQL), one set-based statement
-- per writing statement. A ticker whose last item goes away stays listed:
-- as a filter it then gives an empty page, like any unknown ticker.
CREATE TABLE IF NOT EXISTS coin_tickers (
    ticker text PRIMARY KEY
);

--bun:split

CREATE OR REPLACE FUNCTION coin_tickers_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO coin_tickers (ticker)
    SELECT DISTINCT t FROM new_rows, unnest(new_rows.coins) AS t
    ORDER BY t
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE TRIGGER posts_coin_tickers_insert AFTER INSERT ON posts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coin_tickers_add();

--bun:split

CREATE OR REPLACE TRIGGER posts_coin_tickers_update AFTER UPDATE ON posts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coin_tickers_add();

--bun:split

CREATE OR REPLACE TRIGGER firehose_coin_tickers_insert AFTER INSERT ON firehose_messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coin_tickers_add();

--bun:split

CREATE OR REPLACE TRIGGER firehose_coin_tickers_update AFTER UPDATE ON firehose_messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coin_tickers_add();

--bun:split

-- Tickers of rows that already hold coins (none on a database migrated
-- before any writer stored them; the backfill's updates add theirs).
INSERT INTO coin_tickers (ticker)
SELECT DISTINCT t FROM posts, unnest(coins) AS t WHERE coins IS NOT NULL
UNION
SELECT DISTINCT t FROM firehose_messages, unnest(coins) AS t WHERE coins IS NOT NULL
ON CONFLICT DO NOTHING;
