CREATE INDEX IF NOT EXISTS posts_fts_idx ON posts
    USING gin (to_tsvector('english'::regconfig, body));

--bun:split

CREATE INDEX IF NOT EXISTS firehose_fts_idx ON firehose_messages
    USING gin (to_tsvector('english'::regconfig,
        coalesce(title, '') || ' ' || coalesce(body, '') || ' ' || coalesce(summary_ai, '')));

--bun:split

DROP INDEX IF EXISTS firehose_fts_col_idx;

--bun:split

DROP INDEX IF EXISTS posts_fts_col_idx;

--bun:split

DROP TRIGGER IF EXISTS firehose_fts_update ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS firehose_fts_insert ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS posts_fts_update ON posts;

--bun:split

DROP TRIGGER IF EXISTS posts_fts_insert ON posts;

--bun:split

DROP FUNCTION IF EXISTS firehose_fts_fill();

--bun:split

DROP FUNCTION IF EXISTS posts_fts_fill();

--bun:split

ALTER TABLE firehose_messages DROP COLUMN IF EXISTS fts;

--bun:split

ALTER TABLE posts DROP COLUMN IF EXISTS fts;

--bun:split

DROP FUNCTION IF EXISTS firehose_fts_document(text, text, text);

--bun:split

DROP FUNCTION IF EXISTS posts_fts_document(text);
