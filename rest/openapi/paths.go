package openapi

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/feedapi/feedapi/rest/contract"
)

// paths documents every path of the deployment: the endpoints and streams
// of the contract, and the pages and meta paths beside them.
func paths(o Options, eps []contract.Endpoint) *openapi3.Paths {
	p := openapi3.NewPathsWithCapacity(32)
	p.Set(contract.HealthPath, &openapi3.PathItem{Get: &openapi3.Operation{
		OperationID: "getHealth", Summary: "Health and version", Tags: []string{contract.TagMeta}, Security: openToAll(),
		Description: "Reports the service's health, its build version and where its rate limits are counted. Needs no key and touches nothing beyond a database ping. While the database the API reads from (`database`: the read replica when one is configured) is unreachable the answer is 503 with `status` `degraded`. With a read replica, a primary that does not answer (`database_primary` `unreachable`) gives `status` `degraded` with 200: the API goes on serving, keys are verified on the replica (a revocation counts once it has reached the replica), and only the operator commands that write (`keys`, `import`, `seed`, `migrate`) fail. An unreachable Redis does not degrade the service: each replica then counts rate limits on its own (`rate_limits` `local_fallback`) until Redis answers again.",
		Parameters:  paramRefs("IfNoneMatch"),
		Responses: openResponses(map[string]*openapi3.ResponseRef{
			"200": success("The service serves: `status` `ok`, or `degraded` while only the primary is unreachable and a read replica serves (`database_primary` `unreachable`).", "HealthResponse", true),
			"503": success("The database the API reads from is unreachable: `status` is `degraded`, `database` `unreachable`.", "HealthResponse", false),
		}),
	}})
	p.Set(contract.OpenAPIPath, &openapi3.PathItem{Get: &openapi3.Operation{
		OperationID: "getOpenAPI", Summary: "This OpenAPI 3.1 description", Tags: []string{contract.TagMeta}, Security: openToAll(),
		Description: "The OpenAPI document itself, not wrapped in the envelope, so that tools can read it.",
		Parameters:  paramRefs("IfNoneMatch"),
		Responses: openResponses(map[string]*openapi3.ResponseRef{
			"200": success("The OpenAPI document.", "OpenAPIDocument", true),
		}),
	}})
	for _, ep := range eps {
		p.Set(ep.Path, &openapi3.PathItem{Get: operation(ep)})
	}
	for _, st := range contract.Streams(eps) {
		p.Set(st.Path, &openapi3.PathItem{Get: streamOperation(st)})
	}
	p.Set(contract.GraphQLPath, &openapi3.PathItem{
		Get: graphQL("Get", paramRefs("GraphQLQuery", "GraphQLOperationName", "GraphQLVariables"), nil),
		Post: graphQL("Post", nil, &openapi3.RequestBodyRef{Value: &openapi3.RequestBody{Description: "A GraphQL request.", Required: true,
			Content: jsonContent(ref("GraphQLRequest"))}}),
	})
	p.Set(contract.GraphiQLAssetsPath+"/{file}", &openapi3.PathItem{Get: asset("getGraphiQLAsset", "A script or stylesheet of the GraphiQL page", contract.TagGraphQL,
		"The GraphiQL page of `GET /graphql` loads its scripts and stylesheets from here, never from another host, so it works offline. Names carry the package version and are cached as immutable. Needs no key; limited per client IP.",
		"graphiql-3.9.0.min.js")})
	dashboardPaths(p, o)
	landingPaths(p)
	// Every path but /graphql and the streams answers HEAD as GET without a
	// body.
	components := responses()
	for path, item := range p.Map() {
		if path != contract.GraphQLPath && !strings.HasSuffix(path, "/stream") {
			item.Head = head(item.Get, components)
		}
	}
	return p
}

// operation documents a keyed endpoint of the contract.
func operation(ep contract.Endpoint) *openapi3.Operation {
	var params openapi3.Parameters
	if ep.PathID != "" {
		params = append(params, paramRefs(ep.PathID)...)
	}
	params = append(params, paramsOf(ep.Params)...)
	params = append(params, paramRefs("IfNoneMatch")...)
	var extra []string
	if ep.Shape.Named() {
		extra = append(extra, "404")
	}
	rs := keyedResponses(success(ep.OK, ep.Response, true), extra...)
	if ep.Poll != "" {
		rs = polled(rs)
	}
	return &openapi3.Operation{
		OperationID: ep.OperationID, Summary: ep.Summary, Description: ep.Description,
		Tags: []string{ep.Tag}, Security: keyed(), Parameters: params, Responses: rs,
	}
}

// paramsOf documents params: a reference to the component of each that has
// one, the others in place.
func paramsOf(params []contract.Param) openapi3.Parameters {
	out := make(openapi3.Parameters, 0, len(params))
	for _, p := range params {
		if p.Component != "" {
			out = append(out, paramRefs(p.Component)...)
			continue
		}
		out = append(out, &openapi3.ParameterRef{Value: queryParam(p)})
	}
	return out
}

func queryParam(p contract.Param) *openapi3.Parameter {
	return &openapi3.Parameter{Name: p.Name, In: "query", Description: p.Description, Schema: val(p.Schema)}
}

// paramRefs refers to the named component parameters.
func paramRefs(names ...string) openapi3.Parameters {
	out := make(openapi3.Parameters, len(names))
	for i, n := range names {
		out[i] = &openapi3.ParameterRef{Ref: "#/components/parameters/" + n}
	}
	return out
}

// parameters are the component parameters: those of the contract's
// endpoints, the path ids, If-None-Match and those of /graphql.
func parameters(eps []contract.Endpoint) openapi3.ParametersMap {
	query := func(name, description string, s *openapi3.SchemaRef) *openapi3.ParameterRef {
		return &openapi3.ParameterRef{Value: &openapi3.Parameter{Name: name, In: "query", Description: description, Schema: s}}
	}
	pathID := func(kind string) *openapi3.ParameterRef {
		return &openapi3.ParameterRef{Value: &openapi3.Parameter{Name: "id", In: "path", Required: true,
			Description: "Numeric id of the " + kind + ": a positive integer that fits in 64 bits (else 400). No " + kind + " with this id gives 404.",
			Schema:      id("")}}
	}
	m := openapi3.ParametersMap{
		"IfNoneMatch": {Value: &openapi3.Parameter{Name: "If-None-Match", In: "header", Schema: str(""),
			Description: "An `ETag` of an earlier response; while it matches, the answer is 304 without a body."}},
		"GraphQLQuery": query("query", "The GraphQL document (query operations only). Without it, a browser asking for `text/html` gets the playground.",
			str("")),
		"GraphQLOperationName": query("operationName", "The operation to run when the document holds several.", str("")),
		"GraphQLVariables":     query("variables", "The operation's variables as a JSON object.", str("")),
	}
	for _, ep := range eps {
		if ep.PathID != "" {
			m[ep.PathID] = pathID(ep.Kind)
		}
		for _, p := range ep.Params {
			if p.Component != "" {
				m[p.Component] = &openapi3.ParameterRef{Value: queryParam(p)}
			}
		}
	}
	return m
}

// streamOperation documents an SSE endpoint.
func streamOperation(st contract.Stream) *openapi3.Operation {
	const body = "Server-Sent Events. Each item is an event `%s` whose `data` is the item exactly as the list shows it (one line of JSON) and whose `id` is its stream position. Items come in the order they became visible in the database, oldest first, each exactly once, whatever their ids. An item that an import changes is sent again, once, as an event `update` (its `updated_at` set), in order with the new items at the position of the change; resuming with `Last-Event-ID` stays exact. Comment lines (`: heartbeat`) keep idle connections open. The stream ends with an event `error` whose `data` is `{\"error\":{\"code\",\"message\"}}` when the client reads too slowly (`slow_reader`) or the server shuts down (`shutting_down`), after which a client reconnects with `Last-Event-ID` to resume, or when the key is revoked (`unauthorized`, within seconds of the revocation). A client that sends anything after its request, or whose connection stops acknowledging data for three heartbeat intervals, is cut."
	ok := &openapi3.ResponseRef{Value: &openapi3.Response{Description: ptr("The stream."), Headers: headers(limited...),
		Content: content("text/event-stream", str(fmt.Sprintf(body, st.Event)))}}
	params := paramsOf(st.Params)
	params = append(params, &openapi3.ParameterRef{Value: &openapi3.Parameter{Name: "Last-Event-ID", In: "header",
		Description: "The `id` of the last event received; the stream resumes after it: first every item missed (from the database), then live items, with no gap and no duplicate, on any replica.",
		Schema:      str("")}})
	return &openapi3.Operation{
		OperationID: st.OperationID, Summary: st.Summary, Description: st.Description,
		Tags: []string{st.Tag}, Security: keyed(), Parameters: params,
		Responses: withErrors(map[string]*openapi3.ResponseRef{"200": ok}, contract.KeyedErrors...),
	}
}

// head documents HEAD of a path from its GET: the same parameters and
// statuses with the same headers, and no body. Its operationId is GET's
// with the prefix head (getPost → headGetPost).
func head(get *openapi3.Operation, components openapi3.ResponseBodies) *openapi3.Operation {
	rs := openapi3.NewResponsesWithCapacity(get.Responses.Len())
	for status, r := range get.Responses.Map() {
		if r.Ref != "" {
			r = components[strings.TrimPrefix(r.Ref, "#/components/responses/")]
		}
		rs.Set(status, &openapi3.ResponseRef{Value: &openapi3.Response{Description: r.Value.Description, Headers: r.Value.Headers}})
	}
	return &openapi3.Operation{
		OperationID: "head" + strings.ToUpper(get.OperationID[:1]) + get.OperationID[1:],
		Summary:     "Headers of: " + get.Summary,
		Description: "The headers `GET` would answer with (status, `ETag`, rate limits), without a body.",
		Tags:        get.Tags,
		Security:    get.Security,
		Parameters:  get.Parameters,
		Responses:   rs,
	}
}

// graphQL documents one method of /graphql. Its own answers are GraphQL
// responses; the checks in front of it (key, tier, rate limit) answer with
// the error envelope.
func graphQL(method string, params openapi3.Parameters, body *openapi3.RequestBodyRef) *openapi3.Operation {
	graphQL := func(description string) *openapi3.ResponseRef {
		return &openapi3.ResponseRef{Value: &openapi3.Response{Description: ptr(description), Headers: headers(limited...), Content: jsonContent(ref("GraphQLResponse"))}}
	}
	rs := map[string]*openapi3.ResponseRef{
		"200": graphQL("The GraphQL response; errors of execution are in `errors`, with `extensions.code` set to the REST codes. A response over the size cap (4 MiB unless the deployment sets another) is replaced by one `bad_request` error that names the cap, without `data`; it is never truncated."),
		"400": graphQL("The request could not be read (bad JSON, undecodable variables, unsupported content type), or, with `Accept: application/graphql-response+json`, the query was refused before execution."),
		"422": graphQL("The query did not parse, failed validation, is over the complexity, depth or token limits, or is a subscription sent where none can run (a GET, or a POST without `Accept: text/event-stream`: subscriptions run over the websocket, protocol `graphql-transport-ws`, or that SSE transport); nothing was executed."),
		"500": {Value: &openapi3.Response{Description: ptr("A server-side fault, as the error envelope or, when it happened during execution, as a GraphQL response."),
			Headers: headers("X-Request-Id"),
			Content: jsonContent(anyOf("", ref("ErrorEnvelope"), ref("GraphQLResponse")))}},
	}
	security := keyed()
	if method == "Get" {
		rs["200"].Value.Content["text/html"] = &openapi3.MediaType{Schema: str("The GraphiQL page, for a browser asking for `text/html` without a query. It needs no key (it holds no data) and is limited per client IP. It asks for an `internal` key before it starts, keeps it in the tab's memory only (never in the browser's storage), and sends it with every query, the schema for its Docs pane included. Its assets come from `/graphql/assets/`, so it works offline.")}
		// The page needs no key; a query by GET still does.
		*security = append(*security, openapi3.SecurityRequirement{})
	}
	return &openapi3.Operation{
		OperationID: "graphql" + method, Summary: "Run a GraphQL query (" + strings.ToUpper(method) + ")", Tags: []string{contract.TagGraphQL}, Security: security,
		Description: "The GraphQL API of the internal dashboards (its schema is the service's `schema.graphqls`); needs a key of tier `internal`. Lists are Relay connections whose cursors are the REST cursors. Queries over the complexity budget (10,000; fields are priced by the size of what they return, as the schema's description explains), the depth or the token budgets are refused before execution, and introspection is for the internal tier only. A browser asking for `text/html` without a query gets an interactive playground.",
		Parameters:  params,
		RequestBody: body,
		Responses:   withErrors(rs, "401", "402", "403", "405", "429"),
	}
}

// asset documents the assets of a page: scripts and stylesheets by name.
func asset(operationID, summary, tag, description, example string) *openapi3.Operation {
	return &openapi3.Operation{
		OperationID: operationID, Summary: summary, Tags: []string{tag}, Security: openToAll(),
		Description: description,
		Parameters: openapi3.Parameters{{Value: &openapi3.Parameter{Name: "file", In: "path", Required: true, Description: "The file's name, as the page references it.",
			Schema: val(&openapi3.Schema{Type: types("string"), Examples: []any{example}})}}},
		Responses: openResponses(map[string]*openapi3.ResponseRef{
			"200": {Value: &openapi3.Response{Description: ptr("The file."), Headers: headers("ETag", "X-Request-Id"), Content: openapi3.Content{
				"text/javascript": {Schema: str("")},
				"text/css":        {Schema: str("")},
			}}},
		}, "404"),
	}
}

// page documents an HTML page.
func page(operationID, summary, tag, description string) *openapi3.Operation {
	return &openapi3.Operation{
		OperationID: operationID, Summary: summary, Tags: []string{tag}, Security: openToAll(),
		Description: description,
		Responses: openResponses(map[string]*openapi3.ResponseRef{
			"200": {Value: &openapi3.Response{Description: ptr("The page."), Headers: headers("ETag", "X-Request-Id"), Content: content("text/html", str(""))}},
		}),
	}
}

// dashboardPaths documents the dashboard page and its assets.
func dashboardPaths(p *openapi3.Paths, o Options) {
	panels := "a live panel of the newest posts and firehose messages (a GraphQL subscription over the websocket of `/graphql`, with coins, search and pane filters)"
	if o.ETFEnabled {
		panels = "the ETF flows of each asset (daily net inflow bars with the cumulative line; latest day, 7 and 30 days, month and year to date and the streak; the top funds) and " + panels
	}
	p.Set(contract.DashboardPath, &openapi3.PathItem{Get: page("getDashboard", "The internal dashboard (HTML)", contract.TagGraphQL,
		"A page for people: "+panels+". It needs no key to load (it holds no data) and is limited per client IP; it asks for an `internal` key, keeps it in the tab's memory only, and reads `/graphql` with it. Its assets come from `/dashboard/assets/`, so it works offline.")})
	p.Set(contract.DashboardAssetsPath+"/{file}", &openapi3.PathItem{Get: asset("getDashboardAsset", "A script or stylesheet of the dashboard", contract.TagGraphQL,
		"The dashboard loads its scripts and stylesheets from here, never from another host. Names carry the package version and are cached as immutable. Needs no key; limited per client IP.",
		"uPlot-1.6.32.iife.min.js")})
}

// landingPaths documents the landing page, at / and /v1, and the API
// reference with its assets.
func landingPaths(p *openapi3.Paths) {
	ids := []string{"getLanding", "getLandingV1"}
	for i, path := range contract.LandingPaths {
		ok := success("The landing page: the envelope, whose `data.links` name the places to start, or the same links as an HTML page for a client that prefers `text/html` to `application/json`.", "LandingResponse", true)
		ok.Value.Content["text/html"] = &openapi3.MediaType{Schema: str("")}
		p.Set(path, &openapi3.PathItem{Get: &openapi3.Operation{
			OperationID: ids[i], Summary: "Where to start: the links of the service", Tags: []string{contract.TagMeta}, Security: openToAll(),
			Description: "What the service is and where to start: its health, this OpenAPI document, the API reference, GraphQL (GraphiQL in a browser) and the internal dashboard; `/` and `/v1` answer the same. The answer depends on `Accept` (hence `Vary: Accept`): a client that ranks `text/html` (or `application/xhtml+xml`) above `application/json`, as a browser's navigation does, gets an HTML page; every other request, with no `Accept`, with `*/*` (curl's default) or with `application/json`, gets JSON in the envelope. Each type takes the quality of the most specific range that matches it, and a tie goes to JSON. Needs no key; limited per client IP. Like every endpoint, it refuses query parameters (it takes none).",
			Parameters:  paramRefs("IfNoneMatch"),
			Responses:   openResponses(map[string]*openapi3.ResponseRef{"200": ok}),
		}})
	}
	p.Set(contract.ReferencePath, &openapi3.PathItem{Get: page("getReference", "The API reference (HTML)", contract.TagMeta,
		"A page for people: this OpenAPI document (`/v1/openapi.json`, which it loads) rendered by Redoc, with every operation, its parameters, responses and schemas. It needs no key and sends none; limited per client IP. Its script and stylesheet come from `/reference/assets/`, never from another host, so it works offline.")})
	p.Set(contract.ReferenceAssetsPath+"/{file}", &openapi3.PathItem{Get: asset("getReferenceAsset", "A script or stylesheet of the API reference", contract.TagMeta,
		"The API reference loads its scripts and stylesheets from here, never from another host. Names that carry the package version are cached as immutable. Needs no key; limited per client IP.",
		"redoc-2.5.4.standalone.js")})
}
