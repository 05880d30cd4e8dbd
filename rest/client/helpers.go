package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
)

// APIError is an answer other than the one asked for: the status and the
// error envelope's code and message (empty when the body was not one, as
// for a 304 or a HEAD).
type APIError struct {
	Status    int
	Code      ErrorCode
	Message   string
	RequestID string
}

func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("feedapi: HTTP %d", e.Status)
	}
	return fmt.Sprintf("feedapi: HTTP %d %s: %s (request %s)", e.Status, e.Code, e.Message, e.RequestID)
}

// errorOf returns the APIError of an answer with status and body.
func errorOf(status int, body []byte) *APIError {
	e := &APIError{Status: status}
	var env ErrorEnvelope
	if json.Unmarshal(body, &env) == nil {
		e.Code, e.Message, e.RequestID = env.Error.Code, env.Error.Message, env.Meta.RequestId
	}
	return e
}

// WithBearer returns a RequestEditorFn that sends key as the bearer token;
// pass it to NewClientWithResponses with WithRequestEditorFn.
func WithBearer(key string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	}
}

// pages walks a paginated list: fetch gets the page after cursor (nil for
// the first), and the sequence yields its items, page after page, while
// has_more is true. An error ends the sequence after being yielded.
func pages[T any](fetch func(cursor *string) ([]T, *Pagination, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var cursor *string
		for {
			items, p, err := fetch(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			if !p.HasMore || p.NextCursor == nil {
				return
			}
			cursor = p.NextCursor
		}
	}
}

// AllPosts yields every curated post matching params, newest first,
// fetching page after page (params.Limit posts each) while has_more is
// true. params.Cursor, if set, is where the walk starts.
//
//	for p, err := range c.AllPosts(ctx, client.ListPostsParams{}) {
//		if err != nil { return err }
//		fmt.Println(p.Id, p.Source)
//	}
func (c *ClientWithResponses) AllPosts(ctx context.Context, params ListPostsParams, editors ...RequestEditorFn) iter.Seq2[Post, error] {
	start := params.Cursor
	return pages(func(cursor *string) ([]Post, *Pagination, error) {
		params.Cursor = first(cursor, start)
		r, err := c.ListPostsWithResponse(ctx, &params, editors...)
		if err != nil {
			return nil, nil, err
		}
		if r.JSON200 == nil {
			return nil, nil, errorOf(r.StatusCode(), r.Body)
		}
		return r.JSON200.Data, &r.JSON200.Pagination, nil
	})
}

// AllBriefs yields every weekly brief (list form), newest first, page
// after page; see AllPosts.
func (c *ClientWithResponses) AllBriefs(ctx context.Context, params ListBriefsParams, editors ...RequestEditorFn) iter.Seq2[BriefSummary, error] {
	start := params.Cursor
	return pages(func(cursor *string) ([]BriefSummary, *Pagination, error) {
		params.Cursor = first(cursor, start)
		r, err := c.ListBriefsWithResponse(ctx, &params, editors...)
		if err != nil {
			return nil, nil, err
		}
		if r.JSON200 == nil {
			return nil, nil, errorOf(r.StatusCode(), r.Body)
		}
		return r.JSON200.Data, &r.JSON200.Pagination, nil
	})
}

// AllFirehose yields every firehose message matching params, newest
// first, page after page; see AllPosts.
func (c *ClientWithResponses) AllFirehose(ctx context.Context, params ListFirehoseParams, editors ...RequestEditorFn) iter.Seq2[FirehoseMessage, error] {
	start := params.Cursor
	return pages(func(cursor *string) ([]FirehoseMessage, *Pagination, error) {
		params.Cursor = first(cursor, start)
		r, err := c.ListFirehoseWithResponse(ctx, &params, editors...)
		if err != nil {
			return nil, nil, err
		}
		if r.JSON200 == nil {
			return nil, nil, errorOf(r.StatusCode(), r.Body)
		}
		return r.JSON200.Data, &r.JSON200.Pagination, nil
	})
}

// AllStories yields every story matching params, newest first by its
// latest item, page after page; see AllPosts.
func (c *ClientWithResponses) AllStories(ctx context.Context, params ListStoriesParams, editors ...RequestEditorFn) iter.Seq2[Story, error] {
	start := params.Cursor
	return pages(func(cursor *string) ([]Story, *Pagination, error) {
		params.Cursor = first(cursor, start)
		r, err := c.ListStoriesWithResponse(ctx, &params, editors...)
		if err != nil {
			return nil, nil, err
		}
		if r.JSON200 == nil {
			return nil, nil, errorOf(r.StatusCode(), r.Body)
		}
		return r.JSON200.Data, &r.JSON200.Pagination, nil
	})
}

// AllStoryItems yields every item of story id, oldest first, page after
// page (params.Limit items each, else the server's default), so that a
// story of thousands of items is never one answer; see AllPosts.
func (c *ClientWithResponses) AllStoryItems(ctx context.Context, id int64, params GetStoryParams, editors ...RequestEditorFn) iter.Seq2[StoryItem, error] {
	start := params.Cursor
	paginate := StoryPaginate(true)
	params.Paginate = &paginate
	return pages(func(cursor *string) ([]StoryItem, *Pagination, error) {
		params.Cursor = first(cursor, start)
		r, err := c.GetStoryWithResponse(ctx, id, &params, editors...)
		if err != nil {
			return nil, nil, err
		}
		if r.JSON200 == nil || r.JSON200.Pagination == nil {
			return nil, nil, errorOf(r.StatusCode(), r.Body)
		}
		return r.JSON200.Data.Items, r.JSON200.Pagination, nil
	})
}

// first returns the page cursor once the walk has one, else the start.
func first(cursor, start *string) *string {
	if cursor != nil {
		return cursor
	}
	return start
}

// Poller asks for one resource again and again, sending the ETag of the
// last answer in If-None-Match, so that while nothing changed the server
// answers 304 without a body (it still counts against the rate limit).
// T is the body of the 200 answer, e.g. PostsPage.
//
//	p := client.NewPoller[client.PostsPage](func(ctx context.Context, e ...client.RequestEditorFn) (*http.Response, error) {
//		return c.ListPosts(ctx, &client.ListPostsParams{}, e...)
//	})
//	page, changed, err := p.Poll(ctx) // changed is false on a 304; page is the last one then
type Poller[T any] struct {
	fetch func(ctx context.Context, editors ...RequestEditorFn) (*http.Response, error)
	etag  string
	last  *T
}

// NewPoller returns a Poller over fetch, a call of the generated Client
// (not ClientWithResponses) that passes the editors on.
func NewPoller[T any](fetch func(ctx context.Context, editors ...RequestEditorFn) (*http.Response, error)) *Poller[T] {
	return &Poller[T]{fetch: fetch}
}

// ETag is the tag of the last 200 answer, empty before the first.
func (p *Poller[T]) ETag() string { return p.etag }

// Poll fetches the resource. On a 200 it returns the decoded body and
// changed true; on a 304 the body of the last 200 and changed false; any
// other answer is an *APIError.
func (p *Poller[T]) Poll(ctx context.Context) (v *T, changed bool, err error) {
	ifNoneMatch := func(_ context.Context, req *http.Request) error {
		if p.etag != "" {
			req.Header.Set("If-None-Match", p.etag)
		}
		return nil
	}
	resp, err := p.fetch(ctx, ifNoneMatch)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, false, fmt.Errorf("feedapi: read the answer: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusNotModified:
		if p.last == nil {
			return nil, false, errors.New("feedapi: 304 to a request without If-None-Match")
		}
		return p.last, false, nil
	case http.StatusOK:
		var t T
		if err := json.Unmarshal(body, &t); err != nil {
			return nil, false, fmt.Errorf("feedapi: decode the answer: %w", err)
		}
		p.etag, p.last = resp.Header.Get("ETag"), &t
		return &t, true, nil
	default:
		return nil, false, errorOf(resp.StatusCode, body)
	}
}
