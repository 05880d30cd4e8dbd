package graph_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph"
)

func TestRefusedBeforeExecution(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name, query, wantMsg string
		vars                 map[string]any
	}{
		{"complexity of nested pages", `{ briefs(first:100){edges{node{posts(first:100){edges{node{id}}}}}} }`, "complexity", nil},
		{"complexity of many wide lists", strings.Repeat(`a%[1]d: firehose(first: 100) { nodes { uid id pane source title body url createdAt } } `, 1), "complexity", nil},
		{"depth", `{ posts(first: 1) { edges { node { brief { posts(first: 1) { edges { node { brief { id } } } } } } } } }`, "nested 9 levels", nil},
		{"depth through fragments", `{ posts(first: 1) { ...P } } fragment P on PostConnection { nodes { brief { ...B } } }
			fragment B on Brief { posts(first: 1) { nodes { brief { posts(first: 1) { nodes { id } } } } } }`, "nested 9 levels", nil},
		{"depth through inline fragments", `{ posts(first: 1) { nodes { ... on Post { brief { posts(first: 1) { nodes { brief { posts(first: 1) { nodes { id } } } } } } } } } }`, "nested 9 levels", nil},
		{"token limit", "{ health { " + strings.Repeat("status ", 6000) + "} }", "token limit", nil},
		{"enum variable not spelled exactly", `query($p: Pane) { firehose(pane: $p) { nodes { id } } }`, "case-sensitive", map[string]any{"p": "CRYPTO"}},
	}
	// Six aliased wide firehose pages: 6 × (1 + 100 × 9) > 10000.
	var wide strings.Builder
	for i := range 12 {
		fmt.Fprintf(&wide, "a%d: firehose(first: 100) { nodes { uid id pane source title body url createdAt } } ", i)
	}
	tests[1].query = "{ " + wide.String() + "}"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.queries.Load()
			r := e.with(t).do(db.TierInternal, tt.query, tt.vars)
			if len(r.Errors) == 0 || r.Errors[0].Extensions.Code != "bad_request" || !strings.Contains(r.Errors[0].Message, tt.wantMsg) {
				t.Errorf("errors = %+v, want bad_request mentioning %q", r.Errors, tt.wantMsg)
			}
			// As the OpenAPI document says: nothing ran, 422, like a
			// document that fails validation.
			if r.Status != http.StatusUnprocessableEntity {
				t.Errorf("HTTP %d, want 422", r.Status)
			}
			if string(r.Data) != "" && string(r.Data) != "null" {
				t.Errorf("data = %s, want none", r.Data)
			}
			if n := e.queries.Load() - before; n != 0 {
				t.Errorf("%d SQL statements ran, want 0", n)
			}
		})
	}

	t.Run("the deepest allowed nesting runs", func(t *testing.T) {
		r := e.with(t).do(db.TierInternal, `{ briefs(first: 2) { edges { node { posts(first: 2) { edges { node { brief { id } } } } } } } }`, nil)
		if len(r.Errors) > 0 {
			t.Errorf("errors = %+v", r.Errors)
		}
	})
}

func TestIntrospectionByTier(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name     string
		tier     db.Tier
		query    string
		wantCode string
	}{
		{"internal may read the schema", db.TierInternal, `{ __schema { queryType { name } } }`, ""},
		{"internal may read a type", db.TierInternal, `{ __type(name: "Post") { name fields { name } } }`, ""},
		{"free may not read the schema", db.TierFree, `{ __schema { queryType { name } } }`, "forbidden_tier"},
		{"pro may not read a type", db.TierPro, `{ __type(name: "Post") { name } }`, "forbidden_tier"},
		{"no key may not read the schema", "", `query Q { ... on Query { __schema { types { name } } } }`, "forbidden_tier"},
		{"free may ask for __typename", db.TierFree, `{ __typename health { __typename status } }`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := e.with(t).do(tt.tier, tt.query, nil)
			switch {
			case tt.wantCode == "" && len(r.Errors) > 0:
				t.Errorf("errors = %+v, want none", r.Errors)
			case tt.wantCode != "" && (len(r.Errors) != 1 || r.Errors[0].Extensions.Code != tt.wantCode):
				t.Errorf("errors = %+v, want %s", r.Errors, tt.wantCode)
			}
		})
	}
}

func TestWithoutETF(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withoutETF)

	var schema struct {
		Query, Sources struct{ Fields []struct{ Name string } }
		Types          struct {
			Types []struct{ Name string }
		} `json:"__schema"`
	}
	e.query(`{ Query: __type(name: "Query") { fields { name } } Sources: __type(name: "Sources") { fields { name } } __schema { types { name } } }`, nil, &schema)
	var names []string
	for _, f := range append(schema.Query.Fields, schema.Sources.Fields...) {
		names = append(names, f.Name)
	}
	for _, tp := range schema.Types.Types {
		names = append(names, tp.Name)
	}
	for _, absent := range []string{"etfFlows", "etfFlowsLatest", "etfAssets", "EtfFlow", "EtfAsset"} {
		if strings.Contains(" "+strings.Join(names, " ")+" ", " "+absent+" ") {
			t.Errorf("introspection shows %s", absent)
		}
	}
	for _, present := range []string{"posts", "firehosePanes", "curatedSources", "Post"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+present+" ") {
			t.Errorf("introspection lacks %s", present)
		}
	}

	for _, q := range []string{`{ etfFlows { uid } }`, `{ etfFlowsLatest { uid } }`, `{ sources { etfAssets } }`} {
		r := e.do(db.TierInternal, q, nil)
		if len(r.Errors) == 0 || r.Errors[0].Extensions.Code != "bad_request" {
			t.Errorf("%s: errors = %+v, want bad_request", q, r.Errors)
		}
	}
	var out struct {
		Sources struct{ FirehosePanes []string }
	}
	e.query(`{ sources { firehosePanes } }`, nil, &out)
	if len(out.Sources.FirehosePanes) != 6 {
		t.Errorf("firehosePanes = %v", out.Sources.FirehosePanes)
	}
}

// briefContentQuery is the README's heaviest query: n aliases of every
// post of 12 weeks, each with its brief's whole Markdown.
func briefContentQuery(n int) string {
	var b strings.Builder
	b.WriteString("{ ")
	for i := range n {
		fmt.Fprintf(&b, "a%d: briefs(first: 12) { nodes { posts(first: 100) { nodes { id brief { content } } } } } ", i)
	}
	b.WriteString("}")
	return b.String()
}

func TestCostModel(t *testing.T) {
	t.Parallel()
	// With a budget of 1 every operation is refused, and the message
	// states its cost.
	priced := newEnv(t, func(c *graph.Config) { c.Limits.MaxComplexity = 1 })
	e := newEnv(t)
	tests := []struct {
		name, query string
		cost        int
	}{
		{"a scalar costs 1", `{ health { status } }`, 2},
		{"a brief's Markdown costs its typical size", `{ brief(id: 1) { id content } }`, 1 + 1 + 84},
		{"a post's body and raw cost their typical sizes", `{ post(id: 1) { id body raw } }`, 1 + 1 + 6 + 16},
		{"a firehose body and summary cost their typical sizes", `{ firehose(first: 1) { nodes { title body summaryAi } } }`, 1 + 1*(1+1+6+3)},
		{"a page multiplies its items", `{ posts(first: 100) { nodes { id body } } }`, 1 + 100*(1+1+6)},
		{"the default page has 50 items", `{ posts { nodes { id } } }`, 1 + 50*(1+1)},
		{"nested pages multiply", `{ briefs(first: 2) { nodes { posts(first: 3) { nodes { id } } } } }`, 1 + 2*(1+(1+3*(1+1)))},
		{"the issue's query, one alias", briefContentQuery(1), 1 + 12*(1+(1+100*(1+1+(1+84))))},
		{"the issue's query, twelve aliases", briefContentQuery(12), 12 * (1 + 12*(1+(1+100*(1+1+(1+84)))))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := priced.with(t).do(db.TierInternal, tt.query, nil)
			want := fmt.Sprintf("operation has complexity %d,", tt.cost)
			if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, want) {
				t.Errorf("errors = %+v, want the cost %d", r.Errors, tt.cost)
			}
		})
	}

	t.Run("the issue's query is refused before any SQL, naming its cost and the budget", func(t *testing.T) {
		for _, n := range []int{1, 12} {
			before := e.queries.Load()
			r := e.with(t).do(db.TierInternal, briefContentQuery(n), nil)
			want := fmt.Sprintf("operation has complexity %d, which exceeds the limit of 10000", n*104425)
			if len(r.Errors) != 1 || r.Errors[0].Extensions.Code != "bad_request" || r.Errors[0].Message != want {
				t.Errorf("%d aliases: errors = %+v, want bad_request %q", n, r.Errors, want)
			}
			if string(r.Data) != "" && string(r.Data) != "null" {
				t.Errorf("%d aliases: data = %.100s, want none", n, r.Data)
			}
			if q := e.queries.Load() - before; q != 0 {
				t.Errorf("%d aliases: %d SQL statements ran, want 0", n, q)
			}
		}
	})
}

func TestResponseSizeCap(t *testing.T) {
	t.Parallel()
	const limit = 4000
	e := newEnv(t, func(c *graph.Config) { c.Limits.MaxResponseBytes = limit })
	e.addPosts(fxPostID, 100, "fx-cap", fxMonday)
	tests := []struct {
		name, query string
		refused     bool
	}{
		{"under the cap", `{ posts(first: 5, source: "fx-cap") { nodes { id body } } }`, false},
		{"over the cap", `{ posts(first: 100, source: "fx-cap") { nodes { id body url createdAt } } }`, true},
		{"over the cap in aliases", `{ a: posts(first: 40, source: "fx-cap") { nodes { id body url } } b: posts(first: 40, source: "fx-cap") { nodes { id body url } } }`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := e.with(t).do(db.TierInternal, tt.query, nil)
			if !tt.refused {
				if len(r.Errors) > 0 || len(r.Data) == 0 || len(r.Data) > limit {
					t.Errorf("errors = %+v, data %d bytes; want the data", r.Errors, len(r.Data))
				}
				return
			}
			want := fmt.Sprintf("the response is larger than the limit of %d bytes; ask for fewer items or fields", limit)
			if len(r.Errors) != 1 || r.Errors[0].Extensions.Code != "bad_request" || r.Errors[0].Message != want {
				t.Errorf("errors = %+v, want one bad_request %q", r.Errors, want)
			}
			if string(r.Data) != "" && string(r.Data) != "null" {
				t.Errorf("data = %.100s…, want none rather than a truncated body", r.Data)
			}
			if r.Status != http.StatusOK {
				t.Errorf("status %d, want 200 as for any error of execution", r.Status)
			}
		})
	}

	t.Run("the work stops once the texts read pass the cap", func(t *testing.T) {
		// The seeded briefs' Markdown alone passes the cap: the posts of
		// their weeks are never read.
		before := e.queries.Load()
		r := e.with(t).do(db.TierInternal, `{ briefs(first: 12) { nodes { content posts(first: 100) { nodes { id } } } } }`, nil)
		if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "larger than the limit") {
			t.Errorf("errors = %+v, want the cap's", r.Errors)
		}
		if n := e.queries.Load() - before; n != 1 {
			t.Errorf("%d SQL statements ran, want 1 (the briefs, not their posts)", n)
		}
	})
}
