package graph

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/graph/limits"
	"github.com/feedapi/feedapi/graph/model"
)

// storiesConn is the connection name stories' cursors are bound to.
const storiesConn = "stories"

// collapseStory reports whether a collapse argument asks for one item per
// story (the enum has one value; absent means no collapse).
func collapseStory(c *model.Collapse) bool {
	return c != nil && *c == model.CollapseStory
}

// stories resolves Query.stories.
func (r *Resolver) stories(ctx context.Context, first *int, after *string, coins []string, q *string, pane *db.Pane, since *time.Time) (*model.StoryConnection, error) {
	n := limits.StoriesPageDefault
	if first != nil {
		if *first < 1 || *first > maxPageSize {
			return nil, apperr.Invalid("first", "first must be an integer from 1 to %d", maxPageSize)
		}
		n = *first
	}
	search, err := searchArgs(coins, q, nil)
	if err != nil {
		return nil, err
	}
	f := db.StoryFilter{Coins: search.Coins, Query: search.Query}
	if pane != nil {
		f.Pane = *pane
	}
	if since != nil {
		f.Since = sinceBound(*since)
	}
	var key *db.StoryKey
	if after != nil {
		us, id, err := cursor.DecodeKey(storiesConn, *after)
		if err != nil {
			return nil, err
		}
		key = &db.StoryKey{LastSeenAt: time.UnixMicro(us).UTC(), ID: id}
	}
	rows, more, err := r.store.ListStories(ctx, f, key, n)
	if err != nil {
		return nil, err
	}
	l := r.loadersFrom(ctx)
	l.stories.expect.Add(int64(len(rows)))
	c := &model.StoryConnection{Nodes: make([]db.Story, len(rows)), Edges: make([]model.StoryEdge, len(rows)),
		PageInfo: &model.PageInfo{HasNextPage: more, HasPreviousPage: after != nil}}
	for i := range rows {
		s := &rows[i]
		l.storyLoader().Prime(ctx, s.ID, s)
		c.Nodes[i] = *s
		cur := cursor.EncodeKey(storiesConn, s.LastSeenAt.UnixMicro(), s.ID)
		c.Edges[i] = model.StoryEdge{Cursor: cur, Node: s}
		if i == 0 {
			c.PageInfo.StartCursor = &cur
		}
		if i == len(rows)-1 {
			c.PageInfo.EndCursor = &cur
		}
	}
	return c, nil
}

// story resolves Query.story.
func (r *Resolver) story(ctx context.Context, id int64) (*db.Story, error) {
	if id < 1 {
		return nil, apperr.Invalid("id", "id must be a positive integer")
	}
	l := r.loadersFrom(ctx)
	l.stories.expectByID.Add(1)
	s, err := l.storyLoader().Load(ctx, id)()
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, apperr.Missing("story", id)
	}
	l.stories.expect.Add(1)
	return s, nil
}

// storyOf resolves the story field of an item.
func (r *Resolver) storyOf(ctx context.Context, id *int64) (*db.Story, error) {
	if id == nil || *id == 0 {
		return nil, nil
	}
	return r.loadersFrom(ctx).storyLoader().Load(ctx, *id)()
}

// storyItems resolves Story.items.
func (r *Resolver) storyItems(ctx context.Context, s *db.Story, first *int) ([]model.StoryItem, error) {
	n := 0
	if first != nil {
		if *first < 1 || *first > maxPageSize {
			return nil, apperr.Invalid("first", "first must be an integer from 1 to %d", maxPageSize)
		}
		n = *first
	}
	items, err := r.loadersFrom(ctx).itemsOfStory(ctx, s.ID, n)
	if err != nil {
		return nil, fmt.Errorf("items of story %d: %w", s.ID, err)
	}
	out := make([]model.StoryItem, len(items))
	for i, it := range items {
		if it.Post != nil {
			out[i] = it.Post
		} else {
			out[i] = it.Firehose
		}
	}
	return out, nil
}

// storyLoaders batch the stories of items and the items of stories.
type storyLoaders struct {
	storyOnce sync.Once
	byID      *dataloader.Loader[int64, *db.Story]
	itemsOnce sync.Once
	items     *dataloader.Loader[storyItemsKey, []db.StoryEntry]
	// expect counts the stories the operation's story fields returned:
	// once their items are all asked for, the batch is complete and is read
	// at once rather than after the loader's wait.
	expect atomic.Int64
	// expectByID counts the stories the operation's items of lists and
	// story fields will ask for, likewise for the stories by id.
	expectByID atomic.Int64
}

// expectStories counts the distinct stories of a page's items (their
// story ids, nil for none): the story loader then reads them as soon as
// the page's items have all asked, not after its wait.
func expectStories(ctx context.Context, n int, storyID func(i int) *int64) {
	l, ok := ctx.Value(loadersKey{}).(*loaders)
	if !ok {
		return
	}
	seen := make(map[int64]bool, n)
	for i := range n {
		if id := storyID(i); id != nil && *id != 0 {
			seen[*id] = true
		}
	}
	l.stories.expectByID.Add(int64(len(seen)))
}

// storyItemsKey asks for the first n items of a story (0: all).
type storyItemsKey struct {
	id int64
	n  int
}

func (l *loaders) storyLoader() *dataloader.Loader[int64, *db.Story] {
	l.stories.storyOnce.Do(func() {
		capacity := int(min(l.stories.expectByID.Load(), maxPageSize))
		if capacity < 1 {
			capacity = maxPageSize
		}
		l.stories.byID = dataloader.NewBatchedLoader(l.loadStories,
			dataloader.WithWait[int64, *db.Story](l.wait),
			dataloader.WithBatchCapacity[int64, *db.Story](capacity))
	})
	return l.stories.byID
}

func (l *loaders) loadStories(ctx context.Context, ids []int64) []*dataloader.Result[*db.Story] {
	rows, err := l.store.StoriesByID(ctx, ids)
	out := make([]*dataloader.Result[*db.Story], len(ids))
	byID := make(map[int64]*db.Story, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	for i, id := range ids {
		out[i] = &dataloader.Result[*db.Story]{Data: byID[id], Error: err}
	}
	return out
}

func (l *loaders) itemsOfStory(ctx context.Context, id int64, n int) ([]db.StoryEntry, error) {
	l.stories.itemsOnce.Do(func() {
		capacity := int(min(l.stories.expect.Load(), maxPageSize))
		if capacity < 1 {
			capacity = maxPageSize
		}
		l.stories.items = dataloader.NewBatchedLoader(l.loadStoryItems,
			dataloader.WithWait[storyItemsKey, []db.StoryEntry](l.wait),
			dataloader.WithBatchCapacity[storyItemsKey, []db.StoryEntry](capacity))
	})
	return l.stories.items.Load(ctx, storyItemsKey{id, n})()
}

// loadStoryItems reads the items of the stories of a batch, one read per
// distinct bound n (an operation usually asks with one).
func (l *loaders) loadStoryItems(ctx context.Context, keys []storyItemsKey) []*dataloader.Result[[]db.StoryEntry] {
	byN := map[int][]int64{}
	for _, k := range keys {
		byN[k.n] = append(byN[k.n], k.id)
	}
	got := map[storyItemsKey][]db.StoryEntry{}
	var err error
	for n, ids := range byN {
		var m map[int64][]db.StoryEntry
		if m, err = l.store.StoryItems(ctx, ids, n); err != nil {
			break
		}
		for id, items := range m {
			got[storyItemsKey{id, n}] = items
		}
	}
	out := make([]*dataloader.Result[[]db.StoryEntry], len(keys))
	for i, k := range keys {
		out[i] = &dataloader.Result[[]db.StoryEntry]{Data: got[k], Error: err}
		if out[i].Data == nil && err == nil {
			out[i].Data = []db.StoryEntry{}
		}
	}
	return out
}

// sourceDelays resolves Sources.delays.
func (r *Resolver) sourceDelays(ctx context.Context) ([]model.SourceDelay, error) {
	rows, err := r.store.SourceDelays(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]model.SourceDelay, len(rows))
	for i, d := range rows {
		out[i] = model.SourceDelay{Feed: d.Feed, Source: d.Source, Items: d.Items,
			MedianMs: d.Median.Milliseconds(), P95Ms: d.P95.Milliseconds()}
	}
	return out, nil
}
