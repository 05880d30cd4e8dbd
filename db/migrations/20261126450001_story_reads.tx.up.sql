-- Reads of stories: a story's items oldest first, and collapse=story on
-- the streams in stream order.
--
-- inserted_pos: the stream position a row had when it was inserted, kept
-- when an update gives the row a new one (feedapi_item_updated); NULL while
-- the row was never updated, its stream_pos being that position. A stream
-- with collapse=story sends the first item of each story in stream order
-- (coalesce(inserted_pos, stream_pos)), so that an item committed after
-- another of its story is never sent, whatever their ids, and the update
-- of an item sent is sent too. Adding a nullable column rewrites nothing,
-- on the partitioned firehose neither (it reaches every partition).

ALTER TABLE posts ADD COLUMN inserted_pos bigint;
ALTER TABLE firehose_messages ADD COLUMN inserted_pos bigint;

--bun:split

CREATE OR REPLACE FUNCTION feedapi_item_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    setting text := 'feedapi.stream_n_' || TG_TABLE_NAME;
    n bigint := coalesce(nullif(current_setting(setting, true), ''), '0')::bigint + 1;
BEGIN
    IF n >= 16777216 THEN
        RAISE EXCEPTION 'more than 16777215 rows written into % in one transaction', TG_TABLE_NAME
            USING HINT = 'import in smaller transactions';
    END IF;
    PERFORM set_config(setting, n::text, true);
    NEW.inserted_pos := coalesce(OLD.inserted_pos, OLD.stream_pos);
    NEW.stream_pos := 9007199254740992 + (pg_current_xact_id()::text::bigint << 24) + n;
    NEW.updated_at := clock_timestamp();
    RETURN NEW;
END $$;

--bun:split

-- (story_id, created_at, id): a story's first few items are the first
-- entries of its range (per firehose partition, merged), not a sort of
-- every item of the story; big stories hold hundreds of items. The stream
-- positions ride along, so that the stream's collapse probe of a story
-- reads this index alone. The (story_id, id) indexes stay: the lists'
-- collapse probes a story's items in id order. On the partitioned
-- firehose the index is created on the parent, which creates it on every
-- partition, and on the partitions created later.
CREATE INDEX posts_story_time_idx ON posts (story_id, created_at, id) INCLUDE (stream_pos, inserted_pos)
    WHERE story_id IS NOT NULL;

--bun:split

CREATE INDEX firehose_story_time_idx ON firehose_messages (story_id, created_at, id) INCLUDE (stream_pos, inserted_pos)
    WHERE story_id IS NOT NULL;
