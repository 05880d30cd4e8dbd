package rest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/landing"
)

// validateAgainstOpenAPI fails t, listing every problem found, unless one
// exchange with the API is what the OpenAPI document doc promises.
//
// Call it for EVERY response a test produces, success or error:
//
//	doc, _ := BuildOpenAPI(opts) // or the body of GET /v1/openapi.json
//	resp := rec.Result()         // or the *http.Response of a client
//	body, _ := io.ReadAll(resp.Body)
//	validateAgainstOpenAPI(t, doc, req, resp, body)
//
// req is the request as sent (a client request or the one given to
// ServeHTTP); resp's Body is ignored, body is its content as read (gzip is
// undone here when Content-Encoding says so). A POST body of req is read
// through req.GetBody when it is set. doc is parsed once per distinct
// content and cached, so calling this for thousands of responses is cheap;
// it is safe for parallel tests.
//
// What is checked, beyond the response schema of the status (body, required
// headers with their schemas, formats such as date and uri):
//   - the status is documented for the operation; an undocumented path must
//     answer 404 and a method the path lacks 405 with Allow (or, from the
//     router, 429 or 500), with the error envelope; HEAD on a /v1 path is
//     checked as GET without a body;
//   - Content-Type is exactly "application/json; charset=utf-8", and 304
//     and HEAD answers have no body;
//   - meta.request_id equals the X-Request-Id header, and ETag is strong;
//   - no number in the body is written in exponent notation, and ETF money
//     has at most two decimals (JSON Schema cannot see notation);
//   - a request that got 2xx or 304 is itself valid: documented parameters
//     within their schemas, none unknown or repeated, and the key present.
func validateAgainstOpenAPI(t testing.TB, doc []byte, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	c, err := contractFor(doc)
	if err != nil {
		t.Fatalf("validateAgainstOpenAPI: %v", err)
	}
	if problems := c.check(req, resp, body); len(problems) > 0 {
		if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
			if plain, err := gunzip(body); err == nil {
				body = plain
			}
		}
		t.Errorf("%s %s → %d breaks the OpenAPI contract:\n  - %s\n  body: %s",
			req.Method, req.URL.RequestURI(), resp.StatusCode, strings.Join(problems, "\n  - "), excerpt(body, 600))
	}
}

// contract checks exchanges against one parsed OpenAPI document.
type docContract struct {
	model    *v3.Document
	full     validator.Validator // responses and requests
	headers  validator.Validator // responses without body validation, for HEAD
	schemas  schema_validation.SchemaValidator
	basePath []string // path prefixes of the servers
}

type contractEntry struct {
	once sync.Once
	c    *docContract
	err  error
}

// contracts caches the parsed contract of each document content.
var contracts sync.Map // string(doc) → *contractEntry

// contractFor returns the cached contract of doc, parsing it on first use.
func contractFor(doc []byte) (*docContract, error) {
	v, _ := contracts.LoadOrStore(string(doc), &contractEntry{})
	e := v.(*contractEntry)
	e.once.Do(func() { e.c, e.err = newContract(doc) })
	return e.c, e.err
}

func newContract(doc []byte) (*docContract, error) {
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("parse the OpenAPI document: %w", err)
	}
	m, err := d.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("build the OpenAPI v3 model: %w", err)
	}
	c := &docContract{
		model:   &m.Model,
		full:    validator.NewValidatorFromV3Model(&m.Model, config.WithFormatAssertions()),
		headers: validator.NewValidatorFromV3Model(&m.Model, config.WithFormatAssertions(), config.WithoutResponseBodyValidation()),
		schemas: schema_validation.NewSchemaValidator(config.WithFormatAssertions()),
	}
	for _, s := range m.Model.Servers {
		if u, err := url.Parse(s.URL); err == nil && strings.Trim(u.Path, "/") != "" {
			c.basePath = append(c.basePath, "/"+strings.Trim(u.Path, "/"))
		}
	}
	return c, nil
}

// Patterns of checks the schema cannot express.
var (
	strongETag = regexp.MustCompile(`^"[^"]+"$`)
	cents      = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]{1,2})?$`)
)

// contractContentType is the Content-Type of every body of the API.
const contractContentType = "application/json; charset=utf-8"

// check returns every way the exchange departs from the contract.
func (c *docContract) check(req *http.Request, resp *http.Response, body []byte) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	header := resp.Header.Clone()
	if strings.EqualFold(header.Get("Content-Encoding"), "gzip") && len(body) > 0 {
		plain, err := gunzip(body)
		if err != nil {
			return []string{"Content-Encoding is gzip but the body does not decompress: " + err.Error()}
		}
		body = plain
		header.Del("Content-Encoding")
		header.Del("Content-Length")
	}
	status := resp.StatusCode
	bodyless := status == http.StatusNotModified || req.Method == http.MethodHead
	if bodyless && len(body) > 0 {
		add("a %d answer to %s must have no body, got %d bytes", status, req.Method, len(body))
	}
	if header.Get("X-Request-Id") == "" {
		add("header X-Request-Id is missing")
	}
	if etag := header.Get("ETag"); etag != "" && !strongETag.MatchString(etag) {
		add("ETag %q is not a strong entity tag (a quoted string without W/)", etag)
	}

	templ, item := c.route(req.URL.Path)
	html := templ == "/graphql" && req.Method == http.MethodGet && status == http.StatusOK &&
		strings.HasPrefix(header.Get("Content-Type"), "text/html")
	// The pages and their assets are not JSON: their documented types. The
	// landing page is HTML when the client prefers it.
	landingHTML := slices.Contains(contract.LandingPaths, templ) && landing.PrefersHTML(req.Header.Values("Accept"))
	if status == http.StatusOK && (templ == contract.DashboardPath || templ == contract.DashboardAssetsPath+"/{file}" || templ == contract.GraphiQLAssetsPath+"/{file}" ||
		templ == contract.ReferencePath || templ == contract.ReferenceAssetsPath+"/{file}" || landingHTML) {
		ct, _, _ := strings.Cut(header.Get("Content-Type"), ";")
		if !slices.Contains([]string{"text/html", "text/javascript", "text/css"}, ct) {
			add("Content-Type is %q, want HTML, a script or a stylesheet", header.Get("Content-Type"))
		}
		html = true
	}
	if ct := header.Get("Content-Type"); status != http.StatusNotModified && ct != contractContentType && !html {
		add("Content-Type is %q, want %q", ct, contractContentType)
	}

	var envelope struct {
		Meta *struct {
			RequestID *string `json:"request_id"`
		} `json:"meta"`
	}
	if !bodyless && !html && json.Unmarshal(body, &envelope) == nil && envelope.Meta != nil && envelope.Meta.RequestID != nil {
		if got, want := *envelope.Meta.RequestID, header.Get("X-Request-Id"); got != want {
			add("meta.request_id is %q but the X-Request-Id header is %q", got, want)
		}
	}
	if !bodyless && !html && len(body) > 0 {
		problems = append(problems, numberProblems(body, strings.HasPrefix(templ, "/v1/etf-flows"))...)
		if templ != "/v1/openapi.json" {
			problems = append(problems, shapeProblems(status, body)...)
		}
	}

	// Every /v1 path takes HEAD: the headers of GET without the body.
	// HEAD is documented as an operation of its own; it is checked as GET,
	// whose responses it mirrors.
	method := req.Method
	if method == http.MethodHead && item != nil && item.Head != nil {
		method = http.MethodGet
	}
	var op *v3.Operation
	if item != nil {
		op = item.GetOperations().GetOrZero(strings.ToLower(method))
	}
	if op == nil {
		// The router answers undocumented paths and methods on its own.
		what, want := req.URL.Path+" is not a documented path", http.StatusNotFound
		if item != nil {
			what, want = req.Method+" is not documented for "+templ, http.StatusMethodNotAllowed
		}
		return append(problems, c.routerAnswer(what, want, status, header, body, bodyless)...)
	}

	vreq := req.Clone(req.Context())
	vreq.Method = method
	vreq.Body = http.NoBody
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			vreq.Body = rc
		}
	}
	vresp := *resp
	vresp.Header = header
	vresp.Body = io.NopCloser(bytes.NewReader(body))
	vresp.ContentLength = int64(len(body))
	v := c.full
	if bodyless {
		v = c.headers
	}
	if _, errs := v.ValidateHttpResponse(vreq, &vresp); len(errs) > 0 {
		problems = append(problems, describe("response", errs)...)
	}

	// A request the server accepted must be one the document allows.
	if status/100 == 2 || status == http.StatusNotModified {
		if _, errs := c.full.ValidateHttpRequest(vreq); len(errs) > 0 {
			problems = append(problems, describe("accepted request", errs)...)
		}
		for name, values := range req.URL.Query() {
			if !slices.ContainsFunc(op.Parameters, func(p *v3.Parameter) bool { return p.In == "query" && p.Name == name }) {
				add("the server accepted the undocumented query parameter %q", name)
			} else if len(values) > 1 {
				add("the server accepted the repeated query parameter %q", name)
			}
		}
	}
	return problems
}

// routerAnswer checks the answer to an undocumented path (want 404) or
// method (want 405, with Allow). The per-IP rate limit (429) and a fault
// (500) may come first.
func (c *docContract) routerAnswer(what string, want, status int, header http.Header, body []byte, bodyless bool) []string {
	var problems []string
	if status != want && status != http.StatusTooManyRequests && status != http.StatusInternalServerError {
		problems = append(problems, fmt.Sprintf("%s, so the answer must be %d (or 429 or 500), got %d", what, want, status))
		status = want
	}
	for s, h := range map[int]string{http.StatusMethodNotAllowed: "Allow", http.StatusTooManyRequests: "Retry-After"} {
		if status == s && header.Get(h) == "" {
			problems = append(problems, fmt.Sprintf("a %d answer needs the %s header", s, h))
		}
	}
	if bodyless {
		return problems
	}
	if _, ok := statusCodes[status]; ok {
		problems = append(problems, c.errorBody("ErrorEnvelope", body)...)
	}
	return problems
}

// statusCodes maps each error status to the one code its envelope carries
// (431 is a bad_request whose header is too large).
var statusCodes = func() map[int]string {
	m := map[int]string{http.StatusRequestHeaderFieldsTooLarge: "bad_request"}
	for _, e := range contract.Errors {
		m[e.Status] = string(e.Code)
	}
	return m
}()

// shapeProblems checks what the schemas leave to words, so that generators
// get plain types: an error envelope's code is the one of its status; a
// page's next_cursor is a string exactly while has_more is true; a GraphQL
// response has data or errors.
func shapeProblems(status int, body []byte) []string {
	var b struct {
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
		Pagination *struct {
			NextCursor *string `json:"next_cursor"`
			HasMore    bool    `json:"has_more"`
		} `json:"pagination"`
		Data   json.RawMessage `json:"data"`
		Errors json.RawMessage `json:"errors"`
		Meta   json.RawMessage `json:"meta"`
	}
	if json.Unmarshal(body, &b) != nil {
		return nil // the schema validation reports bodies that are not JSON objects
	}
	var problems []string
	if b.Error != nil {
		if want, ok := statusCodes[status]; !ok || b.Error.Code != want {
			problems = append(problems, fmt.Sprintf("error.code %q in a %d answer, want %q", b.Error.Code, status, want))
		}
	}
	if p := b.Pagination; p != nil && p.HasMore != (p.NextCursor != nil) {
		problems = append(problems, fmt.Sprintf("pagination: has_more %v with next_cursor %v", p.HasMore, p.NextCursor))
	}
	if b.Error == nil && b.Meta == nil && b.Data == nil && b.Errors == nil {
		problems = append(problems, "a GraphQL response without data and without errors")
	}
	return problems
}

// route finds the documented path template that path matches (a literal
// template before one with parameters), also with a server's base path
// removed. The item is nil for an undocumented path.
func (c *docContract) route(path string) (string, *v3.PathItem) {
	candidates := []string{path}
	for _, base := range c.basePath {
		if rest, ok := strings.CutPrefix(path, base); ok {
			candidates = append(candidates, rest)
		}
	}
	var templ string
	var found *v3.PathItem
	for _, p := range candidates {
		for t, item := range c.model.Paths.PathItems.FromOldest() {
			if !pathMatches(t, p) {
				continue
			}
			if found == nil || !strings.Contains(t, "{") {
				templ, found = t, item
			}
		}
	}
	return templ, found
}

// pathMatches reports whether path fits template, whose {name} segments
// take any non-empty segment.
func pathMatches(template, path string) bool {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i, t := range ts {
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
			if ps[i] == "" {
				return false
			}
		} else if t != ps[i] {
			return false
		}
	}
	return true
}

// errorBody checks body against the named component schema.
func (c *docContract) errorBody(schema string, body []byte) []string {
	proxy := c.model.Components.Schemas.GetOrZero(schema)
	if proxy == nil {
		return []string{"the document has no schema " + schema}
	}
	var s *base.Schema = proxy.Schema()
	if _, errs := c.schemas.ValidateSchemaBytes(s, body); len(errs) > 0 {
		return describe(schema+" body", errs)
	}
	return nil
}

// describe flattens validation errors into one line per failure.
func describe(what string, errs []*liberrors.ValidationError) []string {
	var out []string
	for _, e := range errs {
		line := what + ": " + e.Message
		if e.Reason != "" && e.Reason != e.Message {
			line += " (" + e.Reason + ")"
		}
		if len(e.SchemaValidationErrors) == 0 {
			out = append(out, line)
			continue
		}
		for _, f := range e.SchemaValidationErrors {
			where := f.FieldPath
			if where == "" {
				where = "/" + strings.Join(f.InstancePath, "/")
			}
			out = append(out, fmt.Sprintf("%s: %s: at %s: %s [%s]", what, e.Message, where, f.Reason, f.KeywordLocation))
		}
	}
	return out
}

// coinUnits is a quantity of coins as the ETF endpoints write it.
var coinUnits = regexp.MustCompile(`^\d+(\.\d{1,8})?$`)

// numberProblems finds numbers written in exponent notation anywhere in body
// but inside a post's raw payload (passed through as stored) and, with
// money set, ETF amounts with more than two decimals (holdings: coins with
// more than eight).
func numberProblems(body []byte, money bool) []string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil // the schema validation reports bodies that are not JSON
	}
	var problems []string
	var walk func(path, key string, v any)
	walk = func(path, key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k != "raw" {
					walk(path+"."+k, k, e)
				}
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), key, e)
			}
		case json.Number:
			switch {
			case strings.ContainsAny(string(x), "eE"):
				problems = append(problems, fmt.Sprintf("%s is %s, in exponent notation; numbers must be plain decimals", path, x))
			case money && key == "holdings":
				if !coinUnits.MatchString(string(x)) {
					problems = append(problems, fmt.Sprintf("%s is %s; coins must be a plain decimal with at most eight decimals", path, x))
				}
			case money && !cents.MatchString(string(x)):
				problems = append(problems, fmt.Sprintf("%s is %s; money must be a plain decimal with at most two decimals", path, x))
			}
		}
	}
	walk("$", "", v)
	return problems
}

func gunzip(b []byte) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer z.Close()
	return io.ReadAll(z)
}

// excerpt shortens a body for a failure message.
func excerpt(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// The harness's self-tests: hand-made exchanges, no server.

// openAPITestOptions are the options of the golden document and of the
// harness's self-tests.
var openAPITestOptions = OpenAPIOptions{
	ServerURL:    "https://api.example.test",
	AltServerURL: "https://alt.example.test",
	ETFEnabled:   true,
	Version:      "1.2.3",
	RateLimit:    120,
}

// testDoc builds the document of o or fails the test.
func testDoc(t testing.TB, o OpenAPIOptions) []byte {
	t.Helper()
	doc, err := BuildOpenAPI(o)
	if err != nil {
		t.Fatalf("BuildOpenAPI: %v", err)
	}
	return doc
}

// exchange is a hand-made request and response.
type exchange struct {
	req  *http.Request
	resp *http.Response
	body []byte
}

const craftedRequestID = "0195f3a2c4e8b1d0a7c3e5f7a9b1c3d5"

// craft makes a well-formed exchange: a keyed request and an answer with
// the headers of its status; body may use %[1]s for the request id.
func craft(method, target string, status int, body string) exchange {
	req, err := http.NewRequest(method, "https://api.example.test"+target, nil)
	if err != nil {
		panic(err)
	}
	req.Header.Set("Authorization", "Bearer test-key")
	h := http.Header{}
	h.Set("X-Request-Id", craftedRequestID)
	h.Set("X-Content-Type-Options", "nosniff")
	if status != http.StatusNotModified {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	if status != http.StatusUnauthorized && status != http.StatusInternalServerError {
		h.Set("RateLimit-Limit", "120")
		h.Set("RateLimit-Remaining", "119")
		h.Set("RateLimit-Reset", "60")
		h.Set("RateLimit-Policy", `"default";q=120;w=60`)
		h.Set("RateLimit", `"default";r=119;t=60`)
	}
	switch status {
	case http.StatusOK, http.StatusNotModified:
		h.Set("ETag", `"8f14e45fceea167a5a36dedd4bea2543"`)
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="feedapi"`)
	case http.StatusMethodNotAllowed:
		h.Set("Allow", "GET, HEAD")
	case http.StatusTooManyRequests:
		h.Set("Retry-After", "60")
	}
	if strings.Contains(body, "%[1]s") {
		body = fmt.Sprintf(body, craftedRequestID)
	}
	return exchange{req: req, resp: &http.Response{StatusCode: status, Header: h, Body: http.NoBody}, body: []byte(body)}
}

// with returns a copy of e changed by f.
func (e exchange) with(f func(e *exchange)) exchange {
	c := exchange{req: e.req.Clone(e.req.Context()), body: slices.Clone(e.body)}
	r := *e.resp
	r.Header = e.resp.Header.Clone()
	c.resp = &r
	f(&c)
	return c
}

// Bodies of well-formed answers.
const (
	metaFree   = `"meta":{"api_version":"v1","tier":"free","request_id":"%[1]s"}`
	metaETF    = `"meta":{"api_version":"v1","tier":"free","units":"usd","request_id":"%[1]s"}`
	metaNoKey  = `"meta":{"api_version":"v1","tier":null,"request_id":"%[1]s"}`
	goodPost   = `{"uid":"cp_42","id":42,"source":"WatcherGuru","username":"watcherguru","body":"BTC breaks $100k","url":"https://t.me/WatcherGuru/42","original_source_url":null,"created_at":"2026-01-05T09:30:00.123Z"}`
	goodPage   = `{"data":[` + goodPost + `],"pagination":{"next_cursor":"djE6cG9zdHM6NDI","has_more":true},` + metaFree + `}`
	goodFlow   = `{"uid":"etf_BTC_2026-01-05","asset":"BTC","flow_date":"2026-01-05","net_inflow":-0.07,"cum_net_inflow":1234567.89,"net_assets":98765432101.5,"value_traded":0,"updated_at":"2026-01-06T01:00:00.000Z"}`
	goodFlows  = `{"data":[` + goodFlow + `],"pagination":null,` + metaETF + `}`
	goodErr400 = `{"error":{"code":"bad_request","message":"limit must be an integer from 1 to 100"},` + metaFree + `}`
)

func TestContractAcceptsAValidPostsPage(t *testing.T) {
	doc := testDoc(t, openAPITestOptions)
	e := craft("GET", "/v1/posts?limit=1&include_body=TRUE&since=2026-01-01", 200, goodPage)
	validateAgainstOpenAPI(t, doc, e.req, e.resp, e.body)
}

func TestContractAcceptsWellFormedExchanges(t *testing.T) {
	t.Parallel()
	doc := testDoc(t, openAPITestOptions)
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	fmt.Fprintf(z, goodPage, craftedRequestID)
	z.Close()

	for _, tc := range []struct {
		name string
		e    exchange
	}{
		{"posts page", craft("GET", "/v1/posts?cursor=djE6cG9zdHM6NDI&source=WatcherGuru&since=2026-01-02T03:04:05%2B02:00", 200, goodPage)},
		{"last page", craft("GET", "/v1/posts?include_body=0", 200,
			`{"data":[{"uid":"cp_1","id":1,"source":"s","username":"u","url":null,"original_source_url":null,"created_at":"2026-01-05T09:30:00.000Z"}],"pagination":{"next_cursor":null,"has_more":false},`+metaFree+`}`)},
		{"gzipped page", craft("GET", "/v1/posts", 200, "").with(func(e *exchange) {
			e.resp.Header.Set("Content-Encoding", "gzip")
			e.body = gz.Bytes()
		})},
		{"post with raw", craft("GET", "/v1/posts/42?include_raw=true", 200,
			`{"data":{"uid":"cp_42","id":42,"source":"s","username":"u","body":"b","url":null,"original_source_url":"https://example.com/a","created_at":"2026-01-05T09:30:00.123Z","raw":{"views":1.5e3}},"pagination":null,`+metaFree+`}`)},
		{"briefs page", craft("GET", "/v1/briefs?limit=100", 200,
			`{"data":[{"uid":"wb_3","id":3,"week_start":"2025-12-29","week_end":"2026-01-04","post_count":0,"created_at":"2026-01-05T06:00:00.000Z"}],"pagination":{"next_cursor":null,"has_more":false},`+metaFree+`}`)},
		{"brief", craft("GET", "/v1/briefs/3", 200,
			`{"data":{"uid":"wb_3","id":3,"week_start":"2025-12-29","week_end":"2026-01-04","post_count":12,"created_at":"2026-01-05T06:00:00.000Z","content":"# Week 1"},"pagination":null,`+metaFree+`}`)},
		{"firehose page", craft("GET", "/v1/firehose?pane=iansintel&important=False&include_summary=1&source=100%25_real", 200,
			`{"data":[{"uid":"tm_7","id":7,"pane":"iansintel","source":"iansintel","source_name":null,"name":null,"username":null,"title":"T","body":null,"summary_ai":null,"important":true,"url":null,"original_source_url":null,"created_at":"2026-01-05T09:30:00.000Z"}],"pagination":{"next_cursor":"abc","has_more":true},`+metaFree+`}`)},
		{"sources", craft("GET", "/v1/sources", 200,
			`{"data":{"curated_sources":["A","B"],"firehose_panes":["blogs","crypto"],"etf_assets":["BTC","ETH","HYPE","SOL"]},"pagination":null,`+metaFree+`}`)},
		{"etf flows", craft("GET", "/v1/etf-flows?asset=btc,%20ETH&from=2026-01-01&to=2026-01-31&limit=500", 200, goodFlows)},
		{"etf latest", craft("GET", "/v1/etf-flows/latest", 200, goodFlows)},
		{"health", craft("GET", "/v1/health", 200,
			`{"data":{"status":"ok","version":"1.2.3","api_version":"v1","database":"ok","database_primary":"ok","database_replica":"none","rate_limits":"local"},"pagination":null,`+metaNoKey+`}`)},
		{"health degraded", craft("GET", "/v1/health", 503,
			`{"data":{"status":"degraded","version":"1.2.3","api_version":"v1","database":"unreachable","database_primary":"unreachable","database_replica":"none","rate_limits":"local"},"pagination":null,`+metaNoKey+`}`)},
		{"health primary away", craft("GET", "/v1/health", 200,
			`{"data":{"status":"degraded","version":"1.2.3","api_version":"v1","database":"ok","database_primary":"unreachable","database_replica":"ok","rate_limits":"shared"},"pagination":null,`+metaNoKey+`}`)},
		{"openapi", craft("GET", "/v1/openapi.json", 200, string(doc))},
		{"not modified", craft("GET", "/v1/posts", 304, "")},
		{"head", craft("HEAD", "/v1/posts", 200, "")},
		{"bad request", craft("GET", "/v1/posts?limit=0", 400, goodErr400)},
		{"bad id", craft("GET", "/v1/posts/abc", 400, goodErr400)},
		{"unauthorized", craft("GET", "/v1/posts", 401,
			`{"error":{"code":"unauthorized","message":"API key is missing, invalid or revoked"},`+metaNoKey+`}`).with(func(e *exchange) {
			e.req.Header.Del("Authorization")
		})},
		{"forbidden tier", craft("POST", "/graphql", 403,
			`{"error":{"code":"forbidden_tier","message":"this endpoint needs a key of tier internal"},`+metaFree+`}`)},
		{"not found", craft("GET", "/v1/posts/999", 404,
			`{"error":{"code":"not_found","message":"post 999 not found"},`+metaFree+`}`)},
		{"unknown path", craft("GET", "/v1/nope", 404,
			`{"error":{"code":"not_found","message":"no such path: /v1/nope"},`+metaNoKey+`}`)},
		{"method not allowed", craft("DELETE", "/v1/posts", 405,
			`{"error":{"code":"method_not_allowed","message":"method DELETE is not allowed on /v1/posts; allowed: GET, HEAD"},`+metaNoKey+`}`)},
		{"graphql playground", craft("GET", "/graphql", 200, "<!DOCTYPE html><html></html>").with(func(e *exchange) {
			e.req.Header.Set("Accept", "text/html")
			e.resp.Header.Set("Content-Type", "text/html; charset=UTF-8")
			e.resp.Header.Del("ETag")
		})},
		{"HEAD on /graphql", craft("HEAD", "/graphql", 405, "").with(func(e *exchange) { e.resp.Header.Set("Allow", "GET, POST") })},
		{"unknown path over the per-IP limit", craft("GET", "/nope", 429,
			`{"error":{"code":"rate_limited","message":"rate limit of 600 requests per minute per client address exceeded; retry after 60 seconds"},`+metaNoKey+`}`)},
		{"rate limited", craft("GET", "/v1/posts", 429,
			`{"error":{"code":"rate_limited","message":"rate limit of 120 requests per minute exceeded; retry after 60 seconds"},`+metaFree+`}`)},
		{"internal", craft("GET", "/v1/posts", 500,
			`{"error":{"code":"internal","message":"internal error; retry, then contact support with meta.request_id"},`+metaFree+`}`)},
		{"graphql", craft("GET", "/graphql?query=%7Bhealth%7Bstatus%7D%7D", 200, `{"data":{"health":{"status":"ok"}}}`).with(func(e *exchange) {
			e.resp.Header.Del("ETag")
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := contractFor(doc)
			if err != nil {
				t.Fatal(err)
			}
			if problems := c.check(tc.e.req, tc.e.resp, tc.e.body); len(problems) > 0 {
				t.Errorf("a well-formed exchange was refused:\n  - %s", strings.Join(problems, "\n  - "))
			}
		})
	}
}

func TestContractCatchesBreaches(t *testing.T) {
	t.Parallel()
	doc := testDoc(t, openAPITestOptions)
	page := craft("GET", "/v1/posts", 200, goodPage)
	post := func(replace, with string) exchange {
		return craft("GET", "/v1/posts", 200, strings.Replace(goodPage, replace, with, 1))
	}
	flows := func(replace, with string) exchange {
		return craft("GET", "/v1/etf-flows", 200, strings.Replace(goodFlows, replace, with, 1))
	}
	firehose := func(pane string) exchange {
		return craft("GET", "/v1/firehose", 200,
			`{"data":[{"uid":"tm_7","id":7,"pane":"`+pane+`","source":"x","source_name":null,"name":null,"username":null,"title":null,"body":null,"important":false,"url":null,"original_source_url":null,"created_at":"2026-01-05T09:30:00.000Z"}],"pagination":{"next_cursor":null,"has_more":false},`+metaFree+`}`)
	}
	for _, tc := range []struct {
		name string
		e    exchange
		want string // a fragment of the problem reported (case-insensitive)
	}{
		// The breaches the harness exists for.
		{"missing meta.request_id", post(`,"request_id":"%[1]s"`, ""), "'request_id'"},
		{"created_at without milliseconds", post("09:30:00.123Z", "09:30:00Z"), "created_at"},
		{"unknown field in a post", post(`"username":"watcherguru",`, `"username":"watcherguru","likes":3,`), "'likes'"},
		{"money in exponent notation", flows("1234567.89", "1.5e+09"), "exponent notation"},
		{"pane outside the enum", firehose("reddit"), "pane"},
		{"error envelope with data", craft("GET", "/v1/posts", 400, `{"data":[],`+goodErr400[1:]), "'data'"},
		{"400 without the error envelope", craft("GET", "/v1/posts", 400, `{"message":"limit must be an integer from 1 to 100"}`), "'error'"},

		// More of the contract.
		{"request id differs from the header", post("%[1]s", "another-id"), "X-Request-Id"},
		{"X-Request-Id missing", page.with(func(e *exchange) { e.resp.Header.Del("X-Request-Id") }), "X-Request-Id"},
		{"X-Content-Type-Options missing", page.with(func(e *exchange) { e.resp.Header.Del("X-Content-Type-Options") }), "X-Content-Type-Options"},
		{"money with three decimals", flows("-0.07", "-0.075"), "two decimals"},
		{"integer id as a float", post(`"id":42`, `"id":4.2`), "id"},
		{"uid of another kind", post(`"uid":"cp_42"`, `"uid":"tm_42"`), "uid"},
		{"body null", post(`"body":"BTC breaks $100k"`, `"body":null`), "body"},
		{"url field missing", post(`"url":"https://t.me/WatcherGuru/42",`, ""), "'url'"},
		{"url not a URL", post(`"https://t.me/WatcherGuru/42"`, `"t.me WatcherGuru"`), "uri"},
		{"has_more without a cursor", post(`"next_cursor":"djE6cG9zdHM6NDI"`, `"next_cursor":null`), "next_cursor"},
		{"pagination null on a list", post(`"pagination":{"next_cursor":"djE6cG9zdHM6NDI","has_more":true}`, `"pagination":null`), "pagination"},
		{"wrong api_version", post(`"api_version":"v1"`, `"api_version":"1"`), "api_version"},
		{"unknown tier", post(`"tier":"free"`, `"tier":"gold"`), "tier"},
		{"units outside ETF", post(`"tier":"free"`, `"tier":"free","units":"usd"`), "'units'"},
		{"ETF without units", flows(`"units":"usd",`, ""), "'units'"},
		{"error code of another status", craft("GET", "/v1/posts", 400, strings.Replace(goodErr400, "bad_request", "not_found", 1)), "bad_request"},
		{"error without message", craft("GET", "/v1/posts", 400, strings.Replace(goodErr400, `"limit must be an integer from 1 to 100"`, `""`, 1)), "message"},
		{"Content-Type without charset", page.with(func(e *exchange) { e.resp.Header.Set("Content-Type", "application/json") }), "Content-Type"},
		{"weak ETag", page.with(func(e *exchange) { e.resp.Header.Set("ETag", `W/"abc"`) }), "strong"},
		{"200 without ETag", page.with(func(e *exchange) { e.resp.Header.Del("ETag") }), "ETag"},
		{"rate-limit headers missing", page.with(func(e *exchange) { e.resp.Header.Del("RateLimit-Remaining") }), "RateLimit-Remaining"},
		{"RateLimit-Reset not a number", page.with(func(e *exchange) { e.resp.Header.Set("RateLimit-Reset", "soon") }), "ratelimit-reset"},
		{"304 with a body", craft("GET", "/v1/posts", 304, goodPage), "no body"},
		{"HEAD with a body", craft("HEAD", "/v1/posts", 200, goodPage), "no body"},
		{"401 without WWW-Authenticate", craft("GET", "/v1/posts", 401,
			`{"error":{"code":"unauthorized","message":"API key is missing, invalid or revoked"},`+metaNoKey+`}`).with(func(e *exchange) {
			e.resp.Header.Del("WWW-Authenticate")
		}), "WWW-Authenticate"},
		{"429 without Retry-After", craft("GET", "/v1/posts", 429,
			`{"error":{"code":"rate_limited","message":"slow down"},`+metaFree+`}`).with(func(e *exchange) {
			e.resp.Header.Del("Retry-After")
		}), "Retry-After"},
		{"undocumented status", craft("GET", "/v1/posts", 418, `{"error":{"code":"internal","message":"teapot"},`+metaFree+`}`), "418"},
		{"404 where the list cannot miss", craft("GET", "/v1/posts", 404, `{"error":{"code":"not_found","message":"x"},`+metaFree+`}`), "404"},
		{"unknown path answered", craft("GET", "/v1/post", 200, goodPage), "must be 404"},
		{"unknown path without envelope", craft("GET", "/v1/post", 404, `404 page not found`), "ErrorEnvelope"},
		{"405 without Allow", craft("DELETE", "/v1/posts", 405,
			`{"error":{"code":"method_not_allowed","message":"no"},`+metaNoKey+`}`).with(func(e *exchange) { e.resp.Header.Del("Allow") }), "Allow"},
		{"accepted an out-of-range limit", craft("GET", "/v1/posts?limit=101", 200, goodPage), "limit"},
		{"accepted a bad boolean", craft("GET", "/v1/posts?include_raw=yes", 200, goodPage), "include_raw"},
		{"accepted a bad since", craft("GET", "/v1/posts?since=yesterday", 200, goodPage), "since"},
		{"accepted an unknown parameter", craft("GET", "/v1/posts?limt=10", 200, goodPage), "undocumented query parameter"},
		{"accepted a repeated parameter", craft("GET", "/v1/posts?limit=10&limit=20", 200, goodPage), "repeated"},
		{"accepted an unknown asset", craft("GET", "/v1/etf-flows?asset=BTC,XRP", 200, goodFlows), "asset"},
		{"accepted no key", page.with(func(e *exchange) { e.req.Header.Del("Authorization") }), "Authorization"},
		{"gzip that is not", page.with(func(e *exchange) { e.resp.Header.Set("Content-Encoding", "gzip") }), "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := contractFor(doc)
			if err != nil {
				t.Fatal(err)
			}
			problems := c.check(tc.e.req, tc.e.resp, tc.e.body)
			if len(problems) == 0 {
				t.Fatalf("the breach went unnoticed")
			}
			if all := strings.Join(problems, "\n"); !strings.Contains(strings.ToLower(all), strings.ToLower(tc.want)) {
				t.Errorf("problems do not mention %q:\n%s", tc.want, all)
			}
		})
	}
}

// recordingTB records failures instead of failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestValidateAgainstOpenAPIReportsEveryProblem(t *testing.T) {
	doc := testDoc(t, openAPITestOptions)
	body := strings.Replace(strings.Replace(goodPage, "09:30:00.123Z", "09:30:00Z", 1), `"source":"WatcherGuru"`, `"source":7`, 1)
	e := craft("GET", "/v1/posts?limit=1", 200, body)
	e.resp.Header.Del("ETag")
	rec := &recordingTB{TB: t}
	validateAgainstOpenAPI(rec, doc, e.req, e.resp, e.body)
	if len(rec.errors) != 1 {
		t.Fatalf("got %d failures, want 1 listing every problem: %q", len(rec.errors), rec.errors)
	}
	for _, want := range []string{"GET /v1/posts?limit=1 → 200", "created_at", "source", "ETag", `"uid":"cp_42"`} {
		if !strings.Contains(rec.errors[0], want) {
			t.Errorf("the failure does not mention %q:\n%s", want, rec.errors[0])
		}
	}
}

func TestContractIsParsedOncePerDocument(t *testing.T) {
	doc := testDoc(t, openAPITestOptions)
	a, err := contractFor(doc)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := contractFor(slices.Clone(doc))
	if a != b {
		t.Error("the same document was parsed twice")
	}
	other, _ := contractFor(testDoc(t, OpenAPIOptions{ServerURL: "https://other.example.test"}))
	if other == a {
		t.Error("a different document shares the cached contract")
	}
	if _, err := contractFor([]byte("{not json")); err == nil {
		t.Error("a broken document gave no error")
	}
}
