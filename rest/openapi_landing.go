package rest

// oaLandingPaths documents the landing page (rest/landing.go), at / and
// /v1, and the API reference with its assets.
func oaLandingPaths(p map[string]*oaPathItem) {
	for _, lp := range []struct{ path, id string }{{landingPaths[0], "getLanding"}, {landingPaths[1], "getLandingV1"}} {
		ok := oaSuccess("The landing page: the envelope, whose `data.links` name the places to start, or the same links as an HTML page for a client that prefers `text/html` to `application/json`.", "LandingResponse", true)
		ok.Content["text/html"] = oaMediaType{Schema: oaString()}
		p[lp.path] = &oaPathItem{Get: &oaOperation{
			OperationID: lp.id, Summary: "Where to start: the links of the service", Tags: []string{oaTagMeta}, Security: oaOpen(),
			Description: "What the service is and where to start: its health, this OpenAPI document, the API reference, GraphQL (GraphiQL in a browser) and the internal dashboard; `/` and `/v1` answer the same. The answer depends on `Accept` (hence `Vary: Accept`): a client that ranks `text/html` (or `application/xhtml+xml`) above `application/json`, as a browser's navigation does, gets an HTML page; every other request, with no `Accept`, with `*/*` (curl's default) or with `application/json`, gets JSON in the envelope. Each type takes the quality of the most specific range that matches it, and a tie goes to JSON. Needs no key; limited per client IP. Like every endpoint, it refuses query parameters (it takes none).",
			Parameters:  oaParams("IfNoneMatch"),
			Responses:   oaOpenResponses(map[string]*oaResponse{"200": ok}),
		}}
	}
	p[referencePath] = &oaPathItem{Get: &oaOperation{
		OperationID: "getReference", Summary: "The API reference (HTML)", Tags: []string{oaTagMeta}, Security: oaOpen(),
		Description: "A page for people: this OpenAPI document (`/v1/openapi.json`, which it loads) rendered by Redoc, with every operation, its parameters, responses and schemas. It needs no key and sends none; limited per client IP. Its script and stylesheet come from `/reference/assets/`, never from another host, so it works offline.",
		Responses: oaWithErrors(oaOpenResponses(map[string]*oaResponse{
			"200": {Description: "The page.", Headers: oaHeaders("ETag", "X-Request-Id"), Content: map[string]oaMediaType{
				"text/html": {Schema: oaString()},
			}},
		})),
	}}
	p[referenceAssetsPath+"/{file}"] = &oaPathItem{Get: &oaOperation{
		OperationID: "getReferenceAsset", Summary: "A script or stylesheet of the API reference", Tags: []string{oaTagMeta}, Security: oaOpen(),
		Description: "The API reference loads its scripts and stylesheets from here, never from another host. Names that carry the package version are cached as immutable. Needs no key; limited per client IP.",
		Parameters: []*oaParameter{{Name: "file", In: "path", Required: true, Description: "The file's name, as the page references it.",
			Schema: &oaSchema{Type: "string", Examples: []any{"redoc-2.5.4.standalone.js"}}}},
		Responses: oaWithErrors(oaOpenResponses(map[string]*oaResponse{
			"200": {Description: "The file.", Headers: oaHeaders("ETag", "X-Request-Id"), Content: map[string]oaMediaType{
				"text/javascript": {Schema: oaString()},
				"text/css":        {Schema: oaString()},
			}},
		}), "404"),
	}}
}

// oaLandingSchemas adds the schemas of the landing page's JSON answer; its
// links are landingLinks.
func oaLandingSchemas(s map[string]*oaSchema) {
	s["LandingLink"] = oaObject("A place to start.", oaProps{
		"href":        {Type: "string", Format: "uri-reference", Description: "Its path on this server (resolve it against the address asked)."},
		"title":       {Type: "string", Description: "Its name, for people."},
		"description": {Type: "string", Description: "What it is, and the key it needs."},
	}, "href", "title", "description")
	links := oaProps{}
	var rels []string
	for _, l := range landingLinks {
		links[l.Rel] = &oaSchema{Ref: "#/components/schemas/LandingLink", Description: l.Title + " (`" + l.Href + "`): " + l.Description}
		rels = append(rels, l.Rel)
	}
	s["Landing"] = oaObject("What the service is, and where to start.", oaProps{
		"name":        {Type: "string", Description: "The service's name, `feedapi`."},
		"description": {Type: "string", Description: "What the service serves, in a sentence."},
		"links":       oaObject("The places to start, by name.", links, rels...),
	}, "name", "description", "links")
	s["LandingResponse"] = oaEnvelope(oaRef("Landing"), false, "Meta")
}
