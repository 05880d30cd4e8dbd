-- Stream positions and the change signal (issue 11).
--
-- stream_pos orders posts and firehose messages by the commit of the
-- transaction that inserted them, so that "every row after position X" never
-- skips a row, whatever its id (ids come from the import data) and however
-- concurrent writers interleave. A new row's position is
--
--   2^53 + txid * 2^24 + n
--
-- where txid is the inserting transaction's top-level id (xid8) and n counts
-- the rows that transaction inserted into the table (1, 2, …; at most
-- 2^24 - 1 per transaction). Readers only take rows whose txid is below the
-- oldest transaction of the database still running (db/stream.go): every
-- such transaction has ended, so no row can later appear at a position they
-- have passed. Rows older than
-- this migration get their id as position (ids are below 2^53), before every
-- new row. Updates keep the position: an edited item is not streamed again.
--
-- Statement-level triggers with transition tables send one small NOTIFY
-- (channel feedapi_changes, payload {"kind": …, "n": rows, "max_id": …}) per
-- statement that inserts or updates rows; PostgreSQL delivers it at commit.

CREATE FUNCTION feedapi_stream_pos() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    setting text := 'feedapi.stream_n_' || TG_TABLE_NAME;
    n bigint := coalesce(nullif(current_setting(setting, true), ''), '0')::bigint + 1;
BEGIN
    IF n >= 16777216 THEN
        RAISE EXCEPTION 'more than 16777215 rows inserted into % in one transaction', TG_TABLE_NAME
            USING HINT = 'import in smaller transactions';
    END IF;
    PERFORM set_config(setting, n::text, true);
    NEW.stream_pos := 9007199254740992 + (pg_current_xact_id()::text::bigint << 24) + n;
    RETURN NEW;
END $$;

--bun:split

CREATE FUNCTION feedapi_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    rows bigint;
    top bigint;
BEGIN
    IF TG_ARGV[0] = 'etf_flows' THEN
        SELECT count(*), NULL INTO rows, top FROM changed;
    ELSE
        SELECT count(*), max(id) INTO rows, top FROM changed;
    END IF;
    IF rows > 0 THEN
        PERFORM pg_notify('feedapi_changes',
            json_build_object('kind', TG_ARGV[0], 'n', rows, 'max_id', top)::text);
    END IF;
    RETURN NULL;
END $$;

--bun:split

ALTER TABLE posts ADD COLUMN stream_pos bigint;
UPDATE posts SET stream_pos = id;
ALTER TABLE posts ALTER COLUMN stream_pos SET NOT NULL;
CREATE UNIQUE INDEX posts_stream_pos_idx ON posts (stream_pos);
CREATE TRIGGER posts_stream_pos BEFORE INSERT ON posts
    FOR EACH ROW EXECUTE FUNCTION feedapi_stream_pos();

--bun:split

ALTER TABLE firehose_messages ADD COLUMN stream_pos bigint;
UPDATE firehose_messages SET stream_pos = id;
ALTER TABLE firehose_messages ALTER COLUMN stream_pos SET NOT NULL;
CREATE UNIQUE INDEX firehose_stream_pos_idx ON firehose_messages (stream_pos);
CREATE TRIGGER firehose_stream_pos BEFORE INSERT ON firehose_messages
    FOR EACH ROW EXECUTE FUNCTION feedapi_stream_pos();

--bun:split

CREATE TRIGGER posts_notify_insert AFTER INSERT ON posts
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION feedapi_notify_change('posts');
CREATE TRIGGER posts_notify_update AFTER UPDATE ON posts
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION feedapi_notify_change('posts');
CREATE TRIGGER firehose_notify_insert AFTER INSERT ON firehose_messages
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION feedapi_notify_change('firehose');
CREATE TRIGGER firehose_notify_update AFTER UPDATE ON firehose_messages
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION feedapi_notify_change('firehose');
CREATE TRIGGER briefs_notify_insert AFTER INSERT ON briefs
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION feedapi_notify_change('briefs');
CREATE TRIGGER briefs_notify_update AFTER UPDATE ON briefs
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION feedapi_notify_change('briefs');
CREATE TRIGGER etf_flows_notify_insert AFTER INSERT ON etf_flows
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION feedapi_notify_change('etf_flows');
CREATE TRIGGER etf_flows_notify_update AFTER UPDATE ON etf_flows
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION feedapi_notify_change('etf_flows');
