package rest

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedapi/feedapi/graph/live"
)

// The sink of the HTTP/1.x streams.
//
// Once its response head is out, a stream takes its connection from
// net/http (Hijack) and joins its live feed (graph/live), whose group
// hands it each page as one rendered chunk, shared by every stream at the
// same position. The sink writes it with a write(2) that never blocks;
// what the kernel does not take is written by a goroutine that exists
// only while the stream is behind, and meanwhile the group skips the
// stream, which catches up from its own position afterwards. An idle
// stream has one goroutine, blocked in a one-byte read of its connection,
// so that a client's close ends the stream (and frees its slot) at once;
// a client that sends anything after its request is cut, since answering
// it would need a read of every byte.

// heartbeatEvent is the heartbeat comment.
const heartbeatEvent = ": heartbeat\n\n"

// heartbeatChunk is the heartbeat comment as one chunk.
var heartbeatChunk = appendChunk(nil, []byte(heartbeatEvent))

// chunkTerminator ends a chunked body.
const chunkTerminator = "0\r\n\r\n"

// appendChunk appends p framed as one HTTP/1.1 chunk to dst.
func appendChunk(dst, p []byte) []byte {
	dst = strconv.AppendInt(dst, int64(len(p)), 16)
	dst = append(dst, "\r\n"...)
	dst = append(dst, p...)
	return append(dst, "\r\n"...)
}

// chunkPayload returns the payload of chunk, n bytes long.
func chunkPayload(chunk []byte, n int) []byte {
	start := len(chunk) - 2 - n
	return chunk[start : start+n : start+n]
}

// rawSink is one stream that took its connection.
type rawSink struct {
	live    *live.Live
	cfg     live.Config
	conn    net.Conn
	w       live.Writer
	chunked bool
	drains  *atomic.Int64 // the server's count of writes the kernel did not take at once

	release func() // the key's live-feed slot
	report  func(extraBytes int64)
	sent    atomic.Int64 // body bytes written since the hand-over
	endOnce sync.Once

	m       *live.Member[*events]
	unwatch func()
}

// adopt hands the hijacked connection of a stream whose first page is
// read to its feed.
func (s *server) adopt(r *http.Request, ep streamEndpoint, st streamStart, conn net.Conn, brw *bufio.ReadWriter) {
	c := &rawSink{live: s.live, cfg: s.live.Config(), conn: conn, chunked: r.ProtoAtLeast(1, 1), drains: &s.drains,
		release: st.release, report: accessOf(r.Context()).takeOver()}
	c.w = live.NewWriter(conn)
	c.m = ep.feed.Join(r.Context(), st.key, st.read, c, st.first, st.wake)
	c.unwatch = s.live.Watch(st.keyID, c.m.End)
	if brw.Reader.Buffered() > 0 {
		// The client sent more than its request (pipelining): a stream
		// never ends by itself, so it would never be answered.
		c.end(false)
		return
	}
	go c.watch()
	if st.first.N > 0 && !c.Deliver(c.m, st.first) {
		return // behind (the drain goroutine takes over) or ended
	}
	c.m.Ready(false)
}

// Deliver writes the page's chunk.
func (c *rawSink) Deliver(m *live.Member[*events], p *live.Page[*events]) bool {
	b := p.Items.payload
	if c.chunked {
		b = p.Items.chunk
	}
	return c.write(b, len(p.Items.payload))
}

// Beat writes the heartbeat comment.
func (c *rawSink) Beat(*live.Member[*events]) bool {
	if c.chunked {
		return c.write(heartbeatChunk, len(heartbeatEvent))
	}
	return c.write([]byte(heartbeatEvent), len(heartbeatEvent))
}

// End writes the final event and ends the body and the stream.
func (c *rawSink) End(_ *live.Member[*events], e live.End) { c.final(e) }

// Cut closes the connection: the drain's write fails and ends the stream,
// and so does the watch's read.
func (c *rawSink) Cut(*live.Member[*events]) { _ = c.conn.Close() }

// write writes b (payload bytes of body) to the client without blocking;
// what the kernel does not take is written by a drain goroutine, timed
// from then. It reports whether the stream took it all.
func (c *rawSink) write(b []byte, payload int) bool {
	n, err := c.w.TryWrite(b)
	if err != nil {
		c.end(false)
		return false
	}
	if n == len(b) {
		c.sent.Add(int64(payload))
		return true
	}
	c.drains.Add(1)
	// The write is timed from here: the attempt took microseconds.
	go c.drain(b[n:], payload, time.Now())
	return false
}

// drain writes the rest of a write that the kernel did not take at once,
// as a blocking write, then lets the stream catch up. A write that took
// longer than the slow-write limit ends the stream with slow_reader; one
// stuck longer than the stuck-write limit is cut.
func (c *rawSink) drain(rest []byte, payload int, start time.Time) {
	_ = c.conn.SetWriteDeadline(start.Add(c.cfg.StuckWrite()))
	if _, err := c.conn.Write(rest); err != nil {
		c.end(false)
		return
	}
	c.sent.Add(int64(payload))
	_ = c.conn.SetWriteDeadline(time.Time{})
	if time.Since(start) > c.cfg.SlowWrite {
		c.final(live.EndSlowReader)
		return
	}
	c.m.Ready(true)
}

// final sends the event that ends a stream, ends the body and then the
// stream. A client that does not take it in time (Live.FinalDeadline) is
// cut.
func (c *rawSink) final(e live.End) {
	ev := finalEvent(e)
	out := ev
	if c.chunked {
		out = append(appendChunk(nil, ev), chunkTerminator...)
	}
	n, err := c.w.TryWrite(out)
	if err == nil && n < len(out) {
		_ = c.conn.SetWriteDeadline(c.live.FinalDeadline())
		go func() {
			_, err := c.conn.Write(out[n:])
			if err == nil {
				c.sent.Add(int64(len(ev)))
			}
			c.end(err == nil)
		}()
		return
	}
	if err == nil {
		c.sent.Add(int64(len(ev)))
	}
	c.end(err == nil)
}

// end ends the stream, once: it leaves its feed, frees its slot, writes the
// access log line and closes the connection, gracefully (what was written
// is delivered before the close) or at once.
func (c *rawSink) end(graceful bool) {
	c.endOnce.Do(func() {
		c.unwatch()
		c.release()
		c.report(c.sent.Load())
		if tc, ok := c.conn.(*net.TCPConn); ok && graceful {
			// The client closes its side on the end of the body; watch
			// closes the connection then, or after a while.
			_ = tc.CloseWrite()
			_ = tc.SetReadDeadline(time.Now().Add(5 * time.Second))
		} else {
			_ = c.conn.Close()
		}
		c.m.Leave()
	})
}

// watch reads the connection until it fails: the client closed it, the
// stream ended and closed it, or the peer is gone (the dead-peer timeout
// of the connection). A byte from the client after its request is a
// protocol error: the stream is cut.
func (c *rawSink) watch() {
	var b [1]byte
	_, _ = c.conn.Read(b[:])
	c.end(false)
	_ = c.conn.Close()
}
