DROP INDEX IF EXISTS firehose_story_time_idx;

--bun:split

DROP INDEX IF EXISTS posts_story_time_idx;

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
    NEW.stream_pos := 9007199254740992 + (pg_current_xact_id()::text::bigint << 24) + n;
    NEW.updated_at := clock_timestamp();
    RETURN NEW;
END $$;

--bun:split

ALTER TABLE firehose_messages DROP COLUMN IF EXISTS inserted_pos;
ALTER TABLE posts DROP COLUMN IF EXISTS inserted_pos;
