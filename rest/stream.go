package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/live"
)

// The SSE endpoints /v1/posts/stream and /v1/firehose/stream: sinks of the
// live feeds (graph/live). Over HTTP/1.x a stream takes its connection
// from net/http and writes without blocking (fanout.go); over HTTP/2 its
// handler's goroutine writes (stream_h2.go).

// streamEndpoint is one SSE endpoint: its query, the parameters that set
// its variables, its feed and its event name.
type streamEndpoint struct {
	pattern string
	query   string
	event   string
	params  []param
	feed    *live.Feed[*events]
}

// pagingParams are the parameters of a list that page it: a stream, which
// follows its own position, takes every other parameter of its list.
var pagingParams = []string{"limit", "cursor", "since_id", "after"}

// streamEndpoints are the SSE endpoints. Their parameters are their lists'
// but for paging (every filter, and the choice of fields), and a cursor
// that is a stream position: a filter added to a list is a filter of its
// stream (TestStreamsTakeTheirListsParameters).
func streamEndpoints(eps []endpoint, l *live.Live) []streamEndpoint {
	filters := func(pattern string) []param {
		var out []param
		for _, ep := range eps {
			if ep.pattern != pattern {
				continue
			}
			for _, p := range ep.params {
				if !slices.Contains(pagingParams, p.name) {
					out = append(out, p)
				}
			}
		}
		return append(out, streamCursorParam())
	}
	return []streamEndpoint{
		{pattern: "/v1/posts/stream", query: "posts_stream", event: "post", params: filters("/v1/posts"),
			feed: live.NewFeed[*events](l, live.KindPosts, "/v1/posts/stream")},
		{pattern: "/v1/firehose/stream", query: "firehose_stream", event: "firehose_message", params: filters("/v1/firehose"),
			feed: live.NewFeed[*events](l, live.KindFirehose, "/v1/firehose/stream")},
	}
}

// streamCursorParam is the stream position to resume after (an event's
// id); the Last-Event-ID header takes precedence.
func streamCursorParam() param {
	p := cursorParam()
	p.allowed = "the id of an event of this stream"
	return p
}

// events is one read of a stream, rendered: the events of its items, the
// same bytes for every stream that takes the read.
type events struct {
	payload []byte // the events
	chunk   []byte // the events framed as one HTTP/1.1 chunk; payload is its inside
}

// streamPage is the result of a stream query.
type streamPage struct {
	Page struct {
		Position string `json:"position"`
		HasMore  bool   `json:"hasMore"`
		Pending  bool   `json:"pending"`
		Edges    []struct {
			Position string          `json:"position"`
			Node     json.RawMessage `json:"node"`
		} `json:"edges"`
	} `json:"page"`
}

// streamReader returns the reads of ep with the filters vars: its query
// from a position, and the rendering of the events (once per read,
// however many streams take it).
func (s *server) streamReader(ep streamEndpoint, vars map[string]any) live.Reader[*events] {
	return func(ctx context.Context, after string) (*live.Page[*events], error) {
		v := maps.Clone(vars)
		v["first"] = live.PageSize
		if after != "" {
			v["after"] = after
		}
		var buf bytes.Buffer
		data, err := s.queries.run(graph.WithResponseBuffer(ctx, &buf), ep.query, v)
		if err != nil {
			return nil, err
		}
		var page streamPage
		if err := json.Unmarshal(data, &page); err != nil {
			return nil, fmt.Errorf("%s: %w", ep.query, err)
		}
		var ev bytes.Buffer
		for _, e := range page.Page.Edges {
			ev.WriteString("event: ")
			if updated(e.Node) {
				ev.WriteString(updateEvent)
			} else {
				ev.WriteString(ep.event)
			}
			ev.WriteString("\nid: ")
			ev.WriteString(e.Position)
			ev.WriteString("\ndata: ")
			// Compact JSON has no newline: one data line.
			ev.Write(e.Node)
			ev.WriteString("\n\n")
		}
		chunk := appendChunk(nil, ev.Bytes())
		return &live.Page[*events]{
			Items: &events{payload: chunkPayload(chunk, ev.Len()), chunk: chunk},
			N:     len(page.Page.Edges), Next: page.Page.Position, More: page.Page.HasMore, Pending: page.Page.Pending,
		}, nil
	}
}

// updateEvent names the event of an item sent again because an import
// changed it (its updated_at is set): it comes at the item's new stream
// position, once, in order with the new items.
const updateEvent = "update"

// updated reports whether an item of a stream (as the list shows it) has
// been changed since it was first stored.
func updated(node json.RawMessage) bool {
	var item struct {
		UpdatedAt *string `json:"updated_at"`
	}
	return json.Unmarshal(node, &item) == nil && item.UpdatedAt != nil
}

// streamPreamble opens every stream: a comment, and the client's
// reconnection delay.
const streamPreamble = ": feedapi stream; retry after 1 s on disconnect\nretry: 1000\n\n"

// finalEvent renders the event that ends a stream: an error object as in
// the envelope.
func finalEvent(e live.End) []byte {
	msg := e.Message
	if e.Resume {
		msg += "; reconnect with Last-Event-ID to resume"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": e.Code, "message": msg}})
	return fmt.Appendf(nil, "event: error\ndata: %s\n\n", b)
}

// serveStream returns the handler of an SSE endpoint: it checks the
// parameters (400), takes one of the key's live-feed slots (429), reads
// the first page (400 for a position that is not this stream's), and
// hands the stream to its sink.
func (s *server) serveStream(ep streamEndpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vars, err := parseParams(r, ep.params)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		after, resumeParam := "", "cursor"
		if v, ok := vars["after"].(string); ok {
			after = v
			delete(vars, "after")
		}
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			after, resumeParam = id, "Last-Event-ID"
		}
		p, _ := keys.FromContext(r.Context())
		release, err := s.live.Acquire(p.KeyID, string(p.Tier))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		filters, err := json.Marshal(vars)
		if err != nil {
			release()
			s.writeError(w, r, err)
			return
		}
		key := ep.query + "\x00" + string(filters)
		read := s.streamReader(ep, vars)
		wake := s.live.Hub().Wait(ep.feed.Kind())
		first, err := ep.feed.Read(r.Context(), key, read, after)
		if err != nil {
			release()
			if d := apperr.As(err); d != nil && d.Param == "after" {
				err = apperr.Invalid(resumeParam, "%s must be the id of an event of this stream", resumeParam)
			}
			s.writeError(w, r, err)
			return
		}
		rc := http.NewResponseController(w)
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		if r.ProtoMajor == 1 {
			// The stream takes the connection (fanout.go) and closes it
			// when it ends.
			h.Set("Connection", "close")
		}
		// The server's read and write timeouts are for requests that end.
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		w.WriteHeader(http.StatusOK)
		if _, err := io.WriteString(w, streamPreamble); err != nil || rc.Flush() != nil {
			release()
			return
		}
		st := streamStart{key: key, read: read, first: first, wake: wake, release: release, keyID: p.KeyID}
		if r.ProtoMajor == 1 {
			// HTTP/1.x: the connection joins the fan-out of its group, and
			// this goroutine (and net/http's two per connection) ends.
			if conn, brw, err := rc.Hijack(); err == nil {
				s.adopt(r, ep, st, conn, brw)
				return
			}
		}
		// Elsewhere (HTTP/2, a ResponseWriter that cannot hijack) the
		// stream goes on in this goroutine.
		s.serveStreamHere(w, rc, r, ep, st)
	}
}

// streamStart is what a stream's sink needs to join its feed.
type streamStart struct {
	key     string
	read    live.Reader[*events]
	first   *live.Page[*events]
	wake    <-chan struct{}
	release func() // the key's live-feed slot
	keyID   int64
}
