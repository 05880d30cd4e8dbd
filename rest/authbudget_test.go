package rest

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/metrics"
	"github.com/feedapi/feedapi/rest/ratelimit"
)

// randomKey returns a well-formed key that was never issued.
func randomKey(t testing.TB) string {
	t.Helper()
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return keys.Prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// queryCounter counts the SQL statements of a bun.DB.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	q.n.Add(1)
	return ctx
}

func (q *queryCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestFailedAuthBudget: a client IP that fails to authenticate 30 times in
// a minute gets 429 rate_limited with Retry-After for its next requests
// with an unknown key, and those cost no database query; a key this
// replica verified before still works from the same IP. With Redis the
// budget is shared by the replicas.
func TestFailedAuthBudget(t *testing.T) {
	t.Parallel()
	base := newAPI(t)
	const budget = 30 // the default
	for _, tc := range []struct {
		name  string
		redis bool
	}{
		{"one replica", false},
		{"two replicas sharing Redis", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			queries := &queryCounter{}
			counted := bun.NewDB(base.bdb.DB, pgdialect.New()).WithQueryHook(queries)
			svc := keys.NewService(counted, keys.Options{})
			reg := prometheus.NewRegistry()
			opts := func(c *Config) { c.Auth.Keys = svc; c.Auth.AuthFailureLimit = 0 }
			if tc.redis {
				rc, prefix := redisClient(t), randomPrefix(t)
				opts = func(c *Config) { c.Auth.Keys = svc; c.Auth.AuthFailureLimit = 0; c.Redis = rc; c.RedisPrefix = prefix }
			}
			replicas := []*api{base.variant(t, withMetrics(t, reg), opts)}
			if tc.redis {
				replicas = append(replicas, base.variant(t, opts))
			}
			a := replicas[0]

			// A legitimate client uses its key before the flood.
			a.get(t, "/v1/sources", base.free).wantStatus(t, http.StatusOK)

			for i := range budget {
				r := replicas[i%len(replicas)].get(t, "/v1/sources", randomKey(t))
				r.wantStatus(t, http.StatusUnauthorized)
			}
			before := queries.n.Load()
			refusedByA := 1 // the request without a key, below
			for i := range 20 {
				if i%len(replicas) == 0 {
					refusedByA++
				}
				r := replicas[i%len(replicas)].get(t, "/v1/posts?limit=1", randomKey(t))
				wantRateLimited(t, r)
				if r.env.Meta.Tier != nil {
					t.Errorf("meta.tier = %q, want null", *r.env.Meta.Tier)
				}
			}
			// A request without a key is refused the same way.
			wantRateLimited(t, a.get(t, "/v1/sources", ""))
			if got := queries.n.Load() - before; got != 0 {
				t.Errorf("%d database queries for keys refused once the budget was spent, want 0", got)
			}
			// The key verified before still works from the same address,
			// with its own rate-limit headers.
			r := a.get(t, "/v1/sources", base.free)
			r.wantStatus(t, http.StatusOK)
			if got := r.Header.Get("RateLimit-Policy"); !strings.HasPrefix(got, `"default"`) {
				t.Errorf("RateLimit-Policy of a keyed answer = %q", got)
			}
			// The unauthenticated endpoints keep their own budget.
			a.get(t, "/v1/health", "").wantStatus(t, http.StatusOK)
			// The refusals are counted under a scope of their own.
			if got := counter(t, reg, "feedapi_rate_limit_refusals_total", map[string]string{"scope": metrics.ScopeAuth}); got != float64(refusedByA) {
				t.Errorf("feedapi_rate_limit_refusals_total{scope=auth} = %v, want %d", got, refusedByA)
			}
		})
	}
}

// TestRateLimitRedisReturnsNoFreshBudget: requests a replica counted on its
// own while Redis was away are added to Redis when it answers again, so no
// replica hands the key a fresh budget on top of what it used.
func TestRateLimitRedisReturnsNoFreshBudget(t *testing.T) {
	t.Parallel()
	base := newAPI(t)
	rc := redisClient(t)
	proxy := newTCPProxy(t, rc.Options().Addr)
	prefix := randomPrefix(t)
	const limit = 4
	a := base.variant(t, func(c *Config) {
		c.Auth.RateLimit = limit
		c.Redis = fastRedis(t, proxy.addr())
		c.RedisPrefix = prefix
	})
	b := base.variant(t, func(c *Config) {
		c.Auth.RateLimit = limit
		c.Redis = fastRedis(t, rc.Options().Addr)
		c.RedisPrefix = prefix
	})

	wantRateHeaders(t, a.get(t, "/v1/sources", base.free), limit, limit-1)
	proxy.setCut(true)
	// Redis away: a counts alone, on from the request it admitted
	// through Redis ...
	for range limit - 1 {
		a.get(t, "/v1/sources", base.free).wantStatus(t, http.StatusOK)
	}
	wantRateLimited(t, a.get(t, "/v1/sources", base.free))
	if got := healthRateLimits(t, a); got != ratelimit.StateFallback {
		t.Fatalf("cut: rate_limits = %q, want %q", got, ratelimit.StateFallback)
	}
	proxy.setCut(false)
	deadline := time.Now().Add(10 * time.Second)
	for healthRateLimits(t, a) != ratelimit.StateShared {
		if time.Now().After(deadline) {
			t.Fatalf("a did not return to Redis within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// ... and once Redis is back the key has used its 4 requests of this
	// minute on every replica, b included, which counted none of them.
	wantRateLimited(t, b.get(t, "/v1/sources", base.free))
	wantRateLimited(t, a.get(t, "/v1/sources", base.free))
	// Another key is untouched.
	wantRateHeaders(t, b.get(t, "/v1/sources", base.pro), limit, limit-1)
}

// TestRateLimitRedisOutageKeepsTheReplicasShare: while Redis answers, a
// replica remembers the requests it admitted itself, so that when Redis
// goes away it counts on from them instead of from an empty log; and
// what it counted during one outage still counts in the next.
func TestRateLimitRedisOutageKeepsTheReplicasShare(t *testing.T) {
	t.Parallel()
	base := newAPI(t)
	rc := redisClient(t)
	proxy := newTCPProxy(t, rc.Options().Addr)
	const limit = 6
	a := base.variant(t, func(c *Config) {
		c.Auth.RateLimit = limit
		c.Redis = fastRedis(t, proxy.addr())
		c.RedisPrefix = randomPrefix(t)
	})
	backOnRedis := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for healthRateLimits(t, a) != ratelimit.StateShared {
			if time.Now().After(deadline) {
				t.Fatalf("a did not return to Redis within 10s")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	for i := range 3 {
		wantRateHeaders(t, a.get(t, "/v1/sources", base.free), limit, limit-1-i)
	}
	proxy.setCut(true)
	// Redis away: 3 of the 6 are left, not a fresh 6.
	a.get(t, "/v1/sources", base.free).wantStatus(t, http.StatusOK)
	if got := healthRateLimits(t, a); got != ratelimit.StateFallback {
		t.Fatalf("cut: rate_limits = %q, want %q", got, ratelimit.StateFallback)
	}
	wantRateHeaders(t, a.get(t, "/v1/sources", base.free), limit, 1)
	proxy.setCut(false)
	backOnRedis()
	// Redis back: it holds the 5 (3 it counted, 2 handed over) ...
	wantRateHeaders(t, a.get(t, "/v1/sources", base.free), limit, 0)
	proxy.setCut(true)
	// ... and away again, the replica still knows of all 6.
	wantRateLimited(t, a.get(t, "/v1/sources", base.free))
	if got := healthRateLimits(t, a); got != ratelimit.StateFallback {
		t.Fatalf("second cut: rate_limits = %q, want %q", got, ratelimit.StateFallback)
	}
	wantRateLimited(t, a.get(t, "/v1/sources", base.free))
	// Another key has its whole budget.
	wantRateHeaders(t, a.get(t, "/v1/sources", base.pro), limit, limit-1)
}
