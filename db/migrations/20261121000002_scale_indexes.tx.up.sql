-- Indexes for the reference data set (issue #5, "Performance at scale");
-- db/QUERIES.md shows the plan each query gets from them.
--
-- The keyset indexes become ascending: ids arrive in ascending order, and
-- an index built (id DESC) then takes every insert at the left edge of its
-- key range, where page splits leave pages half full. PostgreSQL scans an
-- ascending btree backwards just as fast, so ORDER BY id DESC is unchanged.
SET LOCAL maintenance_work_mem = '256MB';

--bun:split

DROP INDEX posts_source_id_idx;

--bun:split

-- Posts by source, newest first (scanned backwards); also the loose index
-- scan of the curated sources.
CREATE INDEX posts_source_id_idx ON posts (source, id);

--bun:split

-- The curated posts of one brief's week (Monday to Sunday, UTC), newest
-- first: Brief.posts reads exactly its page instead of filtering the
-- primary key from the newest post down to the week.
CREATE INDEX posts_week_id_idx ON posts ((date_trunc('week', created_at AT TIME ZONE 'UTC')), id);

--bun:split

DROP INDEX firehose_pane_id_idx;

--bun:split

CREATE INDEX firehose_pane_id_idx ON firehose_messages (pane, id);

--bun:split

DROP INDEX firehose_important_id_idx;

--bun:split

CREATE INDEX firehose_important_id_idx ON firehose_messages (id) WHERE important;

--bun:split

DROP INDEX firehose_important_pane_id_idx;

--bun:split

CREATE INDEX firehose_important_pane_id_idx ON firehose_messages (pane, id) WHERE important;

--bun:split

-- Source substring search: the few distinct (source, pane, important)
-- groups are found by a loose scan of this index and matched with ILIKE
-- (any length of substring), then each matching group is read newest first
-- from the same index and the pages merged. It replaces the trigram index,
-- which could not serve substrings shorter than three characters, nor
-- return rows in id order.
CREATE INDEX firehose_source_pane_important_id_idx ON firehose_messages (source, pane, important, id);

--bun:split

DROP INDEX firehose_source_trgm_idx;

--bun:split

-- Pane and important are correlated (some panes flag far more than others):
-- without this the planner assumes independence and misjudges pane +
-- important.
CREATE STATISTICS firehose_pane_important_stats (mcv, dependencies) ON pane, important FROM firehose_messages;

--bun:split

ANALYZE posts, firehose_messages;
