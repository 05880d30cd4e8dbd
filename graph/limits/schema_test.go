package limits

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// The doc strings of schema.graphqls state the bounds of this package
// where they describe them: every argument that takes one of these bounds
// names the value declared here, and no other.
func TestSchemaDocStringsStateTheLimits(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "schema.graphqls"))
	if err != nil {
		t.Fatal(err)
	}
	schema, gqlErr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(src)})
	if gqlErr != nil {
		t.Fatal(gqlErr)
	}
	// etfLists are the fields whose page is an ETF list's.
	etfLists := map[string]bool{"etfFlows": true, "etfFlowsPage": true, "etfFundFlows": true}
	pageSize := regexp.MustCompile(`1 to (\d+)`)
	pageDefault := regexp.MustCompile(`default (\d+)`)
	checked := map[string]int{}
	for _, def := range schema.Types {
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			for _, a := range f.Arguments {
				where := fmt.Sprintf("%s.%s(%s:)", def.Name, f.Name, a.Name)
				d := strings.Join(strings.Fields(a.Description), " ")
				want := func(parts ...string) {
					checked[a.Name]++
					for _, p := range parts {
						if !strings.Contains(d, p) {
							t.Errorf("%s: the doc string %q does not say %q", where, d, p)
						}
					}
				}
				switch a.Name {
				case "first", "last":
					if f.Name == "topFunds" {
						continue
					}
					hi, def := PageMax, PageDefault
					if etfLists[f.Name] || strings.HasPrefix(f.Name, "etf") {
						hi, def = EtfPageMax, EtfPageDefault
					}
					if f.Name == "stories" {
						def = StoriesPageDefault
					}
					checked[a.Name]++
					if m := pageSize.FindStringSubmatch(d); m == nil || m[1] != fmt.Sprint(hi) {
						t.Errorf("%s: the doc string %q does not say 1 to %d", where, d, hi)
					}
					if m := pageDefault.FindStringSubmatch(d); m != nil && m[1] != fmt.Sprint(def) {
						t.Errorf("%s: the doc string %q gives the default %s, want %d", where, d, m[1], def)
					}
				case "coins":
					want(fmt.Sprintf("1 to %d letters or digits each, at most %d", TickerMaxLen, MaxCoins))
				case "q":
					want(fmt.Sprintf("1 to %d bytes", MaxQueryBytes))
				case "sinceId":
					want(fmt.Sprintf("0 to %d", MaxSinceID))
				case "funds":
					want(fmt.Sprintf("at most %d", MaxFunds))
				}
			}
		}
	}
	// The test reads what it means to: each kind of bound is stated
	// somewhere.
	for _, name := range []string{"first", "last", "coins", "q", "sinceId", "funds"} {
		if checked[name] == 0 {
			t.Errorf("no argument %s in the schema: is the test reading the right file?", name)
		}
	}
}
