package live

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The loop of a feed.
//
// Readers of a feed with the same filters form a group, whatever their
// transport. A group's goroutine waits for the change signal, its clock
// (each member's heartbeat at the member's own time, and the group's
// safety read once per heartbeat interval) and its members' retries; at
// each it reads once per distinct position of the members that are due
// (most sit at the head), and hands the page to every member at that
// position. A sink takes a page without blocking, or delivers it in the
// background and meanwhile takes no part in the group's rounds: it catches
// up from its own position once it is ready again. Memory is one page per
// position, shared by the members at it.

// Page is one read of a feed from a position.
type Page[T any] struct {
	// Items are what the read gave, as the sinks take them (rendered
	// events, rows). Shared by every member that takes the page: read-only.
	Items T
	// N is the number of items.
	N int
	// Next is where the read ended: the position to read on from.
	Next string
	// More says that more items follow now: read on at once.
	More bool
	// Pending says that items already visible wait behind a write
	// transaction still running: read again shortly.
	Pending bool
}

// Reader reads a feed's items after the position after. A group reads
// with a context bounded by Config.ReadTimeout that no member's end
// cancels (the other members wait for the read).
type Reader[T any] func(ctx context.Context, after string) (*Page[T], error)

// Sink carries a feed to one client. The group owns a member's sink while
// it calls Deliver, Beat or End, and never calls two of them at once for
// one member; a sink that goes on in the background owns itself until it
// calls Member.Ready or Member.Leave, and meanwhile the group only calls Cut.
type Sink[T any] interface {
	// Deliver hands the sink a page of items (N > 0) read from its
	// position. It must not block: it reports true when the sink took the
	// whole page, false when it delivers the rest in the background (it
	// then calls Member.Ready, or Member.Leave if the client is gone) or
	// when it has ended (it called Member.Leave).
	Deliver(m *Member[T], p *Page[T]) bool
	// Beat is the member's heartbeat, with the same rules as Deliver.
	Beat(m *Member[T]) bool
	// End ends the sink with its final event; it calls Member.Leave once
	// the event is written (or could not be). It must not block.
	End(m *Member[T], e End)
	// Cut ends a sink that delivers in the background to a client that
	// does not read, without a final event: it closes the connection, so
	// that the background delivery fails. The sink calls Member.Leave once
	// its background work has stopped, even if that work had just
	// finished. Called while the background work may run.
	Cut(m *Member[T])
}

// Feed is the live feed of one kind of rows (posts, firehose messages)
// carried by one kind of sink: its groups of members by filters.
type Feed[T any] struct {
	live  *Live
	kind  string // the Hub kind whose changes wake its groups
	name  string // in log lines
	reads *sharedReads[*Page[T]]

	mu     sync.Mutex
	groups map[string]*group[T]
}

// NewFeed returns the feed of the rows of kind (KindPosts, KindFirehose),
// named name in log lines.
func NewFeed[T any](l *Live, kind, name string) *Feed[T] {
	return &Feed[T]{live: l, kind: kind, name: name, reads: newSharedReads[*Page[T]](time.Now), groups: map[string]*group[T]{}}
}

// Read reads the feed of the group key from after with read, sharing the
// read with the group's rounds and the other first reads of the same key
// and position at the current generation of the change signal. A stream
// calls it for its first page (a bad parameter is refused before the
// stream starts), then joins the group.
func (f *Feed[T]) Read(ctx context.Context, key string, read Reader[T], after string) (*Page[T], error) {
	hub := f.live.cfg.Hub
	return f.reads.do(key+"\x00"+after, hub.Generation(), time.Time{}, hub.Generation, func() (*Page[T], error) {
		return f.read(ctx, read, after)
	})
}

// read runs read under the feed's timeout, with ctx's values but not its
// cancellation: other members may wait for the result.
func (f *Feed[T]) read(ctx context.Context, read Reader[T], after string) (*Page[T], error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.live.cfg.ReadTimeout)
	defer cancel()
	return read(ctx, after)
}

// Join adds a member at the end of first (the page its sink has been
// given, read after wake was taken from Hub.Wait) to the group key, whose
// reads are read, starting the group if it has none. ctx carries the
// values the group's reads need (not its cancellation). The member starts
// busy: its sink delivers first, then calls Member.Ready. After Shutdown
// has begun it ends at once with EndShutdown instead.
func (f *Feed[T]) Join(ctx context.Context, key string, read Reader[T], sink Sink[T], first *Page[T], wake <-chan struct{}) *Member[T] {
	now := time.Now()
	m := &Member[T]{sink: sink, pos: first.Next, lastRead: now, busy: true,
		nextBeat: now.Add(f.live.cfg.Heartbeat), due: first.More}
	if first.Pending && !first.More {
		m.retryAt = now.Add(retryPending.after(1))
	}
	f.live.active.Add(1)
	f.mu.Lock()
	g := f.groups[key]
	if g == nil {
		g = &group[T]{f: f, key: key, read: read, ctx: context.WithoutCancel(ctx),
			kick: make(chan struct{}, 1), members: map[*Member[T]]struct{}{}}
		f.groups[key] = g
		// The group's loop counts with its members, so that Shutdown
		// returns once the loops have left too.
		f.live.active.Add(1)
		// The group's wake is taken before it has a member: every change
		// after this reaches the group, every change before it the
		// member's wake.
		go g.run(f.live.cfg.Hub.Wait(f.kind))
	}
	g.mu.Lock()
	g.members[m] = struct{}{}
	m.g = g
	// Checked once the member is in the group, under its lock: a Shutdown
	// that began before is seen here, and one that begins after finds the
	// member among those its group ends.
	if f.live.Closing() {
		m.ending = &EndShutdown
	}
	select {
	case <-wake:
		// A change since the first read began.
		m.due = true
	default:
	}
	g.mu.Unlock()
	f.mu.Unlock()
	return m
}

// Kind is the kind of rows of the feed, whose changes wake it.
func (f *Feed[T]) Kind() string { return f.kind }

// Groups is the number of groups of the feed, for tests and metrics.
func (f *Feed[T]) Groups() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.groups)
}

// Member is one reader of a feed.
type Member[T any] struct {
	g    *group[T]
	sink Sink[T]

	// Guarded by g.mu.
	pos       string    // where the items handed to the sink end
	lastRead  time.Time // when the read that gave pos ended
	due       bool      // reads at the group's next round
	notBefore time.Time // ... a read started no earlier than this
	retryAt   time.Time // becomes due then (zero: not waiting)
	nextBeat  time.Time // its next heartbeat
	busy      bool      // the group or the sink's background work owns the sink
	ending    *End      // an end asked for, which the loop carries out
	finishing bool      // the loop has ended or cut the sink; it only leaves now
	ended     bool      // left the group
}

// Ready says that the sink has delivered what it took in the background:
// it takes part in the group's rounds again, at once if due. During
// shutdown it ends instead.
func (m *Member[T]) Ready(due bool) {
	g := m.g
	g.mu.Lock()
	if m.ended || m.finishing {
		g.mu.Unlock()
		return
	}
	m.busy = false
	m.due = m.due || due
	g.mu.Unlock()
	g.poke()
}

// End asks the group to end the member with e: at once when its sink is
// idle, by Cut when it delivers in the background. It never blocks.
func (m *Member[T]) End(e End) {
	g := m.g
	g.mu.Lock()
	if !m.ended && !m.finishing && m.ending == nil {
		m.ending = &e
	}
	g.mu.Unlock()
	g.poke()
}

// Leave removes the member from its group, once: its client is gone or its
// sink has ended.
func (m *Member[T]) Leave() {
	g := m.g
	g.mu.Lock()
	if m.ended {
		g.mu.Unlock()
		return
	}
	m.ended = true
	delete(g.members, m)
	g.mu.Unlock()
	g.f.live.active.Done()
	g.poke()
}

// group is the members of a feed with the same filters.
type group[T any] struct {
	f    *Feed[T]
	key  string
	read Reader[T]
	ctx  context.Context // values for the reads, never cancelled
	kick chan struct{}   // a member needs the loop: joined, ready, leaving, ending

	mu       sync.Mutex
	members  map[*Member[T]]struct{}
	failures int // consecutive failed reads
	pendings int // consecutive reads that found items pending
}

// poke wakes the group's loop.
func (g *group[T]) poke() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// heartbeatSlots is the number of ticks of a group's clock per heartbeat
// interval: each member has its heartbeat at the tick nearest to one
// interval after its last (or its start), so that the heartbeats of
// members that joined at different times do not all go out at once, as
// one burst that delays the next item.
const heartbeatSlots = 16

// run is the group's loop: it ends when the group has no member left, or
// at shutdown once every member has ended.
func (g *group[T]) run(wake <-chan struct{}) {
	defer g.f.live.active.Done()
	cfg := g.f.live.cfg
	hub := cfg.Hub
	tick := max(cfg.Heartbeat/heartbeatSlots, time.Millisecond)
	clock := time.NewTicker(tick)
	defer clock.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	nextSafety := time.Now().Add(cfg.Heartbeat)
	done := g.f.live.done
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
			wake = hub.Wait(g.f.kind)
			g.each(func(m *Member[T]) { m.due = true })
		case t := <-clock.C:
			g.heartbeat(t, tick)
			if !t.Before(nextSafety) {
				// The safety read: whatever the signal says, once per
				// interval, one read per distinct position.
				nextSafety = t.Add(cfg.Heartbeat)
				g.each(func(m *Member[T]) {
					m.due = true
					m.notBefore = later(m.notBefore, m.lastRead)
				})
			}
		case <-retry.C:
			t := time.Now()
			g.each(func(m *Member[T]) {
				if !m.retryAt.IsZero() && !m.retryAt.After(t) {
					m.due, m.retryAt = true, time.Time{}
					m.notBefore = later(m.notBefore, m.lastRead)
				}
			})
		case <-g.kick:
		case <-done:
			// Shutdown: every member ends; the loop stays until they have.
			done = nil
			g.endAll(EndShutdown)
		case <-now:
		}
		g.endAsked()
		if done != nil {
			due = g.round()
		}
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

// each calls f on every idle member (not busy, not ending), under g.mu.
func (g *group[T]) each(f func(m *Member[T])) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for m := range g.members {
		if !m.busy && m.ending == nil && !m.finishing {
			f(m)
		}
	}
}

// nextRetry is the earliest retry of a member, or zero.
func (g *group[T]) nextRetry() time.Time {
	var next time.Time
	g.each(func(m *Member[T]) {
		if !m.retryAt.IsZero() && (next.IsZero() || m.retryAt.Before(next)) {
			next = m.retryAt
		}
	})
	return next
}

// leaveIfEmpty removes the group from its feed when it has no member left,
// and reports whether it did.
func (g *group[T]) leaveIfEmpty() bool {
	f := g.f
	f.mu.Lock()
	defer f.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.members) > 0 {
		return false
	}
	if f.groups[g.key] == g {
		delete(f.groups, g.key)
	}
	return true
}

// endAll asks every member to end with e.
func (g *group[T]) endAll(e End) {
	g.mu.Lock()
	for m := range g.members {
		if !m.finishing && m.ending == nil {
			m.ending = &e
		}
	}
	g.mu.Unlock()
}

// endAsked ends the members whose end was asked for: an idle sink gets its
// final event, a busy one is cut.
func (g *group[T]) endAsked() {
	var idle, busy []*Member[T]
	ends := map[*Member[T]]End{}
	g.mu.Lock()
	for m := range g.members {
		if m.ending == nil {
			continue
		}
		if m.busy {
			busy = append(busy, m)
		} else {
			idle = append(idle, m)
			ends[m] = *m.ending
		}
		m.ending, m.finishing, m.busy = nil, true, true
	}
	g.mu.Unlock()
	for _, m := range busy {
		m.sink.Cut(m)
	}
	fanOut(len(idle), func(i int) { idle[i].sink.End(idle[i], ends[idle[i]]) })
}

// heartbeat calls Beat on every idle member whose heartbeat is due at the
// tick at now (tick apart).
func (g *group[T]) heartbeat(now time.Time, tick time.Duration) {
	interval := g.f.live.cfg.Heartbeat
	var ms []*Member[T]
	g.each(func(m *Member[T]) {
		if m.nextBeat.After(now.Add(tick / 2)) {
			return
		}
		m.nextBeat = now.Add(interval)
		ms = append(ms, m)
	})
	g.hand(ms, func(m *Member[T]) bool { return m.sink.Beat(m) })
}

// hand gives the sinks of ms, idle members, to give (Deliver or Beat):
// they are busy while it runs, and stay busy where it reports that the
// sink goes on in the background.
func (g *group[T]) hand(ms []*Member[T], give func(m *Member[T]) bool) {
	if len(ms) == 0 {
		return
	}
	g.mu.Lock()
	for _, m := range ms {
		m.busy = true
	}
	g.mu.Unlock()
	took := make([]bool, len(ms))
	fanOut(len(ms), func(i int) { took[i] = give(ms[i]) })
	g.mu.Lock()
	for i, m := range ms {
		if took[i] && !m.finishing {
			m.busy = false
		}
	}
	g.mu.Unlock()
}

// inlineWrites is the number of members a fan-out hands a page to without
// starting writers.
const inlineWrites = 64

// fanOut calls do for 0 ≤ i < n, shared among writers when n is large: 4
// per GOMAXPROCS, so that a writer whose thread the OS preempted in a
// write(2) (a shared machine) holds up only its share while the others
// take its P.
func fanOut(n int, do func(i int)) {
	workers := 4 * runtime.GOMAXPROCS(0)
	if n <= inlineWrites || workers == 1 {
		for i := range n {
			do(i)
		}
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		wg.Go(func() {
			for i := start; i < end; i++ {
				do(i)
			}
		})
	}
	wg.Wait()
}

// positionBatch is the members that read from one position.
type positionBatch[T any] struct {
	pos       string
	notBefore time.Time
	members   []*Member[T]
}

// maxGroupReads bounds the reads a group runs at once (one per distinct
// position of its members).
const maxGroupReads = 4

// round reads once per distinct position of the members that are due and
// hands each page to its members. It reports whether members are due
// again at once (a read that did not reach the end).
func (g *group[T]) round() bool {
	batches := map[string]*positionBatch[T]{}
	g.each(func(m *Member[T]) {
		if !m.due {
			return
		}
		b := batches[m.pos]
		if b == nil {
			b = &positionBatch[T]{pos: m.pos}
			batches[m.pos] = b
		}
		b.notBefore = later(b.notBefore, m.notBefore)
		b.members = append(b.members, m)
		m.due, m.notBefore = false, time.Time{}
	})
	if len(batches) == 0 {
		return false
	}
	hub := g.f.live.cfg.Hub
	gen := hub.Generation()
	sem := make(chan struct{}, maxGroupReads)
	var wg sync.WaitGroup
	var again atomic.Bool
	for _, b := range batches {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if g.deliver(b, gen) {
				again.Store(true)
			}
		})
	}
	wg.Wait()
	return again.Load()
}

// deliver reads b's position and hands the page to b's members. It reports
// whether they are due again at once.
func (g *group[T]) deliver(b *positionBatch[T], gen uint64) bool {
	f := g.f
	hub := f.live.cfg.Hub
	page, err := f.reads.do(g.key+"\x00"+b.pos, gen, b.notBefore, hub.Generation, func() (*Page[T], error) {
		return f.read(g.ctx, g.read, b.pos)
	})
	done := time.Now()
	if err != nil {
		g.failed(b, done, err)
		return false
	}
	g.mu.Lock()
	if g.failures > 0 {
		f.live.cfg.Logger.Info("live: reads recovered", slog.String("feed", f.name),
			slog.Int("failed_reads", g.failures))
		g.failures = 0
	}
	var retryAt time.Time
	if page.Pending && !page.More {
		g.pendings++
		retryAt = done.Add(retryPending.after(g.pendings))
	} else {
		g.pendings = 0
	}
	var deliver []*Member[T]
	for _, m := range b.members {
		if m.ended || m.busy || m.ending != nil || m.finishing {
			continue // left, or asked to end, while the read ran
		}
		m.pos, m.lastRead = page.Next, done
		m.due = page.More
		m.retryAt = retryAt
		deliver = append(deliver, m)
	}
	g.mu.Unlock()
	if page.N > 0 {
		g.hand(deliver, func(m *Member[T]) bool { return m.sink.Deliver(m, page) })
	}
	return page.More
}

// failed schedules the retry of b's members after a failed read, backing
// off exponentially with the group's consecutive failures; the first
// failure of an outage is logged, the retries are not.
func (g *group[T]) failed(b *positionBatch[T], done time.Time, err error) {
	g.mu.Lock()
	g.failures++
	n := g.failures
	retryAt := done.Add(retryFailed.after(n))
	for _, m := range b.members {
		m.lastRead, m.retryAt = done, retryAt
	}
	members := len(g.members)
	g.mu.Unlock()
	log := g.f.live.cfg.Logger
	if n == 1 {
		log.Warn("live: read failed; retrying with backoff until it succeeds", slog.String("feed", g.f.name),
			slog.Int("members", members), slog.Any("error", err))
	} else {
		log.Debug("live: read failed again", slog.String("feed", g.f.name), slog.Int("failed_reads", n),
			slog.Any("error", err))
	}
}

// backoff is an exponential backoff with jitter: the nth wait is drawn
// from [d/2, d] for d = first·2^(n-1), at most max.
type backoff struct{ first, max time.Duration }

var (
	// retryPending: items wait behind a write transaction still running,
	// usually for milliseconds; a long one is not read forty times a second.
	retryPending = backoff{first: 25 * time.Millisecond, max: time.Second}
	// retryFailed: the database did not answer.
	retryFailed = backoff{first: 250 * time.Millisecond, max: 5 * time.Second}
)

func (b backoff) after(n int) time.Duration {
	d := b.first
	for i := 1; i < n && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	return d/2 + rand.N(d/2+1)
}
