package graph

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/graph/model"
)

// The names that bind cursors to the connection that issued them.
const (
	connPosts    = "posts"
	connBriefs   = "briefs"
	connFirehose = "firehose"
)

// briefPostsConn names the connection of one brief's posts.
func briefPostsConn(briefID int64) string { return fmt.Sprintf("brief:%d:posts", briefID) }

// textArg returns the free-text filter argument name, "" when it is
// absent. Text that PostgreSQL cannot compare (invalid UTF-8, a NUL byte)
// is refused as bad_request: it would make the query fail as an internal
// error. It could match nothing anyway.
func textArg(name string, v *string) (string, error) {
	if v == nil {
		return "", nil
	}
	if !utf8.ValidString(*v) || strings.IndexByte(*v, 0) >= 0 {
		return "", apperr.Invalid(name, "%s must be valid UTF-8 text without NUL characters", name)
	}
	return *v, nil
}

// pageArgs are a connection's Relay arguments.
type pageArgs struct {
	first, last   *int
	after, before *string
}

// page validates the Relay arguments of connection and turns them into a
// keyset page. Both first and last, after with last, before with first, or a
// size outside 1..100 are refused; with no size the page holds 50 items,
// backward when only before is given.
func (a pageArgs) page(connection string) (db.Page, error) {
	return a.sizedPage(connection, defaultPageSize, maxPageSize)
}

// sizedPage is page with another default and largest page size.
func (a pageArgs) sizedPage(connection string, defaultSize, maxSize int) (db.Page, error) {
	if a.first != nil && a.last != nil {
		return db.Page{}, apperr.Invalid("last", "first and last cannot be combined; page forward with first/after or backward with last/before")
	}
	if a.after != nil && a.last != nil {
		return db.Page{}, apperr.Invalid("after", "after cannot be combined with last; use before with last")
	}
	if a.before != nil && a.first != nil {
		return db.Page{}, apperr.Invalid("before", "before cannot be combined with first; use after with first")
	}
	if a.after != nil && a.before != nil {
		return db.Page{}, apperr.Invalid("before", "after and before cannot be combined")
	}
	p := db.Page{Limit: defaultSize, Backward: a.last != nil || (a.first == nil && a.before != nil)}
	if a.first != nil {
		if *a.first < 1 || *a.first > maxSize {
			return db.Page{}, apperr.Invalid("first", "first must be an integer from 1 to %d", maxSize)
		}
		p.Limit = *a.first
	}
	if a.last != nil {
		if *a.last < 1 || *a.last > maxSize {
			return db.Page{}, apperr.Invalid("last", "last must be an integer from 1 to %d", maxSize)
		}
		p.Limit = *a.last
	}
	var err error
	if a.after != nil {
		if p.After, err = cursor.Decode(connection, *a.after); err != nil {
			return db.Page{}, err
		}
	}
	if a.before != nil {
		if p.Before, err = cursor.Decode(connection, *a.before); err != nil {
			return db.Page{}, err
		}
	}
	return p, nil
}

// pageInfo answers Relay's page information for a page of items with the
// given first and last ids. more is the store's probe in the page's
// direction; the other direction is known only from the cursor given.
func pageInfo(connection string, p db.Page, n int, firstID, lastID func() int64, more bool) *model.PageInfo {
	info := &model.PageInfo{}
	if p.Backward {
		info.HasPreviousPage, info.HasNextPage = more, p.Before != 0
	} else {
		info.HasNextPage, info.HasPreviousPage = more, p.After != 0
	}
	if n > 0 {
		start, end := cursor.Encode(connection, firstID()), cursor.Encode(connection, lastID())
		info.StartCursor, info.EndCursor = &start, &end
	}
	return info
}

func postConnection(ctx context.Context, connection string, p db.Page, rows []db.Post, more bool) *model.PostConnection {
	expectStories(ctx, len(rows), func(i int) *int64 { return rows[i].StoryID })
	c := &model.PostConnection{
		Nodes: rows,
		PageInfo: pageInfo(connection, p, len(rows),
			func() int64 { return rows[0].ID }, func() int64 { return rows[len(rows)-1].ID }, more),
	}
	if selects(ctx, "edges") {
		c.Edges = make([]model.PostEdge, len(rows))
		for i := range rows {
			c.Edges[i] = model.PostEdge{Cursor: cursor.Encode(connection, rows[i].ID), Node: &rows[i]}
		}
	}
	return c
}

func briefConnection(ctx context.Context, p db.Page, rows []db.Brief, more bool) *model.BriefConnection {
	c := &model.BriefConnection{
		Nodes: rows,
		PageInfo: pageInfo(connBriefs, p, len(rows),
			func() int64 { return rows[0].ID }, func() int64 { return rows[len(rows)-1].ID }, more),
	}
	if selects(ctx, "edges") {
		c.Edges = make([]model.BriefEdge, len(rows))
		for i := range rows {
			c.Edges[i] = model.BriefEdge{Cursor: cursor.Encode(connBriefs, rows[i].ID), Node: &rows[i]}
		}
	}
	return c
}

func firehoseConnection(ctx context.Context, p db.Page, rows []db.FirehoseMessage, more bool) *model.FirehoseConnection {
	expectStories(ctx, len(rows), func(i int) *int64 { return rows[i].StoryID })
	c := &model.FirehoseConnection{
		Nodes: rows,
		PageInfo: pageInfo(connFirehose, p, len(rows),
			func() int64 { return rows[0].ID }, func() int64 { return rows[len(rows)-1].ID }, more),
	}
	if selects(ctx, "edges") {
		c.Edges = make([]model.FirehoseEdge, len(rows))
		for i := range rows {
			c.Edges[i] = model.FirehoseEdge{Cursor: cursor.Encode(connFirehose, rows[i].ID), Node: &rows[i]}
		}
	}
	return c
}
