package rest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedapi/feedapi/rest/auth"
	"github.com/feedapi/feedapi/rest/contract"
)

// update rewrites the golden files of package rest's tests from the current
// output instead of comparing with them: go test ./rest -run Golden -update.
// It is the package's one -update flag; other golden tests should use it too.
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// validateOpenAPIDocument loads doc with libopenapi, builds the v3 model and
// validates the document against the OpenAPI 3.1 meta-schema.
func validateOpenAPIDocument(t *testing.T, doc []byte) {
	t.Helper()
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatalf("libopenapi.NewDocument: %v", err)
	}
	if got := d.GetVersion(); got != "3.1.0" {
		t.Errorf("OpenAPI version: got %q, want 3.1.0", got)
	}
	if _, err := d.BuildV3Model(); err != nil {
		t.Fatalf("BuildV3Model: %v", err)
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		t.Fatalf("validator.NewValidator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		t.Errorf("the document is not valid OpenAPI 3.1:\n  - %s", strings.Join(describe("document", verrs), "\n  - "))
	}
}

// decodeDoc decodes doc into generic JSON.
func decodeDoc(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	return m
}

// at walks decoded JSON along keys, failing the test at a missing one.
func at(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for i, k := range keys {
		m, ok := v.(map[string]any)
		if !ok || m[k] == nil {
			t.Fatalf("no %s in the document", strings.Join(keys[:i+1], "."))
		}
		v = m[k]
	}
	return v
}

func TestOpenAPIIsValid(t *testing.T) {
	for _, etf := range []bool{true, false} {
		t.Run(fmt.Sprintf("etf=%v", etf), func(t *testing.T) {
			o := openAPITestOptions
			o.ETFEnabled = etf
			validateOpenAPIDocument(t, testDoc(t, o))
		})
	}
}

// The document validation has teeth: a broken document is refused.
func TestOpenAPIValidationCatchesABrokenDocument(t *testing.T) {
	m := decodeDoc(t, testDoc(t, openAPITestOptions))
	get := at(t, m, "paths", "/v1/posts", "get").(map[string]any)
	delete(get, "responses")
	get["parameters"] = []any{map[string]any{"name": "limit"}} // no "in", no schema
	broken, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	d, err := libopenapi.NewDocument(broken)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, _ := v.ValidateDocument(); ok {
		t.Error("a document with an operation without responses and a parameter without `in` passed validation")
	}
}

func TestOpenAPIGolden(t *testing.T) {
	got := testDoc(t, openAPITestOptions)
	path := filepath.Join("testdata", "openapi.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./rest -run TestOpenAPIGolden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		line := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "<end of file>"
		}
		t.Errorf("the document differs from %s from line %d:\n got: %s\nwant: %s\nIf the change is intended, run go test ./rest -run TestOpenAPIGolden -update and review the diff.",
			path, i+1, line(gl), line(wl))
	}
}

func TestOpenAPIIsDeterministic(t *testing.T) {
	a, b := testDoc(t, openAPITestOptions), testDoc(t, openAPITestOptions)
	if !bytes.Equal(a, b) {
		t.Error("two builds with the same options differ")
	}
	if !json.Valid(a) {
		t.Error("the document is not valid JSON")
	}
}

func TestOpenAPIInfoAndServers(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    OpenAPIOptions
		want []string
	}{
		{"both", OpenAPIOptions{ServerURL: "https://a.example", AltServerURL: "https://b.example", Version: "9.9.9", RateLimit: 300}, []string{"https://a.example", "https://b.example"}},
		{"primary only", OpenAPIOptions{ServerURL: "https://a.example", Version: "dev"}, []string{"https://a.example"}},
		{"none: the serving host", OpenAPIOptions{Version: "dev"}, []string{"/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := decodeDoc(t, testDoc(t, tc.o))
			if got := at(t, m, "openapi"); got != "3.1.0" {
				t.Errorf("openapi: got %v, want 3.1.0", got)
			}
			if got := at(t, m, "info", "version"); got != tc.o.Version {
				t.Errorf("info.version: got %v, want %s", got, tc.o.Version)
			}
			var urls []string
			for _, s := range at(t, m, "servers").([]any) {
				urls = append(urls, s.(map[string]any)["url"].(string))
			}
			if !slices.Equal(urls, tc.want) {
				t.Errorf("servers: got %v, want %v", urls, tc.want)
			}
			limit := tc.o.RateLimit
			if limit == 0 {
				limit = auth.DefaultRateLimit
			}
			description := at(t, m, "info", "description").(string)
			for _, want := range []string{
				fmt.Sprintf("%d requests per rolling minute per key", limit),
				fmt.Sprintf(`q=%d;w=60`, limit),
				"Retry-After: 60", "unknown one", "00:00 UTC", "forbidden_tier", "quota_exceeded", "has_more",
			} {
				if !strings.Contains(description, want) {
					t.Errorf("info.description does not mention %q", want)
				}
			}
		})
	}
}

func TestOpenAPIWithoutETF(t *testing.T) {
	o := openAPITestOptions
	o.ETFEnabled = false
	doc := testDoc(t, o)
	m := decodeDoc(t, doc)
	for path := range at(t, m, "paths").(map[string]any) {
		if strings.Contains(path, "etf") {
			t.Errorf("path %s is documented without ETF flows", path)
		}
	}
	for _, field := range []string{"etf_assets", "etf_funds"} {
		if _, ok := at(t, m, "components", "schemas", "Sources", "properties").(map[string]any)[field]; ok {
			t.Errorf("Sources has %s without ETF flows", field)
		}
	}
	for _, name := range []string{"Fund", "Paginate"} {
		if _, ok := at(t, m, "components", "parameters").(map[string]any)[name]; ok {
			t.Errorf("parameter %s is documented without ETF flows", name)
		}
	}
	for _, name := range []string{"EtfFlow", "EtfMeta", "EtfFlowsResponse", "EtfFund", "EtfFundFlow", "EtfTopFund", "EtfFundsResponse", "EtfFundFlowsPage"} {
		if _, ok := at(t, m, "components", "schemas").(map[string]any)[name]; ok {
			t.Errorf("schema %s is documented without ETF flows", name)
		}
	}
	for _, tag := range at(t, m, "tags").([]any) {
		if tag.(map[string]any)["name"] == contract.TagETF {
			t.Error("the etf tag is listed without ETF flows")
		}
	}

	// The harness agrees: the ETF paths are unknown, so they must be 404.
	c, err := contractFor(doc)
	if err != nil {
		t.Fatal(err)
	}
	e := craft("GET", "/v1/etf-flows", 200, goodFlows)
	if problems := c.check(e.req, e.resp, e.body); !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "must be 404") }) {
		t.Errorf("an ETF answer on a deployment without ETF flows passed: %q", problems)
	}
	e = craft("GET", "/v1/sources", 200,
		`{"data":{"curated_sources":[],"firehose_panes":[],"etf_assets":["BTC"]},"pagination":null,`+metaFree+`}`)
	if problems := c.check(e.req, e.resp, e.body); len(problems) == 0 {
		t.Error("etf_assets passed on a deployment without ETF flows")
	}

	with := decodeDoc(t, testDoc(t, openAPITestOptions))
	for _, path := range []string{"/v1/etf-flows", "/v1/etf-flows/latest", "/v1/etf-flows/summary"} {
		at(t, with, "paths", path, "get")
	}
	if req := at(t, with, "components", "schemas", "Sources", "required").([]any); !slices.Contains(req, any("etf_assets")) {
		t.Errorf("Sources.required with ETF flows: got %v, want etf_assets in it", req)
	}
}

// Every operation documents the statuses the contract gives it, and the
// security its path needs.
func TestOpenAPIOperationsDocumentTheirResponses(t *testing.T) {
	m := decodeDoc(t, testDoc(t, openAPITestOptions))
	const asset = contract.GraphiQLAssetsPath + "/{file}"
	const dashAsset = contract.DashboardAssetsPath + "/{file}"
	const refAsset = contract.ReferenceAssetsPath + "/{file}"
	open := map[string]bool{"/v1/health": true, "/v1/openapi.json": true, asset: true, contract.DashboardPath: true, dashAsset: true,
		"/": true, "/v1": true, contract.ReferencePath: true, refAsset: true}
	wantPaths := []string{"/", contract.DashboardPath, dashAsset, "/graphql", asset, contract.ReferencePath, refAsset, "/v1", "/v1/briefs", "/v1/briefs/{id}", "/v1/etf-flows", "/v1/etf-flows/funds", "/v1/etf-flows/latest",
		"/v1/etf-flows/summary", "/v1/etf-funds", "/v1/firehose", "/v1/firehose/stream", "/v1/health", "/v1/openapi.json", "/v1/posts", "/v1/posts/stream", "/v1/posts/{id}", "/v1/sources", "/v1/stories", "/v1/stories/{id}"}
	paths := at(t, m, "paths").(map[string]any)
	var got []string
	for p := range paths {
		got = append(got, p)
	}
	slices.Sort(got)
	if !slices.Equal(got, wantPaths) {
		t.Errorf("paths: got %v, want %v", got, wantPaths)
	}
	responses := at(t, m, "components", "responses").(map[string]any)
	for path, item := range paths {
		methods := item.(map[string]any)
		if _, ok := methods["head"]; ok == (path == "/graphql" || strings.HasSuffix(path, "/stream")) {
			t.Errorf("%s: HEAD documented %v, but it is answered on every path but /graphql and the streams", path, ok)
		}
		for method, op := range methods {
			name := strings.ToUpper(method) + " " + path
			rs := op.(map[string]any)["responses"].(map[string]any)
			if method == "head" {
				checkHeadMirrorsGet(t, path, op.(map[string]any), methods["get"].(map[string]any), responses)
				continue
			}
			want := []string{"200", "400", "401", "402", "403", "405", "429", "500"}
			switch {
			case open[path]:
				want = []string{"200", "304", "400", "405", "429", "500"}
			case path != "/graphql" && !strings.HasSuffix(path, "/stream"): // a stream has no 304
				want = append(want, "304")
			}
			if strings.HasSuffix(path, "{id}") || path == asset || path == dashAsset || path == refAsset {
				want = append(want, "404")
			}
			if path == "/v1/health" {
				want = append(want, "503")
			}
			for _, status := range want {
				if rs[status] == nil {
					t.Errorf("%s does not document %s", name, status)
				}
			}
			if rs["404"] != nil && !strings.HasSuffix(path, "{id}") && path != asset && path != dashAsset && path != refAsset {
				t.Errorf("%s documents 404, which it cannot answer", name)
			}
			// Each error response is the envelope with the code of its status.
			for _, e := range contract.Errors {
				status := strconv.Itoa(e.Status)
				r, ok := rs[status].(map[string]any)
				if !ok || path == "/graphql" && (status == "400" || status == "500") {
					continue // GraphQL's own answers
				}
				if ref := r["$ref"]; ref != "#/components/responses/"+e.Component {
					t.Errorf("%s %s: got %v, want the %s response", name, status, ref, e.Component)
				}
			}
			security := op.(map[string]any)["security"].([]any)
			if open[path] != (len(security) == 0) {
				t.Errorf("%s: security %v, want open=%v", name, security, open[path])
			}
			if ok := rs["200"].(map[string]any); path != "/graphql" && !strings.HasSuffix(path, "/stream") && ok["headers"].(map[string]any)["ETag"] == nil {
				t.Errorf("%s: 200 without ETag", name)
			}
		}
	}
	// One Error schema, its code an enum of every code, behind every error
	// response; no per-status variants for generators to trip on.
	codes := at(t, m, "components", "schemas", "Error", "properties", "code", "enum").([]any)
	if got := at(t, m, "components", "schemas", "Error", "properties", "message", "type"); got != "string" {
		t.Errorf("Error.message: type %v, want string", got)
	}
	if got := at(t, m, "components", "schemas", "ErrorEnvelope", "properties", "error", "$ref"); got != "#/components/schemas/Error" {
		t.Errorf("ErrorEnvelope.error: got %v, want the Error schema", got)
	}
	for name := range at(t, m, "components", "schemas").(map[string]any) {
		if strings.HasPrefix(name, "Error") && name != "Error" && name != "ErrorEnvelope" {
			t.Errorf("schema %s: every error response must use the one ErrorEnvelope", name)
		}
	}
	for _, e := range contract.Errors {
		r := at(t, responses, e.Component).(map[string]any)
		schema := at(t, r, "content", "application/json", "schema", "$ref")
		if schema != "#/components/schemas/ErrorEnvelope" {
			t.Errorf("response %s: schema %v, want the ErrorEnvelope", e.Component, schema)
		}
		if !slices.Contains(codes, any(string(e.Code))) {
			t.Errorf("Error.code: enum %v has no %s", codes, e.Code)
		}
		headers := r["headers"].(map[string]any)
		for status, header := range map[string]string{"401": "WWW-Authenticate", "405": "Allow", "429": "Retry-After"} {
			if strconv.Itoa(e.Status) == status && headers[header] == nil {
				t.Errorf("response %s has no %s header", e.Component, header)
			}
		}
		if headers["X-Request-Id"] == nil {
			t.Errorf("response %s has no X-Request-Id header", e.Component)
		}
	}
	if s := at(t, m, "components", "securitySchemes", "bearerAuth").(map[string]any); s["type"] != "http" || s["scheme"] != "bearer" {
		t.Errorf("bearerAuth: got %v, want http bearer", s)
	}
}

// checkHeadMirrorsGet holds HEAD of path to GET's parameters and statuses,
// with each status's headers and no body.
func checkHeadMirrorsGet(t *testing.T, path string, head, get, components map[string]any) {
	t.Helper()
	if got, want := fmt.Sprint(head["parameters"]), fmt.Sprint(get["parameters"]); got != want {
		t.Errorf("HEAD %s: parameters %s, GET has %s", path, got, want)
	}
	hr, gr := head["responses"].(map[string]any), get["responses"].(map[string]any)
	if got, want := slices.Sorted(maps.Keys(hr)), slices.Sorted(maps.Keys(gr)); !slices.Equal(got, want) {
		t.Errorf("HEAD %s: statuses %v, GET has %v", path, got, want)
	}
	for status, r := range gr {
		g := r.(map[string]any)
		if ref, ok := g["$ref"].(string); ok {
			g = components[strings.TrimPrefix(ref, "#/components/responses/")].(map[string]any)
		}
		h, _ := hr[status].(map[string]any)
		if h == nil {
			continue
		}
		if h["content"] != nil {
			t.Errorf("HEAD %s %s: documents a body", path, status)
		}
		if got, want := fmt.Sprint(h["headers"]), fmt.Sprint(g["headers"]); got != want {
			t.Errorf("HEAD %s %s: headers %s, GET has %s", path, status, got, want)
		}
	}
}

func TestOpenAPIParameters(t *testing.T) {
	m := decodeDoc(t, testDoc(t, openAPITestOptions))
	params := at(t, m, "components", "parameters").(map[string]any)
	schema := func(name string) map[string]any { return at(t, params, name, "schema").(map[string]any) }
	for _, tc := range []struct {
		param         string
		min, max, def float64
	}{
		{"Limit", 1, 100, 50},
		{"EtfLimit", 1, 500, 100},
	} {
		s := schema(tc.param)
		if s["minimum"] != tc.min || s["maximum"] != tc.max || s["default"] != tc.def {
			t.Errorf("%s: got minimum %v maximum %v default %v, want %v %v %v",
				tc.param, s["minimum"], s["maximum"], s["default"], tc.min, tc.max, tc.def)
		}
	}
	if got := schema("Pane")["enum"]; fmt.Sprint(got) != "[news crypto wire blogs twitter iansintel]" {
		t.Errorf("pane enum: got %v", got)
	}
	for _, id := range []string{"PostID", "BriefID"} {
		if s := schema(id); s["type"] != "integer" || s["minimum"] != 1.0 || s["format"] != "int64" {
			t.Errorf("%s: got %v, want a positive int64", id, s)
		}
	}
	for _, p := range []string{"From", "To"} {
		if f := schema(p)["format"]; f != "date" {
			t.Errorf("%s: format %v, want date", p, f)
		}
	}

	match := func(pattern string, in []string, out []string) {
		t.Helper()
		re := regexp.MustCompile(pattern)
		for _, v := range in {
			if !re.MatchString(v) {
				t.Errorf("%s refuses %q", pattern, v)
			}
		}
		for _, v := range out {
			if re.MatchString(v) {
				t.Errorf("%s accepts %q", pattern, v)
			}
		}
	}
	// Booleans are booleans to generators (bool, not *string); the server's
	// extra spellings (1, 0, TRUE) are in words and in params_test.go.
	for p, def := range map[string]bool{"IncludeBody": true, "IncludeRaw": false, "IncludeSummary": false, "Important": false} {
		if s := schema(p); s["type"] != "boolean" || s["default"] != def || s["pattern"] != nil {
			t.Errorf("%s: got %v, want a boolean defaulting to %v", p, s, def)
		}
	}
	// since is one string schema whose pattern takes every since the server
	// takes (its shape; the server also checks the calendar).
	since := schema("Since")
	if since["type"] != "string" || since["anyOf"] != nil || since["format"] != nil {
		t.Errorf("Since: got %v, want one string schema with a pattern", since)
	}
	match(since["pattern"].(string),
		[]string{"2026-01-02", "2026-01-02T15:04:05Z", "2026-01-02T15:04:05.123Z", "2026-01-02T15:04:05.123456789Z",
			"2026-01-02T15:04:05+02:00", "2026-01-02T15:04:05-23:59", "9999-12-31T23:59:59-01:00", "2026-01-02T15:04:05.5+05:30"},
		[]string{"", "2026-01-02T15:04:05", "2026-01-02 15:04:05Z", "2026-01-02T15:04Z", "2026-01-02T15:04:05,5Z",
			"2026-1-2", "20260102", "2026-01-02T15:04:05+0200", "2026-01-02T15:04:05.Z", "yesterday"})
	match(schema("Asset")["pattern"].(string),
		[]string{"BTC", "btc", "btc,ETH", "BTC,ETH,SOL,HYPE", "hype , sol", "BTC,BTC"},
		[]string{"", "XRP", "BTC,", ",BTC", "BTC;ETH", "BTCETH"})
}

// The enumerations agree with the GraphQL schema they come from.
func TestOpenAPIEnumsMatchTheGraphQLSchema(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "schema.graphqls"))
	if err != nil {
		t.Fatal(err)
	}
	schema, gqlErr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(src)})
	if gqlErr != nil {
		t.Fatal(gqlErr)
	}
	values := func(name string) []any {
		var out []any
		for _, v := range schema.Types[name].EnumValues {
			out = append(out, v.Name)
		}
		return out
	}
	if got, want := values("Pane"), contract.Anys(contract.PaneValues); !slices.Equal(got, want) {
		t.Errorf("Pane: GraphQL %v, OpenAPI %v", got, want)
	}
	if got, want := values("EtfAsset"), contract.Anys(contract.AssetValues); !slices.Equal(got, want) {
		t.Errorf("EtfAsset: GraphQL %v, OpenAPI %v", got, want)
	}
}

// Money is a double with at most two decimals said in words: no multipleOf,
// which validators comparing binary floating point (Ajv) refuse for most
// amounts in cents (1234567.89 / 0.01 is not an integer in float64). Every
// amount in cents passes; more decimals are refused by the contract tests.
func TestOpenAPIMoney(t *testing.T) {
	doc := testDoc(t, openAPITestOptions)
	m := decodeDoc(t, doc)
	for _, field := range []string{"net_inflow", "cum_net_inflow", "net_assets", "value_traded"} {
		s := at(t, m, "components", "schemas", "EtfFlow", "properties", field).(map[string]any)
		if s["type"] != "number" || s["format"] != "double" || s["multipleOf"] != nil ||
			!strings.Contains(s["description"].(string), "at most two decimals") {
			t.Errorf("EtfFlow.%s: got %v, want a double with at most two decimals in words", field, s)
		}
	}
	c, err := contractFor(doc)
	if err != nil {
		t.Fatal(err)
	}
	amounts := []string{"0", "-0.07", "0.07", "0.1", "0.29", "1.15", "1234567.89", "-987654321.99", "123456789012.35", "4.35", "-16.57", "9007199254740.99"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		amounts = append(amounts, fmt.Sprintf("%d.%02d", r.Int64N(1e12)-5e11, r.IntN(100)))
	}
	flows := func(amount string) exchange {
		return craft("GET", "/v1/etf-flows", 200, strings.Replace(goodFlows, `"net_inflow":-0.07`, `"net_inflow":`+amount, 1))
	}
	for _, a := range amounts {
		e := flows(a)
		if problems := c.check(e.req, e.resp, e.body); len(problems) > 0 {
			t.Errorf("net_inflow %s refused: %q", a, problems)
		}
	}
	for _, a := range []string{"0.001", "1234567.891", "-0.075"} {
		e := flows(a)
		problems := c.check(e.req, e.resp, e.body)
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "at most two decimals") }) {
			t.Errorf("net_inflow %s: the contract did not refuse it: %q", a, problems)
		}
	}
}
