DROP STATISTICS IF EXISTS firehose_pane_important_stats;

--bun:split

CREATE INDEX IF NOT EXISTS firehose_source_trgm_idx ON firehose_messages USING gin (source gin_trgm_ops);

--bun:split

DROP INDEX IF EXISTS firehose_source_pane_important_id_idx;

--bun:split

DROP INDEX IF EXISTS firehose_important_pane_id_idx;

--bun:split

CREATE INDEX firehose_important_pane_id_idx ON firehose_messages (pane, id DESC) WHERE important;

--bun:split

DROP INDEX IF EXISTS firehose_important_id_idx;

--bun:split

CREATE INDEX firehose_important_id_idx ON firehose_messages (id DESC) WHERE important;

--bun:split

DROP INDEX IF EXISTS firehose_pane_id_idx;

--bun:split

CREATE INDEX firehose_pane_id_idx ON firehose_messages (pane, id DESC);

--bun:split

DROP INDEX IF EXISTS posts_week_id_idx;

--bun:split

DROP INDEX IF EXISTS posts_source_id_idx;

--bun:split

CREATE INDEX posts_source_id_idx ON posts (source, id DESC);
