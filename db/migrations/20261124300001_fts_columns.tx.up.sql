-- Full-text search on stored tsvector columns instead of expression
-- indexes (issue 14: firehose q for a common word took 400-770 ms at 5M
-- rows because a page read in id order recomputed to_tsvector for every
-- row it tested, and ANALYZE recomputed it for its sample on every
-- write-heavy run). The document of a row is now computed once, when the
-- row is written, by a trigger, and stored; reads and ANALYZE only read it.
--
-- Safe on big tables: adding a nullable column without a default
-- rewrites nothing (instant at any size, a brief ACCESS EXCLUSIVE lock);
-- the new GIN indexes are built over NULLs only (seconds); dropping the
-- expression indexes is instant. Rows written before this migration have
-- fts NULL and do not match q until `feedapi backfill fts` has filled
-- them, in batches, beside the service (db/QUERIES.md has its time on the
-- reference data). Writers need no change: the triggers fill fts for every
-- INSERT (import's upserts, seed's COPY, plain SQL) and recompute it when
-- an UPDATE changes a text it comes from.

-- The documents, in one place: the triggers and the backfill both call
-- them. The configuration is explicit, so the result does not depend on
-- default_text_search_config (IMMUTABLE holds: to_tsvector(regconfig,
-- text) is immutable).
CREATE OR REPLACE FUNCTION posts_fts_document(body text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN to_tsvector('english'::regconfig, body);

--bun:split

CREATE OR REPLACE FUNCTION firehose_fts_document(title text, body text, summary_ai text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN to_tsvector('english'::regconfig,
        coalesce(title, '') || ' ' || coalesce(body, '') || ' ' || coalesce(summary_ai, ''));

--bun:split

ALTER TABLE posts ADD COLUMN IF NOT EXISTS fts tsvector;

--bun:split

ALTER TABLE firehose_messages ADD COLUMN IF NOT EXISTS fts tsvector;

--bun:split

CREATE OR REPLACE FUNCTION posts_fts_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.fts := posts_fts_document(NEW.body);
    RETURN NEW;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION firehose_fts_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.fts := firehose_fts_document(NEW.title, NEW.body, NEW.summary_ai);
    RETURN NEW;
END
$$;

--bun:split

-- Every insert computes the document (a value given for fts is replaced).
CREATE OR REPLACE TRIGGER posts_fts_insert BEFORE INSERT ON posts
    FOR EACH ROW EXECUTE FUNCTION posts_fts_fill();

--bun:split

-- An update recomputes it when the text changes, or when fts is NULL
-- (written so, or not yet backfilled); the backfill sets fts to the same
-- document itself, so the trigger does not run twice for it.
CREATE OR REPLACE TRIGGER posts_fts_update BEFORE UPDATE ON posts
    FOR EACH ROW WHEN (NEW.body IS DISTINCT FROM OLD.body OR NEW.fts IS NULL)
    EXECUTE FUNCTION posts_fts_fill();

--bun:split

CREATE OR REPLACE TRIGGER firehose_fts_insert BEFORE INSERT ON firehose_messages
    FOR EACH ROW EXECUTE FUNCTION firehose_fts_fill();

--bun:split

CREATE OR REPLACE TRIGGER firehose_fts_update BEFORE UPDATE ON firehose_messages
    FOR EACH ROW WHEN (NEW.title IS DISTINCT FROM OLD.title OR NEW.body IS DISTINCT FROM OLD.body
        OR NEW.summary_ai IS DISTINCT FROM OLD.summary_ai OR NEW.fts IS NULL)
    EXECUTE FUNCTION firehose_fts_fill();

--bun:split

CREATE INDEX IF NOT EXISTS posts_fts_col_idx ON posts USING gin (fts);

--bun:split

CREATE INDEX IF NOT EXISTS firehose_fts_col_idx ON firehose_messages USING gin (fts);

--bun:split

DROP INDEX IF EXISTS posts_fts_idx;

--bun:split

DROP INDEX IF EXISTS firehose_fts_idx;

--bun:split

-- Rows already present: filled here only when the tables are small (a
-- fresh or test database); on big tables `feedapi backfill fts` does it
-- in batches, without holding row locks for long.
DO $$
BEGIN
    IF (SELECT count(*) FROM (SELECT 1 FROM posts LIMIT 100001) s) <= 100000 THEN
        UPDATE posts SET fts = posts_fts_document(body) WHERE fts IS NULL;
    END IF;
    IF (SELECT count(*) FROM (SELECT 1 FROM firehose_messages LIMIT 100001) s) <= 100000 THEN
        UPDATE firehose_messages SET fts = firehose_fts_document(title, body, summary_ai) WHERE fts IS NULL;
    END IF;
END
$$;
