// Package openapi renders the contract of package rest/contract, and the
// paths of the service beside it, as the OpenAPI 3.1 document served at
// GET /v1/openapi.json, built with kin-openapi's types.
package openapi

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/feedapi/feedapi/graph/limits"
)

// Options are the facts of one deployment that its OpenAPI document
// depends on.
type Options struct {
	// ServerURL is the primary address of the API ({base_url}) without the
	// /v1 prefix, which every documented path carries itself. Empty means
	// "/": the host that serves the document.
	ServerURL string
	// AltServerURL is a second address reaching the same API
	// ({alt_base_url}); empty leaves it out.
	AltServerURL string
	// ETFEnabled documents the ETF endpoints and the ETF lists of
	// /v1/sources; without it they are absent, as they are from the
	// deployment.
	ETFEnabled bool
	// Version is the build version of the service: info.version.
	Version string
	// RateLimit is the default budget of a key in requests per minute,
	// which the description quotes.
	RateLimit int
}

// Names used across the document.
const (
	bearer    = "bearerAuth"
	mediaJSON = "application/json"
)

// keyed is the security requirement of the operations that need a key.
func keyed() *openapi3.SecurityRequirements {
	return &openapi3.SecurityRequirements{{bearer: {}}}
}

// openToAll is the security requirement of the operations open to everyone.
func openToAll() *openapi3.SecurityRequirements { return &openapi3.SecurityRequirements{} }

// description summarises the contract's decisions for readers.
func description(o Options) string {
	etf := "This deployment does not offer ETF flows: `/v1/etf-flows`, `/v1/etf-flows/latest`, `/v1/etf-flows/summary`, `/v1/etf-flows/funds` and `/v1/etf-funds` answer 404 `not_found`, and `/v1/sources` has no `etf_assets` nor `etf_funds`."
	if o.ETFEnabled {
		etf = "This deployment offers daily US spot-ETF flows (`/v1/etf-flows`, `/v1/etf-flows/latest`, `/v1/etf-flows/summary`) and their funds (`/v1/etf-funds`, each fund's daily figures in `/v1/etf-flows/funds`). Their monetary values are raw US dollars: JSON numbers in plain decimal notation (never exponent notation), exact to the cent; `meta.units` is `usd`. Holdings are coins, in plain decimal notation with at most eight decimals."
	}
	return strings.Join([]string{
		"Read-only JSON over HTTPS. Every `/v1` path takes GET and HEAD (the headers of GET, no body); nothing takes a request body except `POST /graphql`.",
		"",
		"**Start here.** `GET /` (or `/v1`) names the places to start in `data.links` (a browser gets them as an HTML page); `/reference` renders this document for reading. Neither needs a key.",
		"",
		"**Envelope.** Every body except this document's is a JSON object. Success: `data` (an array for lists, an object for one resource), `pagination` (`{next_cursor, has_more}` on the paginated lists `/v1/posts`, `/v1/briefs`, `/v1/firehose`, `/v1/stories` and `/v1/etf-flows/funds`, and on `/v1/etf-flows` when asked for with `paginate=true` or a `cursor`; `null` everywhere else) and `meta`: `api_version` (`v1`), `request_id` (unique per response, equal to the `X-Request-Id` header), `tier` (the key's tier; `null` where no valid key was given) and, on ETF responses, `units` (`usd`). Error: `{error: {code, message}, meta}`, with neither `data` nor `pagination`. `Content-Type` is always `application/json; charset=utf-8`, and `X-Content-Type-Options` always `nosniff`. A request line and header fields over 16 KiB are refused with 431 and `bad_request` in the error envelope (over 64 KiB, and for requests HTTP itself cannot read, such as a malformed request line or a repeated `Host`, the HTTP server answers in `text/plain` before the API sees the request).",
		"",
		"**Formats.** Timestamps are UTC written `YYYY-MM-DDTHH:MM:SS.sssZ`; days are `YYYY-MM-DD`. A field of a resource is always present (`null` when empty) except these: `body` of posts, and of the items of stories (omitted with `include_body=false`), `raw` of posts (only with `include_raw=true`) and `summary_ai` of firehose messages (only with `include_summary=true`). The schemas close every object (`additionalProperties: false`) to describe v1 exactly as served today; as fields may be added within v1, clients should ignore fields they do not know.",
		"",
		"**Authentication and tiers.** Every endpoint except `/v1/health` and `/v1/openapi.json` needs `Authorization: Bearer <API_KEY>`. A missing, malformed, unknown or revoked key gives 401 `unauthorized` with `WWW-Authenticate: Bearer realm=\"feedapi\"`. Tiers are `free` (the preview tier), `pro` and `internal`; every `/v1` endpoint is open to all three, `/graphql` only to `internal` (others get 403 `forbidden_tier`). A keyed request is checked in the order key (401), tier (403), rate limit (429), parameters (400), then answered 404 or 200.",
		"",
		fmt.Sprintf("**Rate limits.** %d requests per rolling minute per key (the operator may set other budgets per tier), shared by all replicas. The minute is exact: in any 60-second interval a key gets at most its limit, from one replica or many; requests refused with 400, 403 or 404 count too, requests refused with 429 do not, and neither do answers 304 Not Modified (a key over its limit gets 429 for conditional requests too). The endpoints without a key, and unknown paths, are limited per client IP (600 requests per minute by default). Every response except 401 and 500 carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds until the oldest counted request leaves the minute; at 0 remaining, until the next request is allowed) and the IETF draft's `RateLimit-Policy: \"default\";q=%d;w=60` and `RateLimit: \"default\";r=<remaining>;t=<reset>`. Over the limit: 429 `rate_limited` with `Retry-After: 60`. Failed authentications have a small budget per client IP (30 per minute by default): beyond it that address gets 429 `rate_limited` with `Retry-After: 60` and `RateLimit-Policy: \"failed_auth\";q=30;w=60` instead of 401, and while it is spent a key this server has not verified recently is not even looked up; a key that worked from that address before keeps working.", o.RateLimit, o.RateLimit),
		"",
		"**Pagination.** Lists are newest first. The paginated ones use an opaque keyset cursor: while `pagination.has_more` is true, send `pagination.next_cursor` as `cursor` to get the next, older page; on the last page `has_more` is false and `next_cursor` null. Rows are never skipped or duplicated across pages, and a cursor keeps working while new items arrive. A cursor is bound to the endpoint that issued it: an undecodable, tampered or foreign one gives 400. To fetch only new items, pass `since`, or walk pages until an `id` already seen. A page also has a size bound: once its long texts (`body` and `raw` of posts, `body` and `summary_ai` of firehose messages, in UTF-8 bytes as served, before JSON escaping) would pass 4 MiB (unless the deployment sets another bound), it ends after the last item that fits, with `has_more` true and a `next_cursor` that goes on from there. A page may thus hold fewer than `limit` items while more follow: page on `has_more`, never on the count. An item whose own texts pass the bound is never served in part: it gives 400 `bad_request` naming the parameter to turn off (`include_raw`, `include_summary`), and can be read without it; `/v1/posts/{id}` likewise.",
		"",
		fmt.Sprintf("**Parameters.** Booleans take `true`, `false`, `1` or `0`, case-insensitive. `limit` outside its range is refused, never clamped. `since` takes an RFC 3339 date-time with `Z` or an offset (write `+` as `%%2B`), or a bare date meaning 00:00 UTC that day; it is inclusive. Free-text values (`source`, `cursor`) are non-empty UTF-8 of at most %d bytes. Path ids are positive integers that fit in 64 bits (else 400); a well-formed id with no row gives 404. A repeated parameter (`limit=10&limit=20`) gives 400, and so does an unknown one: every endpoint, including those without a key, refuses a query parameter it does not document and names those it takes, so that a misspelt filter never silently widens a query. Every problem is a 400 `bad_request` whose message names the parameter and what is allowed.", limits.MaxTextBytes),
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
