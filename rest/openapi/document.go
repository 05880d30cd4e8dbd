package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/feedapi/feedapi/rest/contract"
)

// Build returns the OpenAPI 3.1.0 document of o as indented JSON. It is
// deterministic: the same options give the same bytes (object keys are
// sorted), so it can be compared with a golden file and served with a
// stable ETag.
func Build(o Options) ([]byte, error) {
	raw, err := json.Marshal(Document(o))
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	// kin-openapi escapes <, > and & as JSON allows; decoded and encoded
	// again the text stays readable (<API_KEY>) and its numbers exact.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return buf.Bytes(), nil
}

// Document assembles the whole document.
func Document(o Options) *openapi3.T {
	servers := openapi3.Servers{{URL: o.ServerURL, Description: "The service."}}
	if o.ServerURL == "" {
		servers[0] = &openapi3.Server{URL: "/", Description: "The host serving this document."}
	}
	if o.AltServerURL != "" {
		servers = append(servers, &openapi3.Server{URL: o.AltServerURL, Description: "A second address reaching the same API."})
	}
	tags := openapi3.Tags{
		{Name: contract.TagMeta, Description: "Health, this description, the landing page and the API reference; no key needed."},
		{Name: contract.TagPosts, Description: "The curated news feed."},
		{Name: contract.TagBriefs, Description: "Weekly briefs in Markdown."},
		{Name: contract.TagFeed, Description: "The unfiltered upstream news stream, split into panes."},
		{Name: contract.TagSources, Description: "The valid values of the filters."},
	}
	if o.ETFEnabled {
		tags = append(tags, &openapi3.Tag{Name: contract.TagETF, Description: "Daily US spot-ETF flows in raw US dollars."})
	}
	tags = append(tags, &openapi3.Tag{Name: contract.TagGraphQL, Description: "The GraphQL API behind the REST endpoints, for internal dashboards."})

	eps := contract.Endpoints(o.ETFEnabled)
	return &openapi3.T{
		OpenAPI: "3.1.0",
		Info: &openapi3.Info{
			Title:       "Crypto Intelligence Feed API",
			Summary:     "Read-only JSON access to a curated crypto news feed, weekly briefs, the raw news firehose and daily ETF flows.",
			Description: description(o),
			Version:     o.Version,
		},
		Servers:  servers,
		Security: *keyed(),
		Tags:     tags,
		Paths:    paths(o, eps),
		Components: &openapi3.Components{
			Schemas:    schemas(o),
			Parameters: parameters(eps),
			Headers:    headerDefs(o),
			Responses:  responses(),
			SecuritySchemes: openapi3.SecuritySchemes{bearer: {Value: &openapi3.SecurityScheme{
				Type: "http", Scheme: "bearer", BearerFormat: "opaque API key",
				Description: "`Authorization: Bearer <API_KEY>`; the scheme name is case-insensitive. Keys are issued by the operator and carry a tier: `free`, `pro` or `internal`.",
			}}},
		},
	}
}
