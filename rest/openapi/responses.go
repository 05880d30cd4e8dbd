package openapi

import (
	"fmt"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/rest/contract"
)

// limited are the headers of every response that passed a rate limiter,
// which is every response but 401 (no key to count against) and 500 (the
// fault may come first).
var limited = []string{"X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy", "RateLimit"}

// success documents a successful answer whose body is the named component
// schema; withETag adds the ETag header (and so the 304 mechanism).
func success(description, schema string, withETag bool) *openapi3.ResponseRef {
	r := &openapi3.Response{Description: ptr(description), Headers: headers(limited...), Content: jsonContent(ref(schema))}
	if withETag {
		r.Headers["ETag"] = &openapi3.HeaderRef{Ref: "#/components/headers/ETag"}
	}
	return &openapi3.ResponseRef{Value: r}
}

func responseRef(component string) *openapi3.ResponseRef {
	return &openapi3.ResponseRef{Ref: "#/components/responses/" + component}
}

// keyedResponses completes the responses of a keyed GET: its success, 304,
// the errors every keyed request can meet, and the extra statuses given.
func keyedResponses(ok *openapi3.ResponseRef, extra ...string) *openapi3.Responses {
	rs := map[string]*openapi3.ResponseRef{"200": ok, "304": responseRef("NotModified")}
	statuses := make([]string, 0, len(contract.KeyedErrors)+len(extra))
	for _, s := range contract.KeyedErrors {
		statuses = append(statuses, strconv.Itoa(s))
	}
	return withErrors(rs, append(statuses, extra...)...)
}

// openResponses completes the responses of a GET that needs no key: 304,
// the errors every such request can meet, and the extra statuses given.
func openResponses(rs map[string]*openapi3.ResponseRef, extra ...string) *openapi3.Responses {
	rs["304"] = responseRef("NotModified")
	return withErrors(rs, append([]string{"400", "405", "429", "500"}, extra...)...)
}

// errorRef refers to the component response of an error status.
func errorRef(status string) *openapi3.ResponseRef {
	for _, e := range contract.Errors {
		if strconv.Itoa(e.Status) == status {
			return responseRef(e.Component)
		}
	}
	panic("openapi: no error of status " + status)
}

// withErrors adds references to the component responses of the statuses
// (strings or ints) and returns the whole as Responses.
func withErrors[S string | int](rs map[string]*openapi3.ResponseRef, statuses ...S) *openapi3.Responses {
	out := openapi3.NewResponsesWithCapacity(len(rs) + len(statuses))
	for status, r := range rs {
		out.Set(status, r)
	}
	for _, s := range statuses {
		status := fmt.Sprint(s)
		out.Set(status, errorRef(status))
	}
	return out
}

// polled adds X-Poll-Interval to the 200 and 304 answers of a polled list
// (posts, firehose); its 304 is described in place, as the shared one has
// no such header.
func polled(rs *openapi3.Responses) *openapi3.Responses {
	if ok := rs.Value("200"); ok != nil {
		ok.Value.Headers[contract.PollIntervalHeader] = &openapi3.HeaderRef{Ref: "#/components/headers/" + contract.PollIntervalHeader}
	}
	rs.Set("304", &openapi3.ResponseRef{Value: &openapi3.Response{
		Description: ptr("The `If-None-Match` tag matches the current representation: no body. Does not count against the key's rate limit (`RateLimit-Remaining` is unchanged)."),
		Headers:     headers(append([]string{"ETag", contract.PollIntervalHeader}, limited...)...),
	}})
	return rs
}

// responses are the shared responses: 304 and one per error code.
func responses() openapi3.ResponseBodies {
	rs := openapi3.ResponseBodies{
		"NotModified": {Value: &openapi3.Response{Description: ptr("The `If-None-Match` tag matches the current representation: no body."),
			Headers: headers(append([]string{"ETag"}, limited...)...)}},
	}
	for _, e := range contract.Errors {
		h := headers(limited...)
		switch e.Code {
		case apperr.Unauthorized:
			h = headers("X-Request-Id", "WWW-Authenticate")
		case apperr.QuotaExceeded, apperr.Internal:
			h = headers("X-Request-Id")
		case apperr.MethodNotAllowed:
			h["Allow"] = &openapi3.HeaderRef{Ref: "#/components/headers/Allow"}
		case apperr.RateLimited:
			h["Retry-After"] = &openapi3.HeaderRef{Ref: "#/components/headers/Retry-After"}
		}
		rs[e.Component] = &openapi3.ResponseRef{Value: &openapi3.Response{Description: ptr(e.Summary), Headers: h, Content: jsonContent(ref("ErrorEnvelope"))}}
	}
	return rs
}

// headers refers to the named component headers. Every answer that has
// X-Request-Id (every answer of the handler) also has
// X-Content-Type-Options.
func headers(names ...string) openapi3.Headers {
	hs := make(openapi3.Headers, len(names)+1)
	for _, n := range names {
		hs[n] = &openapi3.HeaderRef{Ref: "#/components/headers/" + n}
		if n == "X-Request-Id" {
			hs["X-Content-Type-Options"] = &openapi3.HeaderRef{Ref: "#/components/headers/X-Content-Type-Options"}
		}
	}
	return hs
}

// headerDefs are the response headers of the contract.
func headerDefs(o Options) openapi3.Headers {
	header := func(description string, s *openapi3.SchemaRef) *openapi3.HeaderRef {
		return &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{Required: true, Description: description, Schema: s}}}
	}
	return openapi3.Headers{
		"X-Request-Id": header("Unique id of the response, equal to `meta.request_id`; quote it to support.",
			val(&openapi3.Schema{Type: types("string"), MinLength: 1})),
		"X-Content-Type-Options": header("Always `nosniff`: the body is of its declared `Content-Type` only.",
			val(&openapi3.Schema{Type: types("string"), Const: "nosniff"})),
		"ETag": header("Strong entity tag of the representation, a quoted string (`\"…\"`, never `W/`); send it back in `If-None-Match`.",
			str("")),
		"RateLimit-Limit":     header("Requests allowed per rolling minute to this key (or client IP); on a 429 of policy `failed_auth`, the failed authentications allowed per minute to the client IP.", integer(1, "")),
		"RateLimit-Remaining": header("Requests left in the rolling minute: the limit minus the requests allowed in the last 60 seconds.", integer(0, "")),
		"RateLimit-Reset":     header("Seconds (rounded up) until the oldest request counted in the last 60 seconds leaves the window and frees one request; with nothing remaining, when the next request will be allowed. The same on every replica.", integer(0, "")),
		"RateLimit-Policy": header(fmt.Sprintf("The policy in the IETF draft's syntax, `\"default\";q=<limit>;w=60` (`\"default\";q=%d;w=60` for a key of the default budget), or `\"failed_auth\";q=<limit>;w=60` on a 429 for too many failed authentications.", o.RateLimit),
			patterned(`^"(default|failed_auth)";q=\d+;w=\d+$`, "")),
		"RateLimit": header("The current state in the IETF draft's syntax, `\"default\";r=<remaining>;t=<reset>` (`\"failed_auth\";…` on a 429 for too many failed authentications).",
			patterned(`^"(default|failed_auth)";r=\d+;t=\d+$`, "")),
		"Retry-After": header("Seconds to wait before retrying: 60.", integer(1, "")),
		"WWW-Authenticate": header("The challenge of the bearer scheme.",
			val(&openapi3.Schema{Type: types("string"), Const: `Bearer realm="feedapi"`})),
		"Allow": header("The methods the path takes.", enum("", "GET, HEAD", "GET, POST")),
		contract.PollIntervalHeader: {Value: &openapi3.Header{Parameter: openapi3.Parameter{
			Description: "Hint: seconds a poller should wait before asking for this list again. The first page (no `cursor`) of each parameter set " +
				"may be answered from a short-lived in-process cache: a write shows within this many seconds at most (sooner when the server " +
				"learns of it); polling faster gains nothing, and a 304 for an unchanged page costs no rate limit.",
			Schema: integer(contract.MinPollInterval, ""),
		}}},
	}
}
