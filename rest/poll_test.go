package rest

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db"
)

// pollAPI returns an API whose first pages come from a PollCache of ttl
// on clock, and whose store's SQL statements queries counts.
func pollAPI(t *testing.T, ttl time.Duration) (a *api, cache *PollCache, clock *fakeClock, queries *queryCounter) {
	t.Helper()
	base := newAPI(t)
	queries = &queryCounter{}
	counted := bun.NewDB(base.bdb.DB, pgdialect.New()).WithQueryHook(queries)
	clock = &fakeClock{t: time.Now()}
	cache = NewPollCache(ttl)
	cache.SetClock(clock.now)
	a = base.variant(t, func(c *Config) {
		c.Graph.Store = db.NewStore(counted)
		c.PollCache, c.DisablePollCache = cache, false
	})
	return a, cache, clock, queries
}

// TestPollCacheBound: after a write, the first page is never older than
// the cache's bound: it may be served from memory, with no statement,
// until the TTL has passed since the query that read it, and then it
// shows the write; Invalidate shows it at once. Pages with a cursor, and
// other parameter sets, are not answered by another's entry.
func TestPollCacheBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind, path, source string
		add                func(a *api, from int64)
	}{
		{PollPosts, "/v1/posts?limit=3&source=fx-poll", "fx-poll", func(a *api, from int64) { a.addPosts(from, 1, "fx-poll") }},
		{PollFirehose, "/v1/firehose?limit=3&source=fx-poll", "fx-poll", func(a *api, from int64) {
			a.addFirehose(from, 1, "fx-poll", []db.Pane{db.PaneCrypto}, []bool{false})
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			const ttl = 2 * time.Second
			a, cache, clock, queries := pollAPI(t, ttl)
			a = a.with(t)
			tc.add(a, fxPostID)
			first := a.get(t, tc.path, a.free)
			first.wantStatus(t, http.StatusOK)
			if got := first.Header.Get("X-Poll-Interval"); got != "2" {
				t.Errorf("X-Poll-Interval = %q, want 2", got)
			}
			n := queries.n.Load()

			// A write; within the bound the cached page may be served.
			tc.add(a, fxPostID+1)
			clock.set(clock.now().Add(ttl - time.Millisecond))
			cached := a.get(t, tc.path, a.free)
			cached.wantStatus(t, http.StatusOK)
			if got := queries.n.Load(); got != n {
				t.Errorf("a cached page cost %d statements", got-n)
			}
			if string(cached.env.Data) != string(first.env.Data) || cached.Header.Get("Etag") != first.Header.Get("Etag") {
				t.Errorf("cached page differs from the first:\n%s\n%s", cached.env.Data, first.env.Data)
			}
			if cached.env.Meta.RequestID == first.env.Meta.RequestID {
				t.Error("the cached page repeats the request id of the first")
			}
			// Another parameter set, and a cursor page, read the database.
			a.get(t, tc.path+"&limit=2", a.free).wantStatus(t, http.StatusBadRequest) // repeated parameter: still checked
			if got := len(a.get(t, tc.path[:len(tc.path)-len("&source=fx-poll")]+"&source=fx-none", a.free).items(t)); got != 0 {
				t.Errorf("source=fx-none: %d items, want 0", got)
			}

			// At the bound, the write shows.
			clock.set(clock.now().Add(time.Millisecond))
			fresh := a.get(t, tc.path, a.free)
			if items := fresh.items(t); len(items) != 2 {
				t.Fatalf("after the TTL: %d items, want 2 (the write)", len(items))
			}
			// Invalidate ends the entry at once.
			tc.add(a, fxPostID+2)
			if items := a.get(t, tc.path, a.free).items(t); len(items) != 2 {
				t.Fatalf("before Invalidate: %d items, want the cached 2", len(items))
			}
			cache.Invalidate(tc.kind)
			if items := a.get(t, tc.path, a.free).items(t); len(items) != 3 {
				t.Fatalf("after Invalidate: %d items, want 3", len(items))
			}
		})
	}
}

// TestNotModifiedIsFree: a 304 answers a matching If-None-Match of a
// first page with no SQL statement, and does not count against the key's
// rate limit (RateLimit-Remaining stays); any other answer of a
// conditional request counts. A 304 of a page the database answers (a
// cursor page) does not count either. A key over its limit gets 429 even
// for a conditional request.
func TestNotModifiedIsFree(t *testing.T) {
	t.Parallel()
	a, _, _, queries := pollAPI(t, time.Minute)
	a = a.variant(t, func(c *Config) { c.Auth.RateLimit = 5 })
	key := a.newKey(db.TierFree)
	remaining := func(r *resp) int {
		t.Helper()
		n, err := strconv.Atoi(r.Header.Get("RateLimit-Remaining"))
		if err != nil {
			t.Fatalf("RateLimit-Remaining %q: %v", r.Header.Get("RateLimit-Remaining"), err)
		}
		return n
	}
	const path = "/v1/posts?limit=5"
	first := a.get(t, path, key)
	first.wantStatus(t, http.StatusOK)
	tag, left := first.Header.Get("Etag"), remaining(first)
	if left != 4 {
		t.Fatalf("remaining %d after one request, want 4", left)
	}
	n := queries.n.Load()
	for range 3 {
		r := a.get(t, path, key, "If-None-Match", tag)
		r.wantStatus(t, http.StatusNotModified)
		if got := remaining(r); got != left {
			t.Errorf("304: RateLimit-Remaining %d, want %d (unchanged)", got, left)
		}
		if r.Header.Get("Etag") != tag || r.Header.Get("X-Poll-Interval") == "" {
			t.Errorf("304 headers: ETag %q (want %q), X-Poll-Interval %q", r.Header.Get("Etag"), tag, r.Header.Get("X-Poll-Interval"))
		}
	}
	if got := queries.n.Load(); got != n {
		t.Errorf("three 304s cost %d SQL statements, want 0", got-n)
	}
	// A conditional request answered 200 counts.
	r := a.get(t, path, key, "If-None-Match", `"other"`)
	r.wantStatus(t, http.StatusOK)
	if got := remaining(r); got != left-1 {
		t.Errorf("conditional 200: remaining %d, want %d", got, left-1)
	}
	// A cursor page (from the database) answered 304 does not count.
	next := "/v1/posts?limit=5&cursor=" + *first.env.Pagination.NextCursor
	page := a.get(t, next, key)
	page.wantStatus(t, http.StatusOK)
	left = remaining(page)
	r = a.get(t, next, key, "If-None-Match", page.Header.Get("Etag"))
	r.wantStatus(t, http.StatusNotModified)
	if got := remaining(r); got != left {
		t.Errorf("cursor page 304: remaining %d, want %d", got, left)
	}
	// Spend the budget: a conditional request is refused too.
	for remaining(a.get(t, "/v1/sources", key)) > 0 {
	}
	a.get(t, path, key, "If-None-Match", tag).wantStatus(t, http.StatusTooManyRequests)
}
