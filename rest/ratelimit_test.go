package rest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// wantRateHeaders checks the five rate-limit headers of a keyed response.
func wantRateHeaders(t testing.TB, r *resp, limit, remaining int) {
	t.Helper()
	h := r.Header
	if got := h.Get("RateLimit-Limit"); got != strconv.Itoa(limit) {
		t.Errorf("RateLimit-Limit = %q, want %d", got, limit)
	}
	if got := h.Get("RateLimit-Remaining"); got != strconv.Itoa(remaining) {
		t.Errorf("RateLimit-Remaining = %q, want %d", got, remaining)
	}
	reset, err := strconv.Atoi(h.Get("RateLimit-Reset"))
	if err != nil || reset < 0 || reset > 60 {
		t.Errorf("RateLimit-Reset = %q, want seconds from 0 to 60", h.Get("RateLimit-Reset"))
	}
	if got, want := h.Get("RateLimit-Policy"), `"default";q=`+strconv.Itoa(limit)+`;w=60`; got != want {
		t.Errorf("RateLimit-Policy = %q, want %q", got, want)
	}
	if got, want := h.Get("RateLimit"), `"default";r=`+strconv.Itoa(remaining)+`;t=`+strconv.Itoa(reset); got != want {
		t.Errorf("RateLimit = %q, want %q", got, want)
	}
}

func wantRateLimited(t testing.TB, r *resp) {
	t.Helper()
	r.wantStatus(t, http.StatusTooManyRequests)
	if got := r.Header.Get("Retry-After"); got != "60" {
		t.Errorf("Retry-After = %q, want 60", got)
	}
	if r.env.Error.Code != "rate_limited" {
		t.Errorf("code %q, want rate_limited", r.env.Error.Code)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	base := newAPI(t)

	t.Run("headers count down, then 429 with Retry-After", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) { c.Auth.RateLimit = 3 })
		for i := range 3 {
			r := a.get(t, "/v1/sources", a.free)
			r.wantStatus(t, http.StatusOK)
			wantRateHeaders(t, r, 3, 2-i)
		}
		r := a.get(t, "/v1/sources", a.free)
		wantRateLimited(t, r)
		wantRateHeaders(t, r, 3, 0)
		if r.env.Meta.Tier == nil || *r.env.Meta.Tier != "free" {
			t.Errorf("meta.tier = %v, want free", r.env.Meta.Tier)
		}
		// Another key has a budget of its own.
		a.get(t, "/v1/sources", a.pro).wantStatus(t, http.StatusOK)
	})

	t.Run("requests ending in 400 and 404 count", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) { c.Auth.RateLimit = 4 })
		wantRateHeaders(t, a.get(t, "/v1/posts?limit=0", a.free), 4, 3)
		wantRateHeaders(t, a.get(t, missingPost, a.free), 4, 2)
		wantRateHeaders(t, a.get(t, "/v1/briefs?cursor=x", a.free), 4, 1)
		wantRateHeaders(t, a.get(t, missingBrief, a.free), 4, 0)
		wantRateLimited(t, a.get(t, "/v1/sources", a.free))
	})

	t.Run("order: key, tier, rate limit, parameters", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) { c.Auth.RateLimit = 1 })
		a.get(t, "/v1/sources", a.free).wantStatus(t, http.StatusOK)
		// Over the limit: a bad parameter still gets 429, not 400.
		wantRateLimited(t, a.get(t, "/v1/posts?limit=1000", a.free))
		wantRateLimited(t, a.get(t, "/v1/posts/999999999", a.free))
		// The tier check comes first: 403, not 429.
		a.get(t, "/graphql?query=%7Bhealth%7Bstatus%7D%7D", a.free).wantStatus(t, http.StatusForbidden)
		// The key check comes first of all.
		a.get(t, "/v1/posts?limit=1000", "fapi_bad").wantStatus(t, http.StatusUnauthorized)
	})

	t.Run("defaults: 120 per key, 600 per client IP", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) { c.Auth.RateLimit, c.Auth.IPRateLimit = 0, 0 })
		wantRateHeaders(t, a.get(t, "/v1/sources", a.free), 120, 119)
		wantRateHeaders(t, a.get(t, "/v1/health", ""), 600, 599)
	})

	t.Run("per-tier limits", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) {
			c.Auth.RateLimit = 2
			c.Auth.TierRateLimits = map[string]int{"pro": 5, "internal": 7}
		})
		wantRateHeaders(t, a.get(t, "/v1/sources", a.free), 2, 1)
		wantRateHeaders(t, a.get(t, "/v1/sources", a.pro), 5, 4)
		wantRateHeaders(t, a.get(t, "/v1/sources", a.intern), 7, 6)
	})

	t.Run("HEAD counts, 304 does not, both carry the headers", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) { c.Auth.RateLimit = 3 })
		r := a.do(t, http.MethodHead, "/v1/sources", a.free, nil)
		wantRateHeaders(t, r, 3, 2)
		r = a.get(t, "/v1/sources", a.free, "If-None-Match", r.Header.Get("ETag"))
		r.wantStatus(t, http.StatusNotModified)
		wantRateHeaders(t, r, 3, 2)
		wantRateHeaders(t, a.get(t, "/v1/sources", a.free), 3, 1)
	})

	t.Run("unauthenticated endpoints are limited per client IP", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) { c.Auth.IPRateLimit = 2 })
		wantRateHeaders(t, a.get(t, "/v1/health", ""), 2, 1)
		wantRateHeaders(t, a.get(t, "/v1/openapi.json", ""), 2, 0)
		wantRateLimited(t, a.get(t, "/v1/health", ""))
		wantRateLimited(t, a.get(t, "/no/such/path", ""))
		// Keyed endpoints have their own budget.
		a.get(t, "/v1/sources", a.free).wantStatus(t, http.StatusOK)
	})

	t.Run("a 429 of an unauthenticated endpoint has tier null", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) { c.Auth.IPRateLimit = 1 })
		a.get(t, "/v1/health", "")
		r := a.get(t, "/v1/health", a.free)
		wantRateLimited(t, r)
		if r.env.Meta.Tier != nil {
			t.Errorf("meta.tier = %q, want null", *r.env.Meta.Tier)
		}
	})
}

// redisURL returns the test Redis (REDIS_URL, else the local default), or
// skips the test when none answers.
func redisClient(t *testing.T) *redis.Client {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // seconds: a busy machine must not skip the test
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Skipf("no Redis at %s: %v", url, err)
	}
	return c
}

func randomPrefix(t *testing.T) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "feedapi-test:" + hex.EncodeToString(b[:])
}

func TestRateLimitWithRedis(t *testing.T) {
	t.Parallel()
	base := newAPI(t)

	t.Run("replicas share one budget per key", func(t *testing.T) {
		t.Parallel()
		rc := redisClient(t)
		prefix := randomPrefix(t)
		opts := func(c *Config) { c.Auth.RateLimit = 3; c.Redis = rc; c.RedisPrefix = prefix }
		a, replica := base.variant(t, opts), base.variant(t, opts)
		wantRateHeaders(t, a.get(t, "/v1/sources", a.free), 3, 2)
		wantRateHeaders(t, replica.get(t, "/v1/sources", a.free), 3, 1)
		wantRateHeaders(t, a.get(t, "/v1/sources", a.free), 3, 0)
		wantRateLimited(t, replica.get(t, "/v1/sources", a.free))
		wantRateLimited(t, a.get(t, "/v1/sources", a.free))
		// The budget is per key, not per replica or shared by keys.
		wantRateHeaders(t, replica.get(t, "/v1/sources", a.pro), 3, 2)
	})

	t.Run("local counters take over while Redis is down", func(t *testing.T) {
		t.Parallel()
		down := redis.NewClient(&redis.Options{
			Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond,
			ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond, MaxRetries: -1,
		})
		t.Cleanup(func() { down.Close() })
		a := base.variant(t, func(c *Config) { c.Auth.RateLimit = 2; c.Redis = down; c.RedisPrefix = randomPrefix(t) })
		a.get(t, "/v1/sources", a.free).wantStatus(t, http.StatusOK)
		a.get(t, "/v1/sources", a.free).wantStatus(t, http.StatusOK)
		// Local counters still enforce the limit.
		wantRateLimited(t, a.get(t, "/v1/sources", a.free))
	})
}
