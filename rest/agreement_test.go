package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/feedapi/feedapi/rest/contract"
)

// The OpenAPI document, the router and the parameter parser agree about
// every parameter: the contract declares each once and all three are
// derived from it, and these tests hold them to it.

// docParam is a documented parameter, resolved from its component.
type docParam struct {
	Ref    string         `json:"$ref"`
	Name   string         `json:"name"`
	In     string         `json:"in"`
	Schema map[string]any `json:"schema"`
}

type docOperation struct {
	Parameters []docParam `json:"parameters"`
}

// openAPIDoc is the part of the document these tests read.
type openAPIDoc struct {
	Paths      map[string]map[string]docOperation `json:"paths"`
	Components struct {
		Parameters map[string]docParam `json:"parameters"`
	} `json:"components"`
}

func readDoc(t testing.TB, b []byte) openAPIDoc {
	t.Helper()
	var d openAPIDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// queryParams returns the query parameters of an operation, by name.
func (d openAPIDoc) queryParams(path, method string) map[string]docParam {
	out := map[string]docParam{}
	for _, p := range d.Paths[path][method].Parameters {
		if p.Ref != "" {
			p = d.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
		}
		if p.In == "query" {
			out[p.Name] = p
		}
	}
	return out
}

// allowedIn reads the parameters an answer to an unknown parameter names.
var allowedIn = regexp.MustCompile(`allowed are (.*)$`)

// Every operation of /v1 (and the landing page) takes exactly the query
// parameters the document gives it: asked with an unknown one, the router's handler names the
// ones its parser takes, and they are the documented ones; and every GET
// route of the router is a documented path.
func TestDocumentRouterAndParserAgree(t *testing.T) {
	a := newAPI(t)
	doc := readDoc(t, a.doc)
	checked := 0
	for path, ops := range doc.Paths {
		if _, ok := ops["get"]; !ok {
			continue
		}
		want := doc.queryParams(path, "get")
		if path != "/" && !strings.HasPrefix(path, "/"+contract.APIVersion) {
			continue // GraphQL and the static pages: no parameters of the contract
		}
		url := strings.NewReplacer("{id}", "1", "{file}", "x.js").Replace(path)
		r := a.get(t, url+"?zz_not_a_parameter=1", a.pro, "Accept", "application/json")
		if r.StatusCode != http.StatusBadRequest || r.env.Error == nil {
			t.Errorf("GET %s with an unknown parameter: %d %s, want 400", path, r.StatusCode, r.plain)
			continue
		}
		var got []string
		if m := allowedIn.FindStringSubmatch(r.env.Error.Message); m != nil {
			got = strings.Split(m[1], ", ")
		} else if !strings.Contains(r.env.Error.Message, "takes no query parameters") {
			t.Errorf("GET %s: %q names no parameters", path, r.env.Error.Message)
			continue
		}
		var documented []string
		for name := range want {
			documented = append(documented, name)
		}
		slices.Sort(got)
		slices.Sort(documented)
		if !slices.Equal(got, documented) {
			t.Errorf("GET %s: the router takes %v, the document gives %v", path, got, documented)
		}
		checked++
	}
	if checked < 15 {
		t.Errorf("only %d operations checked", checked)
	}

	// Router → document: every route the router serves is documented.
	mux := a.handler.(*apiHandler).mux
	err := chi.Walk(mux, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		path := strings.TrimSuffix(route, "/*")
		if path != route {
			path += "/{file}"
		}
		if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok && !(method == http.MethodHead && strings.HasSuffix(path, "/stream")) {
			t.Errorf("the router serves %s %s, which the document does not describe", method, route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The parser takes exactly what each documented schema allows at its
// edges: integer bounds, enumerations, lengths, examples and defaults.
func TestParserAgreesWithTheDocumentedSchemas(t *testing.T) {
	t.Parallel()
	for _, etf := range []bool{true, false} {
		b, err := BuildOpenAPI(OpenAPIOptions{ETFEnabled: etf})
		if err != nil {
			t.Fatal(err)
		}
		doc := readDoc(t, b)
		eps := contract.Endpoints(etf)
		type op struct {
			path   string
			params []contract.Param
		}
		var ops []op
		for _, ep := range eps {
			ops = append(ops, op{ep.Path, ep.Params})
		}
		for _, st := range contract.Streams(eps) {
			ops = append(ops, op{st.Path, st.Params})
		}
		for _, o := range ops {
			documented := doc.queryParams(o.path, "get")
			if len(documented) != len(o.params) {
				t.Errorf("%s: %d documented parameters, %d declared", o.path, len(documented), len(o.params))
			}
			for _, p := range o.params {
				d, ok := documented[p.Name]
				if !ok {
					t.Errorf("%s: %s is not documented", o.path, p.Name)
					continue
				}
				for _, problem := range schemaDisagreements(p, d.Schema) {
					t.Errorf("%s %s: %s", o.path, p.Name, problem)
				}
			}
		}
	}
}

// schemaDisagreements probes p's parser at the edges of schema s.
func schemaDisagreements(p contract.Param, s map[string]any) []string {
	var out []string
	takes := func(v string) bool {
		_, ok := p.Parse(v)
		return ok
	}
	expect := func(v string, ok bool, why string) {
		if takes(v) != ok {
			verb := "refuses"
			if !ok {
				verb = "takes"
			}
			out = append(out, fmt.Sprintf("the parser %s %q (%s)", verb, v, why))
		}
	}
	num := func(k string) (int64, bool) {
		f, ok := s[k].(float64)
		return int64(f), ok
	}
	switch s["type"] {
	case "integer":
		lo, okLo := num("minimum")
		hi, okHi := num("maximum")
		if !okLo || !okHi {
			out = append(out, "an integer without both bounds")
			break
		}
		expect(strconv.FormatInt(lo, 10), true, "the minimum")
		expect(strconv.FormatInt(hi, 10), true, "the maximum")
		expect(strconv.FormatInt(hi+1, 10), false, "above the maximum")
		if lo > 0 {
			expect(strconv.FormatInt(lo-1, 10), false, "below the minimum")
		}
		if d, ok := num("default"); ok {
			if p.Default != int(d) {
				out = append(out, fmt.Sprintf("default %v, documented %d", p.Default, d))
			}
		}
	case "boolean":
		for _, v := range []string{"true", "false"} {
			expect(v, true, "a boolean")
		}
		expect("yes", false, "not a boolean")
		if d, ok := s["default"].(bool); ok && p.Default != nil && p.Default != d {
			out = append(out, fmt.Sprintf("default %v, documented %v", p.Default, d))
		}
	case "string":
		if e, ok := s["enum"].([]any); ok {
			for _, v := range e {
				expect(v.(string), true, "an enumerated value")
			}
			expect("zz-not-listed", false, "not enumerated")
		}
		if n, ok := num("maxLength"); ok {
			expect(strings.Repeat("a", int(n)+1), false, "over maxLength")
		}
		if n, ok := num("minLength"); ok && n > 0 {
			expect("", false, "under minLength")
		}
		if pat, ok := s["pattern"].(string); ok {
			re := regexp.MustCompile(pat)
			for _, ex := range s["examples"].([]any) {
				if !re.MatchString(ex.(string)) {
					out = append(out, fmt.Sprintf("the example %q does not match the pattern", ex))
				}
				expect(ex.(string), true, "a documented example")
			}
			expect("", re.MatchString(""), "the empty value, as the pattern says")
		}
	default:
		out = append(out, fmt.Sprintf("a schema of type %v", s["type"]))
	}
	return out
}
