package rest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/feedapi/feedapi/graph"
)

// The fan-out of the HTTP/1.x streams.
//
// Once its response head is out, a stream takes its connection from
// net/http (Hijack) and joins the group of the open streams of its endpoint
// and filters. The group's goroutine waits for the change signal, its
// clock (each member's heartbeat, at the member's own time) and the
// members' retries; at each it reads the
// database once per distinct position of its members (most sit at the
// head) and a few writers (4 per GOMAXPROCS) write the rendered chunk to every
// member with a write that never blocks. What the kernel does not take is
// written by a goroutine that exists only while its stream is behind;
// meanwhile the stream takes no part in the fan-outs, and catches up from
// its own position afterwards. An idle stream has one goroutine, blocked
// in a read of its connection, so that a client's close ends the stream
// (and frees its slot) at once.

// retryPending and retryFailed are when a stream reads again after a read
// that found rows of uncommitted transactions before its next item, and
// after a read that failed.
const (
	retryPending = 25 * time.Millisecond
	retryFailed  = time.Second
)

// inlineWrites is the number of members a fan-out writes without starting
// writers.
const inlineWrites = 64

// heartbeatChunk is the heartbeat comment as one chunk.
var heartbeatChunk = appendChunk(nil, []byte(": heartbeat\n\n"))

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

// streamGroup is the open streams of one endpoint with the same filters.
type streamGroup struct {
	s   *server
	ep  streamEndpoint
	key string // the query and the filters, as JSON: the groups' key
	// vars are the filters, without the position; never written.
	vars map[string]any
	// ctx carries the values of the request that opened the group, for
	// the reads (not its cancellation).
	ctx  context.Context
	kick chan struct{} // a member needs the loop: joined, caught up, left

	mu      sync.Mutex
	members map[*streamConn]struct{}
	closing bool // the server shuts down: members end instead of idling
}

// streamConn is one stream that took its connection.
type streamConn struct {
	g       *streamGroup
	conn    net.Conn
	raw     syscall.RawConn // nil: every write goes through drain
	chunked bool
	release func()
	report  func(extraBytes int64)
	taken   *sync.WaitGroup // StreamConfig.Taken
	sent    atomic.Int64    // body bytes written since the hand-over
	endOnce sync.Once

	// Guarded by g.mu.
	pos       string    // where the bytes written or queued end
	lastRead  time.Time // when the read that gave pos ended
	due       bool      // reads at the group's next round
	notBefore time.Time // ... a read started no earlier than this
	retryAt   time.Time // becomes due then (zero: not waiting)
	nextBeat  time.Time // its next heartbeat
	busy      bool      // behind (a drain goroutine writes) or setting up
	ended     bool
}

// adopt hands the hijacked connection of a stream whose first page is
// read (page, read until lastRead, after wake was taken) to its group.
// release frees its per-key slot.
func (st *streams) adopt(s *server, r *http.Request, ep streamEndpoint, vars map[string]any, page *streamResult,
	lastRead time.Time, wake <-chan struct{}, conn net.Conn, brw *bufio.ReadWriter, release func()) {
	// A client that sent more than the request (pipelining) is not
	// answered: the stream never ends by itself.
	_ = brw
	c := &streamConn{conn: conn, chunked: r.ProtoAtLeast(1, 1), release: release,
		report: accessOf(r.Context()).takeOver(), taken: st.cfg.Taken}
	if c.taken != nil {
		c.taken.Add(1)
	}
	switch conn.(type) {
	case *net.TCPConn, *net.UnixConn:
		if sc, ok := conn.(syscall.Conn); ok {
			c.raw, _ = sc.SyscallConn()
		}
	}
	filters := maps.Clone(vars)
	delete(filters, "after")
	fkey, err := json.Marshal(filters)
	if err != nil {
		// Parameters are strings, numbers and booleans; never happens.
		fkey = []byte(fmt.Sprint(filters))
	}
	c.pos, c.lastRead, c.busy = page.position, lastRead, true
	c.nextBeat = time.Now().Add(st.cfg.Heartbeat)
	if page.pending && !page.hasMore {
		c.retryAt = lastRead.Add(retryPending)
	}
	st.join(s, r, ep, ep.query+"\x00"+string(fkey), filters, c)
	go c.watch()
	if page.n > 0 && !c.write(c.frame(page), len(page.events)) {
		return // behind (the drain goroutine takes over) or ended
	}
	select {
	case <-wake:
		// A change since the first read began.
		c.setIdle(true)
	default:
		c.setIdle(page.hasMore)
	}
}

// join adds c to the group of key, starting the group when it has none.
func (st *streams) join(s *server, r *http.Request, ep streamEndpoint, key string, filters map[string]any, c *streamConn) *streamGroup {
	st.mu.Lock()
	defer st.mu.Unlock()
	g := st.groups[key]
	if g == nil {
		g = &streamGroup{s: s, ep: ep, key: key, vars: filters, ctx: context.WithoutCancel(r.Context()),
			kick: make(chan struct{}, 1), members: map[*streamConn]struct{}{}}
		st.groups[key] = g
		go g.run()
	}
	g.mu.Lock()
	g.members[c] = struct{}{}
	c.g = g
	g.mu.Unlock()
	return g
}

// poke wakes the group's loop.
func (g *streamGroup) poke() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// run is the group's loop: it ends when the group has no member left, or
// at shutdown.
func (g *streamGroup) run() {
	cfg := g.s.streams.cfg
	hub := cfg.Hub
	tick := max(cfg.Heartbeat/heartbeatSlots, time.Millisecond)
	heartbeat := time.NewTicker(tick)
	defer heartbeat.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	wake := hub.Wait(g.ep.kind)
	due := false
	ready := make(chan struct{}) // always ready: there is work to do
	close(ready)
	for {
		var now <-chan struct{}
		if due {
			// Work to do: take what happened meanwhile, do not wait.
			now = ready
		}
		select {
		case <-wake:
			wake = hub.Wait(g.ep.kind)
			g.each(func(c *streamConn) { c.due = true })
		case t := <-heartbeat.C:
			g.heartbeat(t, tick)
		case <-retry.C:
			t := time.Now()
			g.each(func(c *streamConn) {
				if !c.retryAt.IsZero() && !c.retryAt.After(t) {
					c.due, c.retryAt = true, time.Time{}
					c.notBefore = later(c.notBefore, c.lastRead)
				}
			})
		case <-g.kick:
		case <-cfg.Done:
			g.shutdown()
			return
		case <-now:
		}
		due = g.round(hub)
		if g.leaveIfEmpty() {
			return
		}
		if next := g.nextRetry(); next.IsZero() {
			retry.Stop()
		} else {
			retry.Reset(time.Until(next))
		}
	}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// each calls f on every member that is neither behind nor ended, under
// g.mu.
func (g *streamGroup) each(f func(c *streamConn)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.members {
		if !c.busy && !c.ended {
			f(c)
		}
	}
}

// nextRetry is the earliest retry of a member, or zero.
func (g *streamGroup) nextRetry() time.Time {
	var next time.Time
	g.each(func(c *streamConn) {
		if !c.retryAt.IsZero() && (next.IsZero() || c.retryAt.Before(next)) {
			next = c.retryAt
		}
	})
	return next
}

// leaveIfEmpty removes the group from the server's groups when it has no
// member left, and reports whether it did.
func (g *streamGroup) leaveIfEmpty() bool {
	st := g.s.streams
	st.mu.Lock()
	defer st.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.members) > 0 {
		return false
	}
	delete(st.groups, g.key)
	return true
}

// heartbeatSlots is the number of ticks of a group's clock per heartbeat
// interval: each member has its heartbeat at the tick nearest to one
// interval after its last (or its start), so that the heartbeats of
// streams opened at different times do not all go out, and all read, at
// once, as one burst that delays the next item.
const heartbeatSlots = 16

// heartbeat writes the heartbeat comment to every member that is not
// behind and whose heartbeat is due at the tick at now (tick apart), and
// makes each of them read afresh, whatever the signal says.
func (g *streamGroup) heartbeat(now time.Time, tick time.Duration) {
	interval := g.s.streams.cfg.Heartbeat
	var cs []*streamConn
	g.each(func(c *streamConn) {
		if c.nextBeat.After(now.Add(tick / 2)) {
			return
		}
		c.nextBeat = now.Add(interval)
		c.due = true
		c.notBefore = later(c.notBefore, c.lastRead)
		cs = append(cs, c)
	})
	g.fanOut(cs, func(c *streamConn) {
		c.write(heartbeatChunk, len(heartbeatChunk))
	})
}

// fanOut calls write on every member of cs, shared among writers when
// they are many: 4 per GOMAXPROCS, so that a writer whose thread the OS
// preempted in a write(2) (a shared machine) holds up only its share
// while the others take its P (measured: with 2 writers single fan-outs
// of 5,000 took up to 250 ms, with 8 under 90 ms, same load).
func (g *streamGroup) fanOut(cs []*streamConn, write func(c *streamConn)) {
	workers := 4 * runtime.GOMAXPROCS(0)
	if len(cs) <= inlineWrites || workers == 1 {
		for _, c := range cs {
			write(c)
		}
		return
	}
	var wg sync.WaitGroup
	per := (len(cs) + workers - 1) / workers
	for i := 0; i < len(cs); i += per {
		part := cs[i:min(i+per, len(cs))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range part {
				write(c)
			}
		}()
	}
	wg.Wait()
}

// positionBatch is the members that read from one position.
type positionBatch struct {
	pos       string
	notBefore time.Time
	members   []*streamConn
}

// maxGroupReads bounds the reads a group runs at once (one per distinct
// position of its members).
const maxGroupReads = 4

// round reads once per distinct position of the members that are due and
// writes each read to its members. It reports whether members are due
// again at once (a read that did not reach the end).
func (g *streamGroup) round(hub *graph.Hub) bool {
	batches := map[string]*positionBatch{}
	g.each(func(c *streamConn) {
		if !c.due {
			return
		}
		b := batches[c.pos]
		if b == nil {
			b = &positionBatch{pos: c.pos}
			batches[c.pos] = b
		}
		b.notBefore = later(b.notBefore, c.notBefore)
		b.members = append(b.members, c)
		c.due, c.notBefore = false, time.Time{}
	})
	if len(batches) == 0 {
		return false
	}
	gen := hub.Generation()
	sem := make(chan struct{}, maxGroupReads)
	var wg sync.WaitGroup
	var again atomic.Bool
	for _, b := range batches {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if g.deliver(b, gen) {
				again.Store(true)
			}
		}()
	}
	wg.Wait()
	return again.Load()
}

// deliver reads b's position and writes the result to b's members. It
// reports whether they are due again at once.
func (g *streamGroup) deliver(b *positionBatch, gen uint64) bool {
	vars := maps.Clone(g.vars)
	vars["after"] = b.pos
	res, err := g.s.readStreamKey(g.ctx, g.ep, g.key+"\x00after="+b.pos, vars, gen, b.notBefore)
	done := time.Now()
	if err != nil {
		g.s.log.WarnContext(g.ctx, "stream: read failed; retrying",
			slog.String("route", g.ep.pattern), slog.Int("streams", len(b.members)), slog.Any("error", err))
		g.mu.Lock()
		for _, c := range b.members {
			c.lastRead, c.retryAt = done, done.Add(retryFailed)
		}
		g.mu.Unlock()
		return false
	}
	g.mu.Lock()
	for _, c := range b.members {
		c.pos, c.lastRead = res.position, done
		c.due = res.hasMore
		if res.pending && !res.hasMore {
			c.retryAt = done.Add(retryPending)
		}
	}
	g.mu.Unlock()
	if res.n > 0 {
		g.fanOut(b.members, func(c *streamConn) {
			c.write(c.frame(res), len(res.events))
		})
	}
	return res.hasMore
}

// shutdown ends every member with a shutting_down event; members that are
// behind end so once they caught up.
func (g *streamGroup) shutdown() {
	var cs []*streamConn
	g.mu.Lock()
	g.closing = true
	for c := range g.members {
		if !c.busy && !c.ended {
			c.busy = true
			cs = append(cs, c)
		}
	}
	g.mu.Unlock()
	g.fanOut(cs, func(c *streamConn) { c.final("shutting_down", shuttingDownMessage) })
	st := g.s.streams
	st.mu.Lock()
	if st.groups[g.key] == g {
		delete(st.groups, g.key)
	}
	st.mu.Unlock()
}

// Messages of the final events.
const (
	shuttingDownMessage = "the server is shutting down; reconnect with Last-Event-ID to resume"
	slowReaderMessage   = "the client read too slowly; reconnect with Last-Event-ID to resume"
)

// frame returns the bytes of res for c's connection.
func (c *streamConn) frame(res *streamResult) []byte {
	if c.chunked {
		return res.chunk
	}
	return res.events
}

// write writes b (payload bytes of body) to the client without blocking;
// what the kernel does not take is written by a drain goroutine, timed
// from then. It reports whether the stream is still current (neither
// behind nor ended). The caller owns the stream's writes: the loop for a
// member that is not busy, the drain for one that is.
func (c *streamConn) write(b []byte, payload int) bool {
	n, err := c.tryWrite(b)
	if err != nil {
		c.end(false)
		return false
	}
	if n == len(b) {
		c.sent.Add(int64(payload))
		return true
	}
	c.g.mu.Lock()
	c.busy = true
	c.g.mu.Unlock()
	c.g.s.streams.drains.Add(1)
	// The write is timed from here: the attempt took microseconds.
	go c.drain(b[n:], payload, time.Now())
	return false
}

// drain writes the rest of a write that the kernel did not take at once,
// as a blocking write, then lets the stream catch up. A write that took
// longer than StreamConfig.SlowWrite ends the stream with a slow_reader
// event; one stuck six times as long (at least 30 s) is cut.
func (c *streamConn) drain(rest []byte, payload int, start time.Time) {
	slow := c.g.s.streams.cfg.SlowWrite
	_ = c.conn.SetWriteDeadline(start.Add(max(6*slow, 30*time.Second)))
	if _, err := c.conn.Write(rest); err != nil {
		c.end(false)
		return
	}
	c.sent.Add(int64(payload))
	_ = c.conn.SetWriteDeadline(time.Time{})
	if time.Since(start) > slow {
		c.final("slow_reader", slowReaderMessage)
		return
	}
	c.setIdle(true)
}

// setIdle ends c's busy state (behind or setting up): it takes part in the
// fan-outs again, due to read at once if due says so; at shutdown it ends
// instead.
func (c *streamConn) setIdle(due bool) {
	g := c.g
	g.mu.Lock()
	if g.closing {
		g.mu.Unlock()
		c.final("shutting_down", shuttingDownMessage)
		return
	}
	c.busy = false
	c.due = c.due || due
	g.mu.Unlock()
	g.poke()
}

// final sends the event that ends a stream, an error object as in the
// envelope, ends the body and then the stream. c is busy (its caller owns
// its writes).
func (c *streamConn) final(code, message string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": message}})
	ev := fmt.Appendf(nil, "event: error\ndata: %s\n\n", b)
	out := ev
	if c.chunked {
		out = append(appendChunk(nil, ev), chunkTerminator...)
	}
	n, err := c.tryWrite(out)
	if err == nil && n < len(out) {
		// Rare (the socket buffer is full right after a drain): the last
		// bytes get the cut's time.
		_ = c.conn.SetWriteDeadline(time.Now().Add(max(6*c.g.s.streams.cfg.SlowWrite, 30*time.Second)))
		go func() {
			if _, err := c.conn.Write(out[n:]); err == nil {
				c.sent.Add(int64(len(ev)))
			}
			c.end(true)
		}()
		return
	}
	if err == nil {
		c.sent.Add(int64(len(ev)))
	}
	c.end(err == nil)
}

// end ends the stream, once: it leaves its group, frees its slot, writes
// the access log line and closes the connection, gracefully (what was
// written is delivered before the close) or at once.
func (c *streamConn) end(graceful bool) {
	c.endOnce.Do(func() {
		g := c.g
		g.mu.Lock()
		c.ended = true
		delete(g.members, c)
		g.mu.Unlock()
		g.poke()
		c.release()
		c.report(c.sent.Load())
		if c.taken != nil {
			defer c.taken.Done()
		}
		if tc, ok := c.conn.(*net.TCPConn); ok && graceful {
			// The client closes its side on the end of the body; watch
			// closes the connection then, or after a while.
			_ = tc.CloseWrite()
			_ = tc.SetReadDeadline(time.Now().Add(5 * time.Second))
			return
		}
		_ = c.conn.Close()
	})
}

// watch reads the connection until it fails: the client closed it (or the
// stream ended and closed it). The stream ends then, at once.
func (c *streamConn) watch() {
	b := make([]byte, 1)
	for {
		if _, err := c.conn.Read(b); err != nil {
			break
		}
	}
	c.end(false)
	_ = c.conn.Close()
}
