package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph/keys"
)

// outageAnswer is the longest a request may take while the database is away:
// the default --request-timeout (1.5s) plus seconds for a busy machine to
// schedule the answer. What it guards against is a request that waits for
// the pool's connect timeout (50s before --request-timeout existed).
const outageAnswer = 6 * time.Second

// recoveryBudget is how soon the service must serve again once the
// database is back, without a restart.
const recoveryBudget = 5 * time.Second

// TestDatabaseOutage cuts the service off its database (a proxy in front of
// PostgreSQL) and checks that it fails fast and cleanly, then recovers by
// itself: keyed requests get 500 internal within seconds, whether their key was
// verified just before the cut (cached) or never (its lookup fails: 500, not
// 401); a burst of them too; health answers 503 degraded at once; and
// after the database is back, 200s come again within a few seconds.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	for _, mode := range []cutMode{refuse, blackhole} {
		t.Run("connections "+mode.String(), func(t *testing.T) {
			t.Parallel()
			bdb, dbURL := dbtest.NewWithURL(t)
			proxy := newFaultProxy(t, "127.0.0.1:5432")
			warm, _ := newKey(t, bdb, db.TierFree)
			cold, _ := newKey(t, bdb, db.TierPro)
			p := startServer(t, map[string]string{
				"DATABASE_URL":          withHost(t, dbURL, proxy.Addr()),
				"FEEDAPI_RATE_LIMIT":    "100000",
				"FEEDAPI_IP_RATE_LIMIT": "100000",
			})
			const path = "/v1/posts?limit=2"
			if r := p.get(t, path, warm); r.status != http.StatusOK {
				t.Fatalf("before the cut: %d %s", r.status, r.body)
			}

			proxy.Cut(mode)
			var slowest time.Duration
			wantInternal := func(t *testing.T, r *response) {
				t.Helper()
				slowest = max(slowest, r.elapsed)
				if r.status != http.StatusInternalServerError || r.errorCode() != "internal" {
					t.Errorf("status %d, code %q, want 500 internal: %s", r.status, r.errorCode(), r.body)
				}
				if r.elapsed > outageAnswer {
					t.Errorf("answered in %s, want within %s", r.elapsed, outageAnswer)
				}
				if r.env.Meta.RequestID == "" || r.header.Get("X-Request-Id") != r.env.Meta.RequestID {
					t.Errorf("request id: meta %q, header %q", r.env.Meta.RequestID, r.header.Get("X-Request-Id"))
				}
			}
			t.Run("a key verified just before answers 500 internal", func(t *testing.T) {
				wantInternal(t, p.get(t, path, warm))
			})
			t.Run("an unverified key answers 500 internal, not 401", func(t *testing.T) {
				wantInternal(t, p.get(t, "/v1/sources", cold))
			})
			t.Run("a burst of keyed requests all answer 500 internal in time", func(t *testing.T) {
				const n = 40
				rs := make([]*response, n)
				errs := make([]error, n)
				var wg sync.WaitGroup
				for i := range n {
					key := warm
					if i%2 == 1 {
						key = cold
					}
					wg.Go(func() { rs[i], errs[i] = send(p.base, http.MethodGet, "/v1/briefs?limit=1", key, nil, nil) })
				}
				wg.Wait()
				for i, r := range rs {
					if errs[i] != nil {
						t.Errorf("request %d: %v", i, errs[i])
						continue
					}
					checkNoLeak(t, "burst", r)
					wantInternal(t, r)
				}
			})
			t.Run("health answers 503 degraded", func(t *testing.T) {
				r := p.get(t, "/v1/health", "")
				slowest = max(slowest, r.elapsed)
				var h struct{ Status, Database string }
				if err := json.Unmarshal(r.env.Data, &h); err != nil {
					t.Fatalf("health data: %v: %s", err, r.body)
				}
				if r.status != http.StatusServiceUnavailable || h.Status != "degraded" || h.Database != "unreachable" {
					t.Errorf("health: %d %s, want 503 degraded, database unreachable", r.status, r.body)
				}
				if r.elapsed > outageAnswer {
					t.Errorf("health answered in %s, want within %s", r.elapsed, outageAnswer)
				}
			})
			t.Logf("%s: slowest answer during the outage %s", mode, slowest.Round(time.Millisecond))

			proxy.Restore()
			restored := time.Now()
			for _, c := range []struct{ path, key string }{{path, warm}, {"/v1/sources", cold}, {"/v1/health", ""}} {
				for {
					r := p.get(t, c.path, c.key)
					if r.status == http.StatusOK {
						break
					}
					if time.Since(restored) > recoveryBudget {
						t.Fatalf("%s: still %d %s %s after the database came back", c.path, r.status, r.body, time.Since(restored))
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			t.Logf("%s: serving again %s after the database came back", mode, time.Since(restored).Round(time.Millisecond))
			if logs := p.stderr.String(); strings.Contains(logs, keys.Prefix) {
				t.Errorf("a key appears in the log of the outage:\n%s", logs)
			}
		})
	}
}
