package graph

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/cursor"
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

// streamRead is one read of a stream: the range and where it ends.
type streamRead struct {
	kind    string
	after   int64 // -1: start at the current end
	bound   int64
	pending bool
	limit   int
}

// startRead validates the stream arguments shared by both streams and
// takes the bound of the read. conn is the stream's cursor connection.
func (r *Resolver) startRead(ctx context.Context, kind, conn string, after *string, first *int, since *time.Time) (*streamRead, error) {
	rd := &streamRead{kind: kind, limit: streamPageSize, after: -1}
	if first != nil {
		if *first < 1 || *first > maxPageSize {
			return nil, apperr.Invalid("first", "first must be an integer from 1 to %d", maxPageSize)
		}
		rd.limit = *first
	}
	if after != nil {
		pos, err := cursor.Decode(conn, *after)
		if err != nil {
			return nil, apperr.Invalid("after", "after is not a position of this stream")
		}
		rd.after = pos
	}
	// The bound first: every row below it is visible to the reads after
	// it (db/stream.go).
	var err error
	if rd.bound, rd.pending, err = r.store.StreamBound(ctx, kind); err != nil {
		return nil, err
	}
	if rd.after < 0 && since != nil {
		if rd.after, err = r.store.StreamStart(ctx, kind, sinceBound(*since)); err != nil {
			return nil, err
		}
	}
	return rd, nil
}

// finish returns the position where the read ends: its last row's when
// more rows follow, else the end of the range read (every row below the
// bound has been seen).
func (rd *streamRead) finish(last int64, n int, more bool) int64 {
	switch {
	case rd.after < 0:
		return rd.bound - 1
	case more && n > 0:
		return last
	default:
		return max(rd.after, rd.bound-1)
	}
}

// postStream reads the stream of curated posts.
func (r *Resolver) postStream(ctx context.Context, after *string, first *int, source *string, since *time.Time) (*model.PostStreamPage, error) {
	var f db.PostFilter
	var err error
	if f.Source, err = textArg("source", source); err != nil {
		return nil, err
	}
	rd, err := r.startRead(ctx, KindPosts, connPostStream, after, first, since)
	if err != nil {
		return nil, err
	}
	if since != nil {
		f.Since = sinceBound(*since)
	}
	var rows []db.Post
	var more bool
	if rd.after >= 0 {
		rows, more, err = r.store.StreamPosts(ctx, f, db.StreamRange{After: rd.after, Bound: rd.bound, Limit: rd.limit})
		if err != nil {
			return nil, err
		}
		if err := chargeItems(ctx, rows, postTexts); err != nil {
			return nil, err
		}
	}
	out := &model.PostStreamPage{Edges: make([]model.PostStreamEdge, len(rows)), HasMore: more, Pending: rd.pending}
	var last int64
	for i := range rows {
		last = rows[i].StreamPos
		out.Edges[i] = model.PostStreamEdge{Position: cursor.Encode(connPostStream, last), Node: &rows[i]}
	}
	out.Position = cursor.Encode(connPostStream, rd.finish(last, len(rows), more))
	return out, nil
}

// firehoseStream reads the stream of firehose messages.
func (r *Resolver) firehoseStream(ctx context.Context, after *string, first *int, pane *db.Pane, source *string, important *bool, since *time.Time) (*model.FirehoseStreamPage, error) {
	f, err := firehoseFilter(pane, source, important)
	if err != nil {
		return nil, err
	}
	rd, err := r.startRead(ctx, KindFirehose, connFirehoseStream, after, first, since)
	if err != nil {
		return nil, err
	}
	if since != nil {
		f.Since = sinceBound(*since)
	}
	var rows []db.FirehoseMessage
	var more bool
	if rd.after >= 0 {
		rows, more, err = r.store.StreamFirehose(ctx, f, db.StreamRange{After: rd.after, Bound: rd.bound, Limit: rd.limit})
		if err != nil {
			return nil, err
		}
		if err := chargeItems(ctx, rows, firehoseTexts); err != nil {
			return nil, err
		}
	}
	out := &model.FirehoseStreamPage{Edges: make([]model.FirehoseStreamEdge, len(rows)), HasMore: more, Pending: rd.pending}
	var last int64
	for i := range rows {
		last = rows[i].StreamPos
		out.Edges[i] = model.FirehoseStreamEdge{Position: cursor.Encode(connFirehoseStream, last), Node: &rows[i]}
	}
	out.Position = cursor.Encode(connFirehoseStream, rd.finish(last, len(rows), more))
	return out, nil
}

func firehoseFilter(pane *db.Pane, source *string, important *bool) (db.FirehoseFilter, error) {
	var f db.FirehoseFilter
	var err error
	if pane != nil {
		f.Pane = *pane
	}
	if f.Source, err = textArg("source", source); err != nil {
		return f, err
	}
	if important != nil {
		f.Important = *important
	}
	return f, nil
}

// Subscriptions poll again after subscriptionRetry while rows wait behind
// a running transaction, and every subscriptionSafety even without a
// signal (a lost notification, or a read replica that had not yet
// received the rows when the signal came).
const (
	subscriptionRetry  = 25 * time.Millisecond
	subscriptionSafety = 5 * time.Second
)

// follow runs a subscription: from the current end of the stream of kind,
// it reads the rows after its position whenever the hub signals a change
// of kind, and sends them one by one, in position order, on out. read
// returns the rows after pos below the current bound, as of generation gen
// of the hub or later and started at notBefore or later, whether more follow, whether rows are pending, and
// the position where the read ended. Memory is one read (at most
// streamPageSize rows, shared with the subscriptions that read the same):
// the next read waits until the client has taken every row of this one.
func follow[T any](ctx context.Context, hub *Hub, kind string, start int64, read func(ctx context.Context, pos int64, gen uint64, notBefore time.Time) ([]T, bool, bool, int64, error), out chan<- *T, log func(error)) {
	defer close(out)
	pos := start
	var notBefore time.Time // a read woken by a timer must start after it was set
	for {
		wake := hub.Wait(kind)
		rows, more, pending, next, err := read(ctx, pos, hub.Generation(), notBefore)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			log(err)
			more, pending = false, true // try again shortly
		} else {
			for i := range rows {
				select {
				case out <- &rows[i]:
				case <-ctx.Done():
					return
				}
			}
			pos = next
		}
		if more {
			continue
		}
		d := subscriptionSafety
		if pending {
			d = subscriptionRetry
		}
		t := time.NewTimer(d)
		armed := time.Now()
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
			notBefore = time.Time{}
		case <-t.C:
			notBefore = armed
		}
		t.Stop()
	}
}

// head returns the current end of the stream of kind.
func (r *Resolver) head(ctx context.Context, kind string) (int64, error) {
	bound, _, err := r.store.StreamBound(ctx, kind)
	if err != nil {
		return 0, err
	}
	return bound - 1, nil
}

// postAdded starts the postAdded subscription.
func (r *Resolver) postAdded(ctx context.Context, source *string) (<-chan *db.Post, error) {
	if r.hub == nil {
		return nil, apperr.New(apperr.BadRequest, "subscriptions are not offered by this server")
	}
	var f db.PostFilter
	var err error
	if f.Source, err = textArg("source", source); err != nil {
		return nil, err
	}
	start, err := r.head(ctx, KindPosts)
	if err != nil {
		return nil, err
	}
	out := make(chan *db.Post)
	key := "posts\x00" + f.Source + "\x00"
	go follow(ctx, r.hub, KindPosts, start, func(ctx context.Context, pos int64, gen uint64, notBefore time.Time) ([]db.Post, bool, bool, int64, error) {
		page, err := r.postReads.Do(key+strconv.FormatInt(pos, 10), gen, notBefore, r.hub.Generation, func() (subscriptionPage[db.Post], error) {
			return readSubscription(ctx, r, KindPosts, pos, func(ctx context.Context, rg db.StreamRange) ([]db.Post, bool, error) {
				return r.store.StreamPosts(ctx, f, rg)
			}, func(p *db.Post) int64 { return p.StreamPos })
		})
		return page.rows, page.more, page.pending, page.next, err
	}, out, r.logSubscription)
	return out, nil
}

// firehoseMessageAdded starts the firehoseMessageAdded subscription.
func (r *Resolver) firehoseMessageAdded(ctx context.Context, pane *db.Pane, important *bool, source *string) (<-chan *db.FirehoseMessage, error) {
	if r.hub == nil {
		return nil, apperr.New(apperr.BadRequest, "subscriptions are not offered by this server")
	}
	f, err := firehoseFilter(pane, source, important)
	if err != nil {
		return nil, err
	}
	start, err := r.head(ctx, KindFirehose)
	if err != nil {
		return nil, err
	}
	out := make(chan *db.FirehoseMessage)
	key := fmt.Sprintf("firehose\x00%q\x00%t\x00%q\x00", f.Pane, f.Important, f.Source)
	go follow(ctx, r.hub, KindFirehose, start, func(ctx context.Context, pos int64, gen uint64, notBefore time.Time) ([]db.FirehoseMessage, bool, bool, int64, error) {
		page, err := r.firehoseReads.Do(key+strconv.FormatInt(pos, 10), gen, notBefore, r.hub.Generation, func() (subscriptionPage[db.FirehoseMessage], error) {
			return readSubscription(ctx, r, KindFirehose, pos, func(ctx context.Context, rg db.StreamRange) ([]db.FirehoseMessage, bool, error) {
				return r.store.StreamFirehose(ctx, f, rg)
			}, func(m *db.FirehoseMessage) int64 { return m.StreamPos })
		})
		return page.rows, page.more, page.pending, page.next, err
	}, out, r.logSubscription)
	return out, nil
}

// subscriptionReadTimeout bounds a read shared by subscriptions, which no
// one subscriber's end cancels.
const subscriptionReadTimeout = 30 * time.Second

// subscriptionPage is one read of a subscription, shared by every
// subscription of the same filters at the same position: the rows after
// the position below the bound, whether more follow, whether rows are
// pending, and the position where the read ended. The rows are read-only.
type subscriptionPage[T any] struct {
	rows          []T
	more, pending bool
	next          int64
}

// readSubscription reads the rows of the stream of kind after pos with
// rows, under a context that no subscriber's end cancels (others may wait
// for the read).
func readSubscription[T any](ctx context.Context, r *Resolver, kind string, pos int64,
	rows func(context.Context, db.StreamRange) ([]T, bool, error), position func(*T) int64) (subscriptionPage[T], error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), subscriptionReadTimeout)
	defer cancel()
	page := subscriptionPage[T]{next: pos}
	bound, pending, err := r.store.StreamBound(ctx, kind)
	if err != nil {
		return page, err
	}
	got, more, err := rows(ctx, db.StreamRange{After: pos, Bound: bound, Limit: streamPageSize})
	if err != nil {
		return page, err
	}
	rd := streamRead{after: pos, bound: bound}
	var last int64
	if len(got) > 0 {
		last = position(&got[len(got)-1])
	}
	return subscriptionPage[T]{rows: got, more: more, pending: pending, next: rd.finish(last, len(got), more)}, nil
}

func (r *Resolver) logSubscription(err error) {
	r.logger.Error("subscription: read failed; retrying", "error", fmt.Sprint(err))
}
