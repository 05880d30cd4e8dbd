-- A writer's copy of the story index (StoryAssigner's window): a writer of
-- many batches (import --follow, a long import, the live demo) holds the
-- indexed items of its window in memory, so that a batch's candidates are
-- found there rather than by a probe per band. Each batch fetches what
-- changed since its last one:
--
--   written_xid  the transaction that indexed the item. A row visible
--                now and not to the last lookup's snapshot was written by
--                a transaction that snapshot could not see: one begun
--                after it (at or after its xmax) or open then (its xip
--                list). Fetching those rows is every row the writer has
--                not seen, whatever the order in which concurrent writers
--                commit. Rows indexed before this migration have none:
--                they are older than any writer's first load.
--   seen_at      the window itself, loaded once and extended as the
--                writer's items move on.
--
-- Adding a nullable column rewrites nothing; the default applies to the
-- rows written from now on.

ALTER TABLE story_members ADD COLUMN written_xid xid8;
ALTER TABLE story_members ALTER COLUMN written_xid SET DEFAULT pg_current_xact_id();

--bun:split

CREATE INDEX story_members_written_idx ON story_members (written_xid);

--bun:split

CREATE INDEX story_members_seen_idx ON story_members (seen_at);
