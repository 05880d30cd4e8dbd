package rest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/rest/metrics"
	"github.com/feedapi/feedapi/rest/ratelimit"
)

// withMetrics gives the handler metrics over a registry of the test's own.
func withMetrics(t testing.TB, reg *prometheus.Registry) func(*Config) {
	t.Helper()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("NewMetrics: %v", err)
	}
	return func(c *Config) { c.Metrics = m }
}

// withJSONLog sends the handler's log, as JSON lines at info level, to buf.
func withJSONLog(buf *lockedBuffer) func(*Config) {
	return func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
}

// accessLines returns the access log lines of buf by request id.
func accessLines(t testing.TB, buf *lockedBuffer) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, sc.Text())
		}
		if rec["msg"] != "request" {
			continue
		}
		id, _ := rec["request_id"].(string)
		if _, dup := out[id]; dup {
			t.Errorf("two access log lines for request %q", id)
		}
		out[id] = rec
	}
	return out
}

// keyID returns the id of the key secret.
func (a *api) keyID(t testing.TB, secret string) int64 {
	t.Helper()
	p, err := a.keys.Authenticate(context.Background(), secret)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return p.KeyID
}

func TestAccessLog(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	a := newAPI(t, withJSONLog(logs))
	postID := num(t, a.get(t, "/v1/posts?limit=1", a.free).items(t)[0]["id"])
	freeID := a.keyID(t, a.free)

	for _, tc := range []struct {
		name, method, path, key string
		status                  int
		route                   string
		keyed                   bool
	}{
		{"keyed item", http.MethodGet, "/v1/posts/" + strconv.FormatInt(postID, 10), a.free, 200, "/v1/posts/{id}", true},
		{"keyed HEAD", http.MethodHead, "/v1/sources", a.free, 200, "/v1/sources", true},
		{"health without a key", http.MethodGet, "/v1/health", "", 200, "/v1/health", false},
		{"bad parameter with the key in the query", http.MethodGet, "/v1/posts?cursor=" + a.free, a.free, 400, "/v1/posts", true},
		{"invalid key", http.MethodGet, "/v1/posts", "fapi_not_a_key", 401, "/v1/posts", false},
		{"unknown path with a valid key", http.MethodGet, "/v1/nope/" + a.free, a.free, 404, metrics.RouteUnmatched, true},
		{"method not allowed", http.MethodDelete, "/v1/posts", "", 405, metrics.RouteUnmatched, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := a.do(t, tc.method, tc.path, tc.key, nil)
			r.wantStatus(t, tc.status)
			id := r.Header.Get("X-Request-Id")
			line, ok := accessLines(t, logs)[id]
			if !ok {
				t.Fatalf("no access log line with request_id %q:\n%s", id, logs)
			}
			for f, want := range map[string]any{
				"level":     "INFO",
				"method":    tc.method,
				"route":     tc.route,
				"status":    float64(tc.status),
				"bytes":     float64(len(r.raw)),
				"client_ip": "127.0.0.1",
			} {
				if got := line[f]; got != want {
					t.Errorf("%s = %#v, want %#v", f, got, want)
				}
			}
			if d, ok := line["duration_ms"].(float64); !ok || d < 0 {
				t.Errorf("duration_ms = %#v, want a non-negative number", line["duration_ms"])
			}
			wantKeyID, wantTier := any(nil), any(nil)
			if tc.keyed {
				wantKeyID, wantTier = float64(freeID), "free"
			}
			if got, ok := line["key_id"]; !ok || got != wantKeyID {
				t.Errorf("key_id = %#v (present %v), want %#v", got, ok, wantKeyID)
			}
			if got, ok := line["tier"]; !ok || got != wantTier {
				t.Errorf("tier = %#v (present %v), want %#v", got, ok, wantTier)
			}
			for _, f := range []string{"path", "query", "url", "authorization"} {
				if _, ok := line[f]; ok {
					t.Errorf("the access log line has %s", f)
				}
			}
		})
	}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), a.free) {
			t.Errorf("the key appears in the log:\n%s", logs)
		}
	})
}

// families gathers reg's metrics by name.
func families(t testing.TB, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// metric returns the series of family name with exactly the labels, or nil.
func metric(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	mf := families(t, reg)[name]
	if mf == nil {
		t.Fatalf("no metric %s", name)
	}
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, lp := range m.GetLabel() {
			if labels[lp.GetName()] != lp.GetValue() {
				match = false
			}
		}
		if match {
			return m
		}
	}
	return nil
}

// counter returns the value of a counter series (0 when absent).
func counter(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	if m := metric(t, reg, name, labels); m != nil {
		return m.GetCounter().GetValue()
	}
	return 0
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	base := newAPI(t)

	t.Run("requests and latency by route pattern and status", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		a := base.variant(t, withMetrics(t, reg))
		postID := num(t, a.get(t, "/v1/posts?limit=1", a.free).items(t)[0]["id"])
		for range 3 {
			a.get(t, "/v1/posts/"+strconv.FormatInt(postID, 10), a.free).wantStatus(t, 200)
		}
		a.get(t, "/v1/posts/999999999", a.free).wantStatus(t, 404)
		a.get(t, "/v1/no/such/path/1", "").wantStatus(t, 404)
		a.get(t, "/v1/no/such/path/2", "").wantStatus(t, 404)
		a.do(t, "PURGE", "/v1/posts", "", nil).wantStatus(t, 405)

		for _, tc := range []struct {
			method, route, status string
			want                  float64
		}{
			{"GET", "/v1/posts", "200", 1},
			{"GET", "/v1/posts/{id}", "200", 3},
			{"GET", "/v1/posts/{id}", "404", 1},
			{"GET", metrics.RouteUnmatched, "404", 2},
			{"OTHER", metrics.RouteUnmatched, "405", 1},
		} {
			labels := map[string]string{"method": tc.method, "route": tc.route, "status": tc.status}
			if got := counter(t, reg, "feedapi_http_requests_total", labels); got != tc.want {
				t.Errorf("feedapi_http_requests_total%v = %v, want %v", labels, got, tc.want)
			}
		}
		h := metric(t, reg, "feedapi_http_request_duration_seconds", map[string]string{"method": "GET", "route": "/v1/posts/{id}"})
		if h == nil || h.GetHistogram().GetSampleCount() != 4 {
			t.Errorf("feedapi_http_request_duration_seconds{GET,/v1/posts/{id}}: %v, want 4 samples", h)
		}
		// The raw paths of unknown routes never become series.
		for _, m := range families(t, reg)["feedapi_http_requests_total"].GetMetric() {
			for _, lp := range m.GetLabel() {
				if strings.Contains(lp.GetValue(), "such") {
					t.Errorf("a raw path became a label: %v", m.GetLabel())
				}
			}
		}
	})

	t.Run("rate-limit refusals by scope", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		a := base.variant(t, withMetrics(t, reg), func(c *Config) { c.Auth.RateLimit = 1; c.Auth.IPRateLimit = 1 })
		for _, s := range []string{metrics.ScopeKey, metrics.ScopeIP} {
			if m := metric(t, reg, "feedapi_rate_limit_refusals_total", map[string]string{"scope": s}); m == nil {
				t.Errorf("feedapi_rate_limit_refusals_total{scope=%q} absent before any refusal", s)
			}
		}
		a.get(t, "/v1/sources", a.free).wantStatus(t, 200)
		wantRateLimited(t, a.get(t, "/v1/sources", a.free))
		wantRateLimited(t, a.get(t, "/v1/sources", a.free))
		a.get(t, "/v1/health", "").wantStatus(t, 200)
		wantRateLimited(t, a.get(t, "/v1/health", a.pro)) // health never looks at keys
		for s, want := range map[string]float64{metrics.ScopeKey: 2, metrics.ScopeIP: 1} {
			if got := counter(t, reg, "feedapi_rate_limit_refusals_total", map[string]string{"scope": s}); got != want {
				t.Errorf("feedapi_rate_limit_refusals_total{scope=%q} = %v, want %v", s, got, want)
			}
		}
	})

	t.Run("GraphQL complexity per operation, refused ones included", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		a := base.variant(t, withMetrics(t, reg), func(c *Config) { c.Graph.Limits.MaxComplexity = 50 })
		post := func(query string) *resp {
			body, _ := json.Marshal(map[string]string{"query": query})
			return a.do(t, http.MethodPost, "/graphql", a.intern, strings.NewReader(string(body)), "Content-Type", "application/json")
		}
		post(`{ posts(first: 2) { nodes { id } } }`).wantStatus(t, 200)
		if r := post(`{ posts(first: 100) { nodes { id source } } }`); r.StatusCode == 200 && !strings.Contains(string(r.plain), "complexity") {
			t.Fatalf("an operation over the budget was not refused: %s", r.plain)
		}
		post(`{ nope }`) // invalid: no complexity is computed
		h := metric(t, reg, "feedapi_graphql_complexity", map[string]string{}).GetHistogram()
		if got := h.GetSampleCount(); got != 2 {
			t.Errorf("feedapi_graphql_complexity count = %d, want 2", got)
		}
		if got := h.GetSampleSum(); got <= 50 {
			t.Errorf("feedapi_graphql_complexity sum = %v, want over 50 (the refused operation's)", got)
		}
	})

	t.Run("two handlers cannot register on one registry", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		if _, err := NewMetrics(reg); err != nil {
			t.Fatal(err)
		}
		if _, err := NewMetrics(reg); err == nil {
			t.Errorf("NewMetrics registered twice on one registry")
		}
	})
}

func TestAdminPathsAreNotPublic(t *testing.T) {
	t.Parallel()
	a := newAPI(t, withMetrics(t, prometheus.NewRegistry()))
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/profile?seconds=1", "/debug/pprof/heap", "/debug/vars"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			r := a.get(t, path, a.intern)
			r.wantStatus(t, http.StatusNotFound)
			if r.env.Error.Code != "not_found" {
				t.Errorf("code %q, want not_found", r.env.Error.Code)
			}
		})
	}
}

// tcpProxy forwards connections to a target until it is cut; while cut it
// closes every connection, open or new.
type tcpProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]struct{}
}

func newTCPProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.handle(c)
		}
	}()
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

// setCut cuts (closing every connection) or restores the proxy.
func (p *tcpProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func (p *tcpProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *tcpProxy) handle(client net.Conn) {
	if !p.track(client) {
		client.Close()
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(server) {
		client.Close()
		if server != nil {
			server.Close()
		}
		return
	}
	go func() { _, _ = io.Copy(server, client); server.Close() }()
	_, _ = io.Copy(client, server)
	client.Close()
}

// fastRedis is a client with the timeouts rest.Config.Redis asks for.
func fastRedis(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: addr, DialTimeout: 200 * time.Millisecond,
		ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond, MaxRetries: -1,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// healthRateLimits returns /v1/health's rate_limits.
func healthRateLimits(t testing.TB, a *api) string {
	t.Helper()
	r := a.get(t, "/v1/health", "")
	r.wantStatus(t, http.StatusOK)
	return str(t, r.object(t)["rate_limits"])
}

// gauge returns the value of an unlabelled gauge.
func gauge(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	return metric(t, reg, name, map[string]string{}).GetGauge().GetValue()
}

func TestHealthReportsRateLimitStore(t *testing.T) {
	t.Parallel()
	base := newAPI(t)

	t.Run("local without Redis", func(t *testing.T) {
		t.Parallel()
		if got := healthRateLimits(t, base); got != ratelimit.StateLocal {
			t.Errorf("rate_limits = %q, want %q", got, ratelimit.StateLocal)
		}
	})

	t.Run("local_fallback while Redis does not answer, logged and in the gauge", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		a := base.variant(t, withMetrics(t, reg), func(c *Config) {
			c.Redis = fastRedis(t, "127.0.0.1:1")
			c.RedisPrefix = randomPrefix(t)
		})
		if got := healthRateLimits(t, a); got != ratelimit.StateFallback {
			t.Errorf("rate_limits = %q, want %q", got, ratelimit.StateFallback)
		}
		if got := gauge(t, reg, "feedapi_rate_limit_redis_fallback"); got != 1 {
			t.Errorf("feedapi_rate_limit_redis_fallback = %v, want 1", got)
		}
		if !strings.Contains(a.logs.String(), "local_fallback=true") {
			t.Errorf("the switch to local counters was not logged:\n%s", a.logs)
		}
	})

	t.Run("shared, local_fallback while cut, shared again once restored", func(t *testing.T) {
		t.Parallel()
		rc := redisClient(t)
		proxy := newTCPProxy(t, rc.Options().Addr)
		reg := prometheus.NewRegistry()
		a := base.variant(t, withMetrics(t, reg), func(c *Config) {
			c.Redis = fastRedis(t, proxy.addr())
			c.RedisPrefix = randomPrefix(t)
		})
		if got := healthRateLimits(t, a); got != ratelimit.StateShared {
			t.Fatalf("rate_limits = %q, want %q", got, ratelimit.StateShared)
		}
		if got := gauge(t, reg, "feedapi_rate_limit_redis_fallback"); got != 0 {
			t.Errorf("feedapi_rate_limit_redis_fallback = %v, want 0", got)
		}

		proxy.setCut(true)
		if got := healthRateLimits(t, a); got != ratelimit.StateFallback {
			t.Errorf("cut: rate_limits = %q, want %q", got, ratelimit.StateFallback)
		}
		if got := gauge(t, reg, "feedapi_rate_limit_redis_fallback"); got != 1 {
			t.Errorf("cut: feedapi_rate_limit_redis_fallback = %v, want 1", got)
		}

		proxy.setCut(false)
		deadline := time.Now().Add(5 * time.Second)
		got := ""
		for time.Now().Before(deadline) {
			if got = healthRateLimits(t, a); got == ratelimit.StateShared {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got != ratelimit.StateShared {
			t.Errorf("restored: rate_limits = %q after 5s, want %q", got, ratelimit.StateShared)
		}
		if got := gauge(t, reg, "feedapi_rate_limit_redis_fallback"); got != 0 {
			t.Errorf("restored: feedapi_rate_limit_redis_fallback = %v, want 0", got)
		}
		for _, want := range []string{"local_fallback=true", "local_fallback=false"} {
			if !strings.Contains(a.logs.String(), want) {
				t.Errorf("%s not logged:\n%s", want, a.logs)
			}
		}
	})
}

// blockingHook holds every statement of the store until its request's
// context ends, after telling the test that a request is waiting.
type blockingHook struct{ waiting chan<- struct{} }

func (h blockingHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	select {
	case h.waiting <- struct{}{}:
	default:
	}
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second): // a test that went wrong ends anyway
	}
	return ctx
}
func (blockingHook) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestClientThatLeavesIsNoServerError closes the client's connection while
// its request waits on the database: the abandoned work is neither an
// ERROR in the log nor a 500 in the metrics.
func TestClientThatLeavesIsNoServerError(t *testing.T) {
	t.Parallel()
	base := newAPI(t)
	tests := []struct {
		name, method, path, body, route string
		wantStatus                      string
	}{
		{"REST", http.MethodGet, "/v1/posts?limit=2", "", "/v1/posts", "499"},
		{"GraphQL", http.MethodPost, "/graphql", `{"query":"{ a: posts(first: 2) { nodes { id } } b: firehose(first: 2) { nodes { id } } }"}`, "/graphql", "200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewRegistry()
			waiting := make(chan struct{}, 1)
			a := base.variant(t, withMetrics(t, reg), func(c *Config) {
				c.Graph.Store = db.NewStore(base.bdb.WithQueryHook(blockingHook{waiting}))
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, tt.method, a.srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+a.intern)
			req.Header.Set("Content-Type", "application/json")
			done := make(chan error, 1)
			go func() {
				resp, err := client.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			<-waiting
			cancel()
			if err := <-done; err == nil {
				t.Fatal("the request succeeded; want it abandoned")
			}
			// The server finishes the abandoned request on its own time.
			for end := time.Now().Add(30 * time.Second); !strings.Contains(a.logs.String(), `msg=request`) && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
			}
			logs := a.logs.String()
			if !strings.Contains(logs, "msg=request") {
				t.Fatalf("no access log line:\n%s", logs)
			}
			if strings.Contains(logs, "level=ERROR") {
				t.Errorf("logged an error for a client that left:\n%s", logs)
			}
			if n := counter(t, reg, "feedapi_http_requests_total", map[string]string{"method": tt.method, "route": tt.route, "status": "500"}); n != 0 {
				t.Errorf("counted %v requests as 500", n)
			}
			if n := counter(t, reg, "feedapi_http_requests_total", map[string]string{"method": tt.method, "route": tt.route, "status": tt.wantStatus}); n != 1 {
				t.Errorf("requests with status %s: %v, want 1\n%s", tt.wantStatus, n, logs)
			}
		})
	}
}

// TestGraphQLInternalErrorNamesTheRequest: the one log line of a /graphql
// operation's internal errors carries the request id the client saw.
func TestGraphQLInternalErrorNamesTheRequest(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	if _, err := a.bdb.ExecContext(context.Background(), "DROP TABLE firehose_messages"); err != nil {
		t.Fatal(err)
	}
	r := a.do(t, http.MethodPost, "/graphql", a.intern,
		strings.NewReader(`{"query":"query Two { a: firehose(first: 1) { nodes { id } } b: firehose(first: 2) { nodes { id } } }"}`),
		"Content-Type", "application/json")
	id := r.Header.Get("X-Request-Id")
	var lines []string
	for _, l := range strings.Split(a.logs.String(), "\n") {
		if strings.Contains(l, "level=ERROR") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "request_id="+id) || !strings.Contains(lines[0], "errors=2") {
		t.Errorf("error lines %q, want one with request_id=%s and errors=2", lines, id)
	}
}
