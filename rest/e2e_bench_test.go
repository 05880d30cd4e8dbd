package rest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/rest/envelope"
)

// BenchmarkEndToEnd serves requests over loopback HTTP, through the same
// http.Server settings as feedapi serve (NewServer), from concurrent
// keep-alive clients, to two handlers in one run:
//
//   - REST: the real handler with every middleware on: request deadline,
//     request id, access log (JSON at info level, written to io.Discard),
//     Prometheus metrics, key check, tier, rate limit (a limit too high to
//     refuse), parameter parsing, the GraphQL executor, the envelope and
//     the ETag;
//   - direct: the hand-written baseline of bench_test.go (directHandler),
//     which answers the same bytes (checked first) without any of it but
//     the key check, the request id and the ETag.
//
// Each reports, besides ns/op (wall time per request at this concurrency,
// the inverse of throughput), cpu-ns/op: the process's user+system CPU per
// request, client and server alike (the client's share is the same on both
// sides). Compare the two sides within one run:
//
//	go test ./rest -run '^$' -bench EndToEnd -benchmem -benchtime 5s
func BenchmarkEndToEnd(b *testing.B) {
	a := benchNewAPI(b)
	full := everyMiddleware(b, a)
	direct := &directHandler{keys: a.keys, store: db.NewStore(a.bdb), env: envelope.New(discardLogger())}
	deep := benchDeepPath(b, a)
	for _, bc := range []struct{ name, path string }{
		{"posts first page", benchPostsPath},
		{"posts deep page", deep},
		{"firehose first page", benchFirehosePath},
	} {
		checkSameBody(b, full, direct, bc.path)
		for _, side := range []struct {
			name string
			h    http.Handler
		}{{"REST", full.handler}, {"direct", direct}} {
			b.Run(bc.name+"/"+side.name, func(b *testing.B) {
				benchHTTP(b, side.h, full.free, bc.path, nil, http.StatusOK)
			})
		}
	}
}

// benchDeepPath returns the posts request of a page in the middle of the
// seeded posts, by its cursor.
func benchDeepPath(b *testing.B, a *api) string {
	var ids []int64
	if err := a.bdb.NewSelect().Table("posts").Column("id").Order("id DESC").Limit(1).Offset(500).
		Scan(context.Background(), &ids); err != nil || len(ids) != 1 {
		b.Fatalf("deep id: %v", err)
	}
	return benchPostsPath + "&cursor=" + cursor.Encode("posts", ids[0])
}

// benchHTTP serves h on a loopback server and sends it path with key from
// concurrent keep-alive clients (8 per GOMAXPROCS), each response read
// to its end and checked for status want. header, if set, is added to
// every request.
func benchHTTP(b *testing.B, h http.Handler, key, path string, header http.Header, want int) {
	benchHTTPBody(b, h, key, http.MethodGet, path, "", header, want)
}

// benchHTTPBody is benchHTTP for a request of any method, with body (if
// not empty) sent as application/json.
func benchHTTPBody(b *testing.B, h http.Handler, key, method, path, body string, header http.Header, want int) {
	srv := httptest.NewUnstartedServer(h)
	srv.Config = NewServer("", h, 0)
	srv.Start()
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	url := srv.URL + path
	b.SetParallelism(8)
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req, _ := http.NewRequest(method, url, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
			req.ContentLength = int64(len(body))
		}
		for k, v := range header {
			req.Header[k] = v
		}
		for pb.Next() {
			if body != "" {
				req.Body, _ = req.GetBody()
			}
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if res.StatusCode != want {
				b.Errorf("status %d, want %d", res.StatusCode, want)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPolling compares, end to end over loopback HTTP with every
// middleware on, a poller's first page of posts answered from the
// database (cache off), from the PollCache, and as a 304 to a matching
// If-None-Match from the cache, in one run:
//
//	go test ./rest -run '^$' -bench Polling -benchmem -benchtime 5s
func BenchmarkPolling(b *testing.B) {
	a := benchNewAPI(b)
	variant := func(cache bool) *api {
		return a.variant(b, func(c *Config) {
			c.Logger = slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
			m, err := NewMetrics(prometheus.NewRegistry())
			if err != nil {
				b.Fatal(err)
			}
			c.Metrics, c.RequestTimeout = m, 1500*time.Millisecond
			// A TTL longer than the benchmark: what is measured is a hit.
			c.PollCache, c.DisablePollCache = NewPollCache(time.Hour), !cache
		})
	}
	fromDB, cached := variant(false), variant(true)
	tag := cached.get(b, benchPostsPath, a.free).Header.Get("Etag")
	b.Run("database", func(b *testing.B) {
		benchHTTP(b, fromDB.handler, a.free, benchPostsPath, nil, http.StatusOK)
	})
	b.Run("cached", func(b *testing.B) {
		benchHTTP(b, cached.handler, a.free, benchPostsPath, nil, http.StatusOK)
	})
	b.Run("304", func(b *testing.B) {
		benchHTTP(b, cached.handler, a.free, benchPostsPath, http.Header{"If-None-Match": {tag}}, http.StatusNotModified)
	})
}

// benchConnectionQuery is the dashboards' Relay connection query of the
// peers' comparison (../shared/peers/F_gql_first.json): the fields of
// /v1/posts?limit=50 but the raw ones, edges with cursors and pageInfo.
const benchConnectionQuery = `{"query":"{ posts(first: 50) { edges { cursor node { id source username body url originalSourceUrl createdAt } } pageInfo { hasNextPage endCursor } } }"}`

// BenchmarkGraphQLConnection serves the same first page of 50 posts, end
// to end over loopback HTTP with every middleware on (as BenchmarkEndToEnd),
// as GET /v1/posts?limit=50 and as the Relay connection query POSTed to
// /graphql, in one run; cpu-ns/op is the process's CPU per request, client
// included:
//
//	go test ./rest -run '^$' -bench GraphQLConnection -benchmem -count 10
func BenchmarkGraphQLConnection(b *testing.B) {
	a := benchNewAPI(b)
	full := everyMiddleware(b, a)
	b.Run("v1", func(b *testing.B) {
		benchHTTP(b, full.handler, full.intern, benchPostsPath, nil, http.StatusOK)
	})
	b.Run("graphql", func(b *testing.B) {
		benchHTTPBody(b, full.handler, full.intern, http.MethodPost, "/graphql", benchConnectionQuery, nil, http.StatusOK)
	})
}

// everyMiddleware is a's handler as served in production: access log at
// info, metrics, the production request timeout.
func everyMiddleware(b *testing.B, a *api) *api {
	return a.variant(b, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
		m, err := NewMetrics(prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		c.Metrics = m
		c.RequestTimeout = 1500 * time.Millisecond
	})
}
