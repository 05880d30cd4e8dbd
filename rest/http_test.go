package rest

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
)

// Paths of a post and a brief that do not exist, whatever the seed holds.
const (
	missingPost  = "/v1/posts/8999999999999"
	missingBrief = "/v1/briefs/8999999999"
)

// TestHTTP covers the HTTP behaviour common to all endpoints over one
// database.
func TestHTTP(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	paths := keyedPaths(a)
	for name, test := range map[string]func(*testing.T, *api, []string){
		"404 and 405":      testNotFoundAndMethodNotAllowed,
		"HEAD":             testHead,
		"ETag and 304":     testETag,
		"gzip":             testGzip,
		"request ids":      testRequestIDs,
		"Cache-Control":    testCacheControl,
		"OpenAPI document": testOpenAPIDocument,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, a.with(t), paths)
		})
	}
}

// keyedPaths are GET paths of every keyed endpoint that answer 200.
func keyedPaths(a *api) []string {
	post := a.addPosts(fxPostID, 60, "fx-http")
	brief := a.addBriefs(fxBriefID, 1)
	a.addFirehose(fxFirehoseID, 3, "fx-http", []db.Pane{db.PaneNews}, []bool{true})
	a.addEtfFlows(2, db.AssetBTC)
	return []string{
		"/v1/posts?source=fx-http&limit=100",
		"/v1/posts/" + strconv.FormatInt(post[0].ID, 10),
		"/v1/briefs",
		"/v1/briefs/" + strconv.FormatInt(brief[0].ID, 10),
		"/v1/firehose?source=fx-http",
		"/v1/sources",
		"/v1/etf-flows?from=2031-01-01",
		"/v1/etf-flows/latest",
	}
}

func testNotFoundAndMethodNotAllowed(t *testing.T, a *api, paths []string) {
	for _, path := range []string{"/v1/", "/v2", "/v2/posts", "/index.html", "/reference/", "/reference/x", "/v1/post", "/v1/posts/1/raw", "/v1/POSTS",
		"/v1/etf-flows/oldest", "/graphql/x", "/v1/openapi.yaml", "/favicon.ico"} {
		t.Run("404 "+path, func(t *testing.T) {
			t.Parallel()
			for key, tier := range map[string]string{"": "", "fapi_bad": "", a.free: "free", a.intern: "internal"} {
				r := a.get(t, path, key)
				r.wantStatus(t, http.StatusNotFound)
				if r.env.Error.Code != "not_found" {
					t.Errorf("code %q, want not_found", r.env.Error.Code)
				}
				if got := r.env.Meta.Tier; (tier == "") != (got == nil) || got != nil && *got != tier {
					t.Errorf("meta.tier = %v, want %q (null for no valid key)", got, tier)
				}
			}
		})
	}
	for _, tc := range []struct {
		method, path, allow string
	}{
		{http.MethodPost, "/v1/posts", "GET, HEAD"},
		{http.MethodPut, "/v1/posts/1", "GET, HEAD"},
		{http.MethodDelete, "/v1/briefs/1", "GET, HEAD"},
		{http.MethodPatch, "/v1/firehose", "GET, HEAD"},
		{http.MethodOptions, "/v1/sources", "GET, HEAD"},
		{http.MethodPost, "/v1/health", "GET, HEAD"},
		{http.MethodPost, "/v1/openapi.json", "GET, HEAD"},
		{http.MethodPost, "/v1/etf-flows", "GET, HEAD"},
		{http.MethodDelete, "/graphql", "GET, POST"},
		{http.MethodHead, "/graphql", "GET, POST"},
	} {
		t.Run("405 "+tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			r := a.do(t, tc.method, tc.path, a.intern, nil)
			r.wantStatus(t, http.StatusMethodNotAllowed)
			if got := r.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow = %q, want %q", got, tc.allow)
			}
			if tc.method != http.MethodHead && r.env.Error.Code != "method_not_allowed" {
				t.Errorf("code %q, want method_not_allowed", r.env.Error.Code)
			}
			if tc.method != http.MethodHead && (r.env.Meta.Tier == nil || *r.env.Meta.Tier != "internal") {
				t.Errorf("meta.tier = %v, want internal", r.env.Meta.Tier)
			}
		})
	}
}

func testHead(t *testing.T, a *api, paths []string) {
	for _, path := range append(paths, "/v1/posts?limit=0", missingPost, "/v1/health", "/v1/openapi.json") {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			for _, enc := range []string{"", "gzip"} {
				get := a.get(t, path, a.free, "Accept-Encoding", enc)
				head := a.do(t, http.MethodHead, path, a.free, nil, "Accept-Encoding", enc)
				if head.StatusCode != get.StatusCode {
					t.Errorf("HEAD status %d, GET status %d", head.StatusCode, get.StatusCode)
				}
				for _, h := range []string{"Content-Type", "ETag", "Content-Encoding", "Cache-Control", "Vary", "RateLimit-Limit"} {
					if got, want := head.Header.Get(h), get.Header.Get(h); got != want {
						t.Errorf("HEAD %s = %q, GET has %q", h, got, want)
					}
				}
				// Gzipped sizes vary by a few bytes with the request id.
				if got, want := head.ContentLength, int64(len(get.raw)); got != want &&
					(get.Header.Get("Content-Encoding") == "" || got < want-16 || got > want+16) {
					t.Errorf("HEAD Content-Length %d, GET body %d bytes", got, want)
				}
			}
		})
	}
}

func testETag(t *testing.T, a *api, paths []string) {
	for _, path := range append(slices.Clone(paths), "/v1/health", "/v1/openapi.json") {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			first := a.get(t, path, a.free)
			first.wantStatus(t, http.StatusOK)
			tag := first.Header.Get("ETag")
			if len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' || strings.HasPrefix(tag, "W/") {
				t.Fatalf("ETag = %q, want a strong quoted tag", tag)
			}
			second := a.get(t, path, a.free)
			if got := second.Header.Get("ETag"); got != tag {
				t.Errorf("second ETag %q, first %q: the request id must not change the tag", got, tag)
			}
			if first.env.Meta.RequestID == second.env.Meta.RequestID && path != "/v1/openapi.json" {
				t.Errorf("two responses share request_id %q", first.env.Meta.RequestID)
			}
			for _, inm := range []string{tag, `"nope", ` + tag, "*", "W/" + tag, strings.TrimSuffix(tag, `"`) + `-gz"`} {
				r := a.get(t, path, a.free, "If-None-Match", inm)
				r.wantStatus(t, http.StatusNotModified)
				if len(r.raw) != 0 {
					t.Errorf("If-None-Match %s: 304 with a body", inm)
				}
				if got := r.Header.Get("ETag"); got != tag {
					t.Errorf("If-None-Match %s: 304 with ETag %q, want %q", inm, got, tag)
				}
				if r.Header.Get("X-Request-Id") == "" || r.Header.Get("RateLimit-Remaining") == "" {
					t.Errorf("If-None-Match %s: 304 without X-Request-Id or RateLimit-Remaining", inm)
				}
			}
			for _, inm := range []string{`"nope"`, `"` + strings.Repeat("0", 32) + `"`, strings.Trim(tag, `"`)} {
				a.get(t, path, a.free, "If-None-Match", inm).wantStatus(t, http.StatusOK)
			}
		})
	}

	t.Run("the tag changes with the data", func(t *testing.T) {
		t.Parallel()
		a.addPosts(fxPostID+20000, 1, "fx-change")
		before := a.get(t, "/v1/posts?source=fx-change", a.free).Header.Get("ETag")
		a.addPosts(fxPostID+20010, 1, "fx-change")
		r := a.get(t, "/v1/posts?source=fx-change", a.free, "If-None-Match", before)
		r.wantStatus(t, http.StatusOK)
		if r.Header.Get("ETag") == before {
			t.Errorf("ETag unchanged after a new post")
		}
	})

	t.Run("errors carry no ETag", func(t *testing.T) {
		t.Parallel()
		for _, path := range []string{"/v1/posts?limit=0", missingPost, "/nope"} {
			if tag := a.get(t, path, a.free).Header.Get("ETag"); tag != "" {
				t.Errorf("%s: ETag %q on an error", path, tag)
			}
		}
	})
}

func testGzip(t *testing.T, a *api, paths []string) {
	a.addPosts(fxPostID+10000, 50, "fx-gzip")
	const big = "/v1/posts?source=fx-gzip&limit=50"

	t.Run("large bodies are gzipped when accepted", func(t *testing.T) {
		t.Parallel()
		for _, enc := range []string{"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.5", "*", "GZIP"} {
			r := a.get(t, big, a.free, "Accept-Encoding", enc)
			r.wantStatus(t, http.StatusOK)
			if r.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("Accept-Encoding %q: Content-Encoding %q, want gzip", enc, r.Header.Get("Content-Encoding"))
			}
			if len(r.raw) >= len(r.plain) {
				t.Errorf("Accept-Encoding %q: gzipped %d bytes, plain %d", enc, len(r.raw), len(r.plain))
			}
			if got := r.Header.Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Vary = %q, want Accept-Encoding", got)
			}
			if tag := r.Header.Get("ETag"); !strings.HasSuffix(tag, `-gz"`) {
				t.Errorf("gzipped ETag %q, want the -gz variant", tag)
			}
			if got := len(r.items(t)); got != 50 {
				t.Errorf("%d posts after gunzip, want 50", got)
			}
		}
	})

	t.Run("not gzipped when refused or small", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ path, enc string }{
			{big, ""},
			{big, "identity"},
			{big, "gzip;q=0"},
			{big, "*, gzip;q=0"},
			{big, "deflate"},
			{missingPost, "gzip"},
			{"/v1/posts?source=none", "gzip"},
		} {
			r := a.get(t, tc.path, a.free, "Accept-Encoding", tc.enc)
			if got := r.Header.Get("Content-Encoding"); got != "" {
				t.Errorf("%s with Accept-Encoding %q: Content-Encoding %q, want none", tc.path, tc.enc, got)
			}
		}
	})

	t.Run("the two representations revalidate each other", func(t *testing.T) {
		t.Parallel()
		plain := a.get(t, big, a.free).Header.Get("ETag")
		zipped := a.get(t, big, a.free, "Accept-Encoding", "gzip").Header.Get("ETag")
		a.get(t, big, a.free, "Accept-Encoding", "gzip", "If-None-Match", plain).wantStatus(t, http.StatusNotModified)
		a.get(t, big, a.free, "If-None-Match", zipped).wantStatus(t, http.StatusNotModified)
	})
}

func testRequestIDs(t *testing.T, a *api, paths []string) {
	seen := map[string]bool{}
	for i := range 40 {
		path := []string{"/v1/sources", "/v1/health", "/nope", "/v1/posts?limit=0"}[i%4]
		r := a.get(t, path, a.free)
		id := r.Header.Get("X-Request-Id") // equal to meta.request_id: checked for every response
		if seen[id] {
			t.Fatalf("request id %s repeated", id)
		}
		seen[id] = true
	}
}

func testCacheControl(t *testing.T, a *api, paths []string) {
	for path, want := range map[string]string{
		"/v1/sources":      "private, no-cache",
		"/v1/posts":        "private, no-cache",
		"/v1/health":       "no-store",
		"/v1/openapi.json": "public, max-age=300",
		missingPost:        "no-store",
		"/nope":            "no-store",
	} {
		if got := a.get(t, path, a.free).Header.Get("Cache-Control"); got != want {
			t.Errorf("%s: Cache-Control %q, want %q", path, got, want)
		}
	}
}

func testOpenAPIDocument(t *testing.T, a *api, paths []string) {
	r := a.get(t, "/v1/openapi.json", "")
	r.wantStatus(t, http.StatusOK)
	if !strings.HasPrefix(strings.TrimSpace(string(r.plain)), "{") || !strings.Contains(string(r.plain), `"openapi"`) {
		t.Errorf("body is not an OpenAPI document: %.200s", r.plain)
	}
	if strings.Contains(string(r.plain), `"request_id"`) && strings.HasPrefix(string(r.plain), `{"data"`) {
		t.Errorf("the document is wrapped in the envelope")
	}
}

// fakeKeys is an Authenticator for fault injection.
type fakeKeys func(secret string) (keys.Principal, error)

func (f fakeKeys) Authenticate(_ context.Context, secret string) (keys.Principal, error) {
	return f(secret)
}

func TestInternalErrors(t *testing.T) {
	t.Parallel()
	base := newAPI(t)

	t.Run("a failing key store is a 500 without internals, logged with the request id", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) {
			c.Auth.Keys = fakeKeys(func(string) (keys.Principal, error) {
				return keys.Principal{}, errors.New("pq: connection to 10.0.0.5 refused (SQLSTATE 08006)")
			})
		})
		r := a.get(t, "/v1/sources", "fapi_whatever")
		r.wantStatus(t, http.StatusInternalServerError)
		if r.env.Error.Code != "internal" || strings.Contains(r.env.Error.Message, "10.0.0.5") || strings.Contains(r.env.Error.Message, "SQL") {
			t.Errorf("error %+v: want code internal and no internals", r.env.Error)
		}
		logs := a.logs.String()
		if !strings.Contains(logs, "request_id="+r.env.Meta.RequestID) || !strings.Contains(logs, "10.0.0.5") {
			t.Errorf("log lacks the request id or the cause:\n%s", logs)
		}
	})

	t.Run("a failing database is a 500 without internals", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, func(c *Config) {
			c.Auth.Keys = fakeKeys(func(string) (keys.Principal, error) { return keys.Principal{KeyID: 1, Tier: db.TierFree}, nil })
		})
		if err := a.bdb.Close(); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/v1/posts", "/v1/posts/1", "/v1/sources", "/v1/etf-flows"} {
			r := a.get(t, path, "fapi_whatever")
			r.wantStatus(t, http.StatusInternalServerError)
			if r.env.Error.Code != "internal" || strings.Contains(strings.ToLower(r.env.Error.Message), "sql") {
				t.Errorf("%s: error %+v", path, r.env.Error)
			}
			if !strings.Contains(a.logs.String(), r.env.Meta.RequestID) {
				t.Errorf("%s: request id not logged", path)
			}
		}
		// What a client put in the path (a key, say) is not logged; the
		// route pattern is.
		r := a.get(t, "/v1/posts/9000000000000000001", "fapi_whatever")
		r.wantStatus(t, http.StatusInternalServerError)
		if logs := a.logs.String(); strings.Contains(logs, "path=") || !strings.Contains(logs, `msg="internal error" request_id=`+r.env.Meta.RequestID+` method=GET route=/v1/posts/{id} `) {
			t.Errorf("the internal-error log shows the path instead of the route pattern:\n%s", logs)
		}
		// Health reports the outage instead of failing.
		a.get(t, "/v1/health", "").wantStatus(t, http.StatusServiceUnavailable)
	})

	t.Run("a panic is a 500 envelope", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) {
			c.Auth.Keys = fakeKeys(func(string) (keys.Principal, error) { panic("boom") })
		})
		r := a.get(t, "/v1/sources", "fapi_whatever")
		r.wantStatus(t, http.StatusInternalServerError)
		if r.env.Error.Code != "internal" || strings.Contains(r.env.Error.Message, "boom") {
			t.Errorf("error %+v", r.env.Error)
		}
		if !strings.Contains(a.logs.String(), "boom") {
			t.Errorf("the panic was not logged")
		}
	})

	t.Run("an Authenticator's unauthorized error gets the contract's message", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) {
			c.Auth.Keys = fakeKeys(func(string) (keys.Principal, error) {
				return keys.Principal{}, apperr.New(apperr.Unauthorized, "key revoked on 2026-01-01")
			})
		})
		r := a.get(t, "/v1/sources", "fapi_whatever")
		r.wantStatus(t, http.StatusUnauthorized)
		if r.env.Error.Message != "API key is missing, invalid or revoked" {
			t.Errorf("message %q", r.env.Error.Message)
		}
	})
}
