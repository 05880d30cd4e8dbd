package graph

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/gobwas/ws"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/live"
)

// subscribe starts a subscription: it takes one of the key's open-feed
// slots, reads the feed's first page (nothing but the current end, or with
// since the items created since then), and joins the group of key of
// feed, whose reads are read. The returned channel carries the items to
// gqlgen, which sends each to the client.
func subscribe[E any](ctx context.Context, r *Resolver, feed *live.Feed[[]E], key string, read live.Reader[[]E]) (<-chan E, error) {
	if r.live == nil {
		return nil, apperr.New(apperr.BadRequest, "subscriptions are not offered by this server")
	}
	p, ok := keys.FromContext(ctx)
	if !ok {
		return nil, keys.ErrUnauthorized
	}
	release, err := r.live.Acquire(p.KeyID, string(p.Tier))
	if err != nil {
		return nil, err
	}
	wake := r.live.Hub().Wait(feed.Kind())
	first, err := feed.Read(ctx, key, read, "")
	if err != nil {
		release()
		return nil, err
	}
	if op := socketOpOf(ctx); op != nil {
		return subscribeSocket(op, feed, key, read, first, wake, release), nil
	}
	s := &chanSink[E]{ctx: ctx, out: make(chan E, subscriptionBuffer), slow: r.live.Config().SlowWrite,
		release: release, cut: make(chan struct{})}
	// The group's reads keep no request of a subscriber.
	m := feed.Join(context.Background(), key, read, s, first, wake)
	s.hold(r.live.Watch(p.KeyID, m.End), context.AfterFunc(ctx, func() { s.finish(m) }))
	if first.N == 0 || s.Deliver(m, first) {
		m.Ready(false)
	}
	return s.out, nil
}

// subscriptionBuffer is how many items a subscription's channel holds
// before a page is handed over in the background.
const subscriptionBuffer = 16

// chanSink carries a feed to a subscription: the channel gqlgen reads.
type chanSink[E any] struct {
	ctx  context.Context // the subscription's; ends when the client stops it or leaves
	out  chan E
	slow time.Duration

	release func()

	mu        sync.Mutex
	unwatch   func()      // ends the revocation watch
	stopAfter func() bool // ends the watch of the client's leaving
	finished  bool
	draining  bool          // a drain goroutine owns the sink
	cutAsked  bool          // Cut was called
	cut       chan struct{} // closed by Cut while a drain runs
	closeOnce sync.Once
	leaveOnce sync.Once
}

// Deliver puts the page's items into the channel, as far as it has room
// without waiting, and leaves the rest to a drain goroutine.
func (s *chanSink[E]) Deliver(m *live.Member[[]E], p *live.Page[[]E]) bool {
	for i, e := range p.Items {
		select {
		case s.out <- e:
		default:
			s.mu.Lock()
			s.draining = true
			s.mu.Unlock()
			go s.drain(m, p.Items[i:], time.Now())
			return false
		}
	}
	return true
}

// drain puts the rest of a page into the channel as gqlgen takes them. A
// client that took longer than the slow-write limit ends with slow_reader.
func (s *chanSink[E]) drain(m *live.Member[[]E], rest []E, start time.Time) {
	for _, e := range rest {
		select {
		case s.out <- e:
		case <-s.ctx.Done():
			s.finish(m)
			return
		case <-s.cut:
			s.close(nil)
			s.finish(m)
			return
		}
	}
	s.mu.Lock()
	s.draining = false
	cut := s.cutAsked
	s.mu.Unlock()
	switch {
	case cut:
		s.close(nil)
		s.finish(m)
	case time.Since(start) > s.slow:
		s.End(m, live.EndSlowReader)
	default:
		m.Ready(false)
	}
}

// Beat does nothing: the websocket transport pings, the SSE transport
// sends its keep-alive.
func (s *chanSink[E]) Beat(*live.Member[[]E]) bool { return true }

// End ends the subscription with e as its error.
func (s *chanSink[E]) End(m *live.Member[[]E], e live.End) {
	s.close(&e)
	s.finish(m)
}

// Cut ends a subscription whose client does not take its items.
func (s *chanSink[E]) Cut(m *live.Member[[]E]) {
	s.mu.Lock()
	if s.cutAsked {
		s.mu.Unlock()
		return
	}
	s.cutAsked = true
	if s.draining {
		close(s.cut)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.close(nil)
	s.finish(m)
}

// close closes the channel, once: gqlgen's SSE transport completes the
// subscription.
func (s *chanSink[E]) close(*live.End) {
	s.closeOnce.Do(func() { close(s.out) })
}

// hold keeps the watches of the subscription's member, or ends them at
// once if it has already finished.
func (s *chanSink[E]) hold(unwatch func(), stopAfter func() bool) {
	s.mu.Lock()
	done := s.finished
	if !done {
		s.unwatch, s.stopAfter = unwatch, stopAfter
	}
	s.mu.Unlock()
	if done {
		unwatch()
		stopAfter()
	}
}

// finish frees what the subscription holds and leaves the feed, once.
func (s *chanSink[E]) finish(m *live.Member[[]E]) {
	s.leaveOnce.Do(func() {
		s.release()
		s.mu.Lock()
		s.finished = true
		unwatch, stopAfter := s.unwatch, s.stopAfter
		s.mu.Unlock()
		if unwatch != nil {
			unwatch()
			stopAfter()
		}
		m.Leave()
	})
}

// subscribeSocket joins a subscription sent on a websocket to its feed: its
// sink renders each item with the operation's selection and writes it to
// the socket without blocking (socket.go). It starts once the transport
// has the operation's response handler, and ends with the operation (the
// client's complete, or the socket's end: when its key is revoked, the
// socket closes with the code that says so).
func subscribeSocket[E any](op *socketOp, feed *live.Feed[[]E], key string,
	read live.Reader[[]E], first *live.Page[[]E], wake <-chan struct{}, release func()) <-chan E {
	s := &socketSink[E]{op: op, ch: make(chan E, 1), release: release}
	m := feed.Join(context.Background(), key, read, s, first, wake)
	op.onStop(func() { s.finish(m) })
	op.start = func() {
		if first.N == 0 || s.Deliver(m, first) {
			m.Ready(false)
		}
	}
	return s.ch
}

// socketSink carries a feed to a subscription on a websocket.
type socketSink[E any] struct {
	op      *socketOp
	ch      chan E // holds the one item being rendered
	release func()
	once    sync.Once
}

// Deliver renders the page's items as next messages, with the operation's
// selection (gqlgen's response handler, fed one item at a time), and
// writes them to the socket without blocking.
func (s *socketSink[E]) Deliver(m *live.Member[[]E], p *live.Page[[]E]) bool {
	op := s.op
	var frames []byte
	// Each event is written into this page's buffer, not one the
	// subscription would keep.
	var scratch bytes.Buffer
	ctx := WithResponseBuffer(op.ctx, &scratch)
	for _, e := range p.Items {
		scratch.Reset()
		s.ch <- e
		resp := op.responses(ctx)
		if resp == nil {
			return false // the socket ended: the operation's end leaves the feed
		}
		frames = append(frames, frame(ws.OpText, responseMessage(op.id, resp))...)
	}
	return op.s.deliver(frames, func() { m.Ready(true) })
}

// Beat does nothing: the socket pings its client itself.
func (s *socketSink[E]) Beat(*live.Member[[]E]) bool { return true }

// End sends the operation's error message with e, and ends it.
func (s *socketSink[E]) End(m *live.Member[[]E], e live.End) {
	msg := e.Message
	if e.Resume {
		msg += "; subscribe again, with since to catch up"
	}
	s.op.s.send(protocolMessage("error", s.op.id, []*gqlerror.Error{{Message: msg, Extensions: map[string]any{"code": e.Code}}}))
	s.finish(m)
}

// Cut ends a subscription whose socket is behind: the socket's drain goes
// on for the others, and ends the socket if its client is too slow.
func (s *socketSink[E]) Cut(m *live.Member[[]E]) { s.finish(m) }

// finish frees the subscription's slot, leaves the feed and ends the
// operation, once.
func (s *socketSink[E]) finish(m *live.Member[[]E]) {
	s.once.Do(func() {
		s.release()
		m.Leave()
		s.op.remove()
	})
}
