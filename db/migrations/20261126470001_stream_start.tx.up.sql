-- Where a stream with since starts (Store.StreamStart): the smallest
-- position at insert of the rows created since then,
-- min(coalesce(inserted_pos, stream_pos)). As one aggregate it read every
-- row since since. Split in two, each half is the first matching entry of
-- an index walked in position order: min(stream_pos) through the
-- firehose's (stream_pos, created_at) index (posts: their stream_pos
-- index), and min(inserted_pos), which only updated rows have, through
-- these partial indexes, as small as the updates.
--
-- Building them reads each table once, holding off its writers (not its
-- readers) while it runs.

CREATE INDEX IF NOT EXISTS posts_inserted_pos_idx ON posts (inserted_pos, created_at) WHERE inserted_pos IS NOT NULL;

--bun:split

CREATE INDEX IF NOT EXISTS firehose_inserted_pos_idx ON firehose_messages (inserted_pos, created_at) WHERE inserted_pos IS NOT NULL;
