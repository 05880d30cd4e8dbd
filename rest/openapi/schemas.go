package openapi

import (
	"maps"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/feedapi/feedapi/rest/contract"
)

// schemas are the envelopes, the resources and the GraphQL messages.
func schemas(o Options) openapi3.Schemas {
	panes := contract.Anys(contract.PaneValues)
	meta := props{
		"api_version": val(&openapi3.Schema{Type: types("string"), Const: contract.APIVersion, Description: "The API version, `v1`."}),
		"request_id":  val(&openapi3.Schema{Type: types("string"), MinLength: 1, Description: "Unique id of the response, also in the `X-Request-Id` header."}),
		"tier":        anyOf("The tier of the key; null where no valid key was given.", ref("Tier"), null()),
		"position": val(&openapi3.Schema{Type: types("string"), MinLength: 1, Description: "On first pages (no `cursor`) of `/v1/posts` and `/v1/firehose` only: the stream position the page was read at. " +
			"Pass it as `after`, with the same filters, to get exactly the items that became visible since: each such answer gives the next position. " +
			"After an answer without `after`, the first such poll may repeat a few of its newest items (those that became visible while it was read); from then on none. " +
			"Not covered by the `ETag` (it moves with every write to the database, whatever the list shows); an older position is as exact a start."}),
	}
	codes := make([]any, len(contract.Errors))
	for i, e := range contract.Errors {
		codes[i] = string(e.Code)
	}
	s := openapi3.Schemas{
		"Meta": object("Facts about the response.", meta, "api_version", "request_id", "tier"),
		"Tier": enum("The tier of an API key.", contract.Anys(contract.Tiers)...),
		"Pagination": object("Where the next, older page starts. While `has_more` is true, `next_cursor` is a non-empty string; on the last page `has_more` is false and `next_cursor` null.", props{
			"next_cursor": val(&openapi3.Schema{Type: types("string", "null"), MinLength: 1, Description: "Pass as `cursor` to get the next page; null on the last page (when `has_more` is false)."}),
			"has_more":    boolean("Whether an older page follows. True also on a page that ended early at its size bound, with fewer than `limit` items."),
		}, "next_cursor", "has_more"),
		"Error": object("What went wrong.", props{
			"code":    enum("Machine-readable error code.", codes...),
			"message": val(&openapi3.Schema{Type: types("string"), MinLength: 1, Description: "For humans; names the offending parameter and what is allowed."}),
		}, "code", "message"),
		"ErrorEnvelope": object("An error response: no `data`, no `pagination`.", props{
			"error": ref("Error"),
			"meta":  ref("Meta"),
		}, "error", "meta"),

		"Post": object("An item of the curated feed.", props{
			"uid":                 patterned(`^cp_[0-9]+$`, "Stable identifier, `cp_<id>`."),
			"id":                  id("Numeric id; newer posts have larger ids."),
			"source":              str("Source label, e.g. a channel name or a data publisher label."),
			"username":            str("Author or channel handle."),
			"body":                str("Text of the post; omitted with `include_body=false`."),
			"url":                 nullableURL("Permalink in the messaging channel."),
			"original_source_url": nullableURL("The original article or tweet."),
			"created_at":          dateTime("Creation time."),
			"raw":                 val(&openapi3.Schema{Type: types("object"), AdditionalProperties: open(), Description: "The source payload as stored (an object of any JSON values); present only with `include_raw=true`."}),
			"coins":               coins(),
		}, "uid", "id", "source", "username", "url", "original_source_url", "created_at"),
		"BriefSummary": object("A weekly brief in list form, without its Markdown.", briefProps(false),
			"uid", "id", "week_start", "week_end", "post_count", "created_at"),
		"Brief": object("A weekly brief in full form, with its Markdown.", briefProps(true),
			"uid", "id", "week_start", "week_end", "post_count", "created_at", "content"),
		"FirehoseMessage": object("A message of the unfiltered upstream news stream.", props{
			"uid":                 patterned(`^tm_[0-9]+$`, "Stable identifier, `tm_<id>`."),
			"id":                  id("Numeric id; newer messages have larger ids."),
			"pane":                enum("The pane of the message; `iansintel` is the service's own pane.", panes...),
			"source":              str("Upstream source key."),
			"source_name":         nullableString("Display name of the source."),
			"name":                nullableString("Name of the author or feed."),
			"username":            nullableString("Handle of the author."),
			"title":               nullableString("Headline."),
			"body":                nullableString("Text."),
			"summary_ai":          nullableString("AI-written summary; present only with `include_summary=true`."),
			"important":           boolean("Whether the message is flagged important (what the `important` filter selects)."),
			"url":                 nullableString("Link to the message, as the upstream source gave it (not necessarily a valid URI)."),
			"original_source_url": nullableString("The original article or tweet, as the upstream source gave it (not necessarily a valid URI)."),
			"created_at":          dateTime("Creation time."),
			"coins":               coins(),
		}, "uid", "id", "pane", "source", "source_name", "name", "username", "title", "body", "important", "url", "original_source_url", "created_at"),
		"Health": object("Health and version of the service.", props{
			"status":           enum("`ok`, or `degraded` while a database is unreachable: the one the API reads from (then 503), or, with a read replica, the primary (then 200).", "ok", "degraded"),
			"version":          str("Build version of the service."),
			"api_version":      val(&openapi3.Schema{Type: types("string"), Const: contract.APIVersion, Description: "API version, `v1`."}),
			"database":         enum("Whether the database the API reads from answers: the read replica when one is configured, else the primary.", "ok", "unreachable"),
			"database_primary": enum("Whether the primary answers, which holds the API keys and takes the writes. While it does not and a read replica answers, keys are verified on the replica.", "ok", "unreachable"),
			"database_replica": enum("Whether the read replica answers; `none` without one.", "ok", "unreachable", "none"),
			"rate_limits":      enum("Where rate limits are counted: `shared` in Redis, one budget per key across all replicas; `local` in this replica, which has no Redis configured; `local_fallback` in this replica because its Redis does not answer.", "shared", "local", "local_fallback"),
		}, "status", "version", "api_version", "database", "database_primary", "database_replica", "rate_limits"),
		"OpenAPIDocument": val(&openapi3.Schema{Type: types("object"), Description: "An OpenAPI 3.1 document.", Required: []string{"openapi", "info", "paths"},
			Properties: props{"openapi": val(&openapi3.Schema{Type: types("string"), Const: "3.1.0"})}}),

		"GraphQLRequest": val(&openapi3.Schema{Type: types("object"), Description: "A GraphQL request (GraphQL over HTTP).", Required: []string{"query"}, Properties: props{
			"query":         str("The GraphQL document."),
			"operationName": nullableString("The operation to run when the document holds several."),
			"variables":     val(&openapi3.Schema{Type: types("object", "null"), AdditionalProperties: open(), Description: "Values of the operation's variables, by name."}),
			"extensions":    val(&openapi3.Schema{Type: types("object", "null"), AdditionalProperties: open(), Description: "Protocol extensions."}),
		}}),
		"GraphQLResponse": val(&openapi3.Schema{
			Type: types("object"), Description: "A GraphQL response (GraphQL over HTTP): `data`, `errors` or both (never neither).",
			Properties: props{
				"data":       val(&openapi3.Schema{Type: types("object", "null"), AdditionalProperties: open(), Description: "The result, shaped by the query; null or absent when the request was refused before execution."}),
				"errors":     arrayOf(ref("GraphQLError"), "What went wrong, if anything."),
				"extensions": val(&openapi3.Schema{Type: types("object"), AdditionalProperties: open(), Description: "Protocol extensions (e.g. complexity)."}),
			},
		}),
		"GraphQLError": val(&openapi3.Schema{Type: types("object"), Description: "A GraphQL error.", Required: []string{"message"}, Properties: props{
			"message": str(""),
			"locations": arrayOf(val(&openapi3.Schema{Type: types("object"), Properties: props{
				"line": val(&openapi3.Schema{Type: types("integer")}), "column": val(&openapi3.Schema{Type: types("integer")}),
			}}), ""),
			"path": arrayOf(val(&openapi3.Schema{Description: "A field name (a string) or a list index (an integer)."}), "Where in `data` the error happened."),
			"extensions": val(&openapi3.Schema{Type: types("object"), AdditionalProperties: open(), Properties: props{
				"code": str("A REST error code (`bad_request`, `not_found`, `forbidden_tier`, …) or one of the GraphQL server's own (`GRAPHQL_VALIDATION_FAILED`, …)."),
			}}),
		}}),
	}

	sources := props{
		"curated_sources": set(str(""), "Valid `source` values of posts, sorted."),
		"firehose_panes":  set(enum("", panes...), "Valid `pane` values of the firehose, sorted."),
		"coins": set(patterned(contract.TickerPattern, ""),
			"Tickers that occur in posts or firehose messages, sorted: each is a `coins` value that may match."),
	}
	oldest := nullableDateTime("`created_at` of the oldest firehose message kept (null while there is none): older months are dropped by the deployment's retention. A `since` or a cursor from before it gives the messages from it on, never an error.")
	sources["firehose_oldest"] = oldest
	required := []string{"curated_sources", "firehose_panes"}
	if o.ETFEnabled {
		sources["etf_assets"] = set(enum("", contract.Anys(contract.AssetValues)...), "Valid `asset` values of the ETF flows, sorted.")
		required = append(required, "etf_assets")
		sources["etf_funds"] = set(patterned(contract.FundTickerPattern, ""),
			"Tickers of the ETF funds, sorted: each is a `fund` value of `/v1/etf-flows/funds`. Always sent where ETF flows are offered; not listed as required so that answers of v1 before it stay valid.")

		etfMeta := props{"units": val(&openapi3.Schema{Type: types("string"), Const: "usd", Description: "Monetary values are raw US dollars."})}
		maps.Copy(etfMeta, meta)
		s["EtfMeta"] = object("Facts about an ETF response; monetary values are in `units`.", etfMeta, "api_version", "request_id", "tier", "units")
		etfSchemas(s)
	}
	sources["delays"] = sourceDelays()
	s["Sources"] = object("The valid values of the filters.", sources, required...)
	storySchemas(s)

	s["HealthResponse"] = envelope(ref("Health"), false, "Meta")
	s["PostsPage"] = envelope(arrayOf(ref("Post"), ""), true, "Meta")
	s["PostResponse"] = envelope(ref("Post"), false, "Meta")
	s["BriefsPage"] = envelope(arrayOf(ref("BriefSummary"), ""), true, "Meta")
	s["BriefResponse"] = envelope(ref("Brief"), false, "Meta")
	s["FirehosePage"] = envelope(arrayOf(ref("FirehoseMessage"), ""), true, "Meta")
	s["SourcesResponse"] = envelope(ref("Sources"), false, "Meta")
	landingSchemas(s)
	return s
}

// briefProps are the fields of a brief; full adds the Markdown content.
func briefProps(full bool) props {
	p := props{
		"uid":        patterned(`^wb_[0-9]+$`, "Stable identifier, `wb_<id>`."),
		"id":         id("Numeric id; newer briefs have larger ids."),
		"week_start": date("First day of the week (Monday)."),
		"week_end":   date("Last day of the week (Sunday), inclusive."),
		"post_count": integer(0, "Number of curated posts created in the week."),
		"created_at": dateTime("Publication time."),
	}
	if full {
		p["content"] = str("The brief as Markdown.")
	}
	return p
}

// landingSchemas adds the schemas of the landing page's JSON answer.
func landingSchemas(s openapi3.Schemas) {
	s["LandingLink"] = object("A place to start.", props{
		"href":        val(&openapi3.Schema{Type: types("string"), Format: "uri-reference", Description: "Its path on this server (resolve it against the address asked)."}),
		"title":       str("Its name, for people."),
		"description": str("What it is, and the key it needs."),
	}, "href", "title", "description")
	links := props{}
	var rels []string
	for _, l := range contract.LandingLinks {
		links[l.Rel] = refWith("LandingLink", l.Title+" (`"+l.Href+"`): "+l.Description)
		rels = append(rels, l.Rel)
	}
	s["Landing"] = object("What the service is, and where to start.", props{
		"name":        str("The service's name, `feedapi`."),
		"description": str("What the service serves, in a sentence."),
		"links":       object("The places to start, by name.", links, rels...),
	}, "name", "description", "links")
	s["LandingResponse"] = envelope(ref("Landing"), false, "Meta")
}
