package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
)

// Defaults of StreamConfig.
const (
	DefaultStreamHeartbeat = 15 * time.Second
	DefaultStreamSlowWrite = 5 * time.Second
)

// DefaultStreamLimits are the open streams per key of each tier when
// StreamConfig.TierLimits does not name it.
var DefaultStreamLimits = map[string]int{"free": 2, "pro": 10, "internal": 100}

// StreamConfig configures the Server-Sent Events streams of /v1/posts/stream
// and /v1/firehose/stream. Zero fields take the defaults noted.
type StreamConfig struct {
	// Hub is the process's change signal (graph.NewHub fed by db.Listen).
	// Without it streams still read on, but only at each heartbeat.
	Hub *graph.Hub
	// Heartbeat is the interval of the comment lines that keep proxies from
	// closing an idle stream (default 15s). A stream also reads the
	// database at each heartbeat, whatever the signal says.
	Heartbeat time.Duration
	// SlowWrite is how long a write to the client may take: a stream whose
	// write took longer is ended with a slow_reader event, and one whose
	// write is stuck six times as long (at least 30 s) is cut (default 5s).
	SlowWrite time.Duration
	// TierLimits are the open streams per key of each tier, per process
	// (default DefaultStreamLimits).
	TierLimits map[string]int
	// Done, when closed, ends every stream with a shutting_down event
	// (http.Server.RegisterOnShutdown: Shutdown does not wait for streams,
	// which never end by themselves).
	Done <-chan struct{}
	// Taken, when set, counts the HTTP/1.x streams, which take their
	// connection from net/http, until each has written its last byte:
	// http.Server.Shutdown does not wait for them, so a caller that wants
	// their final events delivered waits on it after Shutdown.
	Taken *sync.WaitGroup
}

func (c StreamConfig) withDefaults() StreamConfig {
	if c.Hub == nil {
		c.Hub = graph.NewHub()
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultStreamHeartbeat
	}
	if c.SlowWrite <= 0 {
		c.SlowWrite = DefaultStreamSlowWrite
	}
	limits := make(map[string]int, len(DefaultStreamLimits))
	for t, n := range DefaultStreamLimits {
		limits[t] = n
	}
	for t, n := range c.TierLimits {
		limits[t] = n
	}
	c.TierLimits = limits
	return c
}

// streamEndpoint is one SSE endpoint: its query, the parameters that set
// its variables, the kind of change that wakes it and its event name.
type streamEndpoint struct {
	pattern string
	query   string
	kind    string
	event   string
	params  []param
}

// streamEndpoints are the SSE endpoints; their filters are the lists'.
func streamEndpoints(eps []endpoint) []streamEndpoint {
	filters := func(pattern string, names ...string) []param {
		var out []param
		for _, ep := range eps {
			if ep.pattern != pattern {
				continue
			}
			for _, p := range ep.params {
				for _, n := range names {
					if p.name == n {
						out = append(out, p)
					}
				}
			}
		}
		return append(out, streamCursorParam())
	}
	return []streamEndpoint{
		{pattern: "/v1/posts/stream", query: "posts_stream", kind: graph.KindPosts, event: "post",
			params: filters("/v1/posts", "source", "since", "include_body", "include_raw")},
		{pattern: "/v1/firehose/stream", query: "firehose_stream", kind: graph.KindFirehose, event: "firehose_message",
			params: filters("/v1/firehose", "pane", "source", "important", "since", "include_summary")},
	}
}

// streamCursorParam is the stream position to resume after (an event's
// id); the Last-Event-ID header takes precedence.
func streamCursorParam() param {
	p := cursorParam()
	p.allowed = "the id of an event of this stream"
	return p
}

// streamPageSize is the number of items a stream reads at a time: the most
// it holds in memory.
const streamPageSize = 100

// streams counts the open streams per key and shares the reads of streams
// that ask the same.
type streams struct {
	cfg    StreamConfig
	mu     sync.Mutex
	open   map[int64]int
	groups map[string]*streamGroup // the fan-out's, by query and filters
	reads  *graph.SharedReads[*streamResult]
	// drains counts the writes the kernel did not take at once (fanout.go).
	drains atomic.Int64
}

func newStreams(cfg StreamConfig) *streams {
	return &streams{cfg: cfg.withDefaults(), open: map[int64]int{}, groups: map[string]*streamGroup{},
		reads: graph.NewSharedReads[*streamResult]()}
}

// acquire takes one of the key's stream slots, or reports the limit.
func (st *streams) acquire(p keys.Principal) (release func(), limit int, ok bool) {
	limit = st.cfg.TierLimits[string(p.Tier)]
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.open[p.KeyID] >= limit {
		return nil, limit, false
	}
	st.open[p.KeyID]++
	return func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.open[p.KeyID]--; st.open[p.KeyID] <= 0 {
			delete(st.open, p.KeyID)
		}
	}, limit, true
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

// streamResult is one read of a stream, rendered: the events of its items
// (the same bytes for every stream that shares the read) and where it ends.
type streamResult struct {
	events   []byte
	chunk    []byte // events framed as one chunk; events is its payload
	n        int
	position string
	hasMore  bool
	pending  bool
}

// readStream runs the stream's query with vars, shared with the other
// streams that ask the same and need no newer generation of the hub nor a
// read started later than notBefore (graph.SharedReads): the query, its
// decoding and the rendering of the events happen once per read, however
// many streams take it.
func (s *server) readStream(ctx context.Context, ep streamEndpoint, vars map[string]any, gen uint64, notBefore time.Time) (*streamResult, error) {
	key, err := json.Marshal(vars)
	if err != nil {
		return nil, err
	}
	return s.readStreamKey(ctx, ep, ep.query+"\x00"+string(key), vars, gen, notBefore)
}

// readStreamKey is readStream with the key of the shared read given: the
// fan-out's groups make theirs once, not per stream and read.
func (s *server) readStreamKey(ctx context.Context, ep streamEndpoint, key string, vars map[string]any, gen uint64, notBefore time.Time) (*streamResult, error) {
	return s.streams.reads.Do(key, gen, notBefore, s.streams.cfg.Hub.Generation, func() (*streamResult, error) {
		qctx := context.WithoutCancel(ctx)
		if s.requestTimeout > 0 {
			var cancel context.CancelFunc
			qctx, cancel = context.WithTimeout(qctx, s.requestTimeout)
			defer cancel()
		}
		var buf bytes.Buffer
		data, err := s.queries.run(graph.WithResponseBuffer(qctx, &buf), ep.query, vars)
		if err != nil {
			return nil, err
		}
		var page streamPage
		if err := json.Unmarshal(data, &page); err != nil {
			return nil, fmt.Errorf("%s: %w", ep.query, err)
		}
		res := &streamResult{n: len(page.Page.Edges), position: page.Page.Position,
			hasMore: page.Page.HasMore, pending: page.Page.Pending}
		var ev bytes.Buffer
		for _, e := range page.Page.Edges {
			ev.WriteString("event: ")
			ev.WriteString(ep.event)
			ev.WriteString("\nid: ")
			ev.WriteString(e.Position)
			ev.WriteString("\ndata: ")
			// Compact JSON has no newline: one data line.
			ev.Write(e.Node)
			ev.WriteString("\n\n")
		}
		// The events framed as one HTTP/1.1 chunk, rendered once for the
		// streams that write to their connection themselves (fanout.go);
		// events is the chunk's payload, not a copy.
		res.chunk = appendChunk(nil, ev.Bytes())
		res.events = chunkPayload(res.chunk, ev.Len())
		return res, nil
	})
}

// serveStream returns the handler of an SSE endpoint.
func (s *server) serveStream(ep streamEndpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vars, err := parseParams(r, ep.params)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		resumeParam := "cursor"
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			vars["after"], resumeParam = id, "Last-Event-ID"
		}
		vars["first"] = streamPageSize
		p, _ := keys.FromContext(r.Context())
		release, limit, ok := s.streams.acquire(p)
		if !ok {
			s.writeError(w, r, apperr.New(apperr.RateLimited, fmt.Sprintf(
				"this key has %d open streams, the limit of its tier %s; close one first", limit, p.Tier)))
			return
		}
		defer func() {
			if release != nil {
				release()
			}
		}()

		hub := s.streams.cfg.Hub
		wake := hub.Wait(ep.kind)
		page, err := s.readStream(r.Context(), ep, vars, hub.Generation(), time.Time{})
		lastRead := time.Now()
		if err != nil {
			if d := apperr.As(err); d != nil && d.Param == "after" {
				err = apperr.Invalid(resumeParam, "%s must be the id of an event of this stream", resumeParam)
			}
			s.writeError(w, r, err)
			return
		}
		sw := &sseWriter{w: w, rc: http.NewResponseController(w), slow: s.streams.cfg.SlowWrite}
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
		_ = sw.rc.SetReadDeadline(time.Time{})
		_ = sw.rc.SetWriteDeadline(time.Time{})
		w.WriteHeader(http.StatusOK)
		sw.buf.WriteString(": feedapi stream; retry after 1 s on disconnect\nretry: 1000\n\n")
		if err := sw.flush(); err != nil {
			return
		}
		if r.ProtoMajor == 1 {
			// HTTP/1.x: the connection joins the fan-out of its group of
			// streams, and this goroutine (and net/http's two per
			// connection) ends. Elsewhere (HTTP/2, a ResponseWriter that
			// cannot hijack) the stream goes on in this goroutine below.
			if conn, brw, err := sw.rc.Hijack(); err == nil {
				s.streams.adopt(s, r, ep, vars, page, lastRead, wake, conn, brw, release)
				release = nil
				return
			}
		}
		heartbeat := time.NewTicker(s.streams.cfg.Heartbeat)
		defer heartbeat.Stop()
		retry := time.NewTimer(0)
		<-retry.C
		defer retry.Stop()
		for {
			vars["after"] = page.position
			if page.n > 0 {
				switch err := sw.write(page.events); {
				case errors.Is(err, errSlowReader):
					sw.final("slow_reader", "the client read too slowly; reconnect with Last-Event-ID to resume")
					return
				case err != nil:
					return
				}
			}
			// A read woken by the signal may share any read of a newer
			// generation; one woken by a timer needs a read started
			// since the last one.
			notBefore := time.Time{}
			if !page.hasMore {
				if page.pending {
					retry.Reset(25 * time.Millisecond)
				}
			wait:
				for {
					select {
					case <-r.Context().Done():
						return
					case <-s.streams.cfg.Done:
						sw.final("shutting_down", "the server is shutting down; reconnect with Last-Event-ID to resume")
						return
					case <-heartbeat.C:
						sw.buf.WriteString(": heartbeat\n\n")
						if err := sw.flush(); err != nil {
							return
						}
						notBefore = lastRead
						break wait
					case <-wake:
						break wait
					case <-retry.C:
						notBefore = lastRead
						break wait
					}
				}
			}
			wake = hub.Wait(ep.kind)
			page, err = s.readStream(r.Context(), ep, vars, hub.Generation(), notBefore)
			lastRead = time.Now()
			if err != nil {
				if r.Context().Err() != nil {
					return
				}
				s.log.WarnContext(r.Context(), "stream: read failed; retrying",
					slog.String("request_id", requestID(r.Context())), slog.Any("error", err))
				pos, _ := vars["after"].(string)
				page = &streamResult{position: pos, pending: true}
				retry.Reset(time.Second)
				continue
			}
		}
	}
}

// errSlowReader says that a write to a stream's client took longer than
// StreamConfig.SlowWrite.
var errSlowReader = errors.New("slow reader")

// sseWriter writes events to one stream.
type sseWriter struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	slow time.Duration
	buf  bytes.Buffer
}

// flush writes the buffer to the client. A write that takes longer than
// slow still completes (errSlowReader); one stuck six times as long (at
// least 30 s) is cut, and the connection with it.
func (sw *sseWriter) flush() error {
	err := sw.write(sw.buf.Bytes())
	sw.buf = bytes.Buffer{} // an idle stream keeps no buffer
	return err
}

// write writes b to the client and flushes it, timed as flush says.
func (sw *sseWriter) write(b []byte) error {
	start := time.Now()
	_ = sw.rc.SetWriteDeadline(start.Add(max(6*sw.slow, 30*time.Second)))
	_, err := sw.w.Write(b)
	if err == nil {
		err = sw.rc.Flush()
	}
	if err != nil {
		return err
	}
	if time.Since(start) > sw.slow {
		return errSlowReader
	}
	return nil
}

// final sends the event that ends a stream: an error object as in the
// envelope.
func (sw *sseWriter) final(code, message string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": message}})
	sw.buf.WriteString("event: error\ndata: ")
	sw.buf.Write(b)
	sw.buf.WriteString("\n\n")
	_ = sw.flush()
}
