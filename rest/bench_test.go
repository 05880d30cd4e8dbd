package rest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/rest/auth"
	"github.com/feedapi/feedapi/rest/envelope"
)

// BenchmarkEndpoints measures the REST layer with the database, in-process
// (no network): go test ./rest -run '^$' -bench Endpoints -benchmem
func BenchmarkEndpoints(b *testing.B) {
	a := newAPI(b, func(c *Config) { c.Auth.RateLimit, c.Auth.IPRateLimit = 1<<30, 1<<30 })
	for _, bc := range []struct{ name, path, enc string }{
		{"posts 50", "/v1/posts", ""},
		{"posts 100 raw gzip", "/v1/posts?limit=100&include_raw=true", "gzip"},
		{"post", "/v1/posts/1", ""},
		{"404", missingPost, ""},
		{"firehose 50 summary", "/v1/firehose?include_summary=true", ""},
		{"briefs", "/v1/briefs", ""},
		{"sources", "/v1/sources", ""},
		{"etf-flows 500", "/v1/etf-flows?limit=500", ""},
		{"health", "/v1/health", ""},
		{"400", "/v1/posts?limit=0", ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, bc.path, nil)
			req.Header.Set("Authorization", "Bearer "+a.free)
			if bc.enc != "" {
				req.Header.Set("Accept-Encoding", bc.enc)
			}
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				a.handler.ServeHTTP(w, req)
				if w.Code >= 500 {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

// The benchmarks below compare the REST path (chi routing, key check, rate
// limit, access log, parameter parsing, the fixed GraphQL document run
// in-process by gqlgen's executor, the envelope, ETag) with a baseline
// written here that serves the same response without GraphQL (see
// directHandler). Run the four
// in interleaved rounds, so that a noisy machine weighs on both sides alike,
// and compare each side under the same names (README, Performance):
//
//	go test -c -o rest.test ./rest
//	for i in $(seq 10); do (cd rest && ../rest.test -test.run '^$' \
//	  -test.bench 'BenchmarkREST|BenchmarkDirect' -test.benchmem) | grep ^Benchmark >> bench.txt; done
//	grep Direct bench.txt | sed s/Direct// > direct.txt; grep REST bench.txt | sed s/REST// > rest.txt
//	go tool benchstat direct=direct.txt REST=rest.txt
//
// Both sides hit the same PostgreSQL database through the same *bun.DB, so
// the SQL round trip is in both figures.

// benchPaths are the requests of BenchmarkRESTPosts/BenchmarkDirectPosts and
// BenchmarkRESTFirehose/BenchmarkDirectFirehose.
const (
	benchPostsPath    = "/v1/posts?limit=50"
	benchFirehosePath = "/v1/firehose?pane=crypto&limit=50"
)

func BenchmarkRESTPosts(b *testing.B)    { benchREST(b, benchPostsPath) }
func BenchmarkDirectPosts(b *testing.B)  { benchDirect(b, benchPostsPath) }
func BenchmarkRESTFirehose(b *testing.B) { benchREST(b, benchFirehosePath) }
func BenchmarkDirectFirehose(b *testing.B) {
	benchDirect(b, benchFirehosePath)
}

// benchNewAPI gives a benchmark its own clone of the seeded template (the
// same data on both sides) and a handler with rate limits out of the way.
func benchNewAPI(b *testing.B) *api {
	return newAPI(b, func(c *Config) { c.Auth.RateLimit, c.Auth.IPRateLimit = 1<<30, 1<<30 })
}

func benchREST(b *testing.B, path string) {
	a := benchNewAPI(b)
	runBench(b, a.handler, a.free, path)
}

func benchDirect(b *testing.B, path string) {
	a := benchNewAPI(b)
	h := &directHandler{keys: a.keys, store: db.NewStore(a.bdb), env: envelope.New(discardLogger())}
	checkSameBody(b, a, h, path)
	runBench(b, h, a.free, path)
}

func runBench(b *testing.B, h http.Handler, key, path string) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// checkSameBody fails the benchmark unless the baseline answers exactly the
// bytes of the REST response (but for meta.request_id) and the same ETag.
func checkSameBody(b *testing.B, a *api, direct http.Handler, path string) {
	b.Helper()
	get := func(h http.Handler) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+a.free)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	rest, base := get(a.handler), get(direct)
	cut := func(body []byte) []byte { return body[:bytes.LastIndex(body, []byte(`,"request_id":`))] }
	if !bytes.Equal(cut(rest.Body.Bytes()), cut(base.Body.Bytes())) {
		b.Fatalf("baseline body differs from REST:\nREST: %.600s\nbase: %.600s", rest.Body, base.Body)
	}
	if r, d := rest.Header().Get("Etag"), base.Header().Get("Etag"); r != d {
		b.Fatalf("baseline ETag %s, REST %s", d, r)
	}
}

// directHandler is the baseline: what a hand-written handler of GET
// /v1/posts and GET /v1/firehose would do for the benchmark's requests. It
// includes: the bearer key check through the same keys.Service (cached, as
// in REST), a request id, parsing limit, cursor, pane and source (no other
// parameter, less validation), the same db.Store call (same SQL,
// same *bun.DB), JSON with encoding/json of per-item structs (time and uid
// formatted per item), the next cursor, the envelope appended by hand, the
// xxh3 ETag and the same response headers. It leaves out what REST adds
// around that: chi routing, the rate limiter and its five headers, the
// request-logging and panic-recovery middleware, and the GraphQL executor.
// Neither side gzips (the requests do not accept it).
type directHandler struct {
	keys  auth.Authenticator
	store *db.Store
	env   *envelope.Writer
}

type directPost struct {
	UID               string   `json:"uid"`
	ID                int64    `json:"id"`
	Source            string   `json:"source"`
	Username          string   `json:"username"`
	Body              string   `json:"body"`
	URL               *string  `json:"url"`
	OriginalSourceURL *string  `json:"original_source_url"`
	CreatedAt         string   `json:"created_at"`
	Coins             []string `json:"coins"`
}

type directMessage struct {
	UID               string   `json:"uid"`
	ID                int64    `json:"id"`
	Pane              db.Pane  `json:"pane"`
	Source            string   `json:"source"`
	SourceName        *string  `json:"source_name"`
	Name              *string  `json:"name"`
	Username          *string  `json:"username"`
	Title             *string  `json:"title"`
	Body              *string  `json:"body"`
	Important         bool     `json:"important"`
	URL               *string  `json:"url"`
	OriginalSourceURL *string  `json:"original_source_url"`
	CreatedAt         string   `json:"created_at"`
	Coins             []string `json:"coins"`
}

const directTimeFormat = "2006-01-02T15:04:05.000Z"

// directCoins shows the coins of a row as the API does: [] when none.
func directCoins(coins []string) []string {
	if coins == nil {
		return []string{}
	}
	return coins
}

func (h *directHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rid := envelope.NewRequestID(time.Now())
	w.Header().Set("X-Request-Id", rid)
	secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	principal, err := h.keys.Authenticate(ctx, secret)
	if err != nil {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	p := db.Page{Limit: 50}
	if s := q.Get("limit"); s != "" {
		if p.Limit, err = strconv.Atoi(s); err != nil || p.Limit < 1 || p.Limit > 100 {
			http.Error(w, "bad limit", http.StatusBadRequest)
			return
		}
	}
	var (
		items any
		last  int64
		more  bool
		conn  = strings.TrimPrefix(r.URL.Path, "/v1/")
	)
	if c := q.Get("cursor"); c != "" {
		if p.After, err = cursor.Decode(conn, c); err != nil {
			http.Error(w, "bad cursor", http.StatusBadRequest)
			return
		}
	}
	switch r.URL.Path {
	case "/v1/posts":
		// A hand-written handler reads only the columns it shows.
		rows, m, err := h.store.ListPosts(ctx, db.PostFilter{Source: q.Get("source"), Omit: []string{"raw"}}, p)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out := make([]directPost, len(rows))
		for i, row := range rows {
			out[i] = directPost{UID: row.UID(), ID: row.ID, Source: row.Source, Username: row.Username, Body: row.Body,
				URL: row.URL, OriginalSourceURL: row.OriginalSourceURL, CreatedAt: row.CreatedAt.UTC().Format(directTimeFormat),
				Coins: directCoins(row.Coins)}
		}
		if len(rows) > 0 {
			last = rows[len(rows)-1].ID
		}
		items, more = out, m
	case "/v1/firehose":
		pane := db.Pane(q.Get("pane"))
		if pane != "" && !pane.Valid() {
			http.Error(w, "bad pane", http.StatusBadRequest)
			return
		}
		rows, m, err := h.store.ListFirehose(ctx, db.FirehoseFilter{Pane: pane, Source: q.Get("source"), Omit: []string{"summary_ai"}}, p)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out := make([]directMessage, len(rows))
		for i, row := range rows {
			out[i] = directMessage{UID: row.UID(), ID: row.ID, Pane: row.Pane, Source: row.Source, SourceName: row.SourceName,
				Name: row.Name, Username: row.Username, Title: row.Title, Body: row.Body, Important: row.Important,
				URL: row.URL, OriginalSourceURL: row.OriginalSourceURL, CreatedAt: row.CreatedAt.UTC().Format(directTimeFormat),
				Coins: directCoins(row.Coins)}
		}
		if len(rows) > 0 {
			last = rows[len(rows)-1].ID
		}
		items, more = out, m
	default:
		http.NotFound(w, r)
		return
	}

	buf := h.env.Buffer()
	defer h.env.Release(buf)
	buf.WriteString(`{"data":`)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(items); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	buf.WriteString(`,"pagination":{"next_cursor":`)
	if more {
		envelope.AppendJSONString(buf, cursor.Encode(conn, last))
		buf.WriteString(`,"has_more":true}`)
	} else {
		buf.WriteString(`null,"has_more":false}`)
	}
	buf.WriteString(`,"meta":{"api_version":"v1","tier":`)
	envelope.AppendJSONString(buf, string(principal.Tier))
	tagged := buf.Len()
	buf.WriteString(`,"request_id":`)
	envelope.AppendJSONString(buf, rid)
	buf.WriteString("}}")

	sum := xxh3.Hash128(buf.Bytes()[:tagged]).Bytes()
	hd := w.Header()
	hd.Set("Content-Type", envelope.ContentTypeJSON)
	hd.Set("Cache-Control", envelope.CacheKeyed)
	hd.Set("Vary", "Accept-Encoding")
	hd.Set("Etag", `"`+hex.EncodeToString(sum[:])+`"`)
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}
