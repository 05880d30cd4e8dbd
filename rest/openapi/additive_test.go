package openapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// testOptions are the options of the golden document of package rest.
var testOptions = Options{
	ServerURL:    "https://api.example.test",
	AltServerURL: "https://alt.example.test",
	ETFEnabled:   true,
	Version:      "1.2.3",
	RateLimit:    120,
}

// v1 is additive: the document of testdata/baseline.json (the document as
// it stood when it was first built from the contract's declarations) stays
// a part of every later one. Every path, operation, parameter, response,
// header and schema property it has is still there and unchanged; a later
// document may only add to it. Prose (description, summary) may be
// reworded.
func TestTheDocumentOnlyAddsToTheBaseline(t *testing.T) {
	baseline := readJSON(t, filepath.Join("testdata", "baseline.json"))
	built, err := Build(testOptions)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(built, &doc); err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]any{"the built document": doc, "the golden file": readJSON(t, filepath.Join("..", "testdata", "openapi.golden.json"))} {
		if problems := contains("", baseline, d); len(problems) > 0 {
			t.Errorf("%s does not hold the baseline:\n%s", name, strings.Join(problems, "\n"))
		}
	}
}

// The check itself finds what it must: a removal, a change and a tightened
// bound are each reported; an added property is not.
func TestTheAdditiveCheckCatchesChanges(t *testing.T) {
	baseline := readJSON(t, filepath.Join("testdata", "baseline.json"))
	for _, c := range []struct {
		name  string
		edit  func(doc map[string]any)
		wants string
	}{
		{"a path removed", func(d map[string]any) { delete(at(d, "paths"), "/v1/briefs") }, "/paths/~1v1~1briefs: missing"},
		{"a parameter removed", func(d map[string]any) { delete(at(d, "components", "parameters"), "Coins") }, "/components/parameters/Coins: missing"},
		{"a bound changed", func(d map[string]any) { at(d, "components", "parameters", "Limit", "schema")["maximum"] = 99.0 }, "maximum"},
		{"a property removed", func(d map[string]any) { delete(at(d, "components", "schemas", "Post", "properties"), "uid") }, "uid: missing"},
		{"an operation's parameter dropped", func(d map[string]any) {
			op := at(d, "paths", "/v1/posts", "get")
			op["parameters"] = op["parameters"].([]any)[1:]
		}, "Limit"},
		{"a value required anew", func(d map[string]any) {
			s := at(d, "components", "schemas", "Post")
			s["required"] = append(s["required"].([]any), "coins")
		}, "required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := readJSON(t, filepath.Join("testdata", "baseline.json")).(map[string]any)
			c.edit(doc)
			problems := contains("", baseline, doc)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.wants) }) {
				t.Errorf("got %q, want a problem naming %q", problems, c.wants)
			}
		})
	}
	doc := readJSON(t, filepath.Join("testdata", "baseline.json")).(map[string]any)
	at(doc, "components", "schemas", "Post", "properties")["story"] = map[string]any{"type": "string"}
	at(doc, "paths")["/v1/stories"] = map[string]any{}
	if problems := contains("", baseline, doc); len(problems) > 0 {
		t.Errorf("additions reported as problems: %q", problems)
	}
}

func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func at(doc map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		doc = doc[k].(map[string]any)
	}
	return doc
}

// isProse reports whether the value v of key k is prose, which may be
// reworded (a property named description is a schema, not prose).
func isProse(k string, v any) bool {
	_, text := v.(string)
	return text && (k == "description" || k == "summary")
}

// contains reports where got does not hold want: an object holds every key
// of want's with a value that holds its value; a list of parameters holds
// each of want's (by $ref, or by name and place); any other list or value
// is equal. JSON pointers name the places.
func contains(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: was an object, is %v", path, got)}
		}
		var out []string
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			gv, ok := g[k]
			switch {
			case !ok:
				out = append(out, p+": missing")
			case isProse(k, w[k]):
				// Reworded prose is fine; it stays a text.
				if _, isString := gv.(string); !isString {
					out = append(out, p+": no longer a text")
				}
			default:
				out = append(out, contains(p, w[k], gv)...)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: was a list, is %v", path, got)}
		}
		if strings.HasSuffix(path, "/parameters") {
			var out []string
			for _, wp := range w {
				i := slices.IndexFunc(g, func(gp any) bool { return sameParameter(wp, gp) })
				if i < 0 {
					out = append(out, fmt.Sprintf("%s: parameter %v missing", path, wp))
					continue
				}
				out = append(out, contains(path, wp, g[i])...)
			}
			return out
		}
		if len(w) != len(g) {
			return []string{fmt.Sprintf("%s: was %v, is %v", path, w, g)}
		}
		var out []string
		for i := range w {
			out = append(out, contains(fmt.Sprintf("%s/%d", path, i), w[i], g[i])...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: was %v, is %v", path, want, got)}
		}
		return nil
	}
}

// sameParameter reports whether two documented parameters are the same
// one: the same component, or the same name in the same place.
func sameParameter(a, b any) bool {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		return false
	}
	if r, ok := am["$ref"]; ok {
		return bm["$ref"] == r
	}
	return am["name"] == bm["name"] && am["in"] == bm["in"]
}
