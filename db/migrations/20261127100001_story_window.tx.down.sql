DROP INDEX IF EXISTS story_members_seen_idx;

--bun:split

DROP INDEX IF EXISTS story_members_written_idx;

--bun:split

ALTER TABLE story_members DROP COLUMN IF EXISTS written_xid;
