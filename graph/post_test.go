package graph

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestPostTransportAnswersAsGqlgenDoes is the fence around postTransport,
// which copies unexported behaviour of gqlgen's transport.POST: the same
// requests, through a server with gqlgen's transport and one with
// postTransport (each bare, and behind NewHandler's body check, which
// hands the decoded parameters over), must get the same status, content
// type and body, byte for byte. It fails when an upgrade of gqlgen changes
// what its POST transport answers; then bring postTransport in line.
func TestPostTransportAnswersAsGqlgenDoes(t *testing.T) {
	cfg := Config{Store: db.NewStore(dbtest.New(t)), ETFEnabled: true}.withDefaults()
	server := func(tr graphql.Transport) *handler.Server {
		srv := handler.New(NewSchema(cfg))
		srv.AddTransport(tr)
		configure(srv, cfg)
		srv.Use(operationGuard{log: cfg.Logger, maxBytes: cfg.Limits.MaxResponseBytes})
		return srv
	}
	gqlgens, ours := server(transport.POST{}), server(newPostTransport())
	const page = `{"query":"{ posts(first: 50) { edges { cursor node { id source username body url originalSourceUrl createdAt coins } } pageInfo { hasNextPage endCursor } } }"}`
	for _, tc := range []struct{ name, accept, body string }{
		{"connection page", "", page},
		{"connection page, accept any", "*/*", page},
		{"connection page, accept graphql-response", "application/graphql-response+json", page},
		{"accept unknown type", "text/html", page},
		{"accept unparsable, then json", "a b c, application/json", page},
		{"variables", "", `{"query":"query($n: Int){ posts(first: $n) { nodes { id body } } }","variables":{"n":3}}`},
		{"operation name", "", `{"query":"query A { posts(first: 1) { nodes { id } } } query B { sources { name } }","operationName":"B"}`},
		{"nodes with raw", "", `{"query":"{ posts(first: 5) { nodes { id raw } } }"}`},
		{"resolver error with data", "", `{"query":"{ post(id: 999999999) { id } posts(first: 1) { nodes { id } } }"}`},
		{"argument refused", "", `{"query":"{ posts(first: 1000) { nodes { id } } }"}`},
		{"syntax error", "", `{"query":"{ posts(first: "}`},
		{"syntax error, graphql-response", "application/graphql-response+json", `{"query":"{ posts(first: "}`},
		{"unknown field", "", `{"query":"{ nope }"}`},
		{"unknown field, graphql-response", "application/graphql-response+json", `{"query":"{ nope }"}`},
		{"variable of the wrong type", "", `{"query":"query($n: Int){ posts(first: $n) { nodes { id } } }","variables":{"n":"x"}}`},
		{"no query", "", `{}`},
		{"not json", "", `{"query":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send := func(h http.Handler, checked bool) *httptest.ResponseRecorder {
				r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(tc.body))
				r.Header.Set("Content-Type", "application/json")
				if tc.accept != "" {
					r.Header.Set("Accept", tc.accept)
				}
				w := httptest.NewRecorder()
				if !checked {
					h.ServeHTTP(w, r)
					return w
				}
				params := checkBody(w, r, cfg.Limits.MaxBodyBytes)
				if params == nil {
					return w
				}
				cw := &codedErrors{ResponseWriter: w, params: params}
				h.ServeHTTP(cw, r)
				cw.finish()
				return w
			}
			for _, checked := range []bool{false, true} {
				want, got := send(gqlgens, checked), send(ours, checked)
				if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") ||
					!bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
					t.Errorf("behind the body check %v:\ngot  %d %s %s\nwant %d %s %s", checked,
						got.Code, got.Header().Get("Content-Type"), got.Body,
						want.Code, want.Header().Get("Content-Type"), want.Body)
				}
				if tc.name == "connection page" && !strings.Contains(want.Body.String(), `"edges":[{`) {
					t.Errorf("the page has no edges: %.200s", want.Body)
				}
			}
		})
	}
}

// TestWriteJSONMarshalsAsEncodingJSON checks writeJSON against
// json.Marshal of the same response, escapes included.
func TestWriteJSONMarshalsAsEncodingJSON(t *testing.T) {
	yes := true
	for _, resp := range []*graphql.Response{
		{Data: []byte(`{"a":"x"}`)},
		{Data: nil},
		{Data: []byte(`{}`)},
		{Data: []byte(`{"a":"<b> & </b>","c":"` + "\u2028 \u2029 \u2027 \u202a é 😀" + `","d":[1,2.5,true,null]}`)},
		{Data: []byte(`{"a":"<<>>&&"}`)},
		{Data: []byte(` { "a" : [ 1 ,	"b\" c <" ] ,` + "\n\r" + `"d":{"e": "\\\\", "f":" "} } `)},
		{Data: []byte(`{"a":"\u2028 \" \\u003c"}`)},
		{Data: []byte(`{"a":"` + "\xe2\x80" + `"}`)},
		{Data: []byte(`{"a":1}`), Errors: gqlerror.List{{Message: "m <x>"}}},
		{Data: []byte(`{"a":1}`), HasNext: &yes},
		{Data: []byte(`{"a":1}`), Extensions: map[string]any{"k": 1}},
		{Data: []byte(`{"a":1}`), Label: "l"},
	} {
		want, err := json.Marshal(resp)
		if err != nil {
			t.Fatalf("%s: %v", resp.Data, err)
		}
		var got bytes.Buffer
		writeJSON(&got, resp)
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("writeJSON(%q) = %s, want %s", resp.Data, got.Bytes(), want)
		}
	}
}
