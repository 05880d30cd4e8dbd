package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/feedapi/feedapi/graph/apperr"
)

// OpenAPIOptions are the facts of one deployment that its OpenAPI document
// depends on.
type OpenAPIOptions struct {
	// ServerURL is the primary address of the API ({base_url}) without the
	// /v1 prefix, which every documented path carries itself. Empty means
	// "/": the host that serves the document.
	ServerURL string
	// AltServerURL is a second address reaching the same API
	// ({alt_base_url}); empty leaves it out.
	AltServerURL string
	// ETFEnabled documents /v1/etf-flows, /v1/etf-flows/latest,
	// /v1/etf-flows/summary and the etf_assets list of /v1/sources; without
	// it they are absent, as they are from the deployment.
	ETFEnabled bool
	// Version is the build version of the service: info.version.
	Version string
	// RateLimit is the default budget of a key in requests per minute
	// (0 means DefaultRateLimit); the description quotes it.
	RateLimit int
}

// BuildOpenAPI returns the OpenAPI 3.1.0 document served at
// GET /v1/openapi.json, as indented JSON. It is deterministic: the same
// options give the same bytes (object keys are sorted), so it can be
// compared with a golden file and served with a stable ETag.
//
// The document is the contract's reference: the tests of package rest check
// every response they produce against it (see validateAgainstOpenAPI in
// contract_test.go).
func BuildOpenAPI(o OpenAPIOptions) ([]byte, error) {
	if o.RateLimit <= 0 {
		o.RateLimit = DefaultRateLimit
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep <API_KEY> readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(oaBuild(o)); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return buf.Bytes(), nil
}

// The document model: the parts of OpenAPI 3.1 this API uses, in their
// conventional order. Maps marshal with sorted keys, which keeps the output
// stable.
type (
	oaDocument struct {
		OpenAPI    string                 `json:"openapi"`
		Info       oaInfo                 `json:"info"`
		Servers    []oaServer             `json:"servers"`
		Security   []oaSecurity           `json:"security"`
		Tags       []oaTag                `json:"tags"`
		Paths      map[string]*oaPathItem `json:"paths"`
		Components oaComponents           `json:"components"`
	}
	oaInfo struct {
		Title       string `json:"title"`
		Summary     string `json:"summary"`
		Description string `json:"description"`
		Version     string `json:"version"`
	}
	oaServer struct {
		URL         string `json:"url"`
		Description string `json:"description"`
	}
	oaTag struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	// oaSecurity is one security requirement: scheme name → scopes.
	oaSecurity map[string][]string
	oaPathItem struct {
		Get  *oaOperation `json:"get,omitempty"`
		Head *oaOperation `json:"head,omitempty"`
		Post *oaOperation `json:"post,omitempty"`
	}
	oaOperation struct {
		OperationID string                 `json:"operationId"`
		Summary     string                 `json:"summary"`
		Description string                 `json:"description,omitempty"`
		Tags        []string               `json:"tags"`
		Security    []oaSecurity           `json:"security"` // never nil: [] marks an open operation
		Parameters  []*oaParameter         `json:"parameters,omitempty"`
		RequestBody *oaRequestBody         `json:"requestBody,omitempty"`
		Responses   map[string]*oaResponse `json:"responses"`
	}
	oaParameter struct {
		Ref         string    `json:"$ref,omitempty"`
		Name        string    `json:"name,omitempty"`
		In          string    `json:"in,omitempty"`
		Description string    `json:"description,omitempty"`
		Required    bool      `json:"required,omitempty"`
		Schema      *oaSchema `json:"schema,omitempty"`
	}
	oaRequestBody struct {
		Description string                 `json:"description"`
		Required    bool                   `json:"required"`
		Content     map[string]oaMediaType `json:"content"`
	}
	oaResponse struct {
		Ref         string                 `json:"$ref,omitempty"`
		Description string                 `json:"description,omitempty"`
		Headers     map[string]*oaHeader   `json:"headers,omitempty"`
		Content     map[string]oaMediaType `json:"content,omitempty"`
	}
	oaHeader struct {
		Ref         string    `json:"$ref,omitempty"`
		Description string    `json:"description,omitempty"`
		Required    bool      `json:"required,omitempty"`
		Schema      *oaSchema `json:"schema,omitempty"`
	}
	oaMediaType struct {
		Schema *oaSchema `json:"schema"`
	}
	oaSecurityScheme struct {
		Type         string `json:"type"`
		Scheme       string `json:"scheme"`
		BearerFormat string `json:"bearerFormat"`
		Description  string `json:"description"`
	}
	oaComponents struct {
		Schemas         map[string]*oaSchema        `json:"schemas"`
		Parameters      map[string]*oaParameter     `json:"parameters"`
		Headers         map[string]*oaHeader        `json:"headers"`
		Responses       map[string]*oaResponse      `json:"responses"`
		SecuritySchemes map[string]oaSecurityScheme `json:"securitySchemes"`
	}
	// oaSchema is a JSON Schema 2020-12 object, OpenAPI 3.1's dialect.
	oaSchema struct {
		Ref                  string      `json:"$ref,omitempty"`
		Description          string      `json:"description,omitempty"`
		Type                 any         `json:"type,omitempty"` // a name, or a list of names (["string", "null"])
		Format               string      `json:"format,omitempty"`
		Pattern              string      `json:"pattern,omitempty"`
		Const                any         `json:"const,omitempty"`
		Enum                 []any       `json:"enum,omitempty"`
		Default              any         `json:"default,omitempty"`
		Minimum              *int64      `json:"minimum,omitempty"`
		Maximum              *int64      `json:"maximum,omitempty"`
		MinLength            *int64      `json:"minLength,omitempty"`
		MaxLength            *int64      `json:"maxLength,omitempty"`
		Items                *oaSchema   `json:"items,omitempty"`
		UniqueItems          bool        `json:"uniqueItems,omitempty"`
		Properties           oaProps     `json:"properties,omitempty"`
		Required             []string    `json:"required,omitempty"`
		AdditionalProperties *bool       `json:"additionalProperties,omitempty"`
		AllOf                []*oaSchema `json:"allOf,omitempty"`
		AnyOf                []*oaSchema `json:"anyOf,omitempty"`
		OneOf                []*oaSchema `json:"oneOf,omitempty"`
		Examples             []any       `json:"examples,omitempty"`
	}
	oaProps = map[string]*oaSchema
)

// Names used across the document.
const (
	oaBearer    = "bearerAuth"
	oaMediaJSON = "application/json"
	oaTagMeta   = "meta"
	oaTagPosts  = "posts"
	oaTagBriefs = "briefs"
	oaTagFeed   = "firehose"
	oaTagSource = "sources"
	oaTagETF    = "etf"
	oaTagGQL    = "graphql"
)

// Patterns of the contract's formats. They use only the syntax shared by
// ECMA-262, RE2 and PCRE, so that every tool reads them alike (hence
// [Tt][Rr][Uu][Ee] instead of an inline case-insensitivity flag).
const (
	oaPatternDateTime = `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`
	oaPatternSince    = `^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))?$`
	oaPatternAsset    = `\s*([Bb][Tt][Cc]|[Ee][Tt][Hh]|[Ss][Oo][Ll]|[Hh][Yy][Pp][Ee])\s*`
	oaPatternAssets   = `^` + oaPatternAsset + `(,` + oaPatternAsset + `)*$`
)

// The enumerations of the contract.
var (
	oaPanes  = []any{"news", "crypto", "wire", "blogs", "twitter", "iansintel"}
	oaAssets = []any{"BTC", "ETH", "SOL", "HYPE"}
	oaTiers  = []any{"free", "pro", "internal"}
)

// oaErrors lists the error codes of the contract with their HTTP status and
// the component response that documents them.
var oaErrors = []struct {
	code      apperr.Code
	status    string
	component string
	summary   string
}{
	{apperr.BadRequest, "400", "BadRequest", "A malformed, out-of-range, repeated or unknown query parameter, a bad path id or a bad cursor. The message names the parameter and what is allowed."},
	{apperr.Unauthorized, "401", "Unauthorized", "The API key is missing, malformed, unknown or revoked."},
	{apperr.QuotaExceeded, "402", "QuotaExceeded", "Reserved for future paid quotas; never returned today."},
	{apperr.ForbiddenTier, "403", "ForbiddenTier", "The key's tier cannot use this endpoint."},
	{apperr.NotFound, "404", "NotFound", "No resource with this id (also the answer for unknown paths)."},
	{apperr.MethodNotAllowed, "405", "MethodNotAllowed", "A method the path does not support (any other than those documented for it); `Allow` lists those it does. Every /v1 path, `/`, the pages and their assets take GET and HEAD, /graphql GET and POST."},
	{apperr.RateLimited, "429", "RateLimited", "The rate limit is exceeded (the key's, the client IP's, or the client IP's budget of failed authentications, told apart by `RateLimit-Policy`); retry after the seconds in `Retry-After`."},
	{apperr.Internal, "500", "Internal", "A server-side fault. Retry, then contact support with `meta.request_id`."},
}

// oaLimited are the headers of every response that passed a rate limiter,
// which is every response but 401 (no key to count against) and 500 (the
// fault may come first).
var oaLimited = []string{"X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy", "RateLimit"}

// oaBuild assembles the whole document.
func oaBuild(o OpenAPIOptions) *oaDocument {
	servers := []oaServer{{URL: o.ServerURL, Description: "The service."}}
	if o.ServerURL == "" {
		servers[0] = oaServer{URL: "/", Description: "The host serving this document."}
	}
	if o.AltServerURL != "" {
		servers = append(servers, oaServer{URL: o.AltServerURL, Description: "A second address reaching the same API."})
	}
	tags := []oaTag{
		{oaTagMeta, "Health, this description, the landing page and the API reference; no key needed."},
		{oaTagPosts, "The curated news feed."},
		{oaTagBriefs, "Weekly briefs in Markdown."},
		{oaTagFeed, "The unfiltered upstream news stream, split into panes."},
		{oaTagSource, "The valid values of the filters."},
	}
	if o.ETFEnabled {
		tags = append(tags, oaTag{oaTagETF, "Daily US spot-ETF flows in raw US dollars."})
	}
	tags = append(tags, oaTag{oaTagGQL, "The GraphQL API behind the REST endpoints, for internal dashboards."})

	return &oaDocument{
		OpenAPI: "3.1.0",
		Info: oaInfo{
			Title:       "Crypto Intelligence Feed API",
			Summary:     "Read-only JSON access to a curated crypto news feed, weekly briefs, the raw news firehose and daily ETF flows.",
			Description: oaDescription(o),
			Version:     o.Version,
		},
		Servers:  servers,
		Security: oaKeyed(),
		Tags:     tags,
		Paths:    oaPaths(o),
		Components: oaComponents{
			Schemas:    oaSchemas(o),
			Parameters: oaETFParameters(o, oaWithSearchParameters(oaParameters())),
			Headers:    oaHeaderDefs(o),
			Responses:  oaResponses(),
			SecuritySchemes: map[string]oaSecurityScheme{oaBearer: {
				Type: "http", Scheme: "bearer", BearerFormat: "opaque API key",
				Description: "`Authorization: Bearer <API_KEY>`; the scheme name is case-insensitive. Keys are issued by the operator and carry a tier: `free`, `pro` or `internal`.",
			}},
		},
	}
}

// oaETFParameters adds the ETF funds' parameters where ETF flows are offered.
func oaETFParameters(o OpenAPIOptions, params map[string]*oaParameter) map[string]*oaParameter {
	if o.ETFEnabled {
		oaETFFundParameters(params)
	}
	return params
}

// oaDescription summarises the contract's decisions for readers.
func oaDescription(o OpenAPIOptions) string {
	etf := "This deployment does not offer ETF flows: `/v1/etf-flows`, `/v1/etf-flows/latest`, `/v1/etf-flows/summary`, `/v1/etf-flows/funds` and `/v1/etf-funds` answer 404 `not_found`, and `/v1/sources` has no `etf_assets` nor `etf_funds`."
	if o.ETFEnabled {
		etf = "This deployment offers daily US spot-ETF flows (`/v1/etf-flows`, `/v1/etf-flows/latest`, `/v1/etf-flows/summary`) and their funds (`/v1/etf-funds`, each fund's daily figures in `/v1/etf-flows/funds`). Their monetary values are raw US dollars: JSON numbers in plain decimal notation (never exponent notation), exact to the cent; `meta.units` is `usd`. Holdings are coins, in plain decimal notation with at most eight decimals."
	}
	return strings.Join([]string{
		"Read-only JSON over HTTPS. Every `/v1` path takes GET and HEAD (the headers of GET, no body); nothing takes a request body except `POST /graphql`.",
		"",
		"**Start here.** `GET /` (or `/v1`) names the places to start in `data.links` (a browser gets them as an HTML page); `/reference` renders this document for reading. Neither needs a key.",
		"",
		"**Envelope.** Every body except this document's is a JSON object. Success: `data` (an array for lists, an object for one resource), `pagination` (`{next_cursor, has_more}` on the paginated lists posts, briefs, firehose and `/v1/etf-flows/funds`, and on `/v1/etf-flows` when asked for with `paginate=true` or a `cursor`; `null` everywhere else) and `meta`: `api_version` (`v1`), `request_id` (unique per response, equal to the `X-Request-Id` header), `tier` (the key's tier; `null` where no valid key was given) and, on ETF responses, `units` (`usd`). Error: `{error: {code, message}, meta}`, with neither `data` nor `pagination`. `Content-Type` is always `application/json; charset=utf-8`, and `X-Content-Type-Options` always `nosniff`. A request line and header fields over 16 KiB are refused with 431 and `bad_request` in the error envelope (over 64 KiB, and for requests HTTP itself cannot read, such as a malformed request line or a repeated `Host`, the HTTP server answers in `text/plain` before the API sees the request).",
		"",
		"**Formats.** Timestamps are UTC written `YYYY-MM-DDTHH:MM:SS.sssZ`; days are `YYYY-MM-DD`. A field of a resource is always present (`null` when empty) except three: `body` of posts (omitted with `include_body=false`), `raw` of posts (only with `include_raw=true`) and `summary_ai` of firehose messages (only with `include_summary=true`). The schemas close every object (`additionalProperties: false`) to describe v1 exactly as served today; as fields may be added within v1, clients should ignore fields they do not know.",
		"",
		"**Authentication and tiers.** Every endpoint except `/v1/health` and `/v1/openapi.json` needs `Authorization: Bearer <API_KEY>`. A missing, malformed, unknown or revoked key gives 401 `unauthorized` with `WWW-Authenticate: Bearer realm=\"feedapi\"`. Tiers are `free` (the preview tier), `pro` and `internal`; every `/v1` endpoint is open to all three, `/graphql` only to `internal` (others get 403 `forbidden_tier`). A keyed request is checked in the order key (401), tier (403), rate limit (429), parameters (400), then answered 404 or 200.",
		"",
		fmt.Sprintf("**Rate limits.** %d requests per rolling minute per key (the operator may set other budgets per tier), shared by all replicas. The minute is exact: in any 60-second interval a key gets at most its limit, from one replica or many; requests refused with 400, 403 or 404 count too, requests refused with 429 do not, and neither do answers 304 Not Modified (a key over its limit gets 429 for conditional requests too). The endpoints without a key, and unknown paths, are limited per client IP (600 requests per minute by default). Every response except 401 and 500 carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds until the oldest counted request leaves the minute; at 0 remaining, until the next request is allowed) and the IETF draft's `RateLimit-Policy: \"default\";q=%d;w=60` and `RateLimit: \"default\";r=<remaining>;t=<reset>`. Over the limit: 429 `rate_limited` with `Retry-After: 60`. Failed authentications have a small budget per client IP (30 per minute by default): beyond it that address gets 429 `rate_limited` with `Retry-After: 60` and `RateLimit-Policy: \"failed_auth\";q=30;w=60` instead of 401, and while it is spent a key this server has not verified recently is not even looked up; a key that worked from that address before keeps working.", o.RateLimit, o.RateLimit),
		"",
		"**Pagination.** Lists are newest first. The paginated ones use an opaque keyset cursor: while `pagination.has_more` is true, send `pagination.next_cursor` as `cursor` to get the next, older page; on the last page `has_more` is false and `next_cursor` null. Rows are never skipped or duplicated across pages, and a cursor keeps working while new items arrive. A cursor is bound to the endpoint that issued it: an undecodable, tampered or foreign one gives 400. To fetch only new items, pass `since`, or walk pages until an `id` already seen. A page also has a size bound: once its long texts (`body` and `raw` of posts, `body` and `summary_ai` of firehose messages, in UTF-8 bytes as served, before JSON escaping) would pass 4 MiB (unless the deployment sets another bound), it ends after the last item that fits, with `has_more` true and a `next_cursor` that goes on from there. A page may thus hold fewer than `limit` items while more follow: page on `has_more`, never on the count. An item whose own texts pass the bound is never served in part: it gives 400 `bad_request` naming the parameter to turn off (`include_raw`, `include_summary`), and can be read without it; `/v1/posts/{id}` likewise.",
		"",
		"**Parameters.** Booleans take `true`, `false`, `1` or `0`, case-insensitive. `limit` outside its range is refused, never clamped. `since` takes an RFC 3339 date-time with `Z` or an offset (write `+` as `%2B`), or a bare date meaning 00:00 UTC that day; it is inclusive. Free-text values (`source`, `cursor`) are non-empty UTF-8 of at most 256 bytes. Path ids are positive integers that fit in 64 bits (else 400); a well-formed id with no row gives 404. A repeated parameter (`limit=10&limit=20`) gives 400, and so does an unknown one: every endpoint, including those without a key, refuses a query parameter it does not document and names those it takes, so that a misspelt filter never silently widens a query. Every problem is a 400 `bad_request` whose message names the parameter and what is allowed.",
		"",
		"**Errors.** `bad_request` 400, `unauthorized` 401, `quota_exceeded` 402 (reserved, never returned today), `forbidden_tier` 403, `not_found` 404 (also for unknown paths), `method_not_allowed` 405 (with `Allow`), `rate_limited` 429, `internal` 500 (the message carries no internals; quote `meta.request_id` to support).",
		"",
		"**Caching and compression.** A 200 answer to GET or HEAD on `/v1` carries a strong `ETag` (the gzip-encoded representation has its own, ending in `-gz`); `If-None-Match` with a matching tag gives 304 with no body, which does not count against the rate limit. The lists `/v1/posts` and `/v1/firehose` carry `X-Poll-Interval` (seconds), the pace worth polling them at: their first pages may come from a cache that lags writes by at most that long. Bodies are gzip-compressed when the client accepts it and the body is large enough to gain.",
		"",
		"**Versioning.** `v1` is in the path and in `meta.api_version`. Fields and endpoints may be added within v1; removals and changes ship as v2.",
		"",
		etf,
	}, "\n")
}

// oaKeyed is the security requirement of the operations that need a key.
func oaKeyed() []oaSecurity { return []oaSecurity{{oaBearer: {}}} }

// oaOpen is the security requirement of the operations open to everyone.
func oaOpen() []oaSecurity { return []oaSecurity{} }

// oaPaths documents every path of the deployment.
func oaPaths(o OpenAPIOptions) map[string]*oaPathItem {
	p := map[string]*oaPathItem{
		"/v1/health": {Get: &oaOperation{
			OperationID: "getHealth", Summary: "Health and version", Tags: []string{oaTagMeta}, Security: oaOpen(),
			Description: "Reports the service's health, its build version and where its rate limits are counted. Needs no key and touches nothing beyond a database ping. While the database the API reads from (`database`: the read replica when one is configured) is unreachable the answer is 503 with `status` `degraded`. With a read replica, a primary that does not answer (`database_primary` `unreachable`) gives `status` `degraded` with 200: the API goes on serving, keys are verified on the replica (a revocation counts once it has reached the replica), and only the operator commands that write (`keys`, `import`, `seed`, `migrate`) fail. An unreachable Redis does not degrade the service: each replica then counts rate limits on its own (`rate_limits` `local_fallback`) until Redis answers again.",
			Parameters:  oaParams("IfNoneMatch"),
			Responses: oaOpenResponses(map[string]*oaResponse{
				"200": oaSuccess("The service serves: `status` `ok`, or `degraded` while only the primary is unreachable and a read replica serves (`database_primary` `unreachable`).", "HealthResponse", true),
				"503": oaSuccess("The database the API reads from is unreachable: `status` is `degraded`, `database` `unreachable`.", "HealthResponse", false),
			}),
		}},
		"/v1/openapi.json": {Get: &oaOperation{
			OperationID: "getOpenAPI", Summary: "This OpenAPI 3.1 description", Tags: []string{oaTagMeta}, Security: oaOpen(),
			Description: "The OpenAPI document itself, not wrapped in the envelope, so that tools can read it.",
			Parameters:  oaParams("IfNoneMatch"),
			Responses: oaOpenResponses(map[string]*oaResponse{
				"200": oaSuccess("The OpenAPI document.", "OpenAPIDocument", true),
			}),
		}},
		"/v1/posts": {Get: &oaOperation{
			OperationID: "listPosts", Summary: "List curated posts", Tags: []string{oaTagPosts}, Security: oaKeyed(),
			Description: "Curated posts, newest first (by `id`), a page at a time.",
			Parameters:  oaParams("Limit", "Cursor", "PostSource", "Since", "Coins", "PostQuery", "SinceID", "After", "IncludeBody", "IncludeRaw", "IfNoneMatch"),
			Responses:   oaPolled(oaKeyedResponses(oaSuccess("A page of posts.", "PostsPage", true))),
		}},
		"/v1/posts/{id}": {Get: &oaOperation{
			OperationID: "getPost", Summary: "Get a curated post", Tags: []string{oaTagPosts}, Security: oaKeyed(),
			Description: "One curated post by its numeric `id`, with `body` and, with `include_raw=true`, the source payload `raw`. An id that is not a positive 64-bit integer gives 400; a well-formed id with no post gives 404.",
			Parameters:  oaParams("PostID", "IncludeRaw", "IfNoneMatch"),
			Responses:   oaKeyedResponses(oaSuccess("The post.", "PostResponse", true), "404"),
		}},
		"/v1/briefs": {Get: &oaOperation{
			OperationID: "listBriefs", Summary: "List weekly briefs", Tags: []string{oaTagBriefs}, Security: oaKeyed(),
			Description: "Weekly briefs in list form (without `content`), newest first (by `id`), a page at a time.",
			Parameters:  oaParams("Limit", "Cursor", "IfNoneMatch"),
			Responses:   oaKeyedResponses(oaSuccess("A page of briefs.", "BriefsPage", true)),
		}},
		"/v1/briefs/{id}": {Get: &oaOperation{
			OperationID: "getBrief", Summary: "Get a weekly brief with its Markdown", Tags: []string{oaTagBriefs}, Security: oaKeyed(),
			Description: "One weekly brief by its numeric `id`, in full form: the fields of the list form plus `content`, the brief as Markdown. An id that is not a positive 64-bit integer gives 400; a well-formed id with no brief gives 404.",
			Parameters:  oaParams("BriefID", "IfNoneMatch"),
			Responses:   oaKeyedResponses(oaSuccess("The brief in full form.", "BriefResponse", true), "404"),
		}},
		"/v1/firehose": {Get: &oaOperation{
			OperationID: "listFirehose", Summary: "List firehose messages", Tags: []string{oaTagFeed}, Security: oaKeyed(),
			Description: "The unfiltered upstream news stream, newest first (by `id`), a page at a time.",
			Parameters:  oaParams("Limit", "Cursor", "Pane", "FirehoseSource", "Important", "Since", "Coins", "FirehoseQuery", "SinceID", "After", "IncludeSummary", "IfNoneMatch"),
			Responses:   oaPolled(oaKeyedResponses(oaSuccess("A page of firehose messages.", "FirehosePage", true))),
		}},
		"/v1/sources": {Get: &oaOperation{
			OperationID: "getSources", Summary: "Valid filter values", Tags: []string{oaTagSource}, Security: oaKeyed(),
			Description: "The valid values of the filters, each list sorted. Every listed value works as a filter.",
			Parameters:  oaParams("IfNoneMatch"),
			Responses:   oaKeyedResponses(oaSuccess("The filter values.", "SourcesResponse", true)),
		}},
		"/graphql": {
			Get: oaGraphQL("Get", oaParams("GraphQLQuery", "GraphQLOperationName", "GraphQLVariables"), nil),
			Post: oaGraphQL("Post", nil, &oaRequestBody{Description: "A GraphQL request.", Required: true,
				Content: oaJSONContent(oaRef("GraphQLRequest"))}),
		},
	}
	p[graphiqlAssetsPath+"/{file}"] = &oaPathItem{Get: &oaOperation{
		OperationID: "getGraphiQLAsset", Summary: "A script or stylesheet of the GraphiQL page", Tags: []string{oaTagGQL}, Security: oaOpen(),
		Description: "The GraphiQL page of `GET /graphql` loads its scripts and stylesheets from here, never from another host, so it works offline. Names carry the package version and are cached as immutable. Needs no key; limited per client IP.",
		Parameters: []*oaParameter{{Name: "file", In: "path", Required: true, Description: "The file's name, as the page references it.",
			Schema: &oaSchema{Type: "string", Examples: []any{"graphiql-3.9.0.min.js"}}}},
		Responses: oaWithErrors(oaOpenResponses(map[string]*oaResponse{
			"200": {Description: "The file.", Headers: oaHeaders("ETag", "X-Request-Id"), Content: map[string]oaMediaType{
				"text/javascript": {Schema: &oaSchema{Type: "string"}},
				"text/css":        {Schema: &oaSchema{Type: "string"}},
			}},
		}), "404"),
	}}
	oaDashboardPaths(p, o)
	oaLandingPaths(p)
	oaStreamPaths(p)
	if o.ETFEnabled {
		p["/v1/etf-flows"] = &oaPathItem{Get: &oaOperation{
			OperationID: "listEtfFlows", Summary: "List daily ETF flows", Tags: []string{oaTagETF}, Security: oaKeyed(),
			Description: "Daily US spot-ETF flows, ordered by `flow_date` descending, then asset in the order BTC, ETH, SOL, HYPE. By default not paginated (`pagination` is null): narrow the window with `from`, `to` and `limit`. To walk the whole history, ask for `paginate=true`: the answer then carries `pagination` like the paginated lists, and `cursor` reads the next, older page of the same filters. `funds_complete` says whether the day's per-fund figures (`/v1/etf-flows/funds`) add up to the record.",
			Parameters:  oaParams("Asset", "From", "To", "EtfLimit", "Paginate", "Cursor", "IfNoneMatch"),
			Responses:   oaKeyedResponses(oaSuccess("The flow records.", "EtfFlowsResponse", true)),
		}}
		p["/v1/etf-flows/latest"] = &oaPathItem{Get: &oaOperation{
			OperationID: "listLatestEtfFlows", Summary: "Latest ETF flow of each asset", Tags: []string{oaTagETF}, Security: oaKeyed(),
			Description: "The record with the most recent `flow_date` of each asset, in the order BTC, ETH, SOL, HYPE (`pagination` is null).",
			Parameters:  oaParams("Asset", "IfNoneMatch"),
			Responses:   oaKeyedResponses(oaSuccess("The newest record of each asset.", "EtfFlowsResponse", true)),
		}}
		p["/v1/etf-flows/summary"] = &oaPathItem{Get: &oaOperation{
			OperationID: "getEtfFlowsSummary", Summary: "ETF flows summarised: periods and streak", Tags: []string{oaTagETF}, Security: oaKeyed(),
			Description: "The flows summarised as of `as_of`, the latest flow date of the selected assets (`pagination` is null): per asset (in the order BTC, ETH, SOL, HYPE) and for the selected assets together (`total`), the latest day's `net_inflow`, the sums of the latest 7 and 30 trading days, month and year to date, `cum_net_inflow`, `net_assets` and the current `streak`. A day on which an asset has no figure is absent, never counted as zero: an asset's trading days are the days it has a figure (its `last_7d` are its 7 latest figures), the total's are the days on which any selected asset has one (the total of a day is the sum of the figures of that day). Month and year to date are the calendar days of `as_of`'s month and year up to `as_of`, for every entry. `data` is null when the selected assets have no flows.",
			Parameters:  oaParams("Asset", "IfNoneMatch"),
			Responses:   oaKeyedResponses(oaSuccess("The summary.", "EtfSummaryResponse", true)),
		}}
		oaETFFundPaths(p)
	}
	// Every path but /graphql and the streams answers HEAD as GET without a
	// body.
	components := oaResponses()
	for path, item := range p {
		if path != "/graphql" && !strings.HasSuffix(path, "/stream") {
			item.Head = oaHead(item.Get, components)
		}
	}
	return p
}

// oaHead documents HEAD of a path from its GET: the same parameters and
// statuses with the same headers, and no body. Its operationId is GET's
// with the prefix head (getPost → headGetPost).
func oaHead(get *oaOperation, components map[string]*oaResponse) *oaOperation {
	rs := make(map[string]*oaResponse, len(get.Responses))
	for status, r := range get.Responses {
		if r.Ref != "" {
			r = components[strings.TrimPrefix(r.Ref, "#/components/responses/")]
		}
		rs[status] = &oaResponse{Description: r.Description, Headers: r.Headers}
	}
	return &oaOperation{
		OperationID: "head" + strings.ToUpper(get.OperationID[:1]) + get.OperationID[1:],
		Summary:     "Headers of: " + get.Summary,
		Description: "The headers `GET` would answer with (status, `ETag`, rate limits), without a body.",
		Tags:        get.Tags,
		Security:    get.Security,
		Parameters:  get.Parameters,
		Responses:   rs,
	}
}

// oaGraphQL documents one method of /graphql. Its own answers are GraphQL
// responses; the checks in front of it (key, tier, rate limit) answer with
// the error envelope.
func oaGraphQL(method string, params []*oaParameter, body *oaRequestBody) *oaOperation {
	graphQL := func(description string) *oaResponse {
		return &oaResponse{Description: description, Headers: oaHeaders(oaLimited...), Content: oaJSONContent(oaRef("GraphQLResponse"))}
	}
	rs := oaWithErrors(map[string]*oaResponse{
		"200": graphQL("The GraphQL response; errors of execution are in `errors`, with `extensions.code` set to the REST codes. A response over the size cap (4 MiB unless the deployment sets another) is replaced by one `bad_request` error that names the cap, without `data`; it is never truncated."),
		"400": graphQL("The request could not be read (bad JSON, undecodable variables, unsupported content type), or, with `Accept: application/graphql-response+json`, the query was refused before execution."),
		"422": graphQL("The query did not parse, failed validation, is over the complexity, depth or token limits, or is a subscription sent where none can run (a GET, or a POST without `Accept: text/event-stream`: subscriptions run over the websocket, protocol `graphql-transport-ws`, or that SSE transport); nothing was executed."),
		"500": {Description: "A server-side fault, as the error envelope or, when it happened during execution, as a GraphQL response.",
			Headers: oaHeaders("X-Request-Id"),
			Content: oaJSONContent(&oaSchema{AnyOf: []*oaSchema{oaRef("ErrorEnvelope"), oaRef("GraphQLResponse")}})},
	}, "401", "402", "403", "405", "429")
	security := oaKeyed()
	if method == "Get" {
		rs["200"].Content["text/html"] = oaMediaType{Schema: &oaSchema{Type: "string",
			Description: "The GraphiQL page, for a browser asking for `text/html` without a query. It needs no key (it holds no data) and is limited per client IP. It asks for an `internal` key before it starts, keeps it in the tab's memory only (never in the browser's storage), and sends it with every query, the schema for its Docs pane included. Its assets come from `/graphql/assets/`, so it works offline."}}
		// The page needs no key; a query by GET still does.
		security = append(security, oaSecurity{})
	}
	return &oaOperation{
		OperationID: "graphql" + method, Summary: "Run a GraphQL query (" + strings.ToUpper(method) + ")", Tags: []string{oaTagGQL}, Security: security,
		Description: "The GraphQL API of the internal dashboards (its schema is the service's `schema.graphqls`); needs a key of tier `internal`. Lists are Relay connections whose cursors are the REST cursors. Queries over the complexity budget (10,000; fields are priced by the size of what they return, as the schema's description explains), the depth or the token budgets are refused before execution, and introspection is for the internal tier only. A browser asking for `text/html` without a query gets an interactive playground.",
		Parameters:  params,
		RequestBody: body,
		Responses:   rs,
	}
}

// oaParams refers to the named component parameters.
func oaParams(names ...string) []*oaParameter {
	out := make([]*oaParameter, len(names))
	for i, n := range names {
		out[i] = &oaParameter{Ref: "#/components/parameters/" + n}
	}
	return out
}

// oaSuccess documents a successful answer whose body is the named component
// schema; withETag adds the ETag header (and so the 304 mechanism).
func oaSuccess(description, schema string, withETag bool) *oaResponse {
	r := &oaResponse{Description: description, Headers: oaHeaders(oaLimited...), Content: oaJSONContent(oaRef(schema))}
	if withETag {
		r.Headers["ETag"] = &oaHeader{Ref: "#/components/headers/ETag"}
	}
	return r
}

// oaKeyedResponses completes the responses of a keyed GET: its success, 304,
// the errors every keyed request can meet, and the extra statuses given.
func oaKeyedResponses(ok *oaResponse, extra ...string) map[string]*oaResponse {
	rs := map[string]*oaResponse{"200": ok, "304": {Ref: "#/components/responses/NotModified"}}
	return oaWithErrors(rs, append([]string{"400", "401", "402", "403", "405", "429", "500"}, extra...)...)
}

// oaOpenResponses completes the responses of a GET that needs no key.
func oaOpenResponses(rs map[string]*oaResponse) map[string]*oaResponse {
	rs["304"] = &oaResponse{Ref: "#/components/responses/NotModified"}
	return oaWithErrors(rs, "400", "405", "429", "500")
}

// oaWithErrors adds references to the component responses of the statuses.
func oaWithErrors(rs map[string]*oaResponse, statuses ...string) map[string]*oaResponse {
	for _, s := range statuses {
		for _, e := range oaErrors {
			if e.status == s {
				rs[s] = &oaResponse{Ref: "#/components/responses/" + e.component}
			}
		}
	}
	return rs
}

// oaResponses are the shared responses: 304 and one per error code.
func oaResponses() map[string]*oaResponse {
	rs := map[string]*oaResponse{
		"NotModified": {Description: "The `If-None-Match` tag matches the current representation: no body.",
			Headers: oaHeaders(append([]string{"ETag"}, oaLimited...)...)},
	}
	for _, e := range oaErrors {
		h := oaHeaders(oaLimited...)
		switch e.code {
		case apperr.Unauthorized:
			h = oaHeaders("X-Request-Id", "WWW-Authenticate")
		case apperr.QuotaExceeded, apperr.Internal:
			h = oaHeaders("X-Request-Id")
		case apperr.MethodNotAllowed:
			h["Allow"] = &oaHeader{Ref: "#/components/headers/Allow"}
		case apperr.RateLimited:
			h["Retry-After"] = &oaHeader{Ref: "#/components/headers/Retry-After"}
		}
		rs[e.component] = &oaResponse{Description: e.summary, Headers: h, Content: oaJSONContent(oaRef("ErrorEnvelope"))}
	}
	return rs
}

// oaHeaders refers to the named component headers. Every answer that has
// X-Request-Id (every answer of the handler) also has X-Content-Type-Options.
func oaHeaders(names ...string) map[string]*oaHeader {
	hs := make(map[string]*oaHeader, len(names)+1)
	for _, n := range names {
		hs[n] = &oaHeader{Ref: "#/components/headers/" + n}
		if n == "X-Request-Id" {
			hs["X-Content-Type-Options"] = &oaHeader{Ref: "#/components/headers/X-Content-Type-Options"}
		}
	}
	return hs
}

// oaHeaderDefs are the response headers of the contract.
func oaHeaderDefs(o OpenAPIOptions) map[string]*oaHeader {
	integer := func(min int64) *oaSchema { return &oaSchema{Type: "integer", Minimum: &min} }
	header := func(description string, s *oaSchema) *oaHeader {
		return &oaHeader{Required: true, Description: description, Schema: s}
	}
	return map[string]*oaHeader{
		"X-Request-Id": header("Unique id of the response, equal to `meta.request_id`; quote it to support.",
			&oaSchema{Type: "string", MinLength: oaPtr[int64](1)}),
		"X-Content-Type-Options": header("Always `nosniff`: the body is of its declared `Content-Type` only.",
			&oaSchema{Type: "string", Const: "nosniff"}),
		"ETag": header("Strong entity tag of the representation, a quoted string (`\"…\"`, never `W/`); send it back in `If-None-Match`.",
			oaString()),
		"RateLimit-Limit":     header("Requests allowed per rolling minute to this key (or client IP); on a 429 of policy `failed_auth`, the failed authentications allowed per minute to the client IP.", integer(1)),
		"RateLimit-Remaining": header("Requests left in the rolling minute: the limit minus the requests allowed in the last 60 seconds.", integer(0)),
		"RateLimit-Reset":     header("Seconds (rounded up) until the oldest request counted in the last 60 seconds leaves the window and frees one request; with nothing remaining, when the next request will be allowed. The same on every replica.", integer(0)),
		"RateLimit-Policy": header(fmt.Sprintf("The policy in the IETF draft's syntax, `\"default\";q=<limit>;w=60` (`\"default\";q=%d;w=60` for a key of the default budget), or `\"failed_auth\";q=<limit>;w=60` on a 429 for too many failed authentications.", o.RateLimit),
			&oaSchema{Type: "string", Pattern: `^"(default|failed_auth)";q=\d+;w=\d+$`}),
		"RateLimit": header("The current state in the IETF draft's syntax, `\"default\";r=<remaining>;t=<reset>` (`\"failed_auth\";…` on a 429 for too many failed authentications).",
			&oaSchema{Type: "string", Pattern: `^"(default|failed_auth)";r=\d+;t=\d+$`}),
		"Retry-After": header("Seconds to wait before retrying: 60.", integer(1)),
		"WWW-Authenticate": header("The challenge of the bearer scheme.",
			&oaSchema{Type: "string", Const: `Bearer realm="feedapi"`}),
		"Allow": header("The methods the path takes.", &oaSchema{Type: "string", Enum: []any{"GET, HEAD", "GET, POST"}}),

		hPollInterval: oaPollIntervalHeader(), // openapi_poll.go
	}
}

// oaParameters are the query, path and header parameters.
func oaParameters() map[string]*oaParameter {
	query := func(name, description string, s *oaSchema) *oaParameter {
		return &oaParameter{Name: name, In: "query", Description: description, Schema: s}
	}
	boolean := func(def bool) *oaSchema { return &oaSchema{Type: "boolean", Default: def} }
	const booleans = " A boolean: `true` or `false`; the server also takes `1` and `0`, case-insensitive (`TRUE`), and anything else gives 400."
	text := &oaSchema{Type: "string", MinLength: oaPtr[int64](1), MaxLength: oaPtr[int64](256)}
	limit := func(max, def int64) *oaSchema {
		return &oaSchema{Type: "integer", Minimum: oaPtr[int64](1), Maximum: &max, Default: def}
	}
	pathID := func(kind string) *oaParameter {
		return &oaParameter{Name: "id", In: "path", Required: true,
			Description: "Numeric id of the " + kind + ": a positive integer that fits in 64 bits (else 400). No " + kind + " with this id gives 404.",
			Schema:      &oaSchema{Type: "integer", Format: "int64", Minimum: oaPtr[int64](1)}}
	}
	return map[string]*oaParameter{
		"Limit":    query("limit", "Page size, an integer from 1 to 100; out of range gives 400 (never clamped).", limit(100, 50)),
		"EtfLimit": query("limit", "Maximum number of records, an integer from 1 to 500; out of range gives 400 (never clamped).", limit(500, 100)),
		"Cursor": query("cursor", "The previous page's `pagination.next_cursor`, passed back as is. Opaque and bound to the endpoint that issued it: an undecodable, tampered or foreign cursor gives 400.",
			text),
		"Since": query("since", "Only items created at or after this instant (inclusive): an RFC 3339 date-time with `Z` or an offset (write `+` as `%2B`), or a bare date `YYYY-MM-DD` meaning 00:00 UTC that day. The pattern gives the shape; a value of that shape that is not a real instant (month 13, offset +24:00) also gives 400.",
			&oaSchema{Type: "string", Pattern: oaPatternSince, Examples: []any{"2026-01-02T15:04:05Z", "2026-01-02T17:04:05.5+02:00", "2026-01-02"}}),
		"PostSource": query("source", "Only posts whose `source` is exactly this label (see `/v1/sources`). An unknown label gives an empty page, not an error.",
			text),
		"FirehoseSource": query("source", "Only messages whose `source` contains this text, case-insensitive. `%` and `_` are literal characters, not wildcards.",
			text),
		"IncludeBody":    query("include_body", "Whether posts carry `body`."+booleans, boolean(true)),
		"IncludeRaw":     query("include_raw", "Whether posts carry `raw`, the source payload. Large payloads make pages end early (see Pagination); a post whose payload alone is over a page's size bound gives 400 naming this parameter."+booleans, boolean(false)),
		"IncludeSummary": query("include_summary", "Whether messages carry `summary_ai`."+booleans, boolean(false)),
		"Important":      query("important", "When true, only messages flagged `important`; false (or absent) means no filter."+booleans, boolean(false)),
		"Pane": query("pane", "Only messages of this pane, written exactly; any other value gives 400 listing the panes.",
			&oaSchema{Type: "string", Enum: oaPanes}),
		"Asset": query("asset", "Comma-separated list of assets from BTC, ETH, SOL and HYPE, case-insensitive (`btc,ETH`); all assets when absent. Any other value gives 400.",
			&oaSchema{Type: "string", Pattern: oaPatternAssets, Examples: []any{"BTC", "btc,eth"}}),
		"From":    query("from", "Earliest `flow_date`, inclusive: a real calendar date `YYYY-MM-DD`. A `from` after `to` gives 400.", &oaSchema{Type: "string", Format: "date"}),
		"To":      query("to", "Latest `flow_date`, inclusive: a real calendar date `YYYY-MM-DD`.", &oaSchema{Type: "string", Format: "date"}),
		"PostID":  pathID("post"),
		"BriefID": pathID("brief"),
		"IfNoneMatch": {Name: "If-None-Match", In: "header", Schema: oaString(),
			Description: "An `ETag` of an earlier response; while it matches, the answer is 304 without a body."},
		"GraphQLQuery": query("query", "The GraphQL document (query operations only). Without it, a browser asking for `text/html` gets the playground.",
			oaString()),
		"GraphQLOperationName": query("operationName", "The operation to run when the document holds several.", oaString()),
		"GraphQLVariables":     query("variables", "The operation's variables as a JSON object.", oaString()),
	}
}

// oaSchemas are the envelopes, the resources and the GraphQL messages.
func oaSchemas(o OpenAPIOptions) map[string]*oaSchema {
	meta := oaProps{
		"api_version": {Type: "string", Const: "v1", Description: "The API version, `v1`."},
		"request_id":  {Type: "string", MinLength: oaPtr[int64](1), Description: "Unique id of the response, also in the `X-Request-Id` header."},
		"tier":        {AnyOf: []*oaSchema{oaRef("Tier"), {Type: "null"}}, Description: "The tier of the key; null where no valid key was given."},
		"position": {Type: "string", MinLength: oaPtr[int64](1), Description: "On first pages (no `cursor`) of `/v1/posts` and `/v1/firehose` only: the stream position the page was read at. " +
			"Pass it as `after`, with the same filters, to get exactly the items that became visible since: each such answer gives the next position. " +
			"After an answer without `after`, the first such poll may repeat a few of its newest items (those that became visible while it was read); from then on none. " +
			"Not covered by the `ETag` (it moves with every write to the database, whatever the list shows); an older position is as exact a start."},
	}
	s := map[string]*oaSchema{
		"Meta": oaObject("Facts about the response.", meta, "api_version", "request_id", "tier"),
		"Tier": {Type: "string", Enum: oaTiers, Description: "The tier of an API key."},
		"Pagination": {
			Description: "Where the next, older page starts. While `has_more` is true, `next_cursor` is a non-empty string; on the last page `has_more` is false and `next_cursor` null.",
			Type:        "object", AdditionalProperties: oaPtr(false),
			Required: []string{"next_cursor", "has_more"},
			Properties: oaProps{
				"next_cursor": {Type: []string{"string", "null"}, MinLength: oaPtr[int64](1), Description: "Pass as `cursor` to get the next page; null on the last page (when `has_more` is false)."},
				"has_more":    {Type: "boolean", Description: "Whether an older page follows. True also on a page that ended early at its size bound, with fewer than `limit` items."},
			},
		},
		"Error": oaObject("What went wrong.", oaProps{
			"code":    {Type: "string", Enum: oaErrorCodes(), Description: "Machine-readable error code."},
			"message": {Type: "string", MinLength: oaPtr[int64](1), Description: "For humans; names the offending parameter and what is allowed."},
		}, "code", "message"),
		"ErrorEnvelope": oaObject("An error response: no `data`, no `pagination`.", oaProps{
			"error": oaRef("Error"),
			"meta":  oaRef("Meta"),
		}, "error", "meta"),

		"Post": oaObject("An item of the curated feed.", oaProps{
			"uid":                 {Type: "string", Pattern: `^cp_[0-9]+$`, Description: "Stable identifier, `cp_<id>`."},
			"id":                  oaID("Numeric id; newer posts have larger ids."),
			"source":              {Type: "string", Description: "Source label, e.g. a channel name or a data publisher label."},
			"username":            {Type: "string", Description: "Author or channel handle."},
			"body":                {Type: "string", Description: "Text of the post; omitted with `include_body=false`."},
			"url":                 oaNullableURL("Permalink in the messaging channel."),
			"original_source_url": oaNullableURL("The original article or tweet."),
			"created_at":          oaDateTime("Creation time."),
			"raw":                 {Type: "object", AdditionalProperties: oaPtr(true), Description: "The source payload as stored (an object of any JSON values); present only with `include_raw=true`."},
			"coins":               oaCoins(),
		}, "uid", "id", "source", "username", "url", "original_source_url", "created_at"),
		"BriefSummary": oaObject("A weekly brief in list form, without its Markdown.", oaBriefProps(false),
			"uid", "id", "week_start", "week_end", "post_count", "created_at"),
		"Brief": oaObject("A weekly brief in full form, with its Markdown.", oaBriefProps(true),
			"uid", "id", "week_start", "week_end", "post_count", "created_at", "content"),
		"FirehoseMessage": oaObject("A message of the unfiltered upstream news stream.", oaProps{
			"uid":                 {Type: "string", Pattern: `^tm_[0-9]+$`, Description: "Stable identifier, `tm_<id>`."},
			"id":                  oaID("Numeric id; newer messages have larger ids."),
			"pane":                {Type: "string", Enum: oaPanes, Description: "The pane of the message; `iansintel` is the service's own pane."},
			"source":              {Type: "string", Description: "Upstream source key."},
			"source_name":         oaNullableString("Display name of the source."),
			"name":                oaNullableString("Name of the author or feed."),
			"username":            oaNullableString("Handle of the author."),
			"title":               oaNullableString("Headline."),
			"body":                oaNullableString("Text."),
			"summary_ai":          oaNullableString("AI-written summary; present only with `include_summary=true`."),
			"important":           {Type: "boolean", Description: "Whether the message is flagged important (what the `important` filter selects)."},
			"url":                 oaNullableString("Link to the message, as the upstream source gave it (not necessarily a valid URI)."),
			"original_source_url": oaNullableString("The original article or tweet, as the upstream source gave it (not necessarily a valid URI)."),
			"created_at":          oaDateTime("Creation time."),
			"coins":               oaCoins(),
		}, "uid", "id", "pane", "source", "source_name", "name", "username", "title", "body", "important", "url", "original_source_url", "created_at"),
		"Health": oaObject("Health and version of the service.", oaProps{
			"status":           {Type: "string", Enum: []any{"ok", "degraded"}, Description: "`ok`, or `degraded` while a database is unreachable: the one the API reads from (then 503), or, with a read replica, the primary (then 200)."},
			"version":          {Type: "string", Description: "Build version of the service."},
			"api_version":      {Type: "string", Const: "v1", Description: "API version, `v1`."},
			"database":         {Type: "string", Enum: []any{"ok", "unreachable"}, Description: "Whether the database the API reads from answers: the read replica when one is configured, else the primary."},
			"database_primary": {Type: "string", Enum: []any{"ok", "unreachable"}, Description: "Whether the primary answers, which holds the API keys and takes the writes. While it does not and a read replica answers, keys are verified on the replica."},
			"database_replica": {Type: "string", Enum: []any{"ok", "unreachable", "none"}, Description: "Whether the read replica answers; `none` without one."},
			"rate_limits":      {Type: "string", Enum: []any{"shared", "local", "local_fallback"}, Description: "Where rate limits are counted: `shared` in Redis, one budget per key across all replicas; `local` in this replica, which has no Redis configured; `local_fallback` in this replica because its Redis does not answer."},
		}, "status", "version", "api_version", "database", "database_primary", "database_replica", "rate_limits"),
		"OpenAPIDocument": {Type: "object", Description: "An OpenAPI 3.1 document.", Required: []string{"openapi", "info", "paths"},
			Properties: oaProps{"openapi": {Type: "string", Const: "3.1.0"}}},

		"GraphQLRequest": {Type: "object", Description: "A GraphQL request (GraphQL over HTTP).", Required: []string{"query"}, Properties: oaProps{
			"query":         {Type: "string", Description: "The GraphQL document."},
			"operationName": {Type: []string{"string", "null"}, Description: "The operation to run when the document holds several."},
			"variables":     {Type: []string{"object", "null"}, AdditionalProperties: oaPtr(true), Description: "Values of the operation's variables, by name."},
			"extensions":    {Type: []string{"object", "null"}, AdditionalProperties: oaPtr(true), Description: "Protocol extensions."},
		}},
		"GraphQLResponse": {
			Type: "object", Description: "A GraphQL response (GraphQL over HTTP): `data`, `errors` or both (never neither).",
			Properties: oaProps{
				"data":       {Type: []string{"object", "null"}, AdditionalProperties: oaPtr(true), Description: "The result, shaped by the query; null or absent when the request was refused before execution."},
				"errors":     {Type: "array", Items: oaRef("GraphQLError"), Description: "What went wrong, if anything."},
				"extensions": {Type: "object", AdditionalProperties: oaPtr(true), Description: "Protocol extensions (e.g. complexity)."},
			},
		},
		"GraphQLError": {Type: "object", Description: "A GraphQL error.", Required: []string{"message"}, Properties: oaProps{
			"message": {Type: "string"},
			"locations": {Type: "array", Items: &oaSchema{Type: "object", Properties: oaProps{
				"line": {Type: "integer"}, "column": {Type: "integer"},
			}}},
			"path": {Type: "array", Description: "Where in `data` the error happened.",
				Items: &oaSchema{Description: "A field name (a string) or a list index (an integer)."}},
			"extensions": {Type: "object", AdditionalProperties: oaPtr(true), Properties: oaProps{
				"code": {Type: "string", Description: "A REST error code (`bad_request`, `not_found`, `forbidden_tier`, …) or one of the GraphQL server's own (`GRAPHQL_VALIDATION_FAILED`, …)."},
			}},
		}},
	}

	sources := oaProps{
		"curated_sources": {Type: "array", UniqueItems: true, Items: oaString(), Description: "Valid `source` values of posts, sorted."},
		"firehose_panes":  {Type: "array", UniqueItems: true, Items: &oaSchema{Type: "string", Enum: oaPanes}, Description: "Valid `pane` values of the firehose, sorted."},
	}
	sources["coins"] = &oaSchema{Type: "array", UniqueItems: true, Items: &oaSchema{Type: "string", Pattern: `^[A-Z0-9]{1,12}$`},
		Description: "Tickers that occur in posts or firehose messages, sorted: each is a `coins` value that may match."}
	oldest := oaDateTime("`created_at` of the oldest firehose message kept (null while there is none): older months are dropped by the deployment's retention. A `since` or a cursor from before it gives the messages from it on, never an error.")
	oldest.Type = []string{"string", "null"}
	sources["firehose_oldest"] = oldest
	required := []string{"curated_sources", "firehose_panes"}
	if o.ETFEnabled {
		sources["etf_assets"] = &oaSchema{Type: "array", UniqueItems: true, Items: &oaSchema{Type: "string", Enum: oaAssets}, Description: "Valid `asset` values of the ETF flows, sorted."}
		required = append(required, "etf_assets")

		etfMeta := oaProps{"units": {Type: "string", Const: "usd", Description: "Monetary values are raw US dollars."}}
		for k, v := range meta {
			etfMeta[k] = v
		}
		s["EtfMeta"] = oaObject("Facts about an ETF response; monetary values are in `units`.", etfMeta, "api_version", "request_id", "tier", "units")
		s["EtfFlow"] = oaObject("One day of US spot-ETF flows of one asset, in raw US dollars.", oaProps{
			"uid":            {Type: "string", Pattern: `^etf_(BTC|ETH|SOL|HYPE)_\d{4}-\d{2}-\d{2}$`, Description: "Stable identifier, `etf_<ASSET>_<YYYY-MM-DD>`."},
			"asset":          {Type: "string", Enum: oaAssets, Description: "The asset."},
			"flow_date":      {Type: "string", Format: "date", Description: "Day of the flow."},
			"net_inflow":     oaMoney("Net inflow of the day; negative for an outflow."),
			"cum_net_inflow": oaMoney("Cumulative net inflow since launch, up to and including this day."),
			"net_assets":     oaMoney("Total net assets at the end of the day."),
			"value_traded":   oaMoney("Value traded during the day."),
			"updated_at":     oaDateTime("Last update of this record."),
		}, "uid", "asset", "flow_date", "net_inflow", "cum_net_inflow", "net_assets", "value_traded", "updated_at")
		s["EtfFlowsResponse"] = oaEnvelope(&oaSchema{Type: "array", Items: oaRef("EtfFlow")}, false, "EtfMeta")
		oaETFSummarySchemas(s)
		oaETFFundSchemas(s)
		sources["etf_funds"] = &oaSchema{Type: "array", UniqueItems: true, Items: &oaSchema{Type: "string", Pattern: `^[A-Z0-9]{1,7}$`},
			Description: "Tickers of the ETF funds, sorted: each is a `fund` value of `/v1/etf-flows/funds`. Always sent where ETF flows are offered; not listed as required so that answers of v1 before it stay valid."}
	}
	s["Sources"] = oaObject("The valid values of the filters.", sources, required...)

	s["HealthResponse"] = oaEnvelope(oaRef("Health"), false, "Meta")
	s["PostsPage"] = oaEnvelope(&oaSchema{Type: "array", Items: oaRef("Post")}, true, "Meta")
	s["PostResponse"] = oaEnvelope(oaRef("Post"), false, "Meta")
	s["BriefsPage"] = oaEnvelope(&oaSchema{Type: "array", Items: oaRef("BriefSummary")}, true, "Meta")
	s["BriefResponse"] = oaEnvelope(oaRef("Brief"), false, "Meta")
	s["FirehosePage"] = oaEnvelope(&oaSchema{Type: "array", Items: oaRef("FirehoseMessage")}, true, "Meta")
	s["SourcesResponse"] = oaEnvelope(oaRef("Sources"), false, "Meta")
	oaLandingSchemas(s)
	return s
}

// oaBriefProps are the fields of a brief; full adds the Markdown content.
func oaBriefProps(full bool) oaProps {
	p := oaProps{
		"uid":        {Type: "string", Pattern: `^wb_[0-9]+$`, Description: "Stable identifier, `wb_<id>`."},
		"id":         oaID("Numeric id; newer briefs have larger ids."),
		"week_start": {Type: "string", Format: "date", Description: "First day of the week (Monday)."},
		"week_end":   {Type: "string", Format: "date", Description: "Last day of the week (Sunday), inclusive."},
		"post_count": {Type: "integer", Minimum: oaPtr[int64](0), Description: "Number of curated posts created in the week."},
		"created_at": oaDateTime("Publication time."),
	}
	if full {
		p["content"] = &oaSchema{Type: "string", Description: "The brief as Markdown."}
	}
	return p
}

// oaEnvelope is the success envelope around data: a pagination object on the
// paginated lists, null everywhere else.
func oaEnvelope(data *oaSchema, paginated bool, meta string) *oaSchema {
	pagination := &oaSchema{Type: "null", Description: "Always null: this response is not paginated."}
	if paginated {
		pagination = oaRef("Pagination")
	}
	return oaObject("A success envelope.", oaProps{"data": data, "pagination": pagination, "meta": oaRef(meta)},
		"data", "pagination", "meta")
}

// oaObject is a closed object schema: fields outside p are errors.
func oaObject(description string, p oaProps, required ...string) *oaSchema {
	return &oaSchema{Type: "object", Description: description, Properties: p, Required: required, AdditionalProperties: oaPtr(false)}
}

// oaJSONContent is a JSON body of schema s.
func oaJSONContent(s *oaSchema) map[string]oaMediaType {
	return map[string]oaMediaType{oaMediaJSON: {Schema: s}}
}

func oaRef(name string) *oaSchema { return &oaSchema{Ref: "#/components/schemas/" + name} }

func oaString() *oaSchema { return &oaSchema{Type: "string"} }

func oaID(description string) *oaSchema {
	return &oaSchema{Type: "integer", Format: "int64", Minimum: oaPtr[int64](1), Description: description}
}

func oaDateTime(description string) *oaSchema {
	return &oaSchema{Type: "string", Format: "date-time", Pattern: oaPatternDateTime,
		Description: description + " UTC, `YYYY-MM-DDTHH:MM:SS.sssZ`."}
}

func oaNullableString(description string) *oaSchema {
	return &oaSchema{Type: []string{"string", "null"}, Description: description}
}

func oaNullableURL(description string) *oaSchema {
	return &oaSchema{Type: []string{"string", "null"}, Format: "uri", Description: description}
}

// oaMoney is an amount of US dollars: a double, which holds every amount
// served to the cent (15 significant digits). "At most two decimals" is said
// in words, not as multipleOf 0.01, which validators comparing binary
// floating point refuse for most amounts; it and plain notation are checked
// by the contract tests.
func oaMoney(description string) *oaSchema {
	return &oaSchema{Type: "number", Format: "double",
		Description: description + " Raw US dollars in plain decimal notation (never exponent notation) with at most two decimals, exact to the cent; a 64-bit float (double) holds it exactly to the cent."}
}

func oaErrorCodes() []any {
	out := make([]any, len(oaErrors))
	for i, e := range oaErrors {
		out[i] = string(e.code)
	}
	return out
}

func oaPtr[T any](v T) *T { return &v }
