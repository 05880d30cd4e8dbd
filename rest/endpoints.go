package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/apperr"
)

// shape says how an endpoint's query result becomes the envelope.
type shape int

const (
	// shapeValue: data is the query's "data" value; pagination is null.
	shapeValue shape = iota
	// shapePage: data is the nodes of the query's "page" connection and
	// pagination comes from its pageInfo.
	shapePage
	// shapeItem: like shapeValue, for one resource named by the path id; a
	// null result is 404.
	shapeItem
	// shapeOptionalPage: like shapePage, but pagination is null unless the
	// client asked for it (pagingParam true, or a cursor): a list that was
	// not paginated before keeps its answer for the clients that do not ask.
	shapeOptionalPage
)

// endpoint is one keyed GET endpoint of /v1: a fixed query, the query
// parameters that set its variables, and the shape of its result.
type endpoint struct {
	pattern string  // chi route pattern
	query   string  // document name in queries/
	params  []param // accepted query parameters
	shape   shape
	kind    string                     // shapeItem: the resource named in a 404 ("post")
	units   string                     // meta.units, if any
	check   func(map[string]any) error // cross-parameter rule, if any
	poll    string                     // PollCache kind of its first pages, if polled
	// rename, when set, rewrites the data of its result (storyItemNames).
	rename func([]byte) []byte
	// toggles maps the GraphQL fields of its query shown only when a
	// parameter says so (@include(if: $includeRaw)) to that parameter
	// (include_raw); set from the prepared document (fieldToggles).
	toggles map[string]string
}

// endpoints returns the keyed /v1 endpoints. The values of pane and asset
// are the schema's enum values, so they cannot drift from the schema.
func endpoints(schema *ast.Schema, etf bool) ([]endpoint, error) {
	panes, err := enumValues(schema, "Pane")
	if err != nil {
		return nil, err
	}
	eps := []endpoint{
		{
			pattern: "/v1/posts", query: "posts", shape: shapePage, poll: PollPosts,
			params: []param{
				limitParam(1, 100, 50),
				cursorParam(),
				textParam("source", "source"),
				sinceParam(),
				coinsParam(),
				queryParam(),
				sinceIDParam(),
				positionParam(),
				collapseParam(),
				boolParam("include_body", "includeBody", true),
				boolParam("include_raw", "includeRaw", false),
			},
		},
		{
			pattern: "/v1/posts/{id}", query: "post", shape: shapeItem, kind: "post",
			params: []param{boolParam("include_raw", "includeRaw", false)},
		},
		{
			pattern: "/v1/briefs", query: "briefs", shape: shapePage,
			params: []param{limitParam(1, 100, 50), cursorParam()},
		},
		{pattern: "/v1/briefs/{id}", query: "brief", shape: shapeItem, kind: "brief"},
		{
			pattern: "/v1/firehose", query: "firehose", shape: shapePage, poll: PollFirehose,
			params: []param{
				limitParam(1, 100, 50),
				cursorParam(),
				enumParam("pane", "pane", panes),
				textParam("source", "source"),
				boolParam("important", "important", nil),
				sinceParam(),
				coinsParam(),
				queryParam(),
				sinceIDParam(),
				positionParam(),
				collapseParam(),
				boolParam("include_summary", "includeSummary", false),
			},
		},
		{pattern: "/v1/sources", query: "sources", shape: shapeValue},
	}
	eps = append(eps, storyEndpoints(panes)...)
	if !etf {
		return eps, nil
	}
	assets, err := enumValues(schema, "EtfAsset")
	if err != nil {
		return nil, err
	}
	for i := range eps {
		if eps[i].pattern == "/v1/sources" {
			eps[i].query = "sources_etf"
		}
	}
	return append(eps,
		endpoint{
			pattern: "/v1/etf-flows", query: "etf_flows", shape: shapeOptionalPage, units: "usd",
			params: []param{
				assetParam(assets),
				dateParam("from"),
				dateParam("to"),
				limitParam(1, 500, 100),
				boolParam(pagingParam, pagingParam, nil),
				cursorParam(),
			},
			check: all(fromNotAfterTo, cursorPaginates),
		},
		endpoint{
			pattern: "/v1/etf-flows/funds", query: "etf_fund_flows", shape: shapePage, units: "usd",
			params: []param{
				assetParam(assets),
				fundParam(),
				dateParam("from"),
				dateParam("to"),
				limitParam(1, 500, 100),
				cursorParam(),
			},
			check: fromNotAfterTo,
		},
		endpoint{
			pattern: "/v1/etf-funds", query: "etf_funds", shape: shapeValue, units: "usd",
			params: []param{assetParam(assets)},
		},
		endpoint{
			pattern: "/v1/etf-flows/latest", query: "etf_flows_latest", shape: shapeValue, units: "usd",
			params: []param{assetParam(assets)},
		},
		endpoint{
			pattern: "/v1/etf-flows/summary", query: "etf_summary", shape: shapeValue, units: "usd",
			params: []param{assetParam(assets)},
		},
	), nil
}

// restParam makes a bad_request of the endpoint's query that names a
// GraphQL variable (first, after, includeBody, …) name the query parameter
// that set it instead, with the parameter's own message: every 400 of /v1
// names what the client wrote. The parameters check their values as the
// schema does, so this is a safety net; other errors pass unchanged.
func (ep endpoint) restParam(err error) error {
	var tl *graph.ItemTooLargeError
	if errors.As(err, &tl) {
		return ep.tooLarge(tl)
	}
	d := apperr.As(err)
	if d == nil || d.Code != apperr.BadRequest || d.Param == "" {
		return err
	}
	for _, p := range ep.params {
		switch d.Param {
		case p.name:
			return err
		case p.variable:
			e := p.invalid()
			e.Err = err
			return e
		}
	}
	return err
}

// tooLarge is the 400 of an item too large to be served whole under the
// page budget: it names the parameter that turns on the (usually) largest
// of the fields that made it so.
func (ep endpoint) tooLarge(tl *graph.ItemTooLargeError) error {
	msg := fmt.Sprintf("%s %d is too large to be served whole: %d bytes of text, more than the %d bytes a page may hold",
		tl.Kind, tl.ID, tl.Bytes, tl.Max)
	for _, f := range tl.Fields {
		if name, ok := ep.toggles[f]; ok {
			return &apperr.Error{Code: apperr.BadRequest, Param: name, Err: tl,
				Message: msg + "; ask for it with " + name + "=false"}
		}
	}
	return &apperr.Error{Code: apperr.BadRequest, Err: tl, Message: msg}
}

// fieldToggles returns, for the operation of doc, the fields shown only
// when a boolean parameter of params is true (@include(if: $variable)),
// by field name, with that parameter's name.
func fieldToggles(doc *ast.QueryDocument, params []param) map[string]string {
	out := map[string]string{}
	var walk func(set ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			f, ok := sel.(*ast.Field)
			if !ok {
				continue
			}
			if d := f.Directives.ForName("include"); d != nil {
				if arg := d.Arguments.ForName("if"); arg != nil && arg.Value.Kind == ast.Variable {
					for _, p := range params {
						if p.variable == arg.Value.Raw {
							out[f.Name] = p.name
						}
					}
				}
			}
			walk(f.SelectionSet)
		}
	}
	for _, op := range doc.Operations {
		walk(op.SelectionSet)
	}
	return out
}

func enumValues(schema *ast.Schema, name string) ([]string, error) {
	def := schema.Types[name]
	if def == nil || def.Kind != ast.Enum {
		return nil, fmt.Errorf("rest: the schema has no enum %s", name)
	}
	out := make([]string, len(def.EnumValues))
	for i, v := range def.EnumValues {
		out[i] = v.Name
	}
	return out, nil
}

// serve returns the handler of ep.
func (s *server) serve(ep endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ep.poll != "" {
			w.Header()[hPollInterval] = s.pollHint
			if s.polls != nil && firstPage(r) {
				s.servePoll(w, r, ep)
				return
			}
		}
		// The executor writes into data; res slices it until writeSuccess
		// has copied it into the envelope.
		data := s.bufs.get()
		defer s.bufs.put(data)
		res, err := s.execute(r, ep, data)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeSuccess(w, r, res)
	}
}

// execute checks the request's path id and parameters (400), runs the
// endpoint's query with its response written into buf, and shapes the
// result, which refers to buf.
func (s *server) execute(r *http.Request, ep endpoint, buf *bytes.Buffer) (success, error) {
	var id int64
	if ep.shape == shapeItem {
		raw := chi.URLParam(r, "id")
		if raw == "" {
			return success{}, apperr.New(apperr.NotFound, "no "+ep.kind+" id in the path")
		}
		var err error
		if id, err = parseID(raw); err != nil {
			return success{}, err
		}
	}
	vars, err := parseParams(r, ep.params)
	if err != nil {
		return success{}, err
	}
	if ep.check != nil {
		if err := ep.check(vars); err != nil {
			return success{}, err
		}
	}
	if ep.shape == shapeItem {
		vars["id"] = id
	}
	// The query has no variable for the paging switch: it only shapes
	// the envelope.
	paging := vars[pagingParam] == true || vars["after"] != nil
	delete(vars, pagingParam)
	data, err := s.queries.run(graph.WithResponseBuffer(r.Context(), buf), ep.query, vars)
	if err != nil {
		return success{}, ep.restParam(err)
	}
	res := success{units: ep.units}
	switch ep.shape {
	case shapePage, shapeOptionalPage:
		var pi pageInfo
		res.data, pi, err = splitPage(data)
		res.paged, res.hasMore = ep.shape == shapePage || paging, pi.HasNextPage
		if string(pi.position) != "null" {
			res.position = pi.position // first pages only
		}
		if res.paged && pi.HasNextPage && string(pi.EndCursor) != "null" {
			res.nextCursor = pi.EndCursor
		}
	default:
		res.data, err = member(data, "data")
		if err == nil && ep.shape == shapeItem && string(res.data) == "null" {
			err = apperr.Missing(ep.kind, id)
		}
	}
	if err != nil {
		return success{}, fmt.Errorf("%s: %w", ep.query, err)
	}
	if ep.rename != nil {
		res.data = ep.rename(res.data)
	}
	return res, nil
}

// health serves /v1/health: 200 while the database the API reads from
// answers, 503 (with the same body shape, status "degraded") while it does
// not. A primary away while its read replica answers degrades the status
// but not the HTTP code: the API still serves, and a load balancer must not
// take every replica of it out for that. rate_limits tells where the rate
// limits are counted (withRateLimits).
func (s *server) health(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, nil); err != nil {
		s.writeError(w, r, err)
		return
	}
	data, err := s.queries.run(r.Context(), "health", nil)
	if err == nil {
		data, err = member(data, "data")
	}
	var h struct {
		Database string `json:"database"`
	}
	if err == nil {
		err = json.Unmarshal(data, &h)
	}
	if err != nil {
		s.writeError(w, r, fmt.Errorf("health: %w", err))
		return
	}
	status := http.StatusOK
	if h.Database != "ok" {
		status = http.StatusServiceUnavailable
	}
	s.writeSuccess(w, r, success{status: status, data: s.withRateLimits(data), cache: cacheNone})
}

// openAPI serves the OpenAPI document itself, not wrapped in the envelope.
func (s *server) openAPI(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, nil); err != nil {
		s.writeError(w, r, err)
		return
	}
	buf := s.bufs.get()
	buf.Write(s.openapi)
	s.send(w, r, http.StatusOK, buf, buf.Len(), cachePublic)
}
