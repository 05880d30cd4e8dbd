package importer

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db"
)

// BackfillStories gives a story to every post and firehose message that has
// none (stored before stories existed), as an import of the same items
// would: the items of both tables in time order, batch items at a time
// through the story assigner, each batch one short transaction that sets
// the items' story_id and writes their stories. It runs beside the service
// (a writer's items join the stories it makes, and the other way round)
// and can be stopped and run again: it resumes where story_id is NULL. An
// item that a writer gives a story while its batch is assigned keeps that
// story: the batch is assigned again.
func BackfillStories(ctx context.Context, bdb *bun.DB, batch int, progress io.Writer) (BackfillStats, error) {
	if batch < 1 {
		return BackfillStats{}, fmt.Errorf("backfill stories: batch %d: must be positive", batch)
	}
	var (
		stats   BackfillStats
		as      db.StoryAssigner
		cursors = [2]storyCursor{{kind: db.KindPost}, {kind: db.KindFirehose}}
	)
	for {
		// The next items of each table, merged in time order; the first
		// batch of them are assigned, the others read again next time.
		var items []pendingItem
		for i := range cursors {
			rows, err := cursors[i].next(ctx, bdb, batch)
			if err != nil {
				return stats, err
			}
			items = append(items, rows...)
		}
		if len(items) == 0 {
			return stats, nil
		}
		slices.SortFunc(items, func(a, b pendingItem) int {
			return cmp.Or(a.item.CreatedAt.Compare(b.item.CreatedAt), cmp.Compare(a.item.Kind, b.item.Kind), cmp.Compare(a.item.ID, b.item.ID))
		})
		items = items[:min(len(items), batch)]
		done, err := backfillStoryBatch(ctx, bdb, &as, items)
		if err != nil {
			return stats, err
		}
		if !done {
			// A writer gave some of the items a story meanwhile: the
			// assigner's memory of this batch is wrong, start afresh (what
			// was committed is in the database).
			as = db.StoryAssigner{}
			continue
		}
		for _, it := range items {
			c := &cursors[0]
			if it.item.Kind == db.KindFirehose {
				c = &cursors[1]
				stats.Firehose++
			} else {
				stats.Posts++
			}
			c.at, c.id, c.started = it.item.CreatedAt, it.item.ID, true
		}
		if progress != nil {
			last := items[len(items)-1].item.CreatedAt
			fmt.Fprintf(progress, "stories: %d posts and %d firehose messages assigned (up to %s)\n",
				stats.Posts, stats.Firehose, last.UTC().Format(time.RFC3339))
		}
	}
}

// pendingItem is an item without a story, as the backfill reads it.
type pendingItem struct {
	item  db.StoryItem
	story int64
}

// storyCursor walks one table's items without a story in (created_at, id)
// order, the order of its created_at index.
type storyCursor struct {
	kind    db.ItemKind
	at      time.Time
	id      int64
	started bool
}

func (c *storyCursor) next(ctx context.Context, bdb *bun.DB, n int) ([]pendingItem, error) {
	table, columns := "posts", "NULL, body, NULL"
	if c.kind == db.KindFirehose {
		table, columns = "firehose_messages", "title, body, pane"
	}
	after := ""
	args := []any{}
	if c.started {
		after = "(created_at, id) > (?, ?) AND "
		args = append(args, c.at, c.id)
	}
	args = append(args, n)
	rows, err := bdb.QueryContext(ctx, "SELECT id, created_at, "+columns+", source, coins FROM "+table+
		" WHERE "+after+"story_id IS NULL ORDER BY created_at, id LIMIT ?", args...)
	if err != nil {
		return nil, fmt.Errorf("backfill stories of %s: read: %w", table, err)
	}
	defer rows.Close()
	var out []pendingItem
	for rows.Next() {
		p := pendingItem{item: db.StoryItem{Kind: c.kind}}
		var title, body, pane sql.NullString
		if err := rows.Scan(&p.item.ID, &p.item.CreatedAt, &title, &body, &pane, &p.item.Source, pgdialect.Array(&p.item.Coins)); err != nil {
			return nil, fmt.Errorf("backfill stories of %s: read: %w", table, err)
		}
		p.item.Title, p.item.Body, p.item.Pane = title.String, body.String, pane.String
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("backfill stories of %s: read: %w", table, err)
	}
	return out, nil
}

// backfillStoryBatch assigns items and writes their stories in one
// transaction; done is false (and nothing written) when a writer gave one
// of them a story meanwhile.
func backfillStoryBatch(ctx context.Context, bdb *bun.DB, as *db.StoryAssigner, items []pendingItem) (done bool, err error) {
	list := make([]db.StoryItem, len(items))
	for i := range items {
		list[i] = items[i].item
		list[i].Story = &items[i].story
	}
	plan, err := as.Assign(ctx, db.SQLQuerier{DB: bdb.DB}, list)
	if err != nil {
		return false, fmt.Errorf("backfill stories: %w", err)
	}
	errRace := errors.New("backfill stories: an item got a story meanwhile")
	err = bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, kind := range []db.ItemKind{db.KindPost, db.KindFirehose} {
			var ids, stories []int64
			var times []time.Time
			for _, it := range items {
				if it.item.Kind == kind {
					ids, stories, times = append(ids, it.item.ID), append(stories, it.story), append(times, it.item.CreatedAt)
				}
			}
			if len(ids) == 0 {
				continue
			}
			table := "posts"
			if kind == db.KindFirehose {
				table = "firehose_messages"
			}
			// created_at too: the firehose's primary key (and partition).
			res, err := tx.ExecContext(ctx, "UPDATE "+table+" AS t SET story_id = v.s"+
				" FROM unnest(?::bigint[], ?::bigint[], ?::timestamptz[]) AS v(id, s, at)"+
				" WHERE t.id = v.id AND t.created_at = v.at AND t.story_id IS NULL",
				pgdialect.Array(ids), pgdialect.Array(stories), pgdialect.Array(times))
			if err != nil {
				return fmt.Errorf("backfill stories of %s: write: %w", table, err)
			}
			if n, err := res.RowsAffected(); err != nil || int(n) != len(ids) {
				return errRace
			}
		}
		return plan.Write(ctx, db.SQLQuerier{DB: tx.Tx})
	})
	if err == errRace {
		return false, nil
	}
	return err == nil, err
}
