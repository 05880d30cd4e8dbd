// Package live owns feedapi's live feeds: the change signal that says when
// posts or firehose messages were written (Hub), the one loop that follows
// a feed for every reader of it (Feed), and the rules every feed keeps,
// whatever carries it to the client: SSE over a connection taken from
// net/http or over HTTP/2, a GraphQL subscription over a websocket or over
// SSE. The transports are sinks of the loop (Sink): they turn pages into
// bytes, the loop decides when to read and what to hand them.
//
// The rules stated here once: the page size of a read, the retry of a read
// that waits behind a running transaction and the backoff of a read that
// failed, the safety read that follows every feed once per heartbeat
// interval whatever the signal says, slow readers, the final events, the
// open feeds per key of each tier, revocation of a key's open feeds, and
// shutdown.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/feedapi/feedapi/graph/apperr"
)

// Defaults of Config.
const (
	DefaultHeartbeat       = 15 * time.Second
	DefaultSlowWrite       = 5 * time.Second
	DefaultReadTimeout     = 5 * time.Second
	DefaultRevocationCheck = 2 * time.Second
)

// PageSize is the number of items a feed reads at a time: the most a
// member holds in memory, never a backlog.
const PageSize = 100

// DefaultLimits returns the open live feeds per key of each tier when
// Config.Limits does not name it: SSE streams and GraphQL subscriptions
// together, per process.
func DefaultLimits() map[string]int {
	return map[string]int{"free": 2, "pro": 10, "internal": 100}
}

// Config configures the live feeds of a process. Zero fields take the
// defaults noted.
type Config struct {
	// Hub is the process's change signal (NewHub fed by db.Listen); nil: a
	// hub of its own, which nothing publishes to (feeds then follow their
	// safety reads only).
	Hub *Hub
	// Heartbeat is the interval of the sinks' keep-alive (an SSE comment),
	// and of the safety read each group makes whatever the signal says, for
	// a lost notification or a read replica that had not received the rows
	// when the signal came (default 15s).
	Heartbeat time.Duration
	// SlowWrite is how long a sink may take to hand a page to its client:
	// one that takes longer is ended with EndSlowReader, and one whose
	// write is stuck six times as long (at least 30 s) is cut (default 5s).
	SlowWrite time.Duration
	// ReadTimeout bounds each read of a feed (default 5s).
	ReadTimeout time.Duration
	// Limits are the open feeds per key of each tier (merged over
	// DefaultLimits).
	Limits map[string]int
	// Revoked reports which of the keys it is given are revoked (or no
	// longer exist). The feeds of a revoked key end with EndRevoked within
	// RevocationCheck of a check that sees it. Nil: keys are never checked
	// again once a feed has started.
	Revoked func(ctx context.Context, keyIDs []int64) ([]int64, error)
	// RevocationCheck is the interval of the checks of the keys with open
	// feeds (default 2s): one query per interval per process, however many
	// feeds are open.
	RevocationCheck time.Duration
	// Logger hears failed reads (one line per group and outage) and failed
	// revocation checks (default: discard).
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Hub == nil {
		c.Hub = NewHub()
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.SlowWrite <= 0 {
		c.SlowWrite = DefaultSlowWrite
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.RevocationCheck <= 0 {
		c.RevocationCheck = DefaultRevocationCheck
	}
	limits := DefaultLimits()
	for t, n := range c.Limits {
		limits[t] = n
	}
	c.Limits = limits
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// StuckWrite is how long a single write to a client may block before the
// connection is cut: six times the slow-write limit, at least 30 s.
func (c Config) StuckWrite() time.Duration { return max(6*c.SlowWrite, 30*time.Second) }

// DeadPeer is how long data sent to a client may stay unacknowledged
// before its connection is taken for dead: three heartbeats.
func (c Config) DeadPeer() time.Duration { return 3 * c.Heartbeat }

// End is why a feed ended, as its final event or error says it: an error
// object of the envelope's form. Each transport says how to go on where
// Resume is set (SSE: reconnect with Last-Event-ID).
type End struct {
	Code    string
	Message string
	Resume  bool // the client may reconnect and go on from where it was
}

// The ends of a feed that the server decides.
var (
	EndShutdown   = End{Code: "shutting_down", Message: "the server is shutting down", Resume: true}
	EndSlowReader = End{Code: "slow_reader", Message: "the client read too slowly", Resume: true}
	EndRevoked    = End{Code: string(apperr.Unauthorized), Message: "API key is missing, invalid or revoked"}
)

// Err returns e as a domain error.
func (e End) Err() *apperr.Error {
	return &apperr.Error{Code: apperr.Code(e.Code), Message: e.Message}
}

// Live is the live feeds of one process: their configuration, their
// per-key accounting, and their shutdown. The zero value is not usable;
// use New.
type Live struct {
	cfg  Config
	ctx  context.Context // cancelled when Shutdown begins
	stop context.CancelFunc
	done <-chan struct{} // ctx.Done()
	// active counts the members of every feed and the connections
	// registered with Track, until each has ended: Shutdown waits for
	// them.
	active sync.WaitGroup
	keys   *keyFeeds

	connsMu sync.Mutex
	conns   map[*tracked]struct{} // Track's connections, ended at Shutdown
}

// New returns the live feeds of a process, configured by cfg.
func New(cfg Config) *Live {
	cfg = cfg.withDefaults()
	l := &Live{cfg: cfg, conns: map[*tracked]struct{}{}}
	l.ctx, l.stop = context.WithCancel(context.Background())
	l.done = l.ctx.Done()
	l.keys = newKeyFeeds(cfg)
	return l
}

// Config returns the configuration with its defaults.
func (l *Live) Config() Config { return l.cfg }

// shutdownFinalWait is how long a final event may take to reach a client
// during shutdown: one that does not take it at once is not reading, and
// is cut so that the process ends within its grace.
const shutdownFinalWait = time.Second

// FinalDeadline is the time by which a final event being written now must
// have reached the client: the slow-write limit, or during shutdown a
// second.
func (l *Live) FinalDeadline() time.Time {
	if l.Closing() {
		return time.Now().Add(min(shutdownFinalWait, l.cfg.SlowWrite))
	}
	return time.Now().Add(l.cfg.SlowWrite)
}

// Opened is the number of open feeds of the key keyID.
func (l *Live) Opened(keyID int64) int { return l.keys.opened(keyID) }

// Hub returns the change signal the feeds follow.
func (l *Live) Hub() *Hub { return l.cfg.Hub }

// Done is closed when Shutdown begins: feeds end, and no new one starts.
func (l *Live) Done() <-chan struct{} { return l.done }

// Closing reports whether Shutdown has begun.
func (l *Live) Closing() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// Shutdown ends every feed: each member whose sink is idle gets its final
// event (EndShutdown), each one that is still writing to a client that
// does not read is cut, and the connections registered with Track close.
// It returns once all of them have ended, or with ctx's error when ctx ends
// first. Called again, it waits for the feeds that joined since: those of
// requests that were in flight when it began.
func (l *Live) Shutdown(ctx context.Context) error {
	l.connsMu.Lock()
	l.stop()
	conns := make([]*tracked, 0, len(l.conns))
	for c := range l.conns {
		if !c.ended {
			c.ended = true
			conns = append(conns, c)
		}
	}
	l.connsMu.Unlock()
	for _, c := range conns {
		c.end()
	}
	ended := make(chan struct{})
	go func() {
		l.active.Wait()
		close(ended)
	}()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("live feeds: %w", ctx.Err())
	}
}

// ErrClosing is the error of a feed or connection that would start while
// the process shuts down.
var ErrClosing = errors.New("the server is shutting down")

// Track counts a connection that carries feeds (a websocket) until done is
// called, so that Shutdown waits for it, and calls end (which must not
// block) when Shutdown begins; it reports ErrClosing once Shutdown has
// begun.
func (l *Live) Track(end func()) (done func(), err error) {
	l.active.Add(1)
	l.connsMu.Lock()
	if l.Closing() {
		l.connsMu.Unlock()
		l.active.Done()
		return nil, ErrClosing
	}
	c := &tracked{end: end}
	l.conns[c] = struct{}{}
	l.connsMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.connsMu.Lock()
			delete(l.conns, c)
			l.connsMu.Unlock()
			l.active.Done()
		})
	}, nil
}

// tracked is a connection registered with Track.
type tracked struct {
	end   func()
	ended bool // end has been called (by an earlier Shutdown), under connsMu
}

// Acquire takes one of the key's open-feed slots, shared by every kind of
// feed (SSE streams, subscriptions), or returns a rate_limited error that
// says the limit. release frees the slot; it may be called more than once.
func (l *Live) Acquire(keyID int64, tier string) (release func(), err error) {
	return l.keys.acquire(keyID, tier)
}

// Watch calls end with EndRevoked once a check finds keyID revoked, until
// stop is called. end must not block.
func (l *Live) Watch(keyID int64, end func(End)) (stop func()) {
	return l.keys.watch(keyID, end)
}
