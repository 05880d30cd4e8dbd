DROP TRIGGER IF EXISTS posts_notify_insert ON posts;
DROP TRIGGER IF EXISTS posts_notify_update ON posts;
DROP TRIGGER IF EXISTS firehose_notify_insert ON firehose_messages;
DROP TRIGGER IF EXISTS firehose_notify_update ON firehose_messages;
DROP TRIGGER IF EXISTS briefs_notify_insert ON briefs;
DROP TRIGGER IF EXISTS briefs_notify_update ON briefs;
DROP TRIGGER IF EXISTS etf_flows_notify_insert ON etf_flows;
DROP TRIGGER IF EXISTS etf_flows_notify_update ON etf_flows;

--bun:split

DROP TRIGGER IF EXISTS posts_stream_pos ON posts;
DROP TRIGGER IF EXISTS firehose_stream_pos ON firehose_messages;
ALTER TABLE posts DROP COLUMN IF EXISTS stream_pos;
ALTER TABLE firehose_messages DROP COLUMN IF EXISTS stream_pos;

--bun:split

DROP FUNCTION IF EXISTS feedapi_notify_change();
DROP FUNCTION IF EXISTS feedapi_stream_pos();
