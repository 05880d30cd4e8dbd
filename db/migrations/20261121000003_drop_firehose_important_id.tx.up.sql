-- firehose_important_id_idx (id) WHERE important lured the planner into
-- pane + important queries: it prefers reading it in id order and
-- filtering by pane (the heap follows id order) to the exact range of
-- firehose_important_pane_id_idx, and for a pane with few important
-- messages (blogs: 0.07 % of all rows) that read 6,500 rows per page, or,
-- with a since bound, every important message older than it (0.9 s). An
-- important-only page reads the primary key backwards instead and finds
-- its 51 rows among about 700 (7.5 % of the messages are important).
DROP INDEX firehose_important_id_idx;
