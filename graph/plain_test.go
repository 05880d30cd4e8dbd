package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/generated"
	"github.com/feedapi/feedapi/graph/model"
)

// stubRoot answers Query.posts with fixed posts and Post.brief with null,
// so that tests can hand the executable schema values the database never
// holds (a nil raw document, control characters).
type stubRoot struct {
	generated.ResolverRoot // nil: only Query and Post are called
	posts                  []db.Post
}

func (s stubRoot) Query() generated.QueryResolver { return stubQuery{posts: s.posts} }
func (s stubRoot) Post() generated.PostResolver   { return stubPost{} }

type stubQuery struct {
	generated.QueryResolver
	posts []db.Post
}

func (q stubQuery) Posts(context.Context, *int, *string, *int, *string, *string, *time.Time, []string, *string, *int64, *string, *model.Collapse) (*model.PostConnection, error) {
	edges := make([]model.PostEdge, len(q.posts))
	for i := range q.posts {
		edges[i] = model.PostEdge{Cursor: fmt.Sprintf("c%d", q.posts[i].ID), Node: &q.posts[i]}
	}
	return &model.PostConnection{Nodes: q.posts, Edges: edges, PageInfo: &model.PageInfo{}}, nil
}

type stubPost struct{}

func (stubPost) Brief(context.Context, *db.Post) (*db.Brief, error) { return nil, nil }

func (stubPost) Story(context.Context, *db.Post) (*db.Story, error) { return nil, nil }

// run executes query over posts and returns the response as JSON.
func run(t *testing.T, posts []db.Post, query string) string {
	t.Helper()
	e := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: stubRoot{posts: posts}}))
	ctx := graphql.StartOperationTrace(context.Background())
	oc, errs := e.CreateOperationContext(ctx, &graphql.RawParams{Query: query})
	if errs != nil {
		t.Fatalf("%s: %v", query, errs)
	}
	ctx = graphql.WithOperationContext(ctx, oc)
	next, ctx := e.DispatchOperation(ctx, oc)
	b, err := json.Marshal(next(ctx))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPlainObjectsAnswerAsGqlgenDoes compares, for the same posts, a
// selection of plain fields only (answered by the generated plain objects,
// see graph/internal/codegen) with the same selection plus Post.brief, a
// resolver field that sends the object down gqlgen's own path. Once the
// brief is taken out, the two responses must be the same bytes: values,
// escapes, nulls, aliases, errors and their paths.
func TestPlainObjectsAnswerAsGqlgenDoes(t *testing.T) {
	at := time.Date(2026, 11, 21, 9, 8, 7, 654_321_000, time.UTC)
	post := func(id int64, body string) db.Post {
		return db.Post{ID: id, Source: "src\t1", Username: `"quoted" \ user`, Body: body,
			URL: ptr("https://example.com/?q=<a>&b"), CreatedAt: at, Raw: json.RawMessage(`{"k":["v",1]}`)}
	}
	ok := []db.Post{post(3, "line\nbreak \x01 ✓ \xff"), post(2, ""), post(1, "third")}
	ok[0].Coins = []string{"BTC", "ETH"} // ok[1] has none: nil, written as []
	ok[2].Coins = []string{}
	ok[1].URL, ok[1].OriginalSourceURL = nil, ptr("https://t.me/x/1")
	withNilRaw := []db.Post{post(2, "a"), post(1, "b")}
	withNilRaw[1].Raw = nil

	for _, c := range []struct {
		name      string
		posts     []db.Post
		selection string
		wantError bool
	}{
		{"every field", ok, "uid id source username body url originalSourceUrl createdAt raw coins __typename", false},
		{"aliases and repeats", ok, "a: id b: id id __typename t: __typename created: createdAt", false},
		{"one field", ok, "id", false},
		{"empty page", nil, "id uid", false},
		{"null raw in a non-null field", withNilRaw, "id raw", true},
		{"null raw not selected", withNilRaw, "id body", false},
	} {
		// The same through edges: a PostEdge whose node's selection is
		// plain is a plain object too (a nested plain field).
		for _, form := range []struct{ name, open, close string }{
			{"nodes", "nodes { ", " }"},
			{"edges", "edges { cursor n: node { ", " } __typename }"},
		} {
			t.Run(c.name+"/"+form.name, func(t *testing.T) {
				plain := run(t, c.posts, "{ posts(first: 5) { "+form.open+c.selection+form.close+" } }")
				gqlgen := run(t, c.posts, "{ posts(first: 5) { "+form.open+c.selection+" brief { id }"+form.close+" } }")
				gqlgen = strings.ReplaceAll(gqlgen, `,"brief":null`, "")
				if plain != gqlgen {
					t.Errorf("plain path:\n%s\ngqlgen's path:\n%s", plain, gqlgen)
				}
				if hasErrors := strings.Contains(plain, `"errors"`); hasErrors != c.wantError {
					t.Errorf("errors in the response: %v, want %v: %s", hasErrors, c.wantError, plain)
				}
			})
		}
	}
}

// fieldCounter is a field interceptor.
type fieldCounter struct{}

func (fieldCounter) ExtensionName() string                   { return "FieldCounter" }
func (fieldCounter) Validate(graphql.ExecutableSchema) error { return nil }
func (fieldCounter) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	return next(ctx)
}

// TestFieldInterceptorsAreRefused: plain fields do not run field
// middleware, so an interceptor would silently miss them; it is refused
// when the executor is built instead.
func TestFieldInterceptorsAreRefused(t *testing.T) {
	for name, build := range map[string]func(graph.Config){
		"NewExecutor": func(c graph.Config) { graph.NewExecutor(c) },
		"NewHandler":  func(c graph.Config) { graph.NewHandler(c) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "FieldCounter") {
					t.Errorf("recovered %v, want a panic naming FieldCounter", r)
				}
			}()
			build(graph.Config{Store: db.NewStore(nil), Extensions: []graphql.HandlerExtension{fieldCounter{}}})
		})
	}
}

// TestWithResponseBuffer: a query's response is written into the caller's
// empty buffer; a buffer already holding something is left alone.
func TestWithResponseBuffer(t *testing.T) {
	posts := []db.Post{{ID: 7, Source: "s", Username: "u", Body: "b", Raw: json.RawMessage(`{}`)}}
	exec := func(ctx context.Context) []byte {
		e := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: stubRoot{posts: posts}}))
		ctx = graphql.StartOperationTrace(ctx)
		oc, errs := e.CreateOperationContext(ctx, &graphql.RawParams{Query: "{ posts(first: 1) { nodes { id } } }"})
		if errs != nil {
			t.Fatal(errs)
		}
		next, ctx := e.DispatchOperation(graphql.WithOperationContext(ctx, oc), oc)
		return next(ctx).Data
	}
	const want = `{"posts":{"nodes":[{"id":7}]}}`

	var empty bytes.Buffer
	empty.Grow(64)
	if got := exec(graph.WithResponseBuffer(context.Background(), &empty)); string(got) != want || empty.String() != want || &got[0] != &empty.Bytes()[0] {
		t.Errorf("empty buffer: data %s written to the buffer %q, want %s in the buffer itself", got, empty.String(), want)
	}
	used := bytes.NewBufferString("in use")
	if got := exec(graph.WithResponseBuffer(context.Background(), used)); string(got) != want || used.String() != "in use" {
		t.Errorf("buffer in use: data %s, buffer now %q", got, used.String())
	}
	if got := exec(context.Background()); string(got) != want {
		t.Errorf("no buffer: data %s", got)
	}
}

// TestEdgesTakeThePlainPath: edges { cursor node { … } } whose node
// selection is plain is answered by plain objects, as nodes is: a page
// allocates a fraction of what gqlgen's own path (the same selection plus
// a resolver field) does, and about what nodes does.
func TestEdgesTakeThePlainPath(t *testing.T) {
	posts := make([]db.Post, 50)
	for i := range posts {
		posts[i] = db.Post{ID: int64(50 - i), Source: "s", Username: "u", Body: "b", CreatedAt: time.Unix(0, 0), Raw: json.RawMessage(`{}`),
			Coins: []string{"BTC"}}
	}
	allocs := func(query string) float64 {
		return testing.AllocsPerRun(20, func() { run(t, posts, query) })
	}
	const sel = "id source username body url originalSourceUrl createdAt coins"
	nodes := allocs("{ posts(first: 50) { nodes { " + sel + " } } }")
	edges := allocs("{ posts(first: 50) { edges { cursor node { " + sel + " } } } }")
	gqlgen := allocs("{ posts(first: 50) { edges { cursor node { " + sel + " brief { id } } } } }")
	if edges > gqlgen/3 || edges > nodes+100 {
		t.Errorf("allocations per page: edges %.0f, nodes %.0f, gqlgen's path %.0f: edges did not take the plain path", edges, nodes, gqlgen)
	}
	t.Logf("allocations per page: edges %.0f, nodes %.0f, gqlgen's path %.0f", edges, nodes, gqlgen)
}
