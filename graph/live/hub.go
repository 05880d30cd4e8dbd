package live

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/feedapi/feedapi/db"
)

// The kinds of data the change signal names.
const (
	KindPosts    = "posts"
	KindFirehose = "firehose"
	KindBriefs   = "briefs"
	KindETFFlows = "etf_flows"
)

// Kinds lists every kind of Change.
var Kinds = []string{KindPosts, KindFirehose, KindBriefs, KindETFFlows}

// Change says that rows of Kind were inserted or updated. Resync marks the
// changes delivered after the change signal was lost for a while (the
// database restarted, the listening connection was cut): anything may have
// changed meanwhile, so a consumer drops what it keeps of Kind and re-reads
// it from the database.
type Change struct {
	Kind   string
	Resync bool
}

// Hub fans the change signal of one process (db.Listen) out to its
// consumers: the feeds' groups, caches. It keeps no
// per-consumer state: each kind has a channel that is closed when the kind
// changes and then replaced, so a consumer that takes Wait's channel before
// it reads the database and waits on it afterwards never misses a change,
// however many changes happen while it reads (they coalesce into one wake).
// The zero Hub is not usable; use NewHub.
type Hub struct {
	mu    sync.Mutex
	kinds map[string]*signal
	gen   atomic.Uint64
	// epoch counts the resyncs, so that Subscribe can tell a resync among
	// coalesced changes.
	epoch atomic.Uint64
}

// signal is one generation of a kind's change: closed when it happens.
type signal struct {
	ch chan struct{}
}

// NewHub returns a hub with nothing changed yet.
func NewHub() *Hub {
	h := &Hub{kinds: make(map[string]*signal, len(Kinds))}
	for _, k := range Kinds {
		h.kinds[k] = &signal{ch: make(chan struct{})}
	}
	return h
}

// Wait returns a channel that is closed at the next change of kind (an
// unknown kind never changes).
func (h *Hub) Wait(kind string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.kinds[kind]
	if !ok {
		return nil
	}
	return s.ch
}

// Generation counts the changes published so far, of every kind. A result
// read from the database after Generation returned g reflects every change
// published up to g; consumers that share results compare generations.
func (h *Hub) Generation() uint64 { return h.gen.Load() }

// Publish signals a change of kind.
func (h *Hub) Publish(kind string) { h.publish(kind) }

// Resync signals a change of every kind, marked Resync: the signal was
// lost for a while (db.Listen's reconnection).
func (h *Hub) Resync() {
	h.epoch.Add(1)
	for _, k := range Kinds {
		h.publish(k)
	}
}

// Notice publishes a notification of the change triggers.
func (h *Hub) Notice(n db.Notice) { h.Publish(n.Kind) }

func (h *Hub) publish(kind string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.kinds[kind]
	if !ok {
		return
	}
	h.gen.Add(1)
	close(s.ch)
	h.kinds[kind] = &signal{ch: make(chan struct{})}
}

// Subscribe returns the changes of every kind published after it returns,
// until ctx ends, when the channel is closed. Changes that happen while the consumer has not taken
// the last one coalesce per kind (at most one pending Change per kind,
// Resync if any of them was), so a slow consumer never holds the hub up
// and never misses that a kind changed. One goroutine per subscription.
func (h *Hub) Subscribe(ctx context.Context) <-chan Change {
	out := make(chan Change)
	// Taken now, so that every change after Subscribe returns is seen.
	h.mu.Lock()
	epoch := h.epoch.Load()
	seen := []uint64{epoch, epoch, epoch, epoch}
	cur := make([]*signal, len(Kinds))
	for i, k := range Kinds {
		cur[i] = h.kinds[k]
	}
	h.mu.Unlock()
	go func() {
		defer close(out)
		pending := make([]Change, 0, len(Kinds))
		for {
			// Collect whatever has happened without blocking.
			for i, k := range Kinds {
				select {
				case <-cur[i].ch:
					e := h.epoch.Load()
					resync := e != seen[i]
					seen[i] = e
					h.mu.Lock()
					next := h.kinds[k]
					h.mu.Unlock()
					// Changes between cur[i] and next were published
					// too; one Change stands for all of them, Resync
					// if a resync happened since the last one.
					cur[i] = next
					pending = addChange(pending, Change{Kind: k, Resync: resync})
				default:
				}
			}
			if len(pending) > 0 {
				select {
				case out <- pending[0]:
					pending = pending[1:]
				case <-ctx.Done():
					return
				}
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-cur[0].ch:
			case <-cur[1].ch:
			case <-cur[2].ch:
			case <-cur[3].ch:
			}
		}
	}()
	return out
}

// addChange adds c to pending unless a Change of its kind is there already
// (which then becomes Resync if c is).
func addChange(pending []Change, c Change) []Change {
	for i := range pending {
		if pending[i].Kind == c.Kind {
			pending[i].Resync = pending[i].Resync || c.Resync
			return pending
		}
	}
	return append(pending, c)
}
