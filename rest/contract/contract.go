// Package contract declares the public contract of /v1 once: each endpoint
// with its path, the tiers it is open to, its parameters (name, GraphQL
// variable, type and bounds, default, description), its response schema
// and the errors it can give. The router, the parameter parser and the
// streams of package rest and the OpenAPI document of package
// rest/openapi are all derived from these declarations, so that adding a
// parameter is one line of the endpoint's list (and its resolver and SQL
// behind the GraphQL variable).
package contract

import (
	"net/http"
	"slices"

	"github.com/feedapi/feedapi/graph/apperr"
)

// Shape says how an endpoint's query result becomes the envelope.
type Shape int

const (
	// Value: data is the query's "data" value; pagination is null.
	Value Shape = iota
	// Page: data is the nodes of the query's "page" connection and
	// pagination comes from its pageInfo.
	Page
	// Item: like Value, for one resource named by the path id; a null
	// result is 404.
	Item
	// OptionalPage: like Page, but pagination is null unless the client
	// asked for it (PagingParam true, or a cursor): a list that was not
	// paginated before keeps its answer for the clients that do not ask.
	OptionalPage
	// PagedItem: like Item, whose "items" member is a connection (its
	// last member, pageInfo before the nodes aliased "data"): data shows
	// the nodes as items, and pagination comes from its pageInfo when the
	// client asked for it, as OptionalPage.
	PagedItem
)

// Named reports whether the shape is of one resource named by the path
// id, whose absence is a 404.
func (s Shape) Named() bool { return s == Item || s == PagedItem }

// Tiers are the tiers of API keys; every keyed /v1 endpoint is open to
// all of them.
var Tiers = []string{"free", "pro", "internal"}

// Endpoint is one keyed GET endpoint of /v1: the fixed GraphQL query it
// runs, the query parameters that set the query's variables, the shape of
// its result, and what its OpenAPI operation says.
type Endpoint struct {
	Path   string  // chi route pattern and OpenAPI path
	Query  string  // document name in rest/queries
	Params []Param // accepted query parameters, in the order they are checked and documented
	Shape  Shape
	Tiers  []string                   // the tiers it is open to (nil: Tiers)
	Kind   string                     // Item, PagedItem: the resource named in a 404 ("post")
	Units  string                     // meta.units, if any
	Check  func(map[string]any) error // cross-parameter rule, if any; it may complete the variables (StoryItemPages)
	Poll   string                     // the poll cache's kind of its first pages, if polled
	ETF    bool                       // offered only where ETF flows are

	// The OpenAPI operation.
	OperationID string
	Summary     string
	Description string
	Tag         string
	Response    string // component schema of the 200 body
	OK          string // description of the 200 answer
	PathID      string // Item, PagedItem: component of the path id parameter

	// Stream, if set, is the SSE endpoint that follows this list.
	Stream *Stream
}

// Open reports the tiers ep is open to.
func (ep Endpoint) Open() []string {
	if ep.Tiers == nil {
		return Tiers
	}
	return ep.Tiers
}

// Stream is the SSE endpoint of a list: its parameters are the list's but
// for those that page it (every filter and the choice of fields), and a
// cursor that is a stream position, so that a filter added to a list is a
// filter of its stream.
type Stream struct {
	Path        string
	Query       string // document name in rest/queries
	Event       string // the SSE event name of its items
	OperationID string
	Summary     string
	Description string
	// Params are set by Streams from the list's.
	Params []Param
	// List is the path of the list it follows.
	List string
	Tag  string
}

// Streams returns the SSE endpoints of eps, with their parameters.
func Streams(eps []Endpoint) []Stream {
	var out []Stream
	for _, ep := range eps {
		if ep.Stream == nil {
			continue
		}
		st := *ep.Stream
		st.List, st.Tag = ep.Path, ep.Tag
		st.Params = nil
		for _, p := range ep.Params {
			if !p.Paging {
				st.Params = append(st.Params, p)
			}
		}
		st.Params = append(st.Params, StreamCursor())
		out = append(out, st)
	}
	return out
}

// ErrorKind is one error code of the contract with its HTTP status and the
// OpenAPI component response that documents it.
type ErrorKind struct {
	Code      apperr.Code
	Status    int
	Component string
	Summary   string
}

// Errors are the error codes of the contract: the one table from codes to
// HTTP statuses.
var Errors = []ErrorKind{
	{apperr.BadRequest, http.StatusBadRequest, "BadRequest", "A malformed, out-of-range, repeated or unknown query parameter, a bad path id or a bad cursor. The message names the parameter and what is allowed."},
	{apperr.Unauthorized, http.StatusUnauthorized, "Unauthorized", "The API key is missing, malformed, unknown or revoked."},
	{apperr.QuotaExceeded, http.StatusPaymentRequired, "QuotaExceeded", "Reserved for future paid quotas; never returned today."},
	{apperr.ForbiddenTier, http.StatusForbidden, "ForbiddenTier", "The key's tier cannot use this endpoint."},
	{apperr.NotFound, http.StatusNotFound, "NotFound", "No resource with this id (also the answer for unknown paths)."},
	{apperr.MethodNotAllowed, http.StatusMethodNotAllowed, "MethodNotAllowed", "A method the path does not support (any other than those documented for it); `Allow` lists those it does. Every /v1 path, `/`, the pages and their assets take GET and HEAD, /graphql GET and POST."},
	{apperr.RateLimited, http.StatusTooManyRequests, "RateLimited", "The rate limit is exceeded (the key's, the client IP's, or the client IP's budget of failed authentications, told apart by `RateLimit-Policy`); retry after the seconds in `Retry-After`."},
	{apperr.Internal, http.StatusInternalServerError, "Internal", "A server-side fault. Retry, then contact support with `meta.request_id`."},
}

// KeyedErrors are the statuses every keyed request can meet.
var KeyedErrors = []int{400, 401, 402, 403, 405, 429, 500}

// StatusOf returns the HTTP status of an error code; ok is false for codes
// the contract does not know, which are served as internal errors.
func StatusOf(code apperr.Code) (status int, ok bool) {
	i := slices.IndexFunc(Errors, func(e ErrorKind) bool { return e.Code == code })
	if i < 0 {
		return http.StatusInternalServerError, false
	}
	return Errors[i].Status, true
}
