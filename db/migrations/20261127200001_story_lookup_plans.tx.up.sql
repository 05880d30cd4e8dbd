-- The story assigner's lookups as functions whose plans are made once per
-- connection: a writer that holds the window (StoryAssigner's copy) sends
-- one lookup per batch, most of them for a single item, and planning its
-- statement took most of its time. PostgreSQL keeps custom plans for it,
-- planned at each call, because a generic plan's estimate of the rows
-- written since the writer's last snapshot (a range of written_xid given
-- by parameters) is far above what the custom plans find. The generic
-- plan walks the same indexes, so the functions force it
-- (plan_cache_mode), and set jit off so that its high estimate never
-- compiles code on a connection with JIT on.
--
--   story_lookup_stored   the stories of the items of a batch already
--                         stored, and story ids drawn from the sequence
--                         (also read by the probing writer's lookup).
--   story_window_lookup   the warm writer's lookup: the stored part, then
--                         in one statement (one snapshot) the items
--                         indexed by the transactions its last snapshot
--                         could not see, the items seen within the ranges
--                         its copy lacks, and the snapshot's xmax and open
--                         transactions.

CREATE TYPE story_lookup_row AS (
    src         text,        -- s stored post, i stored firehose message, n story id, m probed, w window, x snapshot
    kind        text,
    item_id     bigint,
    bands       text,        -- m: the bands the item was found by, joined by commas; x: the open transactions
    story_id    bigint,      -- n: the id drawn; x: the snapshot's xmax
    seen_at     timestamptz,
    story_start timestamptz,
    features    text
);

CREATE FUNCTION story_lookup_stored(p_posts bigint[], p_firehose bigint[], p_draw int)
RETURNS SETOF story_lookup_row
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
    -- A stored firehose message is found in firehose_message_ids, so that
    -- no partition of the firehose is planned; its story is read by a
    -- statement of its own, for the few batches that update messages.
    RETURN QUERY
    SELECT 's'::text, 'p'::text, id, NULL::text, coalesce(story_id, 0), NULL::timestamptz, NULL::timestamptz, NULL::text
        FROM posts WHERE id = ANY(p_posts)
    UNION ALL
    SELECT 'i', 'f', id, NULL, 0, NULL, NULL, NULL FROM firehose_message_ids WHERE id = ANY(p_firehose)
    UNION ALL
    SELECT 'n', '', 0, NULL, nextval('stories_id_seq'), NULL, NULL, NULL FROM generate_series(1, p_draw);
END
$$;

CREATE FUNCTION story_window_lookup(p_posts bigint[], p_firehose bigint[], p_draw int,
    p_xmax bigint, p_open bigint[], p_from timestamptz[], p_to timestamptz[], p_limit int)
RETURNS SETOF story_lookup_row
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
    RETURN QUERY SELECT * FROM story_lookup_stored(p_posts, p_firehose, p_draw);
    -- The range of written_xid has an upper bound, so that the plan walks
    -- the index; OFFSET 0 keeps the open transactions' subquery from
    -- being flattened into a join, which may be hashed over a scan of the
    -- whole table, so that each is one probe of the index. A first load
    -- has no xmax (NULL): nothing was written since.
    RETURN QUERY
    SELECT 'w'::text, kind::text, item_id, NULL::text, story_id, seen_at, story_start, features
        FROM story_members WHERE written_xid BETWEEN p_xmax::text::xid8 AND (p_xmax + (1::bigint << 62))::text::xid8
    UNION ALL
    SELECT 'w', w.kind::text, w.item_id, NULL, w.story_id, w.seen_at, w.story_start, w.features
        FROM unnest(p_open) x, LATERAL (SELECT * FROM story_members WHERE written_xid = x::text::xid8 OFFSET 0) w
    UNION ALL
    SELECT 'w', w.kind::text, w.item_id, NULL, w.story_id, w.seen_at, w.story_start, w.features
        FROM unnest(p_from, p_to) r(lo, hi),
            LATERAL (SELECT * FROM story_members WHERE seen_at >= r.lo AND seen_at < r.hi LIMIT p_limit) w
    UNION ALL
    SELECT 'x', '', 0, (SELECT string_agg(x::text, ',') FROM pg_snapshot_xip(s) x), pg_snapshot_xmax(s)::text::bigint, NULL, NULL, NULL
        FROM pg_current_snapshot() s;
END
$$;
