DROP INDEX IF EXISTS firehose_inserted_pos_idx;

--bun:split

DROP INDEX IF EXISTS posts_inserted_pos_idx;
