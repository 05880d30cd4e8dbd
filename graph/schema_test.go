package graph_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/internal/genhash"
)

// TestSchemaGolden keeps the served schema as a file, so that a change to the
// contract is a visible diff. Regenerate with `go test ./graph/ -run
// TestSchemaGolden -update`.
func TestSchemaGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		etf        bool
	}{
		{"with ETF flows", "schema.golden.graphqls", true},
		{"without ETF flows", "schema-noetf.golden.graphqls", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The schema is built without touching the store.
			es := graph.NewSchema(graph.Config{Store: db.NewStore(nil), ETFEnabled: tt.etf})
			var buf bytes.Buffer
			formatter.NewFormatter(&buf, formatter.WithComments()).FormatSchema(es.Schema())
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("schema differs from %s (run with -update if the change is intended):\n%s", path, firstDiff(got, string(want)))
			}
		})
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, gl, wl)
		}
	}
	return ""
}

// TestGeneratedCodeIsFresh fails when an input of the generated code
// (schema.graphqls, gqlgen.yml, the plain-object generator, the scalars'
// Append functions) changed after the last `go generate ./graph/`, or when
// the gqlgen module was upgraded without regenerating.
func TestGeneratedCodeIsFresh(t *testing.T) {
	t.Parallel()
	sum, err := genhash.Inputs("..")
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile(genhash.File)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(recorded)) != sum {
		t.Errorf("generated code is stale: one of its inputs changed; run go generate ./graph/")
	}

	// gqlgen stamps its version on the resolver files it writes.
	code, err := os.ReadFile("schema.resolvers.go")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var version string
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/99designs/gqlgen" {
			version = f[1]
		}
	}
	if version == "" {
		t.Fatal("go.mod does not require github.com/99designs/gqlgen")
	}
	if want := "gqlgen version " + version; !bytes.Contains(code, []byte(want)) {
		t.Errorf("generated code was not made by %s; run go generate ./graph/", want)
	}
}

// TestSchemaIsDocumented requires a description on every type, field,
// argument and enum value that the schema defines.
func TestSchemaIsDocumented(t *testing.T) {
	t.Parallel()
	s := graph.NewSchema(graph.Config{Store: db.NewStore(nil), ETFEnabled: true}).Schema()
	for name, def := range s.Types {
		if def.BuiltIn {
			continue
		}
		if def.Description == "" {
			t.Errorf("type %s has no description", name)
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			if f.Description == "" {
				t.Errorf("field %s.%s has no description", name, f.Name)
			}
			for _, a := range f.Arguments {
				if a.Description == "" {
					t.Errorf("argument %s.%s(%s) has no description", name, f.Name, a.Name)
				}
			}
		}
		for _, v := range def.EnumValues {
			if v.Description == "" {
				t.Errorf("enum value %s.%s has no description", name, v.Name)
			}
		}
	}
}

// TestStreamsTakeTheirListsFilters: a list's stream and its subscription
// take every filter of the list (its arguments but paging), so that a
// filter added to the list in the schema and left off one of them fails
// here.
func TestStreamsTakeTheirListsFilters(t *testing.T) {
	schema := graph.NewSchema(graph.Config{Store: db.NewStore(nil), ETFEnabled: true}).Schema()
	args := func(typ, field string, skip ...string) []string {
		f := schema.Types[typ].Fields.ForName(field)
		if f == nil {
			t.Fatalf("no field %s.%s", typ, field)
		}
		var out []string
		for _, a := range f.Arguments {
			if !slices.Contains(skip, a.Name) {
				out = append(out, a.Name+": "+a.Type.String())
			}
		}
		slices.Sort(out)
		return out
	}
	paging := []string{"first", "after", "last", "before", "sinceId", "afterPosition"}
	for _, c := range []struct{ list, stream, subscription string }{
		{"posts", "postStream", "postAdded"},
		{"firehose", "firehoseStream", "firehoseMessageAdded"},
	} {
		want := args("Query", c.list, paging...)
		if got := args("Query", c.stream, paging...); !slices.Equal(got, want) {
			t.Errorf("%s takes %v, want the filters of %s: %v", c.stream, got, c.list, want)
		}
		if got := args("Subscription", c.subscription); !slices.Equal(got, want) {
			t.Errorf("%s takes %v, want the filters of %s: %v", c.subscription, got, c.list, want)
		}
	}
}
