package rest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/auth"
	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/landing"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// api is one test's database, REST handler, server and keys.
type api struct {
	t       testing.TB
	bdb     *bun.DB
	cfg     Config
	doc     []byte // the OpenAPI document the handler serves
	handler http.Handler
	srv     *httptest.Server
	keys    *keys.Service
	free    string // a key of each tier
	pro     string
	intern  string
	logs    *lockedBuffer
}

// newAPI gives the test its own database (a clone of the seeded template)
// and the REST handler over it, served on a local port, with ETF flows on
// and rate limits (per key, and of failed authentications per client IP)
// high enough not to interfere; opts adjust the Config.
func newAPI(t testing.TB, opts ...func(*Config)) *api {
	t.Helper()
	bdb := dbtest.New(t)
	base := &api{t: t, bdb: bdb, keys: keys.NewService(bdb, keys.Options{})}
	base.cfg = Config{
		Graph:        graph.Config{Store: db.NewStore(bdb)},
		ETFEnabled:   true,
		Version:      "test-1",
		ServerURL:    "https://api.example.test",
		AltServerURL: "https://alt.example.test",
		Auth: auth.Config{
			Keys:      base.keys,
			RateLimit: 100000,
			// Tests of 401s send many bad keys from one address.
			AuthFailureLimit: 100000,
			// Tests that spend the budget answer their refusals at once;
			// the tests of the delay (rest/auth) set it.
			RefusalDelay: -1,
		},
		// Tests write fixtures and list them at once; the tests of the
		// cache (poll_test.go) turn it on.
		DisablePollCache: true,
	}
	base.free = base.newKey(db.TierFree)
	base.pro = base.newKey(db.TierPro)
	base.intern = base.newKey(db.TierInternal)
	return base.variant(t, opts...)
}

// variant returns an API over the same database and keys with a handler of
// its own (and so rate-limit counters of its own), its Config being a's
// adjusted by opts. Database clones are the slow part of these tests, so
// tests that only need another configuration share one.
func (a *api) variant(t testing.TB, opts ...func(*Config)) *api {
	t.Helper()
	v := *a
	v.t, v.logs = t, &lockedBuffer{}
	v.cfg.Logger = slog.New(slog.NewTextHandler(v.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for _, o := range opts {
		o(&v.cfg)
	}
	h, err := New(v.cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if v.doc, err = BuildOpenAPI(openAPIOptions(v.cfg)); err != nil {
		t.Fatalf("BuildOpenAPI: %v", err)
	}
	v.handler = h
	v.srv = httptest.NewServer(h)
	t.Cleanup(v.srv.Close)
	return &v
}

// with returns a reporting to t, for subtests that insert fixtures.
func (a *api) with(t testing.TB) *api {
	c := *a
	c.t = t
	return &c
}

// newKey issues a key of the tier, with a rate budget of its own.
func (a *api) newKey(tier db.Tier) string {
	a.t.Helper()
	secret, _, err := a.keys.Create(context.Background(), tier, "test "+string(tier))
	if err != nil {
		a.t.Fatalf("create key: %v", err)
	}
	return secret
}

// resp is a response with its body read (and un-gzipped in plain).
type resp struct {
	*http.Response
	raw   []byte // the body as sent
	plain []byte // the body decoded from gzip when it was gzipped
	env   decodedEnvelope
}

// decodedEnvelope is the response envelope, decoded loosely for assertions.
type decodedEnvelope struct {
	Data       json.RawMessage `json:"data"`
	Pagination *pagination     `json:"pagination"`
	Meta       meta            `json:"meta"`
	Error      *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	// members lists the top-level member names, to check none is extra.
	members map[string]json.RawMessage
}

type pagination struct {
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

type meta struct {
	APIVersion string  `json:"api_version"`
	RequestID  string  `json:"request_id"`
	Tier       *string `json:"tier"`
	Units      *string `json:"units"`
}

// get sends GET path with the key (none when key is "") and header pairs.
func (a *api) get(t testing.TB, path, key string, header ...string) *resp {
	t.Helper()
	return a.do(t, http.MethodGet, path, key, nil, header...)
}

// do sends a request and checks the invariants every response must hold.
func (a *api) do(t testing.TB, method, path, key string, body io.Reader, header ...string) *resp {
	t.Helper()
	req, err := http.NewRequest(method, a.srv.URL+path, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	return a.send(t, req)
}

// client does not decompress, so that tests see what the server sent.
var client = &http.Client{Transport: &http.Transport{DisableCompression: true}}

func (a *api) send(t testing.TB, req *http.Request) *resp {
	t.Helper()
	hr, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer hr.Body.Close()
	raw, err := io.ReadAll(hr.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	r := &resp{Response: hr, raw: raw, plain: raw}
	if hr.Header.Get("Content-Encoding") == "gzip" && len(raw) > 0 {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		if r.plain, err = io.ReadAll(zr); err != nil {
			t.Fatalf("gunzip: %v", err)
		}
	}
	checkInvariants(t, req, r)
	validateAgainstOpenAPI(t, a.doc, req, hr, raw)
	return r
}

// checkInvariants asserts what holds for every response of the API.
func checkInvariants(t testing.TB, req *http.Request, r *resp) {
	t.Helper()
	what := req.Method + " " + req.URL.RequestURI()
	// The dashboard's and the API reference's pages and assets, and the
	// landing page for a browser, are HTML, scripts and stylesheets.
	dashboard := r.StatusCode == http.StatusOK &&
		(req.URL.Path == contract.DashboardPath || strings.HasPrefix(req.URL.Path, contract.DashboardAssetsPath+"/") ||
			req.URL.Path == contract.ReferencePath || strings.HasPrefix(req.URL.Path, contract.ReferenceAssetsPath+"/") ||
			slices.Contains(contract.LandingPaths, req.URL.Path) && landing.PrefersHTML(req.Header.Values("Accept")))
	// net/http drops Content-Type from a 304, which has no body (RFC 9110 §15.4.5).
	if got := r.Header.Get("Content-Type"); r.StatusCode != http.StatusNotModified && !dashboard &&
		got != envelope.ContentTypeJSON && !strings.HasPrefix(got, "text/html") {
		t.Errorf("%s: Content-Type = %q, want %q", what, got, envelope.ContentTypeJSON)
	}
	if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: %d: X-Content-Type-Options = %q, want nosniff", what, r.StatusCode, got)
	}
	id := r.Header.Get("X-Request-Id")
	if len(id) != 32 {
		t.Errorf("%s: X-Request-Id = %q, want 32 hex digits", what, id)
	}
	if req.Method == http.MethodHead || r.StatusCode == http.StatusNotModified {
		if len(r.raw) != 0 {
			t.Errorf("%s: %d with a body of %d bytes", what, r.StatusCode, len(r.raw))
		}
		return
	}
	if req.URL.Path == "/v1/openapi.json" && r.StatusCode == http.StatusOK || dashboard {
		return // the document itself, or the dashboard: not the envelope
	}
	if req.URL.Path == "/graphql" && r.StatusCode != http.StatusUnauthorized &&
		r.StatusCode != http.StatusForbidden && r.StatusCode != http.StatusTooManyRequests &&
		r.StatusCode != http.StatusMethodNotAllowed {
		return // a GraphQL response
	}
	if err := json.Unmarshal(r.plain, &r.env); err != nil {
		t.Fatalf("%s: body is not JSON: %v\n%s", what, err, r.plain)
	}
	if err := json.Unmarshal(r.plain, &r.env.members); err != nil {
		t.Fatalf("%s: body is not an object: %v", what, err)
	}
	m := r.env.Meta
	if m.APIVersion != "v1" {
		t.Errorf("%s: meta.api_version = %q, want v1", what, m.APIVersion)
	}
	if m.RequestID != id {
		t.Errorf("%s: meta.request_id = %q, X-Request-Id = %q; want equal", what, m.RequestID, id)
	}
	if _, ok := r.env.members["meta"]; !ok {
		t.Errorf("%s: no meta", what)
	}
	if r.StatusCode >= 400 && !(req.URL.Path == "/v1/health" && r.StatusCode == http.StatusServiceUnavailable) {
		if r.env.Error == nil || r.env.Error.Code == "" || r.env.Error.Message == "" {
			t.Errorf("%s: %d without error.code and error.message: %s", what, r.StatusCode, r.plain)
		}
		for _, k := range []string{"data", "pagination"} {
			if _, ok := r.env.members[k]; ok {
				t.Errorf("%s: error response has %s", what, k)
			}
		}
		if len(r.env.members) != 2 {
			t.Errorf("%s: error envelope members = %v, want error and meta", what, keysOf(r.env.members))
		}
		return
	}
	for _, k := range []string{"data", "pagination", "meta"} {
		if _, ok := r.env.members[k]; !ok {
			t.Errorf("%s: success envelope without %s", what, k)
		}
	}
	if len(r.env.members) != 3 {
		t.Errorf("%s: success envelope members = %v, want data, pagination, meta", what, keysOf(r.env.members))
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// items decodes a list response's data.
func (r *resp) items(t testing.TB) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	if err := json.Unmarshal(r.env.Data, &out); err != nil {
		t.Fatalf("data is not a list of objects: %v\n%s", err, r.env.Data)
	}
	return out
}

// object decodes a single-resource response's data.
func (r *resp) object(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	var out map[string]json.RawMessage
	if err := json.Unmarshal(r.env.Data, &out); err != nil {
		t.Fatalf("data is not an object: %v\n%s", err, r.env.Data)
	}
	return out
}

// wantStatus fails the test unless r has the status (and, for errors, code).
func (r *resp) wantStatus(t testing.TB, status int) {
	t.Helper()
	if r.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", r.Request.Method, r.Request.URL.RequestURI(), r.StatusCode, status, r.plain)
	}
}

// lockedBuffer is a log sink safe for concurrent handlers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
