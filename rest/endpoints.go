package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/pollcache"
)

// endpoint is one keyed GET endpoint of /v1 as the router serves it: its
// declaration in the contract, and what the prepared query adds.
type endpoint struct {
	contract.Endpoint
	// toggles maps the GraphQL fields of its query shown only when a
	// parameter says so (@include(if: $includeRaw)) to that parameter
	// (include_raw); set from the prepared document (fieldToggles).
	toggles map[string]string
}

// endpoints returns the keyed /v1 endpoints of the contract. The values of
// the contract's enumerations must be the schema's, so that the parameters
// cannot drift from the schema.
func endpoints(schema *ast.Schema, etf bool) ([]endpoint, error) {
	enums := map[string][]string{"Pane": contract.PaneValues}
	if etf {
		enums["EtfAsset"] = contract.AssetValues
	}
	for name, declared := range enums {
		values, err := enumValues(schema, name)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(values, declared) {
			return nil, fmt.Errorf("rest: the schema's enum %s is %v, the contract's %v", name, values, declared)
		}
	}
	var eps []endpoint
	for _, ep := range contract.Endpoints(etf) {
		eps = append(eps, endpoint{Endpoint: ep})
	}
	return eps, nil
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
	for _, p := range ep.Params {
		switch d.Param {
		case p.Name:
			return err
		case p.Variable:
			e := p.Invalid()
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
func fieldToggles(doc *ast.QueryDocument, params []contract.Param) map[string]string {
	out := map[string]string{}
	var walk func(set ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			// The items of a story are a union: their fields are in
			// fragments on each type.
			if fr, ok := sel.(*ast.InlineFragment); ok {
				walk(fr.SelectionSet)
				continue
			}
			f, ok := sel.(*ast.Field)
			if !ok {
				continue
			}
			if d := f.Directives.ForName("include"); d != nil {
				if arg := d.Arguments.ForName("if"); arg != nil && arg.Value.Kind == ast.Variable {
					for _, p := range params {
						if p.Variable == arg.Value.Raw {
							out[f.Name] = p.Name
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
		if ep.Poll != "" {
			w.Header()[hPollInterval] = s.pollHint
			if s.polls != nil && firstPage(r) {
				s.servePoll(w, r, ep)
				return
			}
		}
		// The executor writes into data; res slices it until Success
		// has copied it into the envelope.
		data := s.env.Buffer()
		defer s.env.Release(data)
		res, err := s.execute(r, ep, data)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.env.Success(w, r, res)
	}
}

// servePoll answers the first page of a polled endpoint from the cache, or
// runs the query and caches its answer. Parameters are checked first, so a
// bad one gets its 400 whether or not a page is cached.
func (s *server) servePoll(w http.ResponseWriter, r *http.Request, ep endpoint) {
	if _, err := contract.Parse(r.URL.RawQuery, ep.Params); err != nil {
		s.writeError(w, r, ep.restParam(err))
		return
	}
	p, _ := keys.FromContext(r.Context())
	key := pollcache.Key(ep.Query, string(p.Tier), r.URL.RawQuery)
	if e := s.polls.Get(key); e != nil {
		s.env.SendCached(w, r, e.Body, e.Position, e.Tag)
		return
	}
	gen, started := s.polls.Generation(ep.Poll), s.polls.Now()
	data := s.env.Buffer()
	defer s.env.Release(data)
	res, err := s.execute(r, ep, data)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	buf, tagged := s.env.Envelope(r, res)
	tag := envelope.ETagOf(buf.Bytes()[:tagged])
	s.polls.Put(key, ep.Poll, gen, started, bytes.Clone(buf.Bytes()[:tagged]), bytes.Clone(res.Position), tag)
	s.env.SendTyped(w, r, http.StatusOK, buf, tagged, tag, envelope.CacheKeyed, envelope.ContentTypeJSON)
}

// setPaging gives res the pagination of a connection whose pageInfo is pi:
// paged or not, whether more follow, and the cursor of the next page only
// when the answer is paged and one follows.
func setPaging(res *envelope.Success, paged bool, pi pageInfo) {
	res.Paged, res.HasMore = paged, pi.HasNextPage
	if paged && pi.HasNextPage && string(pi.EndCursor) != "null" {
		res.NextCursor = pi.EndCursor
	}
}

// execute checks the request's path id and parameters (400), runs the
// endpoint's query with its response written into buf, and shapes the
// result, which refers to buf.
func (s *server) execute(r *http.Request, ep endpoint, buf *bytes.Buffer) (envelope.Success, error) {
	var id int64
	if ep.Shape.Named() {
		raw := chi.URLParam(r, "id")
		if raw == "" {
			return envelope.Success{}, apperr.New(apperr.NotFound, "no "+ep.Kind+" id in the path")
		}
		var err error
		if id, err = contract.ParseID(raw); err != nil {
			return envelope.Success{}, err
		}
	}
	vars, err := contract.Parse(r.URL.RawQuery, ep.Params)
	if err != nil {
		return envelope.Success{}, err
	}
	if ep.Check != nil {
		if err := ep.Check(vars); err != nil {
			return envelope.Success{}, err
		}
	}
	if ep.Shape.Named() {
		vars["id"] = id
	}
	// The query has no variable for the paging switch: it only shapes
	// the envelope.
	paging := vars[contract.PagingParam] == true || vars["after"] != nil
	delete(vars, contract.PagingParam)
	data, err := s.queries.run(graph.WithResponseBuffer(r.Context(), buf), ep.Query, vars)
	if err != nil {
		return envelope.Success{}, ep.restParam(err)
	}
	res := envelope.Success{Units: ep.Units}
	switch ep.Shape {
	case contract.Page, contract.OptionalPage:
		var pi pageInfo
		res.Data, pi, err = splitPage(data)
		setPaging(&res, ep.Shape == contract.Page || paging, pi)
		if string(pi.position) != "null" {
			res.Position = pi.position // first pages only
		}
	default:
		res.Data, err = member(data, "data")
		if err == nil && ep.Shape.Named() && string(res.Data) == "null" {
			err = apperr.Missing(ep.Kind, id)
		}
		if err == nil && ep.Shape == contract.PagedItem {
			var pi pageInfo
			res.Data, pi, err = liftItemsPage(res.Data)
			setPaging(&res, paging, pi)
		}
	}
	if err != nil {
		return envelope.Success{}, fmt.Errorf("%s: %w", ep.Query, err)
	}
	if rewrite := resultRewrites[ep.Path]; rewrite != nil {
		res.Data = rewrite(res.Data)
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
	if _, err := contract.Parse(r.URL.RawQuery, nil); err != nil {
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
	s.env.Success(w, r, envelope.Success{Status: status, Data: withRateLimits(data, s.guard.RateState()), Cache: envelope.CacheNone})
}

// openAPI serves the OpenAPI document itself, not wrapped in the envelope.
func (s *server) openAPI(w http.ResponseWriter, r *http.Request) {
	if _, err := contract.Parse(r.URL.RawQuery, nil); err != nil {
		s.writeError(w, r, err)
		return
	}
	buf := s.env.Buffer()
	buf.Write(s.openapi)
	s.env.Send(w, r, http.StatusOK, buf, buf.Len(), envelope.CachePublic)
}
