package graph_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/executor"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph"
)

// TestEnumValuesAreExact holds enum values, in variables, lists, defaults
// and literals, to the schema's exact spelling: anything else is refused
// before any SQL runs, as bad_request naming the variable, never read as
// "no filter".
func TestEnumValuesAreExact(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const firehose = `query($p: Pane) { firehose(first: 100, pane: $p) { nodes { pane } } }`
	const etf = `query($a: [EtfAsset!]) { etfFlows(assets: $a, first: 10) { asset } }`
	const latest = `query($a: [EtfAsset!]) { etfFlowsLatest(assets: $a) { asset } }`
	refused := []struct {
		name, query string
		vars        map[string]any
		param       string // extensions.param, "" for none
		wantMsg     string
	}{
		{"pane variable upper case", firehose, map[string]any{"p": "CRYPTO"}, "p", `variable $p: "CRYPTO" is not a value of Pane`},
		{"pane variable title case", firehose, map[string]any{"p": "Crypto"}, "p", `variable $p: "Crypto" is not a value of Pane`},
		{"pane variable unknown", firehose, map[string]any{"p": "stocks"}, "p", "stocks is not a valid Pane"},
		{"asset in a list lower case", etf, map[string]any{"a": []any{"BTC", "eth"}}, "a", `variable $a[1]: "eth" is not a value of EtfAsset`},
		{"asset as a single value", etf, map[string]any{"a": "btc"}, "a", `variable $a[0]: "btc"`},
		{"latest asset lower case", latest, map[string]any{"a": []any{"sol"}}, "a", `variable $a[0]: "sol"`},
		{"pane default upper case", `query($p: Pane = CRYPTO) { firehose(pane: $p) { nodes { pane } } }`, nil, "", "CRYPTO"},
		{"pane literal upper case", `{ firehose(pane: CRYPTO) { nodes { pane } } }`, nil, "pane", "CRYPTO"},
		{"asset literal lower case", `{ etfFlows(assets: [btc]) { asset } }`, nil, "assets", "btc"},
		{"collapse literal unknown", `{ firehose(collapse: bogus) { nodes { id } } }`, nil, "collapse", "bogus"},
		{"collapse literal in an inline fragment", `{ ... on Query { posts(first: 5, collapse: story_) { nodes { id } } } }`, nil, "collapse", "story_"},
		{"DateTime literal", `{ posts(since: "yesterday") { nodes { id } } }`, nil, "since", "argument since: DateTime must be an RFC 3339 date-time"},
		{"Date literal", `{ etfFlows(from: "2026-02-30") { asset } }`, nil, "from", "argument from: Date must be a calendar date"},
		{"DateTime variable", `query($s: DateTime) { posts(since: $s) { nodes { id } } }`, map[string]any{"s": "yesterday"}, "s", "variable $s: DateTime must be an RFC 3339 date-time"},
		{"Date variable", `query($f: Date) { etfFlows(from: $f) { asset } }`, map[string]any{"f": "2026-02-30"}, "f", "variable $f: Date must be a calendar date"},
		{"Int64 variable beyond 64 bits", `query($id: Int64!) { post(id: $id) { id } }`, map[string]any{"id": json.Number("9223372036854775808")}, "id", "variable $id: Int64 must be an integer from"},
		{"Int64 variable with a fraction", `query($id: Int64!) { post(id: $id) { id } }`, map[string]any{"id": json.Number("1.5")}, "id", "variable $id: Int64 must be an integer of decimal digits"},
		{"Int64 literal beyond 64 bits", `{ post(id: 99999999999999999999) { id } }`, nil, "id", "argument id: Int64 must be an integer from"},
		{"Int64 literal with a fraction", `{ brief(id: 1.5) { id } }`, nil, "id", "argument id: Int64 must be an integer of decimal digits"},
		{"Int64 literal in a fragment", `{ ...F } fragment F on Query { post(id: "12x") { id } }`, nil, "id", "argument id: Int64 must be an integer of decimal digits"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			before := e.queries.Load()
			r := e.with(t).do(db.TierInternal, tt.query, tt.vars)
			if len(r.Errors) != 1 || r.Errors[0].Extensions.Code != "bad_request" || !strings.Contains(r.Errors[0].Message, tt.wantMsg) {
				t.Fatalf("errors = %+v, data = %s; want one bad_request mentioning %q", r.Errors, r.Data, tt.wantMsg)
			}
			if got := r.Errors[0].Extensions.Param; got != tt.param {
				t.Errorf("extensions.param = %q, want %q", got, tt.param)
			}
			if string(r.Data) != "" && string(r.Data) != "null" {
				t.Errorf("data = %s, want none", r.Data)
			}
			if n := e.queries.Load() - before; n != 0 {
				t.Errorf("%d SQL statements ran, want 0", n)
			}
		})
	}

	t.Run("exact values filter", func(t *testing.T) {
		var fh struct {
			Firehose struct{ Nodes []struct{ Pane string } }
		}
		e.with(t).query(firehose, map[string]any{"p": "crypto"}, &fh)
		if len(fh.Firehose.Nodes) == 0 {
			t.Fatal("no crypto messages")
		}
		for _, n := range fh.Firehose.Nodes {
			if n.Pane != "crypto" {
				t.Fatalf("pane %q in a crypto page", n.Pane)
			}
		}
		for _, q := range []string{etf, latest} {
			var out map[string][]struct{ Asset string }
			e.with(t).query(q, map[string]any{"a": []any{"BTC"}}, &out)
			for field, flows := range out {
				if len(flows) == 0 {
					t.Fatalf("%s: no BTC flows", field)
				}
				for _, f := range flows {
					if f.Asset != "BTC" {
						b, _ := json.Marshal(out)
						t.Fatalf("%s: asset %q in %s", field, f.Asset, b)
					}
				}
			}
		}
	})
}

// TestGeneratedEnumUnmarshallersAreExact runs a misspelt enum variable
// through an executor without graph's extensions (so that exactVariables
// does not refuse it first): the generated unmarshaller itself refuses the
// spelling with a validation error instead of reading it as the zero value,
// which would drop the filter.
func TestGeneratedEnumUnmarshallersAreExact(t *testing.T) {
	t.Parallel()
	exec := executor.New(graph.NewSchema(graph.Config{Store: db.NewStore(dbtest.New(t)), ETFEnabled: true}))
	for _, tc := range []struct {
		query string
		vars  map[string]any
	}{
		{`query($p: Pane) { firehose(first: 5, pane: $p) { nodes { pane } } }`, map[string]any{"p": "CRYPTO"}},
		{`query($a: [EtfAsset!]) { etfFlows(assets: $a, first: 5) { asset } }`, map[string]any{"a": []any{"btc"}}},
		{`query($a: [EtfAsset!]) { etfFlowsLatest(assets: $a) { asset } }`, map[string]any{"a": "Eth"}},
	} {
		ctx := graphql.StartOperationTrace(context.Background())
		opCtx, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: tc.query, Variables: tc.vars})
		if errs != nil {
			t.Fatalf("%s: %v", tc.query, errs)
		}
		handler, ctx := exec.DispatchOperation(ctx, opCtx)
		resp := handler(ctx)
		if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != errcode.ValidationFailed ||
			!strings.Contains(resp.Errors[0].Message, "is not a value of") {
			t.Errorf("%v: errors %v, data %s; want one validation error", tc.vars, resp.Errors, resp.Data)
		}
	}
}

// TestSinceBetweenMicroseconds: created_at is stored to the microsecond,
// and a since that falls between two microseconds must not be truncated
// to the earlier one, which would take in rows created before it.
func TestSinceBetweenMicroseconds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	posts := e.addPosts(fxPostID, 2, "fx-micro", fxMonday)                                                      // 00:00, 01:00
	fh := e.addFirehose(fxFirehoseID, 2, []db.Pane{db.PaneWire}, []string{"fx-micro"}, []bool{false}, fxMonday) // 00:00, 00:01
	for _, tc := range []struct {
		name, query string
		want        int64
	}{
		{"posts", `{ posts(source: "fx-micro", since: "2031-01-06T00:00:00.000000001Z") { nodes { id } } }`, posts[1].ID},
		{"posts, offset", `{ posts(source: "fx-micro", since: "2031-01-06T01:00:00.0000009+01:00") { nodes { id } } }`, posts[1].ID},
		{"firehose", `{ firehose(source: "fx-micro", since: "2031-01-06T00:00:00.000000999Z") { nodes { id } } }`, fh[1].ID},
	} {
		var out map[string]connPage
		e.with(t).query(tc.query, nil, &out)
		for _, page := range out {
			if got := page.ids(); !slices.Equal(got, []int64{tc.want}) {
				t.Errorf("%s: ids %v, want [%d]", tc.name, got, tc.want)
			}
		}
	}
}
