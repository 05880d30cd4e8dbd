package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// redisServer is a redis-server of the test's own, on a free port, which
// the test may kill.
type redisServer struct {
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
}

// startRedis starts a redis-server without persistence on a free port of
// the loopback and returns once it answers PING. It is killed when the test
// ends, if it still runs. The test is skipped where redis-server is not
// installed.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	var lastErr error
	// A free port may be taken between its probe and redis-server's bind:
	// try a few.
	for range 5 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--loglevel", "warning")
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		s := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, exited: make(chan struct{})}
		go func() {
			_ = cmd.Wait()
			close(s.exited)
		}()
		t.Cleanup(s.kill)
		if lastErr = s.waitReady(); lastErr == nil {
			return s
		}
		s.kill()
	}
	t.Fatalf("redis-server did not start: %v", lastErr)
	return nil
}

// waitReady polls PING until it answers, the process exits or a generous
// deadline passes.
func (s *redisServer) waitReady() error {
	rdb := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(readyTimeout)
	for {
		err := rdb.Ping(context.Background()).Err()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("redis-server on %s exited: %w", s.addr, err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer within %s: %w", s.addr, readyTimeout, err)
		}
	}
}

// kill ends the server with SIGKILL, as a crash would, and waits for it.
func (s *redisServer) kill() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// countAllowed sends n requests of path with key to p and returns how many
// were answered 200; every other answer must be the key's 429.
func countAllowed(t *testing.T, p *process, n int, path, key string) int {
	t.Helper()
	ok := 0
	for i := range n {
		r := p.get(t, path, key)
		switch {
		case r.status == http.StatusOK:
			ok++
		case r.status == http.StatusTooManyRequests && r.errorCode() == "rate_limited":
		default:
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	return ok
}

// TestRedisOutageGoesOnFromEachReplicasShare: two replicas share a Redis
// and a key limited to 120 a minute; 60 requests go through A and 40
// through B, then Redis dies. Each replica goes on from what it admitted
// itself, so A admits 60 more and B 80 more: neither replica ever exceeds
// the limit within the minute, and the two together stay within twice it.
func TestRedisOutageGoesOnFromEachReplicasShare(t *testing.T) {
	t.Parallel()
	const limit = 120
	bdb, dbURL := dbtest.NewWithURL(t)
	rs := startRedis(t)
	env := map[string]string{
		"DATABASE_URL":          dbURL,
		"REDIS_URL":             "redis://" + rs.addr + "/0",
		"FEEDAPI_RATE_LIMIT":    strconv.Itoa(limit),
		"FEEDAPI_IP_RATE_LIMIT": "100000",
	}
	a, b := startServer(t, env), startServer(t, env)
	key, _ := newKey(t, bdb, db.TierFree)

	start := time.Now()
	if got := countAllowed(t, a, 60, "/v1/sources", key); got != 60 {
		t.Fatalf("with Redis, A allowed %d of 60", got)
	}
	if got := countAllowed(t, b, 39, "/v1/sources", key); got != 39 {
		t.Fatalf("with Redis, B allowed %d of 39", got)
	}
	r := b.get(t, "/v1/sources", key) // the 100th
	if got := r.header.Get("Ratelimit-Remaining"); r.status != http.StatusOK || got != "20" {
		t.Fatalf("after 60 requests through A and 40 through B: %d with RateLimit-Remaining %q, want 200 and 20 (one shared budget)", r.status, got)
	}

	rs.kill()
	allowedA := countAllowed(t, a, 2*limit, "/v1/sources", key)
	allowedB := countAllowed(t, b, 2*limit, "/v1/sources", key)
	elapsed := time.Since(start)
	t.Logf("Redis killed after 60 requests through A and 40 through B (key limit %d/min): then A allowed %d and B %d (in %s from the first request)",
		limit, allowedA, allowedB, elapsed.Round(time.Millisecond))
	if elapsed >= time.Minute {
		t.Fatalf("the requests took %s, longer than the window; no exact count to check", elapsed)
	}
	for i, p := range []*process{a, b} {
		if got := healthRateLimits(t, p); got != "local_fallback" {
			t.Errorf("replica %d: health rate_limits = %q, want local_fallback", i, got)
		}
	}
	if got, want := allowedA, limit-60; got != want {
		t.Errorf("A allowed %d after Redis died, want %d: its own 60 of the minute still count", got, want)
	}
	if got, want := allowedB, limit-40; got != want {
		t.Errorf("B allowed %d after Redis died, want %d: its own 40 of the minute still count", got, want)
	}
	if total := 100 + allowedA + allowedB; total > 2*limit {
		t.Errorf("%d requests allowed in a minute by 2 replicas, over twice the limit (%d)", total, 2*limit)
	}
}

// healthRateLimits returns /v1/health's rate_limits.
func healthRateLimits(t *testing.T, p *process) string {
	t.Helper()
	r := p.get(t, "/v1/health", "")
	var h struct {
		RateLimits string `json:"rate_limits"`
	}
	if err := json.Unmarshal(r.env.Data, &h); err != nil {
		t.Fatalf("health: %v: %s", err, r.body)
	}
	return h.RateLimits
}
