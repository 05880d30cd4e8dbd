package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph/keys"
)

// redisAddr is the shared Redis of the test machine.
const redisAddr = "127.0.0.1:6379"

// revocationBudget is the contract's bound on how long a revoked key keeps
// working on any replica.
const revocationBudget = 5 * time.Second

// redisPrefix returns a counter prefix of the test's own, and deletes its
// counters when the test ends.
func redisPrefix(t testing.TB) string {
	t.Helper()
	prefix := fmt.Sprintf("feedapi-test:%d:%s", os.Getpid(), rand.Text()[:10])
	t.Cleanup(func() {
		rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
		defer rdb.Close()
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	return prefix
}

// startReplicas starts two processes with the same environment.
func startReplicas(t testing.TB, env map[string]string) [2]*process {
	t.Helper()
	return [2]*process{startServer(t, env), startServer(t, env)}
}

// awayFromMinuteEdge waits, when less than need is left of the current
// minute, for the next one: rate-limit windows are minutes of the clock,
// and a count that straddles two of them is weighted, not exact.
func awayFromMinuteEdge(t testing.TB, need time.Duration) {
	t.Helper()
	now := time.Now()
	next := now.Truncate(time.Minute).Add(time.Minute)
	if left := next.Sub(now); left < need {
		t.Logf("waiting %s for the next rate-limit window", left.Round(time.Millisecond))
		time.Sleep(left + 50*time.Millisecond)
	}
}

// tally counts the statuses of n requests of path with key, alternating
// between the replicas, and fails the test on a 5xx.
func tally(t *testing.T, ps [2]*process, n int, path, key string) map[int]int {
	t.Helper()
	got := map[int]int{}
	for i := range n {
		r := ps[i%2].get(t, path, key)
		got[r.status]++
		if r.status >= 500 {
			t.Errorf("request %d to replica %d: %d %s", i, i%2, r.status, r.body)
		}
		if r.status == http.StatusTooManyRequests && (r.errorCode() != "rate_limited" || r.header.Get("Retry-After") != "60") {
			t.Errorf("request %d: 429 with code %q, Retry-After %q", i, r.errorCode(), r.header.Get("Retry-After"))
		}
	}
	return got
}

// TestReplicas runs two processes over one database and one Redis and
// checks what the contract promises of replicas: one rate budget per key,
// revocation everywhere within 5s, and service (with a budget per replica)
// while Redis is away.
func TestReplicas(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)

	t.Run("shared", func(t *testing.T) {
		t.Parallel()
		env := map[string]string{
			"DATABASE_URL":          dbURL,
			"REDIS_URL":             "redis://" + redisAddr + "/0",
			"FEEDAPI_REDIS_PREFIX":  redisPrefix(t),
			"FEEDAPI_RATE_LIMIT":    "120",
			"FEEDAPI_IP_RATE_LIMIT": "100000",
		}
		ps := startReplicas(t, env)

		t.Run("one key has one budget of 120 a minute across replicas", func(t *testing.T) {
			key, _ := newKey(t, bdb, db.TierFree)
			awayFromMinuteEdge(t, 20*time.Second)
			start := time.Now()
			got := tally(t, ps, 200, "/v1/sources", key)
			t.Logf("200 requests alternating between 2 replicas in %s: %d × 200, %d × 429",
				time.Since(start).Round(time.Millisecond), got[http.StatusOK], got[http.StatusTooManyRequests])
			if got[http.StatusOK] != 120 || got[http.StatusTooManyRequests] != 80 {
				t.Errorf("statuses %v, want 120 × 200 and 80 × 429", got)
			}
		})

		t.Run("a revoked key is refused by every replica within 5s", func(t *testing.T) {
			key, id := newKey(t, bdb, db.TierPro)
			for i, p := range ps {
				if r := p.get(t, "/v1/sources", key); r.status != http.StatusOK {
					t.Fatalf("replica %d before revocation: %d %s", i, r.status, r.body)
				}
			}
			start := time.Now()
			out := runCommand(t, map[string]string{"DATABASE_URL": dbURL}, "keys", "revoke", strconv.FormatInt(id, 10))
			if !strings.HasPrefix(out, "revoked key "+strconv.FormatInt(id, 10)) {
				t.Errorf("keys revoke printed %q", out)
			}
			var refusedAfter [2]time.Duration
			for i, p := range ps {
				for {
					r := p.get(t, "/v1/sources", key)
					if r.status == http.StatusUnauthorized {
						refusedAfter[i] = time.Since(start)
						break
					}
					if r.status != http.StatusOK {
						t.Fatalf("replica %d: %d %s while the revocation spreads", i, r.status, r.body)
					}
					if time.Since(start) > 2*revocationBudget {
						t.Fatalf("replica %d still accepts the revoked key after %s", i, time.Since(start))
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			t.Logf("revoked key refused by the replicas after %s and %s (from the start of `feedapi keys revoke`)",
				refusedAfter[0].Round(time.Millisecond), refusedAfter[1].Round(time.Millisecond))
			for i, d := range refusedAfter {
				if d > revocationBudget {
					t.Errorf("replica %d accepted the revoked key for %s, want at most %s", i, d, revocationBudget)
				}
			}
		})
	})

	t.Run("four replicas, sixteen clients each, one key: exactly the limit", func(t *testing.T) {
		t.Parallel()
		const limit, replicas, clients, each = 120, 4, 16, 4 // 256 requests for a budget of 120
		env := map[string]string{
			"DATABASE_URL":               dbURL,
			"REDIS_URL":                  "redis://" + redisAddr + "/0",
			"FEEDAPI_REDIS_PREFIX":       redisPrefix(t),
			"FEEDAPI_RATE_LIMIT":         strconv.Itoa(limit),
			"FEEDAPI_IP_RATE_LIMIT":      "100000",
			"FEEDAPI_AUTH_FAILURE_LIMIT": "3",
			// 64 requests at once open the database pools cold: give the
			// connections seconds, not the default 1.5 s.
			"FEEDAPI_REQUEST_TIMEOUT": "0",
		}
		var ps []*process
		for range replicas {
			ps = append(ps, startServer(t, env))
		}
		key, _ := newKey(t, bdb, db.TierFree)
		var (
			mu       sync.Mutex
			statuses = map[int]int{}
			problems []string
			wg       sync.WaitGroup
		)
		start := time.Now()
		for c := range replicas * clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := ps[c%replicas]
				for range each {
					r, err := send(p.base, http.MethodGet, "/v1/sources", key, nil, nil)
					mu.Lock()
					switch {
					case err != nil:
						problems = append(problems, err.Error())
					case r.status == http.StatusTooManyRequests && (r.errorCode() != "rate_limited" || r.header.Get("Retry-After") != "60"):
						problems = append(problems, fmt.Sprintf("429 with code %q, Retry-After %q", r.errorCode(), r.header.Get("Retry-After")))
					default:
						statuses[r.status]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		t.Logf("%d requests from %d clients over %d replicas in %s: %v", replicas*clients*each, replicas*clients, replicas,
			elapsed.Round(time.Millisecond), statuses)
		for _, p := range problems {
			t.Error(p)
		}
		// The budget is a rolling minute: within it, exactly the limit.
		if elapsed >= time.Minute {
			t.Fatalf("the requests took %s, longer than the window; no exact count to check", elapsed)
		}
		if statuses[http.StatusOK] != limit || statuses[http.StatusTooManyRequests] != replicas*clients*each-limit {
			t.Errorf("statuses %v, want %d × 200 and %d × 429", statuses, limit, replicas*clients*each-limit)
		}

		// The failed-authentication budget (3 here) is shared too.
		got := map[int]int{}
		for i := range 6 {
			r := ps[i%replicas].get(t, "/v1/sources", keys.Prefix+strings.Repeat("a", 31)+strconv.Itoa(i%8+2))
			got[r.status]++
		}
		if got[http.StatusUnauthorized] != 3 || got[http.StatusTooManyRequests] != 3 {
			t.Errorf("6 unknown keys over %d replicas with a budget of 3 failures: %v, want 3 × 401 and 3 × 429", replicas, got)
		}
	})

	t.Run("while Redis is away each replica counts alone and serves", func(t *testing.T) {
		t.Parallel()
		const limit = 10
		proxy := newFaultProxy(t, redisAddr)
		env := map[string]string{
			"DATABASE_URL":          dbURL,
			"REDIS_URL":             "redis://" + proxy.Addr() + "/0",
			"FEEDAPI_REDIS_PREFIX":  redisPrefix(t),
			"FEEDAPI_RATE_LIMIT":    strconv.Itoa(limit),
			"FEEDAPI_IP_RATE_LIMIT": "100000",
		}
		ps := startReplicas(t, env)
		before, _ := newKey(t, bdb, db.TierFree)
		if got := tally(t, ps, 2*limit, "/v1/sources", before); got[http.StatusOK] != limit {
			t.Fatalf("with Redis: statuses %v, want %d × 200 (one shared budget)", got, limit)
		}

		proxy.Cut(blackhole)
		key, _ := newKey(t, bdb, db.TierFree)
		awayFromMinuteEdge(t, 20*time.Second)
		got := tally(t, ps, 4*limit, "/v1/sources", key)
		t.Logf("Redis away: %d requests alternating between 2 replicas with a limit of %d: %v", 4*limit, limit, got)
		if got[http.StatusOK] != 2*limit || got[http.StatusTooManyRequests] != 2*limit {
			t.Errorf("statuses %v, want %d × 200 (%d per replica) and %d × 429", got, 2*limit, limit, 2*limit)
		}
		for i, p := range ps {
			if !hasLog(p, "rate-limit counters: switched store", "local_fallback", true) {
				t.Errorf("replica %d did not log the switch to local counters:\n%s", i, p.stderr)
			}
		}

		proxy.Restore()
		restored := time.Now()
		for i, p := range ps {
			for !hasLog(p, "rate-limit counters: switched store", "local_fallback", false) {
				if time.Since(restored) > 10*time.Second {
					t.Fatalf("replica %d did not return to Redis within 10s:\n%s", i, p.stderr)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		t.Logf("both replicas back on Redis %s after it returned", time.Since(restored).Round(time.Millisecond))
	})
}

// hasLog reports whether p logged a record with the message and the
// attribute attr equal to value.
func hasLog(p *process, msg, attr string, value any) bool {
	for _, rec := range p.logRecords() {
		if rec["msg"] == msg && rec[attr] == value {
			return true
		}
	}
	return false
}
