package db

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db/story"
)

// Stories after retention: a story whose items were all in a dropped month
// is deleted, and one that lost some items shows what the kept ones say,
// as if the dropped items had never been written.

// storyBatch is how many messages of a dropped month have their stories
// brought up to date per transaction.
const storyBatch = 5_000

// pruneDroppedStories brings the stories of the messages of the detached
// partition part up to date with the items that are kept: a story left
// with no item is deleted; the others get their size, first and last item
// times, headline, sources, coins and panes recomputed from the kept
// items. The messages' story members and bands are deleted. It runs once
// the partition is detached (the firehose no longer holds its messages)
// and before it is dropped, so that a run interrupted in between does it
// again. It returns how many stories it deleted and how many it changed.
func pruneDroppedStories(ctx context.Context, bdb *bun.DB, part string) (deleted, changed int64, err error) {
	last := int64(0)
	for {
		var done bool
		err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var batch []struct {
				ID      int64  `bun:"id"`
				StoryID *int64 `bun:"story_id"`
			}
			if err := tx.NewRaw("SELECT id, story_id FROM "+quoteIdent(part)+" WHERE id > ? ORDER BY id LIMIT ?",
				last, storyBatch).Scan(ctx, &batch); err != nil {
				return fmt.Errorf("read: %w", err)
			}
			if len(batch) == 0 {
				done = true
				return nil
			}
			last = batch[len(batch)-1].ID
			ids := make([]int64, len(batch))
			var stories []int64
			for i, m := range batch {
				ids[i] = m.ID
				if m.StoryID != nil {
					stories = append(stories, *m.StoryID)
				}
			}
			if err := dropMembers(ctx, tx, ids); err != nil {
				return err
			}
			slices.Sort(stories)
			d, c, err := refreshStories(ctx, tx, slices.Compact(stories))
			deleted, changed = deleted+d, changed+c
			return err
		})
		if err != nil {
			return deleted, changed, fmt.Errorf("stories of %s: %w", part, err)
		}
		if done {
			return deleted, changed, nil
		}
	}
}

// dropMembers deletes the story members of the firehose messages ids and
// their bands (found through the probe index by band and time), so that
// no probe finds them again.
func dropMembers(ctx context.Context, tx bun.Tx, ids []int64) error {
	var gone []struct {
		ItemID   int64     `bun:"item_id"`
		SeenAt   time.Time `bun:"seen_at"`
		Features string    `bun:"features"`
	}
	if err := tx.NewRaw(`DELETE FROM story_members WHERE kind = 'f' AND item_id = ANY(?::bigint[])
	RETURNING item_id, seen_at, features`, pgdialect.Array(ids)).Scan(ctx, &gone); err != nil {
		return fmt.Errorf("delete members: %w", err)
	}
	if len(gone) == 0 {
		return nil
	}
	var bands, items []int64
	var seen []time.Time
	for _, m := range gone {
		f, err := story.Decode(m.Features)
		if err != nil {
			return fmt.Errorf("member %d: %w", m.ItemID, err)
		}
		for _, b := range f.Bands() {
			bands, seen, items = append(bands, b), append(seen, m.SeenAt), append(items, m.ItemID)
		}
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM story_bands b
	USING unnest(?::bigint[], ?::timestamptz[], ?::bigint[]) AS v(band, seen_at, item_id)
	WHERE b.band = v.band AND b.seen_at = v.seen_at AND b.kind = 'f' AND b.item_id = v.item_id`,
		pgdialect.Array(bands), pgdialect.Array(seen), pgdialect.Array(items))
	if err != nil {
		return fmt.Errorf("delete bands: %w", err)
	}
	return nil
}

// keptItemsSQL reads the items still stored of the locked stories, in the
// order of a story's items (StoryItems). Each story's items lie between
// its first and last item times, as stored before the refresh: the
// firehose is probed only in the partitions of that span.
const keptItemsSQL = `SELECT i.* FROM stories s, LATERAL (
		SELECT 'p' AS kind, p.id, p.story_id, p.created_at, '' AS title, p.body, p.source, '' AS pane, p.coins
		FROM posts p WHERE p.story_id = s.id
		UNION ALL
		SELECT 'f', f.id, f.story_id, f.created_at, coalesce(f.title, ''), coalesce(f.body, ''), f.source, f.pane::text, f.coins
		FROM firehose_messages f
		WHERE f.story_id = s.id AND f.created_at BETWEEN s.first_seen_at AND s.last_seen_at) i
	WHERE s.id = ANY(?::bigint[])
	ORDER BY i.created_at, i.kind DESC, i.id`

// refreshStories recomputes the stories ids (sorted) from their kept
// items, deleting those left with none. The stories are locked first, in
// id order as the writers lock them, so that an item a writer adds
// meanwhile is either read here or counted onto the refreshed row.
func refreshStories(ctx context.Context, tx bun.Tx, ids []int64) (deleted, changed int64, err error) {
	if len(ids) == 0 {
		return 0, 0, nil
	}
	var locked []int64
	if err := tx.NewRaw("SELECT id FROM stories WHERE id = ANY(?::bigint[]) ORDER BY id FOR UPDATE",
		pgdialect.Array(ids)).Scan(ctx, &locked); err != nil {
		return 0, 0, fmt.Errorf("lock stories: %w", err)
	}
	if len(locked) == 0 {
		return 0, 0, nil
	}
	var kept []struct {
		Kind      string    `bun:"kind"`
		ID        int64     `bun:"id"`
		StoryID   int64     `bun:"story_id"`
		CreatedAt time.Time `bun:"created_at"`
		Title     string    `bun:"title"`
		Body      string    `bun:"body"`
		Source    string    `bun:"source"`
		Pane      string    `bun:"pane"`
		Coins     []string  `bun:"coins,array"`
	}
	if err := tx.NewRaw(keptItemsSQL, pgdialect.Array(locked)).Scan(ctx, &kept); err != nil {
		return 0, 0, fmt.Errorf("read kept items: %w", err)
	}
	plan := &StoryPlan{stories: map[int64]*storyDelta{}}
	for _, it := range kept {
		s := it.StoryID
		plan.grow(&StoryItem{Kind: ItemKind(it.Kind[0]), ID: it.ID, CreatedAt: it.CreatedAt, Title: it.Title,
			Body: it.Body, Source: it.Source, Pane: it.Pane, Coins: it.Coins, Story: &s})
	}
	var empty []int64
	for _, id := range locked {
		if plan.stories[id] == nil {
			empty = append(empty, id)
		}
	}
	if len(empty) > 0 {
		res, err := tx.ExecContext(ctx, "DELETE FROM stories WHERE id = ANY(?::bigint[])", pgdialect.Array(empty))
		if err != nil {
			return 0, 0, fmt.Errorf("delete stories: %w", err)
		}
		deleted, _ = res.RowsAffected()
	}
	if len(plan.stories) == 0 {
		return deleted, 0, nil
	}
	r := plan.rows()
	res, err := tx.ExecContext(ctx, `UPDATE stories s SET size = v.n, first_seen_at = v.first, last_seen_at = v.last,
		headline = v.headline, sources = v.sources, coins = v.coins, panes = v.panes
	FROM (SELECT id, first, last, n, headline, string_to_array(sources, E'\x1f') AS sources,
			coalesce(string_to_array(coins, E'\x1f'), '{}') AS coins, coalesce(string_to_array(panes, E'\x1f'), '{}') AS panes
		FROM unnest(?::bigint[], ?::timestamptz[], ?::timestamptz[], ?::int[], ?::text[], ?::text[], ?::text[], ?::text[])
			AS u(id, first, last, n, headline, sources, coins, panes)) v
	WHERE s.id = v.id AND (s.size, s.first_seen_at, s.last_seen_at, s.headline, s.sources, s.coins, s.panes)
		IS DISTINCT FROM (v.n, v.first, v.last, v.headline, v.sources, v.coins, v.panes)`,
		pgdialect.Array(r.ids), pgdialect.Array(r.first), pgdialect.Array(r.last), pgdialect.Array(r.sizes),
		pgdialect.Array(r.heads), pgdialect.Array(r.sources), pgdialect.Array(r.coins), pgdialect.Array(r.panes))
	if err != nil {
		return deleted, 0, fmt.Errorf("update stories: %w", err)
	}
	changed, _ = res.RowsAffected()
	return deleted, changed, nil
}
