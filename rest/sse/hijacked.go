package sse

import (
	"bufio"
	"net"
	"net/http"
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

// rawSink is one stream that took its connection.
type rawSink struct {
	live    *live.Live
	cfg     live.Config
	conn    net.Conn
	w       live.Writer
	chunked bool
	drains  *atomic.Int64 // the count of writes the kernel did not take at once

	release func() // the key's live-feed slot
	report  func(extraBytes int64)
	sent    atomic.Int64 // body bytes written since the hand-over
	endOnce sync.Once

	m       *live.Member[*Events]
	unwatch func()
}

// Adopt hands the hijacked connection of a stream whose first page is
// read to its feed. drains counts the writes the kernel did not take at
// once; report, from the access log, hears of the bytes sent once the
// stream ends.
func Adopt(l *live.Live, r *http.Request, st Start, conn net.Conn, brw *bufio.ReadWriter, drains *atomic.Int64, report func(extraBytes int64)) {
	c := &rawSink{live: l, cfg: l.Config(), conn: conn, chunked: r.ProtoAtLeast(1, 1), drains: drains,
		release: st.Release, report: report}
	c.w = live.NewWriter(conn)
	c.m = st.Feed.Join(r.Context(), st.Key, st.Read, c, st.First, st.Wake)
	c.unwatch = l.Watch(st.KeyID, c.m.End)
	if brw.Reader.Buffered() > 0 {
		// The client sent more than its request (pipelining): a stream
		// never ends by itself, so it would never be answered.
		c.end(false)
		return
	}
	go c.watch()
	if st.First.N > 0 && !c.Deliver(c.m, st.First) {
		return // behind (the drain goroutine takes over) or ended
	}
	c.m.Ready(false)
}

// Deliver writes the page's chunk.
func (c *rawSink) Deliver(m *live.Member[*Events], p *live.Page[*Events]) bool {
	b := p.Items.Payload
	if c.chunked {
		b = p.Items.Chunk
	}
	return c.write(b, len(p.Items.Payload))
}

// Beat writes the heartbeat comment.
func (c *rawSink) Beat(*live.Member[*Events]) bool {
	if c.chunked {
		return c.write(heartbeatChunk, len(heartbeatEvent))
	}
	return c.write([]byte(heartbeatEvent), len(heartbeatEvent))
}

// End writes the final event and ends the body and the stream.
func (c *rawSink) End(_ *live.Member[*Events], e live.End) { c.final(e) }

// Cut closes the connection: the drain's write fails and ends the stream,
// and so does the watch's read.
func (c *rawSink) Cut(*live.Member[*Events]) { _ = c.conn.Close() }

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
	ev := FinalEvent(e)
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
