package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"
	"github.com/vektah/gqlparser/v2/ast"

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
	if rows, more, err = r.boundStories(ctx, rows, n, more); err != nil {
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

// storyItemsConn names the connection of one story's items.
func storyItemsConn(storyID int64) string { return fmt.Sprintf("story:%d:items", storyID) }

// storyItemsLimit is the first argument of a story's items: 1 to 100, or
// absent (0) for all.
func storyItemsLimit(first *int) (int, error) {
	if first == nil {
		return 0, nil
	}
	if *first < 1 || *first > maxPageSize {
		return 0, apperr.Invalid("first", "first must be an integer from 1 to %d", maxPageSize)
	}
	return *first, nil
}

// storyItems resolves Story.items.
func (r *Resolver) storyItems(ctx context.Context, s *db.Story, first *int) ([]model.StoryItem, error) {
	n, err := storyItemsLimit(first)
	if err != nil {
		return nil, err
	}
	items, _, err := r.readStoryItems(ctx, s, db.StoryItemsRead{Limit: n})
	if err != nil {
		return nil, err
	}
	out := make([]model.StoryItem, len(items))
	for i, it := range items {
		out[i] = storyItem(it)
	}
	return out, nil
}

// storyItemsConnection resolves Story.itemsConnection: a page is read with
// one item more than it shows (Peek), which tells whether later items
// follow.
func (r *Resolver) storyItemsConnection(ctx context.Context, s *db.Story, first *int, after *string) (*model.StoryItemConnection, error) {
	n, err := storyItemsLimit(first)
	if err != nil {
		return nil, err
	}
	rd := db.StoryItemsRead{Limit: n, Peek: n > 0}
	conn := storyItemsConn(s.ID)
	if after != nil {
		us, pos, err := cursor.DecodeKey(conn, *after)
		if err != nil {
			return nil, err
		}
		key := storyItemFromCursor(us, pos)
		rd.After = &key
	}
	items, more, err := r.readStoryItems(ctx, s, rd)
	if err != nil {
		return nil, err
	}
	c := &model.StoryItemConnection{Nodes: make([]model.StoryItem, len(items)),
		PageInfo: &model.PageInfo{HasNextPage: more, HasPreviousPage: after != nil}}
	for i, it := range items {
		c.Nodes[i] = storyItem(it)
	}
	// As the lists' connections: the cursors of every edge only when the
	// edges are selected, as a whole story may hold thousands of items.
	if len(items) > 0 {
		start, end := storyItemCursor(conn, items[0].Key()), storyItemCursor(conn, items[len(items)-1].Key())
		c.PageInfo.StartCursor, c.PageInfo.EndCursor = &start, &end
	}
	if selects(ctx, "edges") {
		c.Edges = make([]model.StoryItemEdge, len(items))
		for i, it := range items {
			c.Edges[i] = model.StoryItemEdge{Cursor: storyItemCursor(conn, it.Key()), Node: c.Nodes[i]}
		}
	}
	return c, nil
}

// A story item's cursor is the key of EncodeKey: its created_at in
// microseconds, and its id doubled plus its kind (ids are at most 2^53−1).
func storyItemCursor(conn string, k db.StoryItemKey) string {
	pos := k.ID << 1
	if k.Kind == db.KindFirehose {
		pos |= 1
	}
	return cursor.EncodeKey(conn, k.CreatedAt.UnixMicro(), pos)
}

func storyItemFromCursor(us, pos int64) db.StoryItemKey {
	k := db.StoryItemKey{CreatedAt: time.UnixMicro(us).UTC(), Kind: db.KindPost, ID: pos >> 1}
	if pos&1 == 1 {
		k.Kind = db.KindFirehose
	}
	return k
}

// storyItem is an item of a story as the union StoryItem.
func storyItem(it db.StoryEntry) model.StoryItem {
	if it.Post != nil {
		return it.Post
	}
	return it.Firehose
}

// readStoryItems reads the items of s that rd asks for, with the long
// texts the field being resolved selects, and returns those shown with
// whether more follow (the item Peek read beyond them), charging the
// texts shown to the response. Under a byte budget (readBudget) a story
// whose selected long texts pass it is not read: boundedRead's error, so
// that a story (or a page of its items) is either whole or refused, never
// cut.
func (r *Resolver) readStoryItems(ctx context.Context, s *db.Story, rd db.StoryItemsRead) ([]db.StoryEntry, bool, error) {
	if fc := graphql.GetFieldContext(ctx); fc != nil && graphql.HasOperationContext(ctx) {
		rd = storyItemsRead(graphql.GetOperationContext(ctx), fc.Field.Field, rd)
	}
	items, err := r.loadersFrom(ctx).itemsOfStory(ctx, s.ID, rd, readBudget(ctx))
	var tl *db.TooLargeError
	if errors.As(err, &tl) {
		return nil, false, boundedRead(ctx, err, 0, 0, false, "story", storyTexts(rd))
	}
	if err != nil {
		return nil, false, fmt.Errorf("items of story %d: %w", s.ID, err)
	}
	more := rd.Limit > 0 && len(items) > rd.Limit
	if more {
		items = items[:rd.Limit]
	}
	text := int64(0)
	for _, it := range items {
		if it.Post != nil {
			text += it.Post.TextBytes()
		} else {
			text += it.Firehose.TextBytes()
		}
	}
	// The texts not selected were not read, so the items' TextBytes are
	// what the response shows of them.
	if op, ok := ctx.Value(operationKey{}).(*operationState); ok && op.text.Add(text) > op.limit && !op.cut {
		op.stop(errResponseTooLarge)
		return nil, false, errResponseTooLarge
	}
	return items, more, nil
}

// storyItemsRead returns rd with the long texts omitted that the items
// field (a Story.items or Story.itemsConnection selection) does not show:
// those that neither of its item types selects, in the items of items, or
// in the nodes and the edges' nodes of itemsConnection.
func storyItemsRead(opCtx *graphql.OperationContext, field *ast.Field, rd db.StoryItemsRead) db.StoryItemsRead {
	sets := []ast.SelectionSet{field.SelectionSet}
	if field.Name == "itemsConnection" {
		sets = sets[:0]
		for _, f := range graphql.CollectFields(opCtx, field.SelectionSet, []string{"StoryItemConnection"}) {
			switch f.Name {
			case "nodes":
				sets = append(sets, f.SelectionSet)
			case "edges":
				for _, e := range graphql.CollectFields(opCtx, f.SelectionSet, []string{"StoryItemEdge"}) {
					if e.Name == "node" {
						sets = append(sets, e.SelectionSet)
					}
				}
			}
		}
	}
	// typ is the type with what it implements, as the generated code
	// collects its fields.
	omit := func(typ []string, optional []optionalColumn) []string {
		var fields []graphql.CollectedField
		for _, set := range sets {
			fields = append(fields, graphql.CollectFields(opCtx, set, typ)...)
		}
		var out []string
		for _, o := range optional {
			if !slices.ContainsFunc(fields, func(f graphql.CollectedField) bool { return f.Name == o.field }) {
				out = append(out, o.column)
			}
		}
		return out
	}
	rd.PostOmit = omit([]string{"Post", "StoryItem"}, postOptional)
	rd.FirehoseOmit = omit([]string{"FirehoseMessage", "StoryItem"}, firehoseOptional)
	return rd
}

// storyTexts returns the fields of the long texts rd reads, posts' first,
// each once: those an error of a story too large names.
func storyTexts(rd db.StoryItemsRead) []string {
	sel := selectedOptional(postOptional, rd.PostOmit)
	for _, f := range selectedOptional(firehoseOptional, rd.FirehoseOmit) {
		if !slices.Contains(sel, f) {
			sel = append(sel, f)
		}
	}
	return sel
}

// boundStories bounds a page of n stories (rows, more) by the budget of
// readBudget, as the lists of items are bounded: by the long texts of the
// items its stories' items fields select, measured in the database before
// any is read. The page ends before the first story that would take it
// over the budget, with a cursor that goes on from that story
// (boundedRead); a first story alone over it is refused.
func (r *Resolver) boundStories(ctx context.Context, rows []db.Story, n int, more bool) ([]db.Story, bool, error) {
	budget := readBudget(ctx)
	fc := graphql.GetFieldContext(ctx)
	if budget == 0 || len(rows) == 0 || fc == nil {
		return rows, more, nil
	}
	opCtx := graphql.GetOperationContext(ctx)
	var reads []db.StoryItemsRead
	node := func(set ast.SelectionSet) {
		for _, f := range graphql.CollectFields(opCtx, set, nil) {
			args := f.ArgumentMap(opCtx.Variables)
			k := 0
			if v, ok := args["first"]; ok {
				k = intArg(v)
			}
			rd := db.StoryItemsRead{Limit: k}
			switch {
			case f.Name == "items":
			case f.Name == "itemsConnection" && args["after"] == nil:
				// A page after a cursor (of one story) is measured when
				// read.
				rd.Peek = k > 0
			default:
				continue
			}
			reads = append(reads, storyItemsRead(opCtx, f.Field, rd))
		}
	}
	eachNodeSelection(opCtx, fc.Field.Selections, node)
	ids := make([]int64, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	bytes := map[int64]int64{}
	var sel []string
	l := r.loadersFrom(ctx)
	for _, rd := range reads {
		sizes, err := r.store.StoryTextBytes(ctx, ids, rd)
		if err != nil {
			return nil, false, err
		}
		for _, id := range ids {
			bytes[id] += sizes[id]
			l.stories.measured.Store(storyItemsKey{id, readKey(rd, 0)}, sizes[id])
		}
		for _, f := range storyTexts(rd) {
			if !slices.Contains(sel, f) {
				sel = append(sel, f)
			}
		}
	}
	sum := int64(0)
	for i := range rows {
		b := bytes[rows[i].ID]
		if sum+b <= budget {
			sum += b
			continue
		}
		var err error
		if i == 0 {
			err = &db.TooLargeError{ID: rows[0].ID, Bytes: b, Max: budget}
		}
		return rows[:i], true, boundedRead(ctx, err, i, n, true, "story", sel)
	}
	return rows, more, nil
}

// intArg is the value of an Int argument as ArgumentMap gives it: from
// the document or from the variables (decoded from JSON); 0 when absent.
func intArg(v any) int {
	switch v := v.(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
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
	// measured holds the bytes of the stories' texts that a page of
	// stories measured (boundStories), by storyItemsKey without budget,
	// so that the reads of their items do not measure them again.
	measured sync.Map
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

// storyItemsKey asks for the items of a story that read returns, or
// none when their long texts pass max (when positive).
type storyItemsKey struct {
	id   int64
	read storyRead
}

// storyRead is a db.StoryItemsRead as a comparable key, with its budget.
type storyRead struct {
	n                      int
	peek                   bool
	after                  db.StoryItemKey // zero: from the first item
	postOmit, firehoseOmit string
	max                    int64
}

// readKey is the key of rd with the budget max.
func readKey(rd db.StoryItemsRead, max int64) storyRead {
	k := storyRead{n: rd.Limit, peek: rd.Peek, postOmit: strings.Join(rd.PostOmit, ","), firehoseOmit: strings.Join(rd.FirehoseOmit, ","), max: max}
	if rd.After != nil {
		k.after = *rd.After
	}
	return k
}

// measuredBytes returns the bytes of the stories' texts under the read
// k as a page of stories measured them, if it measured them all.
func (l *loaders) measuredBytes(ids []int64, k storyRead) (map[int64]int64, bool) {
	k.max = 0
	out := make(map[int64]int64, len(ids))
	for _, id := range ids {
		v, ok := l.stories.measured.Load(storyItemsKey{id, k})
		if !ok {
			return nil, false
		}
		out[id] = v.(int64)
	}
	return out, true
}

func (k storyRead) read() db.StoryItemsRead {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	rd := db.StoryItemsRead{Limit: k.n, Peek: k.peek, PostOmit: split(k.postOmit), FirehoseOmit: split(k.firehoseOmit)}
	if k.after != (db.StoryItemKey{}) {
		after := k.after
		rd.After = &after
	}
	return rd
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

func (l *loaders) itemsOfStory(ctx context.Context, id int64, rd db.StoryItemsRead, max int64) ([]db.StoryEntry, error) {
	l.stories.itemsOnce.Do(func() {
		capacity := int(min(l.stories.expect.Load(), maxPageSize))
		if capacity < 1 {
			capacity = maxPageSize
		}
		l.stories.items = dataloader.NewBatchedLoader(l.loadStoryItems,
			dataloader.WithWait[storyItemsKey, []db.StoryEntry](l.wait),
			dataloader.WithBatchCapacity[storyItemsKey, []db.StoryEntry](capacity))
	})
	return l.stories.items.Load(ctx, storyItemsKey{id, readKey(rd, max)})()
}

// loadStoryItems reads the items of the stories of a batch, one read per
// distinct read (an operation usually asks with one). A read with a budget
// measures the stories first and reads only those within it: each of the
// others has a *db.TooLargeError.
func (l *loaders) loadStoryItems(ctx context.Context, keys []storyItemsKey) []*dataloader.Result[[]db.StoryEntry] {
	byRead := map[storyRead][]int64{}
	for _, k := range keys {
		byRead[k.read] = append(byRead[k.read], k.id)
	}
	got := map[storyItemsKey][]db.StoryEntry{}
	over := map[storyItemsKey]error{}
	var err error
	for k, ids := range byRead {
		rd := k.read()
		if k.max > 0 {
			sizes, ok := l.measuredBytes(ids, k)
			if !ok {
				if sizes, err = l.store.StoryTextBytes(ctx, ids, rd); err != nil {
					break
				}
			}
			ids = slices.DeleteFunc(ids, func(id int64) bool {
				if b := sizes[id]; b > k.max {
					over[storyItemsKey{id, k}] = &db.TooLargeError{ID: id, Bytes: b, Max: k.max}
					return true
				}
				return false
			})
		}
		var m map[int64][]db.StoryEntry
		if m, err = l.store.StoryItems(ctx, ids, rd); err != nil {
			break
		}
		for id, items := range m {
			got[storyItemsKey{id, k}] = items
		}
	}
	out := make([]*dataloader.Result[[]db.StoryEntry], len(keys))
	for i, k := range keys {
		out[i] = &dataloader.Result[[]db.StoryEntry]{Data: got[k], Error: err}
		if err == nil {
			out[i].Error = over[k]
		}
		if out[i].Data == nil && out[i].Error == nil {
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
