package rest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCORS checks that a browser app on an allowed origin can call the API:
// preflights are answered without a key and without spending the key's or
// the IP's budget, answers carry the Access-Control headers that let a
// script read the pacing and caching headers, and other origins (or a
// deployment without origins) get no CORS headers.
func TestCORS(t *testing.T) {
	t.Parallel()
	const app = "https://app.example.com"
	base := newAPI(t)
	// A budget of 3 per key and per IP: a preflight that counted would show.
	a := base.variant(t, func(c *Config) { c.CORSOrigins = []string{app}; c.Auth.RateLimit = 3; c.Auth.IPRateLimit = 3 })
	key := a.newKey("free")

	send := func(t *testing.T, srv string, method, path, origin string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		r, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return r
	}
	preflight := func(t *testing.T, srv, path, origin string) *http.Response {
		t.Helper()
		return send(t, srv, http.MethodOptions, path, origin,
			"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization,if-none-match")
	}

	t.Run("preflights need no key and cost no budget", func(t *testing.T) {
		for _, path := range []string{"/v1/posts", "/v1/health", "/graphql", "/v1/posts/1"} {
			for range 5 {
				r := preflight(t, a.srv.URL, path, app)
				if r.StatusCode != http.StatusOK {
					t.Fatalf("preflight %s: %d, want 200", path, r.StatusCode)
				}
				if got := r.Header.Get("Access-Control-Allow-Origin"); got != app {
					t.Errorf("preflight %s: Access-Control-Allow-Origin %q, want %q", path, got, app)
				}
				allowed := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers"))
				if !strings.Contains(allowed, "authorization") || !strings.Contains(allowed, "if-none-match") {
					t.Errorf("preflight %s: Access-Control-Allow-Headers %q, want authorization and if-none-match", path, allowed)
				}
				if r.Header.Get("Access-Control-Max-Age") == "" {
					t.Errorf("preflight %s: no Access-Control-Max-Age", path)
				}
			}
		}
		// The key's 3 and the IP's 3 are untouched by the 20 preflights.
		for i := range 3 {
			if r := a.get(t, "/v1/sources", key, "Origin", app); r.StatusCode != http.StatusOK {
				t.Fatalf("keyed request %d after the preflights: %d, want 200", i+1, r.StatusCode)
			}
			if r := a.get(t, "/v1/health", "", "Origin", app); r.StatusCode != http.StatusOK {
				t.Fatalf("health request %d after the preflights: %d, want 200", i+1, r.StatusCode)
			}
		}
	})

	t.Run("answers expose the pacing and caching headers", func(t *testing.T) {
		k := a.newKey("free")
		r := a.get(t, "/v1/sources", k, "Origin", app)
		if got := r.Header.Get("Access-Control-Allow-Origin"); got != app {
			t.Errorf("Access-Control-Allow-Origin %q, want %q", got, app)
		}
		exposed := strings.ToLower(r.Header.Get("Access-Control-Expose-Headers"))
		for _, h := range []string{"ratelimit-remaining", "ratelimit-reset", "ratelimit", "retry-after", "etag", "x-request-id"} {
			if !strings.Contains(exposed, h) {
				t.Errorf("Access-Control-Expose-Headers %q lacks %s", exposed, h)
			}
		}
		if r := a.get(t, "/v1/sources", "", "Origin", app); r.StatusCode != http.StatusUnauthorized ||
			r.Header.Get("Access-Control-Allow-Origin") != app {
			t.Errorf("401 to an allowed origin: %d, Access-Control-Allow-Origin %q; want 401 readable by the app",
				r.StatusCode, r.Header.Get("Access-Control-Allow-Origin"))
		}
	})

	t.Run("answers vary by Origin as well as by Accept-Encoding", func(t *testing.T) {
		// A shared cache must not hand an answer made for one origin (or
		// for none, without Access-Control-Allow-Origin) to another.
		k := a.newKey("free")
		for _, c := range []struct {
			name, path, key string
			header          []string
		}{
			{"a keyed answer to the app", "/v1/sources", k, []string{"Origin", app}},
			{"a keyed answer without Origin", "/v1/sources", k, nil},
			{"a 401 to the app", "/v1/posts", "", []string{"Origin", app}},
			{"health without Origin", "/v1/health", "", nil},
			{"an unknown path", "/v1/nothing", k, []string{"Origin", app}},
		} {
			r := a.get(t, c.path, c.key, c.header...)
			vary := strings.ToLower(strings.Join(r.Header.Values("Vary"), ","))
			if !strings.Contains(vary, "origin") || !strings.Contains(vary, "accept-encoding") {
				t.Errorf("%s: Vary %q, want Origin and Accept-Encoding", c.name, vary)
			}
			if n := strings.Count(vary, "accept-encoding"); n != 1 {
				t.Errorf("%s: Vary %q names Accept-Encoding %d times", c.name, vary, n)
			}
		}
	})

	t.Run("other origins and the default get no CORS headers", func(t *testing.T) {
		for _, c := range []struct {
			name, srv, origin string
		}{
			{"another origin", a.srv.URL, "https://evil.example.net"},
			{"no origins configured", base.srv.URL, app},
		} {
			r := preflight(t, c.srv, "/v1/posts", c.origin)
			if got := r.Header.Get("Access-Control-Allow-Origin"); got != "" {
				t.Errorf("%s: preflight Access-Control-Allow-Origin %q, want none", c.name, got)
			}
			r = send(t, c.srv, http.MethodGet, "/v1/health", c.origin)
			if got := r.Header.Get("Access-Control-Allow-Origin"); got != "" {
				t.Errorf("%s: GET Access-Control-Allow-Origin %q, want none", c.name, got)
			}
		}
	})
}
