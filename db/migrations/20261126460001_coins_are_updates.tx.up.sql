-- A change of an item's coins is an update: the coins decide what the
-- coins filter finds, so an import that changes only them must set
-- updated_at and send the item again on the streams, like an edit of its
-- text. Coins that go from NULL to a value are not an edit but their first
-- derivation (`feedapi backfill coins`), and stay silent.
--
-- The row counter of feedapi_item_updated is also named by the trigger's
-- argument, as feedapi_stream_pos's is (migration 20261126300001): on the
-- partitioned firehose TG_TABLE_NAME is the partition, so that an update
-- and an insert of one transaction counted apart and could be given the
-- same stream position.
--
-- The function keeps, as migration 20261126450001 made it, the row's
-- position at insert in inserted_pos.
--
-- Triggers of the partitioned firehose_messages are created on its
-- partitions too, present and future.

CREATE OR REPLACE FUNCTION feedapi_item_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tbl text := coalesce(TG_ARGV[0], TG_TABLE_NAME);
    setting text := 'feedapi.stream_n_' || tbl;
    n bigint := coalesce(nullif(current_setting(setting, true), ''), '0')::bigint + 1;
BEGIN
    IF n >= 16777216 THEN
        RAISE EXCEPTION 'more than 16777215 rows written into % in one transaction', tbl
            USING HINT = 'import in smaller transactions';
    END IF;
    PERFORM set_config(setting, n::text, true);
    NEW.inserted_pos := coalesce(OLD.inserted_pos, OLD.stream_pos);
    NEW.stream_pos := 9007199254740992 + (pg_current_xact_id()::text::bigint << 24) + n;
    NEW.updated_at := clock_timestamp();
    RETURN NEW;
END $$;

--bun:split

-- Dropping a trigger of the partitioned table locks its partitions before
-- the table itself, the reverse of a query's order: take the tables first,
-- as queries do, so that no reader deadlocks with the swap. A lock that
-- waits makes every reader queue behind it: wait briefly, then let them
-- through and try again.
DO $$
DECLARE
    tries integer := 0;
BEGIN
    LOOP
        BEGIN
            SET LOCAL lock_timeout = '200ms';
            LOCK TABLE posts, firehose_messages IN ACCESS EXCLUSIVE MODE;
            EXIT;
        EXCEPTION WHEN lock_not_available THEN
            tries := tries + 1;
            IF tries >= 300 THEN
                RAISE;
            END IF;
            PERFORM pg_sleep(0.2);
        END;
    END LOOP;
END
$$;

--bun:split

DROP TRIGGER IF EXISTS posts_item_updated ON posts;

--bun:split

CREATE TRIGGER posts_item_updated BEFORE UPDATE ON posts FOR EACH ROW
    WHEN ((OLD.source, OLD.username, OLD.body, OLD.url, OLD.original_source_url, OLD.raw, OLD.created_at)
            IS DISTINCT FROM (NEW.source, NEW.username, NEW.body, NEW.url, NEW.original_source_url, NEW.raw, NEW.created_at)
        OR (OLD.coins IS NOT NULL AND OLD.coins IS DISTINCT FROM NEW.coins))
    EXECUTE FUNCTION feedapi_item_updated();

--bun:split

DROP TRIGGER IF EXISTS firehose_item_updated ON firehose_messages;

--bun:split

CREATE TRIGGER firehose_item_updated BEFORE UPDATE ON firehose_messages FOR EACH ROW
    WHEN ((OLD.pane, OLD.source, OLD.source_name, OLD.name, OLD.username, OLD.title, OLD.body, OLD.summary_ai,
            OLD.important, OLD.url, OLD.original_source_url, OLD.created_at)
            IS DISTINCT FROM (NEW.pane, NEW.source, NEW.source_name, NEW.name, NEW.username, NEW.title, NEW.body,
            NEW.summary_ai, NEW.important, NEW.url, NEW.original_source_url, NEW.created_at)
        OR (OLD.coins IS NOT NULL AND OLD.coins IS DISTINCT FROM NEW.coins))
    EXECUTE FUNCTION feedapi_item_updated('firehose_messages');
