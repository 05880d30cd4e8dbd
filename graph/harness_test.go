package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/keys"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// env is one test's database, handler and SQL statement counter.
type env struct {
	t       *testing.T
	bdb     *bun.DB
	handler http.Handler
	queries *atomic.Int64
	logs    *bytes.Buffer
}

type option func(*graph.Config)

func withoutETF(c *graph.Config) { c.ETFEnabled = false }

// newEnv gives the test its own database (cloned from the seeded template)
// and a /graphql handler over it.
func newEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	bdb := dbtest.New(t)
	e := &env{t: t, bdb: bdb, queries: new(atomic.Int64), logs: new(bytes.Buffer)}
	cfg := graph.Config{
		// Only the store's statements are counted, not the fixtures'.
		Store:      db.NewStore(bdb.WithQueryHook(countHook{e.queries})),
		ETFEnabled: true,
		Version:    "test-1",
		Logger:     slog.New(slog.NewTextHandler(&lockedWriter{w: e.logs}, nil)),
		// A generous batch window keeps the statement counts exact on a
		// loaded CI machine; production uses the 2ms default.
		Limits: graph.Limits{BatchWait: 20 * time.Millisecond},
	}
	for _, o := range opts {
		o(&cfg)
	}
	e.handler = graph.NewHandler(cfg)
	return e
}

// with returns e reporting to t, for subtests.
func (e *env) with(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// countHook counts the SQL statements sent to the database.
type countHook struct{ n *atomic.Int64 }

func (h countHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }
func (h countHook) AfterQuery(_ context.Context, _ *bun.QueryEvent)                    { h.n.Add(1) }

// gqlError is one entry of a response's errors.
type gqlError struct {
	Message    string `json:"message"`
	Path       []any  `json:"path"`
	Extensions struct {
		Code  string `json:"code"`
		Param string `json:"param"`
	} `json:"extensions"`
}

type response struct {
	Status int
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// do runs query with vars as a key of the given tier ("" for no key).
func (e *env) do(tier db.Tier, query string, vars map[string]any) response {
	e.t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		e.t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if tier != "" {
		req = req.WithContext(keys.WithPrincipal(req.Context(), keys.Principal{KeyID: 1, Tier: tier, Name: "test"}))
	}
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, req)
	var r response
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
		e.t.Fatalf("decode response %q: %v", w.Body.String(), err)
	}
	r.Status = w.Code
	return r
}

// query runs query as an internal key, fails the test on any error, and
// decodes data into out.
func (e *env) query(query string, vars map[string]any, out any) {
	e.t.Helper()
	r := e.do(db.TierInternal, query, vars)
	if len(r.Errors) > 0 {
		e.t.Fatalf("query %s: errors %+v", strings.Join(strings.Fields(query), " "), r.Errors)
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		e.t.Fatalf("decode data %s: %v", r.Data, err)
	}
}

// exec runs SQL for fixtures.
func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	if _, err := e.bdb.ExecContext(context.Background(), sql, args...); err != nil {
		e.t.Fatalf("exec %s: %v", sql, err)
	}
}
