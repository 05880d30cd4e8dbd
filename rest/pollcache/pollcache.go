// Package pollcache holds the first pages of the polled lists of /v1 for
// a short while, so that pollers asking for the same page are answered
// without the database.
package pollcache

import (
	"strings"
	"sync"
	"time"

	"github.com/feedapi/feedapi/rest/contract"
)

// DefaultTTL is how long a first page stays in the Cache when
// nothing invalidates it sooner: the most a poller's answer lags behind a
// write.
const DefaultTTL = time.Second

// maxEntries bounds the entries of a Cache. A client choosing odd
// parameters can fill it; when full, expired entries are dropped, and if
// none was, all of them: the cost is a database query per request, as
// without the cache, never memory.
const maxEntries = 4096

// Cache holds the first pages (no cursor) of /v1/posts and
// /v1/firehose, one per parameter set and tier, each as the bytes of its
// envelope (all but meta.request_id) together with its ETag, so that a
// poller's request is answered, and a matching If-None-Match gets its 304,
// without touching the database. An entry is served for at most its TTL
// after the query that made it, so an answer is never older than that
// bound even if an invalidation is lost; Invalidate ends the entries of a
// kind at once (wire a change signal to it). Safe for concurrent use; a
// nil *Cache caches nothing.
type Cache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*Entry
	// gen counts the invalidations of each kind: an entry made by a query
	// that started before the last one is not stored.
	gen map[string]uint64
}

// Entry is one cached page.
type Entry struct {
	kind     string
	Body     []byte // the envelope up to meta.position (the ETag's part)
	Position []byte // meta.position of the read that made it
	Tag      string // the ETag's hash, without quotes or suffix
	expires  time.Time
}

// New returns a cache whose entries live at most ttl; ttl <= 0
// returns nil, which caches nothing.
func New(ttl time.Duration) *Cache {
	if ttl <= 0 {
		return nil
	}
	return &Cache{ttl: ttl, now: time.Now, entries: map[string]*Entry{}, gen: map[string]uint64{}}
}

// Invalidate drops every entry of kind (contract.contract.PollPosts or contract.contract.PollFirehose), so
// that the next request of each reads the database; an entry being made by
// a query that started before this call is not stored. Another kind drops
// everything.
func (c *Cache) Invalidate(kind string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	known := kind == contract.PollPosts || kind == contract.PollFirehose
	for k, e := range c.entries {
		if !known || e.kind == kind {
			delete(c.entries, k)
		}
	}
	if known {
		c.gen[kind]++
	} else {
		c.gen[contract.PollPosts]++
		c.gen[contract.PollFirehose]++
	}
}

// Now is the cache's clock.
func (c *Cache) Now() time.Time { return c.now() }

// SetClock replaces the cache's clock (time.Now), for tests that move
// time by hand.
func (c *Cache) SetClock(now func() time.Time) { c.now = now }

// TTL is the longest an entry is served.
func (c *Cache) TTL() time.Duration {
	if c == nil {
		return 0
	}
	return c.ttl
}

// Get returns the fresh entry of key, or nil.
func (c *Cache) Get(key string) *Entry {
	if c == nil {
		return nil
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil || !now.Before(e.expires) {
		return nil
	}
	return e
}

// Generation returns the invalidation count of kind, to pass to Put.
func (c *Cache) Generation(kind string) uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen[kind]
}

// Put stores a page read by a query that started at started, when kind's
// invalidation count was gen; the entry expires ttl after started (so its
// age is bounded from the query, not from its end), and is not stored at
// all when kind was invalidated since.
func (c *Cache) Put(key, kind string, gen uint64, started time.Time, body, position []byte, tag string) {
	if c == nil {
		return
	}
	e := &Entry{kind: kind, Body: body, Position: position, Tag: tag, expires: started.Add(c.ttl)}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen[kind] != gen || !now.Before(e.expires) {
		return
	}
	if len(c.entries) >= maxEntries {
		for k, old := range c.entries {
			if !now.Before(old.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxEntries {
			clear(c.entries)
		}
	}
	c.entries[key] = e
}

// Key is the cache key of a first page: the endpoint's query, the
// key's tier (meta.tier is part of the body) and the query string, which
// the parser has accepted (so it holds no cursor, no unknown and no
// repeated parameter).
func Key(query, tier, rawQuery string) string {
	var b strings.Builder
	b.Grow(len(query) + len(tier) + len(rawQuery) + 2)
	b.WriteString(query)
	b.WriteByte(0)
	b.WriteString(tier)
	b.WriteByte(0)
	b.WriteString(rawQuery)
	return b.String()
}
