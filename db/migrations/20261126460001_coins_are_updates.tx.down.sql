DROP TRIGGER IF EXISTS firehose_item_updated ON firehose_messages;

--bun:split

CREATE TRIGGER firehose_item_updated BEFORE UPDATE ON firehose_messages FOR EACH ROW
    WHEN ((OLD.pane, OLD.source, OLD.source_name, OLD.name, OLD.username, OLD.title, OLD.body, OLD.summary_ai,
            OLD.important, OLD.url, OLD.original_source_url, OLD.created_at)
        IS DISTINCT FROM (NEW.pane, NEW.source, NEW.source_name, NEW.name, NEW.username, NEW.title, NEW.body,
            NEW.summary_ai, NEW.important, NEW.url, NEW.original_source_url, NEW.created_at))
    EXECUTE FUNCTION feedapi_item_updated();

--bun:split

DROP TRIGGER IF EXISTS posts_item_updated ON posts;

--bun:split

CREATE TRIGGER posts_item_updated BEFORE UPDATE ON posts FOR EACH ROW
    WHEN ((OLD.source, OLD.username, OLD.body, OLD.url, OLD.original_source_url, OLD.raw, OLD.created_at)
        IS DISTINCT FROM (NEW.source, NEW.username, NEW.body, NEW.url, NEW.original_source_url, NEW.raw, NEW.created_at))
    EXECUTE FUNCTION feedapi_item_updated();
