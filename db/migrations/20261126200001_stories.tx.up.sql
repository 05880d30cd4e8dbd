-- Stories, updates and arrival time.
--
-- Stories: every post and firehose message written from now on joins the
-- story of a near-duplicate item seen within 48 hours, or starts one
-- (package db/story decides; db/stories.go writes). The item tables only
-- gain a story_id column: membership is a column of the item, so that the
-- item tables need no foreign key (they may be partitioned, and the
-- unique keys of a partitioned table must include its partition key).
--
--   stories        one row per story: what the story lists show, kept up
--                  to date by the writers (size, first and last item time,
--                  the headline of its first item, the union of sources,
--                  coins and panes).
--   story_members  the features (normalized shingles, figures, coins) of
--                  the first few items of each story, read to decide
--                  whether a new item tells the same story.
--   story_bands    the locality-sensitive keys of those items, with the
--                  item's time: finding the candidates of a new item is a
--                  probe of (band, seen_at), whatever the number of
--                  stories.
--
-- Updates: an UPDATE that changes what an item says sets updated_at and
-- gives the row a new stream position (the formula of
-- feedapi_stream_pos), so that the streams send the edited item once
-- more, in commit order with the new items, and a resume by position stays
-- exact. UPDATEs of derived columns (coins, fts, story_id) do neither.
--
-- Arrival: received_at is the database's clock when the row was written
-- (clock_timestamp(), in the transaction that commits it); rows written
-- before this migration have none. Adding the columns rewrites nothing
-- (nullable, and the volatile default is set after the column exists).

CREATE TABLE stories (
    id             bigint      PRIMARY KEY,
    first_seen_at  timestamptz NOT NULL,
    last_seen_at   timestamptz NOT NULL,
    size           integer     NOT NULL,
    headline       text        NOT NULL,
    sources        text[]      NOT NULL,
    coins          text[]      NOT NULL,
    panes          text[]      NOT NULL
);

--bun:split

CREATE SEQUENCE stories_id_seq OWNED BY stories.id;

--bun:split

CREATE INDEX stories_last_seen_idx ON stories (last_seen_at DESC, id DESC);
CREATE INDEX stories_coins_idx ON stories USING gin (coins);
CREATE INDEX stories_panes_idx ON stories USING gin (panes);
CREATE INDEX stories_headline_fts_idx ON stories USING gin (to_tsvector('english'::regconfig, headline));

--bun:split

CREATE TABLE story_members (
    kind      "char"      NOT NULL, -- 'p' post, 'f' firehose message
    item_id   bigint      NOT NULL,
    story_id  bigint      NOT NULL,
    seen_at   timestamptz NOT NULL,
    -- when the story began, as its writer knew it: a story takes items
    -- within 48 hours of its first one
    story_start timestamptz NOT NULL,
    features  text        NOT NULL,
    PRIMARY KEY (kind, item_id)
);

--bun:split

CREATE TABLE story_bands (
    band     bigint      NOT NULL,
    seen_at  timestamptz NOT NULL,
    kind     "char"      NOT NULL,
    item_id  bigint      NOT NULL
);

--bun:split

CREATE INDEX story_bands_probe_idx ON story_bands (band, seen_at) INCLUDE (kind, item_id);

--bun:split

ALTER TABLE posts ADD COLUMN story_id bigint, ADD COLUMN received_at timestamptz, ADD COLUMN updated_at timestamptz;
ALTER TABLE posts ALTER COLUMN received_at SET DEFAULT clock_timestamp();
ALTER TABLE firehose_messages ADD COLUMN story_id bigint, ADD COLUMN received_at timestamptz, ADD COLUMN updated_at timestamptz;
ALTER TABLE firehose_messages ALTER COLUMN received_at SET DEFAULT clock_timestamp();

--bun:split

-- (story_id, id): a story's items in id order, so that "an item of the same
-- story with a smaller id" (collapse=story) is one probe of the first entry.
CREATE INDEX posts_story_idx ON posts (story_id, id) WHERE story_id IS NOT NULL;

--bun:split

CREATE INDEX firehose_story_idx ON firehose_messages (story_id, id) WHERE story_id IS NOT NULL;

--bun:split

CREATE INDEX posts_received_idx ON posts (received_at) WHERE received_at IS NOT NULL;

--bun:split

CREATE INDEX firehose_received_idx ON firehose_messages (received_at) WHERE received_at IS NOT NULL;

--bun:split

CREATE FUNCTION feedapi_item_updated() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER posts_item_updated BEFORE UPDATE ON posts FOR EACH ROW
    WHEN ((OLD.source, OLD.username, OLD.body, OLD.url, OLD.original_source_url, OLD.raw, OLD.created_at)
        IS DISTINCT FROM (NEW.source, NEW.username, NEW.body, NEW.url, NEW.original_source_url, NEW.raw, NEW.created_at))
    EXECUTE FUNCTION feedapi_item_updated();

--bun:split

CREATE TRIGGER firehose_item_updated BEFORE UPDATE ON firehose_messages FOR EACH ROW
    WHEN ((OLD.pane, OLD.source, OLD.source_name, OLD.name, OLD.username, OLD.title, OLD.body, OLD.summary_ai,
            OLD.important, OLD.url, OLD.original_source_url, OLD.created_at)
        IS DISTINCT FROM (NEW.pane, NEW.source, NEW.source_name, NEW.name, NEW.username, NEW.title, NEW.body,
            NEW.summary_ai, NEW.important, NEW.url, NEW.original_source_url, NEW.created_at))
    EXECUTE FUNCTION feedapi_item_updated();
