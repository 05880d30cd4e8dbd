package rest

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// spend spends a's failed-authentication budget of limit with random
// keys: limit answers 401, then the 429 of the full path (authenticate),
// which is returned.
func spend(t *testing.T, a *api, limit int) *resp {
	t.Helper()
	for range limit {
		a.get(t, "/v1/posts?limit=1", randomKey(t)).wantStatus(t, http.StatusUnauthorized)
	}
	r := a.get(t, "/v1/posts?limit=1", randomKey(t))
	wantRateLimited(t, r)
	return r
}

// accessLogLines counts the access log lines ("request") of a's log.
func accessLogLines(a *api) int {
	return strings.Count(a.logs.String(), "msg=request ")
}

// TestEarlyRefusalAnswersAsTheFullPath: once a client IP's failed
// authentications are spent, its requests to keyed routes with a key not
// verified are answered first in the chain (no access log line: the full
// path writes one), with the same status, headers and body as the full
// path's 429 (only the request id differs); everything the full path
// answers otherwise still takes it.
func TestEarlyRefusalAnswersAsTheFullPath(t *testing.T) {
	t.Parallel()
	base := newAPI(t)
	clock := &fakeClock{}
	clock.set(time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC))
	const limit = 2
	a := base.variant(t, func(c *Config) {
		c.Auth.AuthFailureLimit = limit
		c.now = clock.now
		c.CORSOrigins = []string{"https://app.example.test"}
	})
	a.get(t, "/v1/sources", base.free).wantStatus(t, http.StatusOK) // verified before the flood

	full := spend(t, a, limit)
	if accessLogLines(a) != limit+2 {
		t.Fatalf("access log lines = %d, want %d:\n%s", accessLogLines(a), limit+2, a.logs.String())
	}
	clock.set(clock.now().Add(20 * time.Second)) // RateLimit-Reset and RateLimit's t move on
	logged := accessLogLines(a)

	for _, tc := range []struct {
		name, method, path, key string
		header                  []string
	}{
		{"unknown key", http.MethodGet, "/v1/posts?limit=1", randomKey(t), nil},
		{"no key", http.MethodGet, "/v1/sources", "", nil},
		{"HEAD", http.MethodHead, "/v1/posts/1", randomKey(t), nil},
		{"stream", http.MethodGet, "/v1/posts/stream", randomKey(t), nil},
		{"malformed Authorization", http.MethodGet, "/v1/briefs", "", []string{"Authorization", "Basic x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			early := a.do(t, tc.method, tc.path, tc.key, nil, tc.header...)
			if tc.method == http.MethodHead {
				early.wantStatus(t, http.StatusTooManyRequests)
			} else {
				wantRateLimited(t, early)
			}
			want := full.Header.Clone()
			want.Set("Ratelimit-Reset", "40")
			want.Set("Ratelimit", `"failed_auth";r=0;t=40`)
			got := early.Header.Clone()
			for _, h := range []http.Header{want, got} {
				h.Del("Date")
				h.Del("X-Request-Id")
			}
			if !equalHeaders(got, want) {
				t.Errorf("headers:\n got %v\nwant %v", got, want)
			}
			if tc.method == http.MethodHead {
				return
			}
			wantBody := strings.Replace(string(full.raw), full.Header.Get("X-Request-Id"), early.Header.Get("X-Request-Id"), 1)
			if string(early.raw) != wantBody {
				t.Errorf("body:\n got %s\nwant %s", early.raw, wantBody)
			}
		})
	}
	if got := accessLogLines(a); got != logged {
		t.Errorf("%d access log lines for early refusals, want none", got-logged)
	}

	// What the full path answers otherwise, it still answers.
	for _, tc := range []struct {
		name, method, path, key string
		header                  []string
		status                  int
	}{
		{"verified key", http.MethodGet, "/v1/sources", base.free, nil, http.StatusOK},
		{"unknown path", http.MethodGet, "/v1/nope", randomKey(t), nil, http.StatusNotFound},
		{"wrong method", http.MethodPost, "/v1/posts", randomKey(t), nil, http.StatusMethodNotAllowed},
		{"health", http.MethodGet, "/v1/health", "", nil, http.StatusOK},
		{"graphql", http.MethodPost, "/graphql", randomKey(t), []string{"Content-Type", "application/json"}, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := accessLogLines(a)
			a.do(t, tc.method, tc.path, tc.key, strings.NewReader(`{"query":"{__typename}"}`), tc.header...).wantStatus(t, tc.status)
			if accessLogLines(a) != before+1 {
				t.Errorf("no access log line: not the full path")
			}
		})
	}
	t.Run("header too large", func(t *testing.T) {
		before := accessLogLines(a)
		// Not a.do: the OpenAPI document lists no 431 on the endpoints.
		req, _ := http.NewRequest(http.MethodGet, a.srv.URL+"/v1/posts", nil)
		req.Header.Set("Authorization", "Bearer "+randomKey(t))
		req.Header.Set("X-Pad", strings.Repeat("x", MaxHeaderBytes))
		r, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("status %d, want 431", r.StatusCode)
		}
		if accessLogLines(a) != before+1 {
			t.Errorf("no access log line: not the full path")
		}
	})
	t.Run("browser", func(t *testing.T) {
		before := accessLogLines(a)
		r := a.get(t, "/v1/posts", randomKey(t), "Origin", "https://app.example.test")
		wantRateLimited(t, r)
		if got := r.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example.test" {
			t.Errorf("Access-Control-Allow-Origin = %q: a script could not read the 429", got)
		}
		if accessLogLines(a) != before+1 {
			t.Errorf("no access log line: not the full path")
		}
	})

	// Once the budget frees, the full path looks keys up again.
	clock.set(clock.now().Add(41 * time.Second))
	a.get(t, "/v1/posts?limit=1", randomKey(t)).wantStatus(t, http.StatusUnauthorized)
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// waitFor polls cond until it holds, giving the server real time (30 s) on
// a loaded machine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
