package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"time"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest/accesslog"
	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/sse"
)

// The SSE endpoints /v1/posts/stream and /v1/firehose/stream: sinks of the
// live feeds (graph/live). Over HTTP/1.x a stream takes its connection
// from net/http and writes without blocking; over HTTP/2 its handler's
// goroutine writes (package rest/sse has both).

// streamEndpoint is one SSE endpoint: its declaration in the contract
// (whose parameters are its list's but for paging, and a cursor that is a
// stream position) and its feed.
type streamEndpoint struct {
	contract.Stream
	feed *live.Feed[*sse.Events]
}

// feedKinds are the live feeds of the streams, by path.
var feedKinds = map[string]string{
	"/v1/posts/stream":    live.KindPosts,
	"/v1/firehose/stream": live.KindFirehose,
}

// streamEndpoints are the SSE endpoints of the contract's lists eps.
func streamEndpoints(eps []endpoint, l *live.Live) ([]streamEndpoint, error) {
	decl := make([]contract.Endpoint, len(eps))
	for i, ep := range eps {
		decl[i] = ep.Endpoint
	}
	var out []streamEndpoint
	for _, st := range contract.Streams(decl) {
		kind, ok := feedKinds[st.Path]
		if !ok {
			return nil, fmt.Errorf("rest: no live feed for the stream %s", st.Path)
		}
		out = append(out, streamEndpoint{Stream: st, feed: live.NewFeed[*sse.Events](l, kind, st.Path)})
	}
	return out, nil
}

// streamPage is the result of a stream query.
type streamPage struct {
	Page struct {
		Position string `json:"position"`
		HasMore  bool   `json:"hasMore"`
		Pending  bool   `json:"pending"`
		Edges    []struct {
			Position string          `json:"position"`
			Update   bool            `json:"update"`
			Node     json.RawMessage `json:"node"`
		} `json:"edges"`
	} `json:"page"`
}

// streamReader returns the reads of ep with the filters vars: its query
// from a position, and the rendering of the events (once per read,
// however many streams take it).
func (s *server) streamReader(ep streamEndpoint, vars map[string]any) live.Reader[*sse.Events] {
	return func(ctx context.Context, after string) (*live.Page[*sse.Events], error) {
		v := maps.Clone(vars)
		v["first"] = live.PageSize
		if after != "" {
			v["after"] = after
		}
		var buf bytes.Buffer
		data, err := s.queries.run(graph.WithResponseBuffer(ctx, &buf), ep.Query, v)
		if err != nil {
			return nil, err
		}
		var page streamPage
		if err := json.Unmarshal(data, &page); err != nil {
			return nil, fmt.Errorf("%s: %w", ep.Query, err)
		}
		var ev bytes.Buffer
		for _, e := range page.Page.Edges {
			ev.WriteString("event: ")
			if e.Update {
				ev.WriteString(updateEvent)
			} else {
				ev.WriteString(ep.Event)
			}
			ev.WriteString("\nid: ")
			ev.WriteString(e.Position)
			ev.WriteString("\ndata: ")
			// Compact JSON has no newline: one data line.
			ev.Write(e.Node)
			ev.WriteString("\n\n")
		}
		return &live.Page[*sse.Events]{
			Items: sse.NewEvents(ev.Bytes()),
			N:     len(page.Page.Edges), Next: page.Page.Position, More: page.Page.HasMore, Pending: page.Page.Pending,
		}, nil
	}
}

// serveStream returns the handler of an SSE endpoint: it checks the
// parameters (400), takes one of the key's live-feed slots (429), reads
// the first page (400 for a position that is not this stream's), and
// hands the stream to its sink.
func (s *server) serveStream(ep streamEndpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vars, err := contract.Parse(r.URL.RawQuery, ep.Params)
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
		key := ep.Query + "\x00" + string(filters)
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
			// The stream takes the connection (sse.Adopt) and closes it
			// when it ends.
			h.Set("Connection", "close")
		}
		// The server's read and write timeouts are for requests that end.
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		w.WriteHeader(http.StatusOK)
		if _, err := io.WriteString(w, sse.Preamble); err != nil || rc.Flush() != nil {
			release()
			return
		}
		st := sse.Start{Feed: ep.feed, Key: key, Read: read, First: first, Wake: wake, Release: release, KeyID: p.KeyID}
		if r.ProtoMajor == 1 {
			// HTTP/1.x: the connection joins the fan-out of its group, and
			// this goroutine (and net/http's two per connection) ends.
			if conn, brw, err := rc.Hijack(); err == nil {
				sse.Adopt(s.live, r, st, conn, brw, &s.drains, accesslog.Of(r.Context()).TakeOver())
				return
			}
		}
		// Elsewhere (HTTP/2, a ResponseWriter that cannot hijack) the
		// stream goes on in this goroutine.
		sse.ServeHere(s.live, w, rc, r, st)
	}
}

// updateEvent names the event of an item sent again because an import
// changed it after the stream gave it: it comes at the item's new stream
// position, once, in order with the new items. An item the stream had not
// given yet comes as a new item, as it is now.
const updateEvent = "update"
