// Package ratelimit counts requests against budgets of a rolling minute:
// a sliding log per budget, held in Redis so that every replica shares
// one budget per key, or in memory where Redis is not configured or does
// not answer (each replica then counts alone, and adds what it counted to
// Redis once it answers again). The HTTP side (which budget a request
// counts against, the headers, the refusals) is package rest's.
package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zeebo/xxh3"
)

// Window is the window of every rate limit: a rolling minute.
const Window = time.Minute

// Decision is the outcome of counting one request against a budget.
type Decision struct {
	Allowed bool
	// Remaining is what is left of the budget in the current rolling
	// window, after this request.
	Remaining int
	// Reset is how long until the oldest request counted in the window
	// leaves it and the budget grows by one; with nothing remaining it is
	// when the next request will be allowed. Zero when the log is empty.
	Reset time.Duration
}

// slidingLogScript counts one request in a sliding log held in a sorted set:
// the times (µs) of the requests allowed in the last window, at most limit
// of them. Trim, count, add and expire happen in one script, so that
// replicas sharing the set never read a count another is about to change,
// and the clock is the Redis server's TIME, the same for every replica.
//
// KEYS[1] the log. ARGV: limit, window (µs), take (1 to count a request,
// 0 to look only), a member name unique to this call, now (µs; 0 for the
// server's TIME, other values only in tests), then the ages (µs) of
// requests counted elsewhere (by a replica while Redis was away) to add.
// Returns {allowed (0|1: the request was, or one would be, within the
// limit), entries in the window, µs until the oldest leaves}.
var slidingLogScript = redis.NewScript(`
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local take = ARGV[3] == '1'
local member = ARGV[4]
local now = tonumber(ARGV[5])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
for i = 6, #ARGV do
  local at = now - tonumber(ARGV[i])
  if at > now - window then
    redis.call('ZADD', key, at, member .. ':' .. i)
  end
end
local n = redis.call('ZCARD', key)
if n > limit then
  -- Keeping the newest limit entries changes no later Decision: a
  -- request is allowed only while fewer than limit are in its window.
  redis.call('ZREMRANGEBYRANK', key, 0, n - limit - 1)
  n = limit
end
local allowed = 0
if n < limit then
  allowed = 1
  if take then
    redis.call('ZADD', key, now, member)
    n = n + 1
  end
end
local reset = 0
if n > 0 then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  reset = tonumber(oldest[2]) + window - now
  redis.call('PEXPIRE', key, math.floor((tonumber(newest[2]) + window - now) / 1000) + 1000)
end
return {allowed, n, reset}
`)

// Store counts requests per named budget in sliding logs: exactly at
// most limit requests in any rolling window. With Redis the logs live there
// and all replicas share them; without it, or while Redis does not answer,
// each replica keeps them in memory. While Redis answers, each replica also
// keeps in memory the requests it admitted itself (its share of each
// budget), so that when Redis goes away it counts on from that share
// instead of from an empty log: one replica never exceeds the limit across
// an outage, and N replicas never exceed N times it. Requests counted in
// memory during an outage are added to Redis when it answers again, so
// that a budget is not renewed by the outage ending.
type Store struct {
	rdb    *redis.Client // nil: in-memory only
	prefix string
	local  *localLogs
	// now is the clock; nil means time.Now locally and the Redis server's
	// TIME in Redis. Tests set it to move time by hand.
	now func() time.Time

	member string // this process's part of the sorted sets' member names
	seq    atomic.Uint64

	fallback atomic.Bool // Redis is configured but away
	probing  atomic.Bool // probe runs
	onSwitch func(local bool)
	log      *slog.Logger
}

// probeInterval spaces the probes of an absent Redis.
const probeInterval = 250 * time.Millisecond

// New returns a store over rdb (nil: in-memory only). onSwitch
// hears of every change between Redis and local counting.
func New(rdb *redis.Client, prefix string, now func() time.Time, log *slog.Logger, onSwitch func(local bool)) *Store {
	var b [6]byte
	_, _ = rand.Read(b[:])
	s := &Store{rdb: rdb, prefix: prefix, now: now, log: log, onSwitch: onSwitch,
		member: hex.EncodeToString(b[:]), local: newLocalLogs()}
	return s
}

func (s *Store) Clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// The states of the counting, health's rate_limits.
const (
	StateLocal    = "local"          // no Redis: each replica counts alone
	StateShared   = "shared"         // Redis holds the counters
	StateFallback = "local_fallback" // Redis is configured but away
)

// State returns health's rate_limits: local without Redis, shared while
// Redis answers, local_fallback while it does not.
func (s *Store) State() string {
	switch {
	case s.rdb == nil:
		return StateLocal
	case s.fallback.Load():
		return StateFallback
	}
	return StateShared
}

// Take counts a request against the budget name of limit requests per
// window, if the budget allows it.
func (s *Store) Take(ctx context.Context, name string, limit int) Decision {
	return s.count(ctx, name, limit, true)
}

// Peek returns the state of the budget name without counting a request;
// allowed tells whether one more would be.
func (s *Store) Peek(ctx context.Context, name string, limit int) Decision {
	return s.count(ctx, name, limit, false)
}

func (s *Store) count(ctx context.Context, name string, limit int, take bool) Decision {
	if s.rdb == nil {
		return s.local.count(name, limit, take, false, s.Clock())
	}
	if s.fallback.Load() {
		return s.local.count(name, limit, take, true, s.Clock())
	}
	now := s.Clock()
	pending := s.local.popPending(name)
	d, err := s.eval(ctx, name, limit, take, pending, now)
	if err == nil {
		if take && d.Allowed {
			s.local.shadow(name, limit, now)
		}
		return d
	}
	s.local.pushPending(name, limit, pending)
	if ctx.Err() == nil {
		s.switchTo(true, err)
	}
	return s.local.count(name, limit, take, true, now)
}

// eval runs the script on the log of name, adding the requests pending
// (times of requests counted locally).
func (s *Store) eval(ctx context.Context, name string, limit int, take bool, pending []int64, now time.Time) (Decision, error) {
	args := make([]any, 0, 5+len(pending))
	fake := int64(0)
	if s.now != nil {
		fake = now.UnixMicro()
	}
	t := "0"
	if take {
		t = "1"
	}
	args = append(args, limit, Window.Microseconds(), t,
		s.member+":"+fmt.Sprint(s.seq.Add(1)), fake)
	at := now.UnixMicro()
	for _, p := range pending {
		args = append(args, max(at-p, 0))
	}
	res, err := slidingLogScript.Run(ctx, s.rdb, []string{s.prefix + ":" + name}, args...).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("rate-limit script: %w", err)
	}
	if len(res) != 3 {
		return Decision{}, errors.New("rate-limit script: unexpected reply")
	}
	return Decision{Allowed: res[0] == 1, Remaining: max(limit-int(res[1]), 0),
		Reset: time.Duration(res[2]) * time.Microsecond}, nil
}

// switchTo records a change between Redis (local false) and local counting.
func (s *Store) switchTo(local bool, cause error) {
	if s.fallback.Swap(local) == local {
		return
	}
	if cause != nil {
		s.log.Warn("rate-limit counters: Redis failed", slog.Any("error", cause))
	}
	s.log.Warn("rate-limit counters: switched store", slog.Bool("local_fallback", local))
	if s.onSwitch != nil {
		s.onSwitch(local)
	}
	if local {
		go s.probe()
	}
}

// probe checks every probeInterval, until Redis answers again, whether it
// does; then it hands Redis the requests counted locally meanwhile and
// switches back to it. One probe runs at a time; it ends with the outage.
func (s *Store) probe() {
	// Checking fallback again after giving up the turn catches a switch
	// made while the last probe was ending.
	for s.fallback.Load() && s.probing.CompareAndSwap(false, true) {
		s.probeUntilBack()
		s.probing.Store(false)
	}
}

func (s *Store) probeUntilBack() {
	ctx := context.Background()
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for range tick.C {
		if !s.fallback.Load() {
			return
		}
		if err := s.rdb.Ping(ctx).Err(); err != nil {
			continue
		}
		// Hand Redis what was counted locally before counting there again,
		// so that no replica sees a budget without it; then once more for
		// what was counted locally while the first flush ran. From then on
		// a request whose budget still has local entries adds them itself.
		if err := s.flush(ctx); err != nil {
			continue
		}
		s.switchTo(false, nil)
		if err := s.flush(ctx); err != nil {
			s.switchTo(true, err)
			continue
		}
		return
	}
}

// flush adds every request counted locally while Redis was away to Redis.
func (s *Store) flush(ctx context.Context) error {
	for _, name := range s.local.pendingNames() {
		limit, pending := s.local.popPendingWithLimit(name)
		if len(pending) == 0 {
			continue
		}
		if _, err := s.eval(ctx, name, limit, false, pending, s.Clock()); err != nil {
			s.local.pushPending(name, limit, pending)
			return err
		}
	}
	return nil
}

// localShards spreads the in-memory logs over independently locked maps.
const localShards = 32

// localLogs are sliding logs in memory, one per budget name, each holding
// at most its limit of the times (µs) of requests this replica admitted,
// oldest first: all of them without Redis; with Redis, those admitted
// through it (a shadow of this replica's share, which the count goes on
// from when Redis goes away) and those admitted while it was away.
type localLogs struct {
	shards [localShards]localShard
}

type localShard struct {
	mu        sync.Mutex
	logs      map[string]*localLog
	lastSweep int64 // µs
}

type localLog struct {
	limit int
	times []int64
	// pending are the times among times counted while Redis was away and
	// not yet added to it.
	pending []int64
}

func newLocalLogs() *localLogs {
	l := &localLogs{}
	for i := range l.shards {
		l.shards[i].logs = map[string]*localLog{}
	}
	return l
}

func (l *localLogs) shard(name string) *localShard {
	return &l.shards[xxh3.HashString(name)%localShards]
}

// count is the script's algorithm in memory. A request it admits is
// pending (for Redis to hear of later) when pending is true.
func (l *localLogs) count(name string, limit int, take, pending bool, now time.Time) Decision {
	at := now.UnixMicro()
	win := Window.Microseconds()
	sh := l.shard(name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.sweep(at)
	lg := sh.logs[name]
	if lg == nil {
		if !take {
			return Decision{Allowed: limit > 0, Remaining: limit}
		}
		lg = &localLog{}
		sh.logs[name] = lg
	}
	lg.limit = limit
	lg.trim(at - win)
	d := Decision{}
	if take && len(lg.times) < limit {
		lg.times = append(lg.times, at)
		if pending {
			lg.pending = append(lg.pending, at)
		}
		d.Allowed = true
	} else if !take {
		d.Allowed = len(lg.times) < limit
	}
	d.Remaining = max(limit-len(lg.times), 0)
	if len(lg.times) > 0 {
		d.Reset = time.Duration(lg.times[0]+win-at) * time.Microsecond
	}
	return d
}

// shadow records a request admitted through Redis at now.
func (l *localLogs) shadow(name string, limit int, now time.Time) {
	at := now.UnixMicro()
	sh := l.shard(name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.sweep(at)
	lg := sh.logs[name]
	if lg == nil {
		lg = &localLog{}
		sh.logs[name] = lg
	}
	lg.limit = limit
	// Concurrent requests may record their times out of order.
	i := len(lg.times)
	for i > 0 && lg.times[i-1] > at {
		i--
	}
	lg.times = slices.Insert(lg.times, i, at)
	lg.trim(at - Window.Microseconds())
}

// trim drops the times at or before cutoff, and the oldest beyond limit.
func (lg *localLog) trim(cutoff int64) {
	lg.times = trimLog(lg.times, cutoff, lg.limit)
	lg.pending = trimLog(lg.pending, cutoff, lg.limit)
}

// trimLog drops from times (oldest first) those at or before cutoff, and
// the oldest beyond limit.
func trimLog(times []int64, cutoff int64, limit int) []int64 {
	i := 0
	for i < len(times) && times[i] <= cutoff {
		i++
	}
	if extra := len(times) - i - limit; extra > 0 {
		i += extra
	}
	// Reslicing keeps the array, which append replaces once full by one
	// sized for the live entries: memory stays within twice the limit.
	return times[i:]
}

// sweep drops, once a window, the logs whose newest time has left it, so
// that memory follows the budgets in use.
func (sh *localShard) sweep(at int64) {
	win := Window.Microseconds()
	if at-sh.lastSweep < win {
		return
	}
	sh.lastSweep = at
	for name, lg := range sh.logs {
		if len(lg.times) == 0 || lg.times[len(lg.times)-1] <= at-win {
			delete(sh.logs, name)
		}
	}
}

// popPending removes and returns the pending times of name.
func (l *localLogs) popPending(name string) []int64 {
	_, times := l.popPendingWithLimit(name)
	return times
}

func (l *localLogs) popPendingWithLimit(name string) (int, []int64) {
	sh := l.shard(name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	lg, ok := sh.logs[name]
	if !ok || len(lg.pending) == 0 {
		return 0, nil
	}
	p := lg.pending
	lg.pending = nil
	return lg.limit, p
}

// pushPending gives back pending times that Redis did not take. They are
// still among the log's times, unless the log was swept meanwhile.
func (l *localLogs) pushPending(name string, limit int, times []int64) {
	if len(times) == 0 {
		return
	}
	sh := l.shard(name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	lg := sh.logs[name]
	if lg == nil {
		lg = &localLog{times: slices.Clone(times)}
		sh.logs[name] = lg
	}
	lg.limit = max(limit, lg.limit)
	lg.pending = append(lg.pending, times...)
	slices.Sort(lg.pending)
	lg.trim(0)
}

// pendingNames returns the names of the logs holding pending times.
func (l *localLogs) pendingNames() []string {
	var out []string
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for name, lg := range sh.logs {
			if len(lg.pending) > 0 {
				out = append(out, name)
			}
		}
		sh.mu.Unlock()
	}
	return out
}
