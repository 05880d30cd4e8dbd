package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

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
				// The first page just read would be answered from the
				// poll cache for up to its TTL: this test is about the
				// database's outage.
				"FEEDAPI_POLL_CACHE_TTL": "0",
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

// TestPrimaryOutageWithReplica cuts the service off its primary while its
// read replica (another database, behind a proxy of its own) answers:
// keyed reads go on, with keys verified on the replica, health says the
// primary is away without failing (200, status degraded), and a revocation
// made on the primary meanwhile, which the replica has not seen (lag), is
// honoured within 5 s once the primary is back.
func TestPrimaryOutageWithReplica(t *testing.T) {
	t.Parallel()
	for _, mode := range []cutMode{refuse, blackhole} {
		t.Run("primary connections "+mode.String(), func(t *testing.T) {
			t.Parallel()
			primary, primaryURL := dbtest.NewWithURL(t)
			replica, replicaURL := dbtest.NewWithURL(t)
			warm, _ := newKey(t, primary, db.TierFree)
			cold, _ := newKey(t, primary, db.TierPro)
			doomed, doomedID := newKey(t, primary, db.TierFree)
			replicateKeys(t, primary, replica)
			primaryProxy := newFaultProxy(t, "127.0.0.1:5432")
			replicaProxy := newFaultProxy(t, "127.0.0.1:5432")
			p := startServer(t, map[string]string{
				"DATABASE_URL":          withHost(t, primaryURL, primaryProxy.Addr()),
				"DATABASE_REPLICA_URL":  withHost(t, replicaURL, replicaProxy.Addr()),
				"FEEDAPI_RATE_LIMIT":    "100000",
				"FEEDAPI_IP_RATE_LIMIT": "100000",
				// The first page just read would be answered from the
				// poll cache for up to its TTL: this test is about the
				// database's outage.
				"FEEDAPI_POLL_CACHE_TTL": "0",
			})
			const path = "/v1/posts?limit=2"
			for _, key := range []string{warm, doomed} {
				if r := p.get(t, path, key); r.status != http.StatusOK {
					t.Fatalf("before the cut: %d %s", r.status, r.body)
				}
			}

			primaryProxy.Cut(mode)
			cut := time.Now()
			t.Run("keyed reads answer 200", func(t *testing.T) {
				// Past the 2 s verification cache, so that keys are looked
				// up again during the outage, not only served from memory.
				for first := true; first || time.Since(cut) < 3*time.Second; first = false {
					for _, c := range []struct{ path, key string }{{path, warm}, {"/v1/sources", cold}} {
						if r := p.get(t, c.path, c.key); r.status != http.StatusOK {
							t.Fatalf("%s after %s of outage: %d %s", c.path, time.Since(cut).Round(time.Millisecond), r.status, r.body)
						}
					}
					time.Sleep(100 * time.Millisecond)
				}
			})
			t.Run("a made-up key answers 401", func(t *testing.T) {
				made := []byte(warm)
				made[len(made)-1] ^= 1
				if r := p.get(t, path, string(made)); r.status != http.StatusUnauthorized {
					t.Errorf("made-up key: %d %s, want 401", r.status, r.body)
				}
			})
			t.Run("health answers 200 degraded, naming the primary", func(t *testing.T) {
				r := p.get(t, "/v1/health", "")
				var h map[string]string
				if err := json.Unmarshal(r.env.Data, &h); err != nil {
					t.Fatalf("health data: %v: %s", err, r.body)
				}
				want := map[string]string{"status": "degraded", "database": "ok", "database_primary": "unreachable", "database_replica": "ok"}
				if r.status != http.StatusOK {
					t.Errorf("health: %d, want 200: %s", r.status, r.body)
				}
				for k, v := range want {
					if h[k] != v {
						t.Errorf("health %s = %q, want %q: %s", k, h[k], v, r.body)
					}
				}
			})

			// Revoked on the primary, not (yet) on the replica.
			if _, err := primary.NewRaw("UPDATE api_keys SET revoked_at = now() WHERE id = ?", doomedID).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
			primaryProxy.Restore()
			restored := time.Now()
			for {
				r := p.get(t, path, doomed)
				if r.status == http.StatusUnauthorized {
					break
				}
				if r.status != http.StatusOK {
					t.Fatalf("revoked key after the primary came back: %d %s", r.status, r.body)
				}
				if time.Since(restored) > 2*revocationBudget {
					t.Fatalf("the key revoked on the primary still works %s after it came back", time.Since(restored))
				}
				time.Sleep(50 * time.Millisecond)
			}
			refusedAfter := time.Since(restored)
			t.Logf("%s: the revoked key was refused %s after the primary came back", mode, refusedAfter.Round(time.Millisecond))
			if refusedAfter > revocationBudget {
				t.Errorf("the key revoked on the primary worked for %s after it came back, want at most %s", refusedAfter, revocationBudget)
			}
			if r := p.get(t, path, warm); r.status != http.StatusOK {
				t.Errorf("after the outage: %d %s", r.status, r.body)
			}
			for {
				var h struct{ Status string }
				r := p.get(t, "/v1/health", "")
				if json.Unmarshal(r.env.Data, &h) == nil && r.status == http.StatusOK && h.Status == "ok" {
					break
				}
				if time.Since(restored) > recoveryBudget+revocationBudget {
					t.Fatalf("health still %d %s after the primary came back", r.status, r.body)
				}
				time.Sleep(50 * time.Millisecond)
			}
			logs := p.stderr.String()
			for _, msg := range []string{"verifying keys on the read replica", "the primary database answers again"} {
				if !strings.Contains(logs, msg) {
					t.Errorf("no log line %q", msg)
				}
			}
		})
	}
}

// replicateKeys copies the api_keys rows of primary into replica, as
// replication would.
func replicateKeys(t testing.TB, primary, replica *bun.DB) {
	t.Helper()
	var ks []db.APIKey
	if err := primary.NewSelect().Model(&ks).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := replica.NewInsert().Model(&ks).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
}
