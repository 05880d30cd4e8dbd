package graph_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/graph/keys"
)

// fuzzHandler is a /graphql handler over a database of the fuzz target's
// own, and the log it writes to.
func fuzzHandler(f *testing.F) (http.Handler, *bytes.Buffer) {
	f.Helper()
	logs := new(bytes.Buffer)
	h := graph.NewHandler(graph.Config{
		Store:      db.NewStore(dbtest.New(f)),
		ETFEnabled: true,
		Version:    "fuzz",
		Logger:     slog.New(slog.NewJSONHandler(&lockedWriter{w: logs}, nil)),
	})
	return h, logs
}

// internalRequest is req as sent by a key of the internal tier.
func internalRequest(req *http.Request) *http.Request {
	return req.WithContext(keys.WithPrincipal(req.Context(), keys.Principal{KeyID: 1, Tier: db.TierInternal, Name: "fuzz"}))
}

// checkGraphQLResponse fails the test unless w is a GraphQL response that
// the client can act on: not a 5xx, JSON, and every error carrying an
// extensions.code other than internal. Nothing may have been logged as an
// internal error or a panic.
func checkGraphQLResponse(t *testing.T, what string, w *httptest.ResponseRecorder, logs *bytes.Buffer) {
	t.Helper()
	if w.Code >= 500 {
		t.Fatalf("%s: status %d: %s", what, w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/graphql-response+json") {
		t.Fatalf("%s: Content-Type %q", what, ct)
	}
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatalf("%s: body is not a GraphQL response: %v: %.300s", what, err, w.Body)
	}
	if len(resp.Errors) == 0 && (len(resp.Data) == 0 || string(resp.Data) == "null") {
		t.Fatalf("%s: neither data nor errors: %.300s", what, w.Body)
	}
	for _, e := range resp.Errors {
		code, _ := e.Extensions["code"].(string)
		if code == "" || code == "internal" {
			t.Fatalf("%s: status %d, error %q has extensions.code %q", what, w.Code, e.Message, code)
		}
	}
	if w.Code != http.StatusOK && len(resp.Errors) == 0 {
		t.Fatalf("%s: status %d without errors", what, w.Code)
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Fatalf("%s: logged an error:\n%s", what, logs)
	}
}

// graphQLSeeds are documents worth starting from: valid queries of every
// root field, relations, fragments, variables, introspection, and
// documents that the parser, the validator or the limits refuse.
var graphQLSeeds = []struct{ query, variables string }{
	{`{ health { status version apiVersion database } }`, ``},
	{`{ posts(first: 2) { edges { cursor node { uid id source body createdAt brief { id weekStart } } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, ``},
	{`query($a: String) { posts(first: 3, after: $a) { nodes { id } } }`, `{"a": "` + cursor.Encode("posts", 100) + `"}`},
	{`query($a: String) { posts(first: 3, after: $a) { nodes { id } } }`, `{"a": "` + cursor.Encode("firehose", 100) + `"}`},
	{`{ posts(last: 2, before: "AAAA") { nodes { id } } }`, ``},
	{`{ posts(first: 0) { nodes { id } } }`, ``},
	{`{ posts(first: 101) { nodes { id } } }`, ``},
	{`{ posts(first: -1, last: 5) { nodes { id } } }`, ``},
	{`{ posts(since: "2026-13-45T99:00:00Z") { nodes { id } } }`, ``},
	{`{ posts(since: "0000-01-01T00:00:00Z") { nodes { id } } firehose(since: "0001-01-01T00:00:00+01:00") { nodes { id } } }`, ``},
	{`{ etfFlows(from: "0000-01-01", to: "0000-12-31") { uid } }`, ``},
	{`{ post(id: 9223372036854775807) { id } }`, ``},
	{`{ post(id: 99999999999999999999) { id } }`, ``},
	{`{ post(id: -1) { id } brief(id: 0) { id } }`, ``},
	{`{ briefs(first: 2) { nodes { id content posts(first: 3) { nodes { id } } } } }`, ``},
	{`{ firehose(pane: iansintel, important: true, source: "%_\\", first: 5) { nodes { id pane summaryAi } } }`, ``},
	{`{ firehose(pane: nope) { nodes { id } } }`, ``},
	{`{ sources { curatedSources firehosePanes etfAssets } }`, ``},
	{`{ etfFlows(assets: [BTC, HYPE], from: "2025-01-01", to: "2024-01-01", first: 3) { uid netInflow latest { uid } } }`, ``},
	{`{ etfFlows(from: "2025-02-30") { uid } }`, ``},
	{`{ etfFlowsLatest { uid asset flowDate netAssets } }`, ``},
	{`query Q($n: Int!) { posts(first: $n) { nodes { id } } }`, `{"n": "ten"}`},
	{`query Q($n: Int!) { posts(first: $n) { nodes { id } } }`, `{"n": 1e400}`},
	{`query Q($n: Int!) { posts(first: $n) { nodes { id } } }`, ``},
	{`fragment F on Post { id brief { posts { nodes { ...F } } } } { posts { nodes { ...F } } }`, ``},
	{`fragment A on Query { ...B } fragment B on Query { ...A } { ...A }`, ``},
	{`{ briefs(first: 100) { nodes { posts(first: 100) { nodes { brief { posts(first: 100) { nodes { id } } } } } } } }`, ``},
	{`{ a: health { status } b: health { status } }`, ``},
	{`{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }`, ``},
	{`{ __type(name: "Post") { name fields { name } } }`, ``},
	{`{ __typename }`, ``},
	{`mutation { posts { nodes { id } } }`, ``},
	{`subscription { health { status } }`, ``},
	{`query A { health { status } } query B { sources { curatedSources } }`, ``},
	{`{ health { status ` + strings.Repeat("status ", 6000) + `} }`, ``},
	{strings.Repeat("{ posts { nodes { brief ", 20) + strings.Repeat("} } }", 20), ``},
	{`{`, ``},
	{``, ``},
	{"{ health { status } } \x00 \xff", ``},
	{`{ posts(source: "\u0000") { nodes { id } } }`, ``},
	{`{ nope }`, ``},
	{`query($v: [Int!]!) { health { status } }`, `{"v": [1, null]}`},
}

// FuzzGraphQL posts arbitrary documents (and variables) to /graphql as an
// internal key: the answer is never a 5xx or a panic, and every error
// carries a usable extensions.code.
func FuzzGraphQL(f *testing.F) {
	for _, s := range graphQLSeeds {
		f.Add(s.query, s.variables)
	}
	h, logs := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, query, variables string) {
		logs.Reset()
		params := map[string]any{"query": query}
		if json.Valid([]byte(variables)) {
			params["variables"] = json.RawMessage(variables)
		}
		body, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		req := internalRequest(httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body)))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		checkGraphQLResponse(t, "POST "+string(body), w, logs)
	})
}

// FuzzGraphQLRequest sends arbitrary bodies by POST and arbitrary query
// strings by GET: malformed transport input is the client's fault, answered
// like any other refused request.
func FuzzGraphQLRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"{ health { status } }"}`,
		`{"query":"{ health { status } }","variables":null,"operationName":null,"extensions":{}}`,
		`{"query":"{ health { status } }"`,
		`{"query": 5}`,
		`{"query":"{ health { status } }","variables":[1]}`,
		`{"query":"{ health { status } }","variables":"x"}`,
		`[{"query":"{ health { status } }"}]`,
		`null`,
		``,
		`query=%7B+health+%7B+status+%7D+%7D`,
		`query=%7B+health+%7B+status+%7D+%7D&variables=%7B`,
		`query=%7B+health+%7B+status+%7D+%7D&extensions=nope`,
		`query=%zz`,
		`query=mutation+%7B+x+%7D`,
		"\xff\xfe{}",
		`{"query":"{ health { status } }","pad":"` + strings.Repeat("x", 70<<10) + `"}`,
	} {
		f.Add(http.MethodPost, s)
		f.Add(http.MethodGet, s)
	}
	h, logs := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, method, input string) {
		logs.Reset()
		var req *http.Request
		switch method {
		case http.MethodGet:
			req = httptest.NewRequest(http.MethodGet, "/graphql", nil)
			req.URL.RawQuery = input
		default:
			req = httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(input))
			req.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, internalRequest(req))
		checkGraphQLResponse(t, req.Method+" "+input, w, logs)
	})
}
