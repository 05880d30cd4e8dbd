package rest

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// maxInWindow returns the most times that fall in any interval [t, t+w).
func maxInWindow(times []time.Time, w time.Duration) int {
	best, j := 0, 0
	for i := range times {
		for j < len(times) && times[j].Sub(times[i]) < w {
			j++
		}
		best = max(best, j-i)
	}
	return best
}

// TestRateLimitRollingMinute: a burst half a second before a minute of the
// clock begins, then one request every 100 ms: in no 60-second interval
// does the key get more than its limit, RateLimit-Reset tells when the next
// request will pass (the same on every replica), and Retry-After never
// points earlier. In memory and in Redis (whose script is told the fake
// time instead of reading TIME).
func TestRateLimitRollingMinute(t *testing.T) {
	t.Parallel()
	base := newAPI(t)
	const limit = 120
	for _, tc := range []struct {
		name  string
		redis bool
	}{
		{"in memory", false},
		{"in Redis, two replicas", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := &fakeClock{}
			start := time.Now().Truncate(time.Minute).Add(time.Minute - 500*time.Millisecond)
			clock.set(start)
			replicas := []*api{base.variant(t, func(c *Config) { c.Auth.RateLimit = limit; c.now = clock.now })}
			if tc.redis {
				rc, prefix := redisClient(t), randomPrefix(t)
				opts := func(c *Config) { c.Auth.RateLimit = limit; c.now = clock.now; c.Redis = rc; c.RedisPrefix = prefix }
				replicas = []*api{base.variant(t, opts), base.variant(t, opts)}
			}

			var ok []time.Time
			send := func(i int, at time.Time) *resp {
				clock.set(at)
				r := replicas[i%len(replicas)].get(t, "/v1/sources", base.free)
				switch r.StatusCode {
				case http.StatusOK:
					ok = append(ok, at)
				case http.StatusTooManyRequests:
				default:
					t.Fatalf("request at %s: status %d", at.Sub(start), r.StatusCode)
				}
				return r
			}
			for i := range limit {
				send(i, start).wantStatus(t, http.StatusOK)
			}
			// Paced: one request every 100 ms for 70 s.
			var refusedResets []int
			for i := 1; i <= 700; i++ {
				at := start.Add(time.Duration(i) * 100 * time.Millisecond)
				r := send(i, at)
				if r.StatusCode != http.StatusTooManyRequests {
					continue
				}
				reset, err := strconv.Atoi(r.Header.Get("RateLimit-Reset"))
				if err != nil {
					t.Fatalf("RateLimit-Reset %q", r.Header.Get("RateLimit-Reset"))
				}
				// The burst leaves the window 60 s after it: that is when
				// the next request passes, whichever replica answers.
				want := int((start.Add(time.Minute).Sub(at) + time.Second - 1) / time.Second)
				if reset != want {
					t.Errorf("429 at +%s: RateLimit-Reset %d, want %d", at.Sub(start), reset, want)
				}
				if ra, _ := strconv.Atoi(r.Header.Get("Retry-After")); ra < reset {
					t.Errorf("429 at +%s: Retry-After %d earlier than RateLimit-Reset %d", at.Sub(start), ra, reset)
				}
				refusedResets = append(refusedResets, reset)
			}
			if got := maxInWindow(ok, time.Minute); got > limit {
				t.Errorf("%d answers of 200 within 60 s, want at most %d", got, limit)
			}
			// Once the burst has aged out, the paced client is served again,
			// one request in every 100 ms slot after 60 s.
			if i := slices.IndexFunc(ok, func(at time.Time) bool { return at.After(start) }); i < 0 || ok[i] != start.Add(time.Minute) {
				t.Errorf("first 200 after the burst at %v, want at +60s", ok[min(i, len(ok)-1)].Sub(start))
			}
			if got, want := len(ok), limit+101; got != want {
				t.Errorf("%d answers of 200 in 70 s, want %d (the burst, then the paced client from +60 s to +70 s)", got, want)
			}
			if len(refusedResets) != 599 {
				t.Errorf("%d refusals, want 599", len(refusedResets))
			}
		})
	}
}
