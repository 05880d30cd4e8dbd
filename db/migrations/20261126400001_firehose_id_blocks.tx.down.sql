DROP TRIGGER IF EXISTS firehose_id_blocks_insert ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS firehose_id_blocks_update ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS firehose_id_blocks_truncate ON firehose_messages;

--bun:split

DROP FUNCTION IF EXISTS firehose_id_blocks_add();

--bun:split

DROP FUNCTION IF EXISTS firehose_id_blocks_truncate();

--bun:split

DROP TABLE IF EXISTS firehose_id_blocks;
