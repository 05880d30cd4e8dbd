package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestGracefulShutdown sends SIGTERM to a serving process while a request is
// in flight (held up by a proxy that delays every message to the database)
// and checks that the listener closes at once (new connections are
// refused), the request in flight still completes, and the process exits
// within its grace period: with 0 when the request finished in time, with 1
// (and without waiting longer) when it did not.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		grace      time.Duration
		dbDelay    time.Duration // per message to the database
		wantStatus int           // of the request in flight; 0 means it is cut off
		wantExit   int
	}{
		{"a request in flight completes and the process exits 0", 10 * time.Second, time.Second, http.StatusOK, 0},
		{"a request outlasting the grace period is cut off and the process exits 1", time.Second, 3 * time.Second, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bdb, dbURL := dbtest.NewWithURL(t)
			proxy := newFaultProxy(t, "127.0.0.1:5432")
			key, _ := newKey(t, bdb, db.TierFree)
			p := startServer(t, map[string]string{"DATABASE_URL": withHost(t, dbURL, proxy.Addr())},
				"--shutdown-grace", tt.grace.String(), "--request-timeout", "0")
			if r := p.get(t, "/v1/posts?limit=1", key); r.status != http.StatusOK {
				t.Fatalf("warm-up: %d %s", r.status, r.body)
			}

			proxy.SetDelay(tt.dbDelay)
			type result struct {
				r   *response
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := send(p.base, http.MethodGet, "/v1/posts?limit=7", key, nil, nil)
				done <- result{r, err}
			}()
			select {
			case <-proxy.Traffic():
			case <-time.After(readyTimeout):
				t.Fatal("the request never reached the database")
			}

			term := time.Now()
			p.signal(syscall.SIGTERM)
			for !dialRefused(p.addr) {
				if time.Since(term) > 5*time.Second {
					t.Fatal("the listener still accepts connections 5s after SIGTERM")
				}
				time.Sleep(10 * time.Millisecond)
			}
			refusedAfter := time.Since(term)
			select {
			case res := <-done:
				t.Fatalf("the request ended (%v, %v) before the listener closed; the test proves nothing", res.r, res.err)
			default:
			}
			if _, err := send(p.base, http.MethodGet, "/v1/health", "", nil, nil); !isRefused(err) {
				t.Errorf("a new request after the listener closed: %v, want connection refused", err)
			}

			res := <-done
			if res.err == nil {
				checkNoLeak(t, "the request in flight", res.r)
			}
			switch {
			case tt.wantStatus == 0 && res.err == nil:
				t.Errorf("the request outlasting the grace period got %d, want it cut off", res.r.status)
			case tt.wantStatus != 0 && res.err != nil:
				t.Errorf("the request in flight failed: %v", res.err)
			case tt.wantStatus != 0 && res.r.status != tt.wantStatus:
				t.Errorf("the request in flight: %d %s, want %d", res.r.status, res.r.body, tt.wantStatus)
			}
			code := p.wait(tt.grace + 10*time.Second)
			exitedAfter := time.Since(term)
			if code != tt.wantExit {
				t.Errorf("exit code %d, want %d", code, tt.wantExit)
			}
			if exitedAfter > tt.grace+2*time.Second {
				t.Errorf("exited %s after SIGTERM, grace period %s", exitedAfter, tt.grace)
			}
			if !strings.Contains(p.stderr.String(), `"msg":"shutting down"`) {
				t.Errorf("no shutdown log line:\n%s", p.stderr)
			}
			t.Logf("listener closed %s after SIGTERM; process exited %d after %s",
				refusedAfter.Round(time.Millisecond), code, exitedAfter.Round(time.Millisecond))
		})
	}
}
