package graph

import (
	"context"
	"errors"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/graph/model"
)

// The names that bind stream positions to their stream. A position is
// encoded like a list cursor (graph/cursor), carrying the row's stream
// position (db/stream.go) instead of its id.
const (
	connPostStream     = "posts:stream"
	connFirehoseStream = "firehose:stream"
)

// streamPageSize is the default number of items of a stream read.
const streamPageSize = 50

// streamRows is one read of a stream: the rows after a position below the
// bound taken when the read began, and where the read ended.
type streamRows[T any] struct {
	rows    []T
	next    int64 // the position to read on from
	more    bool  // more rows follow now
	pending bool  // rows wait behind a running write transaction
}

// readStream reads the stream of kind after the position after (-1: the
// current end, or with since the position before the first row created at
// or after it), at most limit rows, with rows (the store's read of the
// kind's filtered stream) and pos (a row's position).
func readStream[T any](ctx context.Context, store *db.Store, kind string, after int64, since time.Time, limit int, maxBytes int64,
	rows func(context.Context, db.StreamRange) ([]T, bool, error), pos func(*T) int64) (streamRows[T], error) {
	// The bound first: every row below it is visible to the reads after it
	// (db/stream.go).
	bound, pending, err := store.StreamBound(ctx, kind)
	if err != nil {
		return streamRows[T]{}, err
	}
	if after < 0 && !since.IsZero() {
		if after, err = store.StreamStart(ctx, kind, since); err != nil {
			return streamRows[T]{}, err
		}
		// No row created since then below the bound: read on from the
		// bound, where such rows will appear.
		after = min(after, bound-1)
	}
	out := streamRows[T]{pending: pending}
	if after < 0 {
		out.next = bound - 1
		return out, nil
	}
	rg := db.StreamRange{After: after, Bound: bound, Limit: limit, MaxBytes: maxBytes}
	out.rows, out.more, err = rows(ctx, rg)
	if tl := (*db.TooLargeError)(nil); errors.As(err, &tl) {
		// An item whose long texts alone are over the budget is read, and
		// sent, by itself: a stream cannot skip it, and import bounds it.
		rg.Limit, rg.MaxBytes = 1, 0
		out.rows, out.more, err = rows(ctx, rg)
	}
	if err != nil {
		return streamRows[T]{}, err
	}
	switch {
	case out.more && len(out.rows) > 0:
		out.next = pos(&out.rows[len(out.rows)-1])
	default:
		// Every row below the bound has been seen.
		out.next = max(after, bound-1)
	}
	return out, nil
}

// streamArgs checks a stream's after and first: the position to read after
// (-1 without after) and the page size.
func streamArgs(conn string, after *string, first *int) (int64, int, error) {
	limit := streamPageSize
	if first != nil {
		if *first < 1 || *first > maxPageSize {
			return 0, 0, apperr.Invalid("first", "first must be an integer from 1 to %d", maxPageSize)
		}
		limit = *first
	}
	if after == nil {
		return -1, limit, nil
	}
	pos, err := cursor.Decode(conn, *after)
	if err != nil {
		return 0, 0, apperr.Invalid("after", "after is not a position of this stream")
	}
	return pos, limit, nil
}

// postStream reads the stream of curated posts.
func (r *Resolver) postStream(ctx context.Context, f db.PostFilter, after *string, first *int) (*model.PostStreamPage, error) {
	pos, limit, err := streamArgs(connPostStream, after, first)
	if err != nil {
		return nil, err
	}
	f.Omit = unselectedColumns(ctx, postOptional)
	res, err := r.readPosts(ctx, f, pos, limit, readBudget(ctx))
	if err != nil {
		return nil, err
	}
	if err := chargeItems(ctx, res.rows, postTexts); err != nil {
		return nil, err
	}
	out := &model.PostStreamPage{Edges: make([]model.PostStreamEdge, len(res.rows)), HasMore: res.more,
		Pending: res.pending, Position: cursor.Encode(connPostStream, res.next)}
	for i := range res.rows {
		out.Edges[i] = model.PostStreamEdge{Position: cursor.Encode(connPostStream, res.rows[i].StreamPos), Node: &res.rows[i], Update: res.rows[i].Updated()}
	}
	return out, nil
}

// firehoseStream reads the stream of firehose messages.
func (r *Resolver) firehoseStream(ctx context.Context, f db.FirehoseFilter, after *string, first *int) (*model.FirehoseStreamPage, error) {
	pos, limit, err := streamArgs(connFirehoseStream, after, first)
	if err != nil {
		return nil, err
	}
	f.Omit = unselectedColumns(ctx, firehoseOptional)
	res, err := r.readFirehose(ctx, f, pos, limit, readBudget(ctx))
	if err != nil {
		return nil, err
	}
	if err := chargeItems(ctx, res.rows, firehoseTexts); err != nil {
		return nil, err
	}
	out := &model.FirehoseStreamPage{Edges: make([]model.FirehoseStreamEdge, len(res.rows)), HasMore: res.more,
		Pending: res.pending, Position: cursor.Encode(connFirehoseStream, res.next)}
	for i := range res.rows {
		out.Edges[i] = model.FirehoseStreamEdge{Position: cursor.Encode(connFirehoseStream, res.rows[i].StreamPos), Node: &res.rows[i], Update: res.rows[i].Updated()}
	}
	return out, nil
}

// readPosts reads the stream of posts after after, at most limit of them
// and, when maxBytes is positive, at most maxBytes of their long texts (but
// always one).
func (r *Resolver) readPosts(ctx context.Context, f db.PostFilter, after int64, limit int, maxBytes int64) (streamRows[db.Post], error) {
	return readStream(ctx, r.store, live.KindPosts, after, f.Since, limit, maxBytes,
		func(ctx context.Context, rg db.StreamRange) ([]db.Post, bool, error) {
			return r.store.StreamPosts(ctx, f, rg)
		},
		func(p *db.Post) int64 { return p.StreamPos })
}

// readFirehose is readPosts for firehose messages.
func (r *Resolver) readFirehose(ctx context.Context, f db.FirehoseFilter, after int64, limit int, maxBytes int64) (streamRows[db.FirehoseMessage], error) {
	return readStream(ctx, r.store, live.KindFirehose, after, f.Since, limit, maxBytes,
		func(ctx context.Context, rg db.StreamRange) ([]db.FirehoseMessage, bool, error) {
			return r.store.StreamFirehose(ctx, f, rg)
		},
		func(m *db.FirehoseMessage) int64 { return m.StreamPos })
}

// postAdded starts the postAdded subscription: a member of the live feed
// of posts with its filters.
func (r *Resolver) postAdded(ctx context.Context, f db.PostFilter) (<-chan *db.Post, error) {
	return subscribe(ctx, r, r.postFeed, filterKey(f), func(ctx context.Context, after string) (*live.Page[[]*db.Post], error) {
		return subscriptionPage(ctx, connPostStream, after, func(ctx context.Context, pos int64) (streamRows[db.Post], error) {
			return r.readPosts(ctx, f, pos, live.PageSize, int64(r.limits.MaxPageBytes))
		})
	})
}

// firehoseMessageAdded starts the firehoseMessageAdded subscription.
func (r *Resolver) firehoseMessageAdded(ctx context.Context, f db.FirehoseFilter) (<-chan *db.FirehoseMessage, error) {
	return subscribe(ctx, r, r.firehoseFeed, filterKey(f), func(ctx context.Context, after string) (*live.Page[[]*db.FirehoseMessage], error) {
		return subscriptionPage(ctx, connFirehoseStream, after, func(ctx context.Context, pos int64) (streamRows[db.FirehoseMessage], error) {
			return r.readFirehose(ctx, f, pos, live.PageSize, int64(r.limits.MaxPageBytes))
		})
	})
}

// subscriptionPage is a read of a subscription's feed after the position
// after ("": the start) by read, as a page of the feed.
func subscriptionPage[T any](ctx context.Context, conn, after string, read func(context.Context, int64) (streamRows[T], error)) (*live.Page[[]*T], error) {
	pos := int64(-1)
	if after != "" {
		var err error
		if pos, err = cursor.Decode(conn, after); err != nil {
			return nil, err // positions come from earlier reads
		}
	}
	res, err := read(ctx, pos)
	if err != nil {
		return nil, err
	}
	items := make([]*T, len(res.rows))
	for i := range res.rows {
		items[i] = &res.rows[i]
	}
	return &live.Page[[]*T]{Items: items, N: len(items), Next: cursor.Encode(conn, res.next),
		More: res.more, Pending: res.pending}, nil
}
