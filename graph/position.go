package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/graph/model"
)

// Exact polling: a list read after a stream position (afterPosition)
// holds the items that became visible since, in the order of their stream
// positions, newest first, each page below the bound taken when its first
// page was read (db/stream.go). Its cursors are positions, bound to a
// connection of their own ("posts:after"), so that they cannot be mixed
// with the id cursors of the plain list.
const (
	connPostsAfter    = "posts:after"
	connFirehoseAfter = "firehose:after"
)

// positionPage is a page of a list read after a stream position.
type positionPage struct {
	rg       db.StreamRange
	position *int64 // the bound of a first page, less one; nil on later pages
	paged    bool   // after a cursor of this walk
}

// positionArgs checks afterPosition with the Relay arguments (forward
// only) and returns the range of the page. On a first page it takes the
// stream's bound, which is where the next poll starts.
func (r *Resolver) positionArgs(ctx context.Context, kind, streamConn, afterConn string, a pageArgs, afterPosition string) (positionPage, error) {
	if a.last != nil || a.before != nil {
		return positionPage{}, apperr.Invalid("afterPosition", "afterPosition pages forward only: use first and after")
	}
	pp := positionPage{rg: db.StreamRange{Limit: defaultPageSize, Newest: true}}
	if a.first != nil {
		if *a.first < 1 || *a.first > maxPageSize {
			return positionPage{}, apperr.Invalid("first", "first must be an integer from 1 to %d", maxPageSize)
		}
		pp.rg.Limit = *a.first
	}
	var err error
	if pp.rg.After, err = cursor.Decode(streamConn, afterPosition); err != nil {
		return positionPage{}, apperr.Invalid("afterPosition", "afterPosition must be the position of an answer of this list or of an item of its stream")
	}
	if a.after != nil {
		if pp.rg.Bound, err = cursor.Decode(afterConn, *a.after); err != nil {
			return positionPage{}, err
		}
		pp.paged = true
		return pp, nil
	}
	bound, _, err := r.store.StreamBound(ctx, kind)
	if err != nil {
		return positionPage{}, err
	}
	pp.rg.Bound = bound
	end := bound - 1
	pp.position = &end
	return pp, nil
}

// firstPagePosition is the position of a plain list's first page, taken
// before it is read, when the page is a first page whose position is
// selected; nil otherwise.
func (r *Resolver) firstPagePosition(ctx context.Context, kind string, p db.Page) (*int64, error) {
	if p.After != 0 || p.Before != 0 || p.Backward || !selects(ctx, "position") {
		return nil, nil
	}
	bound, _, err := r.store.StreamBound(ctx, kind)
	if err != nil {
		return nil, err
	}
	end := bound - 1
	return &end, nil
}

// selects reports whether the field being resolved selects the named
// field of its result.
func selects(ctx context.Context, name string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// encodePosition encodes a position of the stream of conn, or nil.
func encodePosition(conn string, pos *int64) *string {
	if pos == nil {
		return nil
	}
	s := cursor.Encode(conn, *pos)
	return &s
}

// positionInfo is the page information of a page read after a position,
// whose rows have the given first and last positions.
func positionInfo(afterConn string, pp positionPage, n int, firstPos, lastPos func() int64, more bool) *model.PageInfo {
	info := &model.PageInfo{HasNextPage: more, HasPreviousPage: pp.paged}
	if n > 0 {
		start, end := cursor.Encode(afterConn, firstPos()), cursor.Encode(afterConn, lastPos())
		info.StartCursor, info.EndCursor = &start, &end
	}
	return info
}

// afterRead is a page read after a stream position: its rows, their
// cursors (when edges are selected), its page information and position.
type afterRead[T any] struct {
	rows     []T
	cursors  []string
	info     *model.PageInfo
	position *string
}

// readAfter reads the rows of kind that became visible after afterPosition
// with read, bounded in bytes like the list's pages and charging their
// texts to the operation; item names the rows in errors ("post") and
// selected their long texts that are read.
func readAfter[T any](ctx context.Context, r *Resolver, kind, streamConn, afterConn string, a pageArgs, afterPosition string,
	read func(context.Context, db.StreamRange) ([]T, bool, error), pos func(*T) int64, texts map[string]func(*T) int,
	item string, selected []string) (afterRead[T], error) {
	pp, err := r.positionArgs(ctx, kind, streamConn, afterConn, a, afterPosition)
	if err != nil {
		return afterRead[T]{}, err
	}
	pp.rg.MaxBytes = readBudget(ctx)
	rows, more, err := read(ctx, pp.rg)
	if err := boundedRead(ctx, err, len(rows), pp.rg.Limit, more, item, selected); err != nil {
		return afterRead[T]{}, err
	}
	if err := chargeItems(ctx, rows, texts); err != nil {
		return afterRead[T]{}, err
	}
	out := afterRead[T]{rows: rows, position: encodePosition(streamConn, pp.position),
		info: positionInfo(afterConn, pp, len(rows), func() int64 { return pos(&rows[0]) }, func() int64 { return pos(&rows[len(rows)-1]) }, more)}
	if selects(ctx, "edges") {
		out.cursors = make([]string, len(rows))
		for i := range rows {
			out.cursors[i] = cursor.Encode(afterConn, pos(&rows[i]))
		}
	}
	return out, nil
}

// postsAfter reads the posts that became visible after afterPosition.
func (r *Resolver) postsAfter(ctx context.Context, f db.PostFilter, a pageArgs, afterPosition string) (*model.PostConnection, error) {
	res, err := readAfter(ctx, r, live.KindPosts, connPostStream, connPostsAfter, a, afterPosition,
		func(ctx context.Context, rg db.StreamRange) ([]db.Post, bool, error) {
			return r.store.StreamPosts(ctx, f, rg)
		},
		func(p *db.Post) int64 { return p.StreamPos }, postTexts, "post", selectedOptional(postOptional, f.Omit))
	if err != nil {
		return nil, err
	}
	c := &model.PostConnection{Nodes: res.rows, PageInfo: res.info, Position: res.position}
	for i, cur := range res.cursors {
		c.Edges = append(c.Edges, model.PostEdge{Cursor: cur, Node: &res.rows[i]})
	}
	return c, nil
}

// firehoseAfter reads the firehose messages that became visible after
// afterPosition.
func (r *Resolver) firehoseAfter(ctx context.Context, f db.FirehoseFilter, a pageArgs, afterPosition string) (*model.FirehoseConnection, error) {
	res, err := readAfter(ctx, r, live.KindFirehose, connFirehoseStream, connFirehoseAfter, a, afterPosition,
		func(ctx context.Context, rg db.StreamRange) ([]db.FirehoseMessage, bool, error) {
			return r.store.StreamFirehose(ctx, f, rg)
		},
		func(m *db.FirehoseMessage) int64 { return m.StreamPos }, firehoseTexts, "firehose message", selectedOptional(firehoseOptional, f.Omit))
	if err != nil {
		return nil, err
	}
	c := &model.FirehoseConnection{Nodes: res.rows, PageInfo: res.info, Position: res.position}
	for i, cur := range res.cursors {
		c.Edges = append(c.Edges, model.FirehoseEdge{Cursor: cur, Node: &res.rows[i]})
	}
	return c, nil
}
