package rest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/limits"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest/auth"
)

func TestQueryDocuments(t *testing.T) {
	t.Parallel()
	sources, err := readQueries()
	if err != nil {
		t.Fatal(err)
	}
	store := db.NewStore(nil) // the schema is built without touching the store

	used := map[string]bool{"health": true}
	for _, etf := range []bool{true, false} {
		schema := graph.NewSchema(graph.Config{Store: store, ETFEnabled: etf}).Schema()
		eps, err := endpoints(schema, etf)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{"health"}
		for _, ep := range eps {
			names = append(names, ep.Query)
			used[ep.Query] = true
		}
		streams, err := streamEndpoints(eps, live.New(live.Config{}))
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range streams {
			names = append(names, ep.Query)
			used[ep.Query] = true
		}
		if _, err := prepare(schema, sources, names); err != nil {
			t.Errorf("ETF %v: %v", etf, err)
		}
	}

	t.Run("every document is used", func(t *testing.T) {
		for name := range sources {
			if !used[name] {
				t.Errorf("queries/%s.graphql is used by no endpoint", name)
			}
		}
	})

	t.Run("documents are validated against the schema in use", func(t *testing.T) {
		noETF := graph.NewSchema(graph.Config{Store: store}).Schema()
		for _, name := range []string{"sources_etf", "etf_flows", "etf_flows_latest"} {
			if _, err := prepare(noETF, sources, []string{name}); err == nil {
				t.Errorf("%s validated against a schema without ETF flows", name)
			}
		}
	})

	// A stream's event is the item "exactly as the list shows it": the two
	// documents select the same fields, under the same names and directives.
	t.Run("a stream's items are its list's items", func(t *testing.T) {
		for list, stream := range map[string]string{"posts": "posts_stream", "firehose": "firehose_stream"} {
			listItem := selectionAt(t, sources[list], "page", "data")
			streamItem := selectionAt(t, sources[stream], "page", "edges", "node")
			if listItem != streamItem {
				t.Errorf("queries/%s.graphql selects\n\t%s\nbut queries/%s.graphql selects\n\t%s", stream, streamItem, list, listItem)
			}
		}
	})

	t.Run("invalid documents are refused", func(t *testing.T) {
		schema := graph.NewSchema(graph.Config{Store: store, ETFEnabled: true}).Schema()
		for name, src := range map[string]string{
			"syntax":          `query { posts(first: 1) { nodes { id }`,
			"unknown field":   `query { posts(first: 1) { nodes { id headline } } }`,
			"unknown arg":     `query { posts(count: 1) { nodes { id } } }`,
			"undeclared var":  `query { posts(first: $n) { nodes { id } } }`,
			"two operations":  `query A { health { status } } query B { health { version } }`,
			"wrong var type":  `query ($n: String) { posts(first: $n) { nodes { id } } }`,
			"missing subsels": `query { posts(first: 1) }`,
		} {
			if _, err := prepare(schema, map[string]string{"q": src}, []string{"q"}); err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
		if _, err := prepare(schema, sources, []string{"no_such_query"}); err == nil || !strings.Contains(err.Error(), "no queries/no_such_query.graphql") {
			t.Errorf("a missing document: err = %v", err)
		}
	})
}

func TestNewRefusesIncompleteConfig(t *testing.T) {
	t.Parallel()
	store := db.NewStore(nil)
	keys := fakeKeys(nil)
	for name, cfg := range map[string]Config{
		"no keys":              {Graph: graph.Config{Store: store}},
		"no store":             {Auth: auth.Config{Keys: keys}},
		"bad tier limit":       {Auth: auth.Config{Keys: keys, TierRateLimits: map[string]int{"pro": 0}}, Graph: graph.Config{Store: store}},
		"bad trusted proxy":    {Auth: auth.Config{Keys: keys, TrustedProxies: []string{"10.0.0.1"}}, Graph: graph.Config{Store: store}},
		"bad trusted proxy v6": {Auth: auth.Config{Keys: keys, TrustedProxies: []string{"::1/129"}}, Graph: graph.Config{Store: store}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	if _, err := New(Config{Auth: auth.Config{Keys: keys}, Graph: graph.Config{Store: store}}); err != nil {
		t.Errorf("a minimal config: %v", err)
	}
}

func TestEnumValuesComeFromTheSchema(t *testing.T) {
	t.Parallel()
	schema := graph.NewSchema(graph.Config{Store: db.NewStore(nil), ETFEnabled: true}).Schema()
	panes, err := enumValues(schema, "Pane")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"news", "crypto", "wire", "blogs", "twitter", "iansintel"}; !slices.Equal(panes, want) {
		t.Errorf("panes %v, want %v", panes, want)
	}
	assets, err := enumValues(schema, "EtfAsset")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"BTC", "ETH", "SOL", "HYPE"}; !slices.Equal(assets, want) {
		t.Errorf("assets %v, want %v", assets, want)
	}
	if _, err := enumValues(schema, "Post"); err == nil {
		t.Errorf("Post accepted as an enum")
	}
}

// TestFixedQueriesCostWellUnderTheBudget holds every endpoint's document,
// at its largest page and with every optional field included, to at most
// half of the default complexity budget: the cost model may price long
// text, but never so that a REST request comes near a refusal.
func TestFixedQueriesCostWellUnderTheBudget(t *testing.T) {
	t.Parallel()
	sources, err := readQueries()
	if err != nil {
		t.Fatal(err)
	}
	es := graph.NewSchema(graph.Config{Store: db.NewStore(nil), ETFEnabled: true})
	budget := graph.DefaultLimits().MaxComplexity
	for name, src := range sources {
		doc, err := prepare(es.Schema(), sources, []string{name})
		if err != nil {
			t.Fatal(err)
		}
		op := doc[src].Operations[0]
		vars := map[string]any{}
		for _, v := range op.VariableDefinitions {
			switch v.Type.Name() {
			case "Int":
				vars[v.Variable] = 100
				if name == "etf_flows" || name == "etf_fund_flows" {
					vars[v.Variable] = 500
				}
				if name == "stories" {
					vars[v.Variable] = map[string]int{"first": limits.StoriesPageMaxREST, "items": limits.StoryItemsMax}[v.Variable]
				}
			case "Boolean":
				vars[v.Variable] = true
			}
		}
		cost := complexity.Calculate(context.Background(), es, op, vars)
		t.Logf("%s costs %d", name, cost)
		if cost > budget/2 {
			t.Errorf("%s costs %d at its largest, more than half the budget of %d", name, cost, budget)
		}
	}
}

// selectionAt parses the document src and returns its selection at the path
// of response names (aliases), one field per line as alias:name@directives.
func selectionAt(t *testing.T, src string, path ...string) string {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: src})
	if err != nil {
		t.Fatal(err)
	}
	set := doc.Operations[0].SelectionSet
	for _, name := range path {
		i := slices.IndexFunc(set, func(s ast.Selection) bool {
			f, ok := s.(*ast.Field)
			return ok && f.Alias == name
		})
		if i < 0 {
			t.Fatalf("no field %q in %v", name, path)
		}
		set = set[i].(*ast.Field).SelectionSet
	}
	var fields []string
	for _, s := range set {
		f := s.(*ast.Field)
		line := f.Alias + ":" + f.Name
		for _, d := range f.Directives {
			line += " @" + d.Name
			for _, a := range d.Arguments {
				line += " " + a.Name + "=" + a.Value.String()
			}
		}
		fields = append(fields, line)
	}
	return strings.Join(fields, ", ")
}
