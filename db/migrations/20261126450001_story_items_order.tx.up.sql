-- A story's items oldest first (Story.items, /v1/stories, /v1/stories/{id}):
-- (story_id, created_at, id) gives them in that order, so that a story's
-- first few items are the first few entries of the index (per firehose
-- partition, merged), not a sort of every item of the story; big stories
-- hold hundreds of items. The (story_id, id) indexes stay: collapse=story
-- probes a story's items in id order.
--
-- On the partitioned firehose the index is created on the parent, which
-- creates it on every partition (and on partitions created later).

CREATE INDEX posts_story_time_idx ON posts (story_id, created_at, id) WHERE story_id IS NOT NULL;

--bun:split

CREATE INDEX firehose_story_time_idx ON firehose_messages (story_id, created_at, id) WHERE story_id IS NOT NULL;
