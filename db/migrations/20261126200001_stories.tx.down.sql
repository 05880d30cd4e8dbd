DROP TRIGGER IF EXISTS firehose_item_updated ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS posts_item_updated ON posts;

--bun:split

DROP FUNCTION IF EXISTS feedapi_item_updated();

--bun:split

ALTER TABLE firehose_messages DROP COLUMN IF EXISTS story_id, DROP COLUMN IF EXISTS received_at, DROP COLUMN IF EXISTS updated_at;

--bun:split

ALTER TABLE posts DROP COLUMN IF EXISTS story_id, DROP COLUMN IF EXISTS received_at, DROP COLUMN IF EXISTS updated_at;

--bun:split

DROP TABLE IF EXISTS story_bands;

--bun:split

DROP TABLE IF EXISTS story_members;

--bun:split

DROP TABLE IF EXISTS stories;
