package graph_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/keys"
)

// asTier makes gqlgen's test client send its requests as a key of tier.
func asTier(tier db.Tier) client.Option {
	return func(r *client.Request) {
		r.HTTP = r.HTTP.WithContext(keys.WithPrincipal(r.HTTP.Context(), keys.Principal{KeyID: 7, Tier: tier}))
	}
}

func TestHandlerTransports(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addPosts(fxPostID, 2, "fx-transport", fxMonday)

	t.Run("POST through gqlgen's client", func(t *testing.T) {
		c := client.New(e.handler, asTier(db.TierInternal))
		var out struct {
			Posts struct{ Nodes []struct{ UID string } }
		}
		c.MustPost(`query($s: String) { posts(source: $s) { nodes { uid } } }`, &out, client.Var("s", "fx-transport"))
		if len(out.Posts.Nodes) != 2 || out.Posts.Nodes[0].UID != "cp_9000000000002" {
			t.Errorf("nodes = %+v", out.Posts.Nodes)
		}
	})
	t.Run("GET with a query string", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, "/graphql?query="+url.QueryEscape(`{ health { apiVersion } }`), nil)
		w := httptest.NewRecorder()
		e.handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"apiVersion":"v1"`) {
			t.Errorf("GET: %d %s", w.Code, w.Body)
		}
	})
	// The GraphiQL page is the REST layer's (rest: TestGraphiQLIsSelfContained);
	// to the GraphQL handler a GET without a query is a request without an
	// operation, answered in GraphQL's shape with a code.
	t.Run("a GET without a query is a bad request", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, "/graphql", nil)
		req.Header.Set("Accept", "text/html,application/xhtml+xml")
		w := httptest.NewRecorder()
		e.handler.ServeHTTP(w, req)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"code":"bad_request"`) {
			t.Errorf("GET without a query: %d %s %.200s", w.Code, w.Header().Get("Content-Type"), w.Body)
		}
	})
}

func TestExecutorInProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addPosts(fxPostID, 3, "fx-exec", fxMonday)
	exec := graph.NewExecutor(graph.Config{Store: db.NewStore(e.bdb), ETFEnabled: true})

	run := func(ctx context.Context, query string, vars map[string]any) *graphql.Response {
		ctx = graphql.StartOperationTrace(ctx)
		opCtx, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: query, Variables: vars})
		if errs != nil {
			return exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		}
		h, ctx := exec.DispatchOperation(ctx, opCtx)
		return h(ctx)
	}
	free := keys.WithPrincipal(context.Background(), keys.Principal{Tier: db.TierFree})

	t.Run("a free key's fixed query runs", func(t *testing.T) {
		resp := run(free, `query($n: Int!) { page: posts(first: $n, source: "fx-exec") { data: nodes { id } pageInfo { hasNextPage endCursor } } }`, map[string]any{"n": 2})
		if len(resp.Errors) > 0 {
			t.Fatalf("errors: %v", resp.Errors)
		}
		if !strings.Contains(string(resp.Data), `"data":[{"id":9000000000003},{"id":9000000000002}]`) || !strings.Contains(string(resp.Data), `"hasNextPage":true`) {
			t.Errorf("data = %s", resp.Data)
		}
	})
	t.Run("domain errors keep their code", func(t *testing.T) {
		resp := run(free, `{ posts(first: 0) { nodes { id } } }`, nil)
		if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != "bad_request" || resp.Errors[0].Extensions["param"] != "first" {
			t.Errorf("errors = %v", resp.Errors)
		}
	})
	t.Run("the limits apply", func(t *testing.T) {
		resp := run(free, `{ briefs(first:100){edges{node{posts(first:100){edges{node{id}}}}}} }`, nil)
		if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != "bad_request" {
			t.Errorf("errors = %v", resp.Errors)
		}
	})
}
