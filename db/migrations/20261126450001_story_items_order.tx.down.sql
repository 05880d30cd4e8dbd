DROP INDEX IF EXISTS firehose_story_time_idx;

--bun:split

DROP INDEX IF EXISTS posts_story_time_idx;
