package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph/keys"
)

// The tests of this file run `serve` in the test process, configured by
// its real command line, to reach the wiring of the admin listener and the
// read replica.

// opsLog is a log sink safe for concurrent use.
type opsLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *opsLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *opsLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// records returns the JSON log records with message msg.
func (l *opsLog) records(msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// opsServer is a `serve` running in the test process.
type opsServer struct {
	base  string // the API: http://127.0.0.1:port
	admin string // the admin listener, "" when there is none
	logs  *opsLog
}

// startInProcess parses `feedapi serve` with args (after --database-url
// and --addr), runs it until the test ends, and returns once it listens.
func startInProcess(t *testing.T, dbURL string, args ...string) *opsServer {
	t.Helper()
	var c cli
	parser, err := kong.New(&c, cliVars(),
		kong.Exit(func(int) { t.Fatalf("feedapi exited while parsing %q", args) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse(append([]string{"--database-url", dbURL, "serve", "--addr", "127.0.0.1:0"}, args...)); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	s := &opsServer{logs: &opsLog{}}
	g := &c.globals
	g.stdout, g.stderr = io.Discard, io.Discard
	g.logger = slog.New(slog.NewJSONHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))

	ctx, cancel := context.WithCancel(context.Background())
	addrc, errc := make(chan string, 1), make(chan error, 1)
	go func() { errc <- c.Serve.serve(ctx, g, func(addr string) { addrc <- addr }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case addr := <-addrc:
		s.base = "http://" + addr
	case err := <-errc:
		t.Fatalf("serve ended before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not listen within 30s")
	}
	if recs := s.logs.records("serving admin"); len(recs) == 1 {
		s.admin = "http://" + recs[0]["addr"].(string)
	}
	return s
}

// opsGet sends GET url with the key (none when "") and returns the status,
// Content-Type and body.
func opsGet(t *testing.T, url, key string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

// scrape reads the admin listener's /metrics.
func scrape(t *testing.T, s *opsServer) map[string]*dto.MetricFamily {
	t.Helper()
	status, _, body := opsGet(t, s.admin+"/metrics", "")
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return mfs
}

// hasSeries reports whether the family has a series with all the labels.
func hasSeries(mf *dto.MetricFamily, labels map[string]string) bool {
	for _, m := range mf.GetMetric() {
		n := 0
		for _, lp := range m.GetLabel() {
			if v, ok := labels[lp.GetName()]; ok && v == lp.GetValue() {
				n++
			}
		}
		if n == len(labels) {
			return true
		}
	}
	return false
}

func createKey(t *testing.T, bdb *bun.DB, tier db.Tier) string {
	t.Helper()
	secret, _, err := keys.NewService(bdb, keys.Options{}).Create(context.Background(), tier, "ops test")
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

func TestAdminListener(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)
	free := createKey(t, bdb, db.TierFree)
	s := startInProcess(t, dbURL, "--admin-addr", "127.0.0.1:0")
	if s.admin == "" {
		t.Fatalf("no \"serving admin\" log line:\n%s", s.logs)
	}
	if recs := s.logs.records("serving"); len(recs) != 1 || recs[0]["addr"] == strings.TrimPrefix(s.admin, "http://") {
		t.Errorf("want one \"serving\" line, of the API's address: %v", recs)
	}
	if recs := s.logs.records(adminWarning); len(recs) != 0 {
		t.Errorf("a warning for an admin listener on loopback: %v", recs)
	}
	for _, path := range []string{"/v1/health", "/v1/posts?limit=1", "/v1/nope"} {
		opsGet(t, s.base+path, free)
	}

	t.Run("listeners", func(t *testing.T) {
		for _, tc := range []struct {
			name, url  string
			status     int
			contains   string
			jsonNotFnd bool // the API's 404 envelope
		}{
			{"metrics on admin", s.admin + "/metrics", 200, "feedapi_http_requests_total", false},
			{"pprof index on admin", s.admin + "/debug/pprof/", 200, "goroutine", false},
			{"goroutine profile on admin", s.admin + "/debug/pprof/goroutine?debug=1", 200, "goroutine profile", false},
			{"CPU profile on admin", s.admin + "/debug/pprof/profile?seconds=1", 200, "", false},
			{"no command line on admin", s.admin + "/debug/pprof/cmdline", 404, "", false},
			{"no API on admin", s.admin + "/v1/health", 404, "", false},
			{"no metrics on the API", s.base + "/metrics", 404, "not_found", true},
			{"no pprof on the API", s.base + "/debug/pprof/", 404, "not_found", true},
			{"no CPU profile on the API", s.base + "/debug/pprof/profile?seconds=1", 404, "not_found", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				status, ctype, body := opsGet(t, tc.url, "")
				if status != tc.status {
					t.Fatalf("GET %s: %d, want %d: %.300s", tc.url, status, tc.status, body)
				}
				if !bytes.Contains(body, []byte(tc.contains)) {
					t.Errorf("GET %s: body lacks %q: %.300s", tc.url, tc.contains, body)
				}
				if tc.jsonNotFnd && ctype != "application/json; charset=utf-8" {
					t.Errorf("GET %s: Content-Type %q, want the API's JSON", tc.url, ctype)
				}
			})
		}
	})

	t.Run("metric names and labels", func(t *testing.T) {
		mfs := scrape(t, s)
		for _, tc := range []struct {
			name   string
			labels map[string]string
		}{
			{"feedapi_http_requests_total", map[string]string{"method": "GET", "route": "/v1/health", "status": "200"}},
			{"feedapi_http_requests_total", map[string]string{"method": "GET", "route": "/v1/posts", "status": "200"}},
			{"feedapi_http_requests_total", map[string]string{"method": "GET", "route": "unmatched", "status": "404"}},
			{"feedapi_http_request_duration_seconds", map[string]string{"method": "GET", "route": "/v1/posts"}},
			{"feedapi_rate_limit_refusals_total", map[string]string{"scope": "key"}},
			{"feedapi_rate_limit_refusals_total", map[string]string{"scope": "ip"}},
			{"feedapi_graphql_complexity", nil},
			{"feedapi_rate_limit_redis_fallback", nil},
			{"feedapi_build_info", map[string]string{"version": version()}},
			{"go_sql_open_connections", map[string]string{"db_name": "primary"}},
			{"go_sql_wait_count_total", map[string]string{"db_name": "primary"}},
			{"go_goroutines", nil},
			{"process_resident_memory_bytes", nil},
		} {
			mf, ok := mfs[tc.name]
			if !ok {
				t.Errorf("no metric %s", tc.name)
				continue
			}
			if !hasSeries(mf, tc.labels) {
				t.Errorf("%s: no series with %v", tc.name, tc.labels)
			}
		}
		if mf := mfs["go_sql_open_connections"]; hasSeries(mf, map[string]string{"db_name": "replica"}) {
			t.Errorf("a replica pool is reported without a replica")
		}
	})
}

// adminWarning is the message of the warning for an admin listener that
// is not on loopback.
const adminWarning = "admin listener is not on a loopback address: /metrics and /debug/pprof/ answer, without authentication, whoever can reach it; bind it to 127.0.0.1, or let only Prometheus in with a network policy"

// TestAdminListenerOffLoopbackWarns: --admin-addr on every interface (or
// any address but loopback) serves, and says at start that the profiles
// are open to whoever reaches it.
func TestAdminListenerOffLoopbackWarns(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewWithURL(t)
	s := startInProcess(t, dbURL, "--admin-addr", "0.0.0.0:0")
	recs := s.logs.records(adminWarning)
	if len(recs) != 1 || recs[0]["level"] != "WARN" || !strings.HasPrefix(recs[0]["addr"].(string), "0.0.0.0:") && !strings.HasPrefix(recs[0]["addr"].(string), "[::]:") {
		t.Errorf("want one warning naming the address, got %v\n%s", recs, s.logs)
	}
}

func TestNoAdminListenerByDefault(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewWithURL(t)
	s := startInProcess(t, dbURL)
	if s.admin != "" {
		t.Errorf("an admin listener at %s without --admin-addr", s.admin)
	}
	if status, _, _ := opsGet(t, s.base+"/metrics", ""); status != http.StatusNotFound {
		t.Errorf("GET /metrics on the API: %d, want 404", status)
	}
}

// healthOf returns /v1/health's status and data.
func healthOf(t *testing.T, s *opsServer) (int, map[string]string) {
	t.Helper()
	status, _, body := opsGet(t, s.base+"/v1/health", "")
	var env struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("health: %v: %s", err, body)
	}
	return status, env.Data
}

func TestReadReplica(t *testing.T) {
	t.Parallel()
	primary, primaryURL := dbtest.NewWithURL(t)
	replica, replicaURL := dbtest.NewWithURL(t)
	ctx := context.Background()
	// Both are clones of one template; the newest post tells them apart.
	var id int64
	if err := primary.NewRaw("SELECT max(id) FROM posts").Scan(ctx, &id); err != nil {
		t.Fatal(err)
	}
	for who, bdb := range map[string]*bun.DB{"primary": primary, "replica": replica} {
		if _, err := bdb.NewRaw("UPDATE posts SET username = ? WHERE id = ?", "from-the-"+who, id).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Keys live on the primary only: a key found proves keys are read there.
	free := createKey(t, primary, db.TierFree)
	internal := createKey(t, primary, db.TierInternal)
	s := startInProcess(t, primaryURL, "--database-replica-url", replicaURL, "--admin-addr", "127.0.0.1:0")

	idStr := strconv.FormatInt(id, 10)
	for _, tc := range []struct {
		name, path, key string
		username        func([]byte) string
	}{
		{"item (bun select)", "/v1/posts/" + idStr, free, func(b []byte) string {
			var env struct{ Data struct{ Username string } }
			_ = json.Unmarshal(b, &env)
			return env.Data.Username
		}},
		{"list (raw SQL)", "/v1/posts?limit=1", free, func(b []byte) string {
			var env struct{ Data []struct{ Username string } }
			_ = json.Unmarshal(b, &env)
			if len(env.Data) == 0 {
				return ""
			}
			return env.Data[0].Username
		}},
		{"GraphQL", "/graphql?query=" + url.QueryEscape("{ post(id: "+idStr+") { username } }"), internal, func(b []byte) string {
			var r struct {
				Data struct{ Post struct{ Username string } }
			}
			_ = json.Unmarshal(b, &r)
			return r.Data.Post.Username
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, _, body := opsGet(t, s.base+tc.path, tc.key)
			if status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", tc.path, status, body)
			}
			if got, want := tc.username(body), "from-the-replica"; got != want {
				t.Errorf("username = %q, want %q: %s", got, want, body)
			}
		})
	}

	t.Run("health and pool metrics cover both", func(t *testing.T) {
		t.Parallel()
		if status, h := healthOf(t, s); status != http.StatusOK || h["database"] != "ok" {
			t.Errorf("health: %d %v, want 200 and database ok", status, h)
		}
		mf := scrape(t, s)["go_sql_open_connections"]
		for _, name := range []string{"primary", "replica"} {
			if !hasSeries(mf, map[string]string{"db_name": name}) {
				t.Errorf("go_sql_open_connections: no series of db_name %q", name)
			}
		}
	})
}

func TestHealthPingsTheReplica(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewWithURL(t)
	s := startInProcess(t, dbURL, "--database-replica-url", "postgres://postgres@127.0.0.1:1/feedapi?sslmode=disable")
	status, h := healthOf(t, s)
	if status != http.StatusServiceUnavailable || h["status"] != "degraded" || h["database"] != "unreachable" {
		t.Errorf("health with an unreachable replica: %d %v, want 503, degraded, database unreachable", status, h)
	}
	if len(s.logs.records("database unreachable at start; serving degraded until it answers")) != 1 {
		t.Errorf("the unreachable replica was not reported at start")
	}
}

func TestTrustedProxy(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewWithURL(t)
	for _, tc := range []struct {
		name  string
		args  []string
		forIP string
		want  string
	}{
		{"X-Forwarded-For ignored by default", nil, "203.0.113.9", "127.0.0.1"},
		{"believed from a trusted proxy", []string{"--trusted-proxy", "10.0.0.0/8,127.0.0.1/32"}, "203.0.113.9", "203.0.113.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startInProcess(t, dbURL, tc.args...)
			req, err := http.NewRequest(http.MethodGet, s.base+"/v1/health", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Forwarded-For", tc.forIP)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			id := resp.Header.Get("X-Request-Id")
			for _, rec := range s.logs.records("request") {
				if rec["request_id"] == id {
					if got := rec["client_ip"]; got != tc.want {
						t.Errorf("client_ip = %v, want %s", got, tc.want)
					}
					return
				}
			}
			t.Errorf("no access log line of request %s:\n%s", id, s.logs)
		})
	}
}
