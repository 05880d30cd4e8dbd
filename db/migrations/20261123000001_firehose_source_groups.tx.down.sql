DROP TRIGGER IF EXISTS firehose_source_groups_truncate ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS firehose_source_groups_update ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS firehose_source_groups_insert ON firehose_messages;

--bun:split

DROP FUNCTION IF EXISTS firehose_source_groups_truncate();

--bun:split

DROP FUNCTION IF EXISTS firehose_source_groups_add();

--bun:split

DROP TABLE IF EXISTS firehose_source_groups;
