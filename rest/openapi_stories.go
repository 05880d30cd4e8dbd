package rest

import (
	"slices"
	"strconv"
)

// oaTagStories groups the stories endpoints.
const oaTagStories = "stories"

// oaStories adds stories, updates and arrival times to the document: the
// stories endpoints and their schemas, the collapse parameter of the lists
// and streams, and the fields every post and firehose message gained.
func oaStories(d *oaDocument) {
	gql := slices.IndexFunc(d.Tags, func(t oaTag) bool { return t.Name == oaTagGQL })
	d.Tags = slices.Insert(d.Tags, max(gql, 0), oaTag{oaTagStories,
		"Stories: the items of several sources that tell the same event, found by their words within 48 hours."})

	params := d.Components.Parameters
	query := func(name, description string, s *oaSchema) *oaParameter {
		return &oaParameter{Name: name, In: "query", Description: description, Schema: s}
	}
	params["Collapse"] = query("collapse", "`story`: only the first item (the smallest `id`) of each story among the items the other filters keep, "+
		"so that an event told by many sources shows once (each item's `story` says how many tell it). Exact across pages: a walk over every page "+
		"never shows a second item of a story and never skips one. On a stream, an item is not sent when an item of its story with a smaller id "+
		"matches the filters. Any other value gives 400 naming `collapse`.",
		&oaSchema{Type: "string", Enum: []any{"story"}})
	params["StoryLimit"] = query("limit", "Page size, an integer from 1 to "+strconv.Itoa(maxStoriesInList)+"; out of range gives 400 (never clamped).",
		&oaSchema{Type: "integer", Minimum: oaPtr[int64](1), Maximum: oaPtr[int64](maxStoriesInList), Default: 20})
	params["StoryItems"] = query("items", "How many of each story's first items to show, oldest first: an integer from 1 to "+
		strconv.Itoa(maxStoryItemsInList)+"; else 400. `/v1/stories/{id}` shows them all.",
		&oaSchema{Type: "integer", Minimum: oaPtr[int64](1), Maximum: oaPtr[int64](maxStoryItemsInList), Default: storyItemsInList})
	params["StoryPane"] = query("pane", "Only stories with a firehose message in this pane, written exactly; any other value gives 400 listing the panes.",
		&oaSchema{Type: "string", Enum: oaPanes})
	params["StorySince"] = query("since", "Only stories whose latest item was created at or after this instant: an RFC 3339 date-time with `Z` or an offset "+
		"(write `+` as `%2B`), or a bare date `YYYY-MM-DD` meaning 00:00 UTC that day.",
		&oaSchema{Type: "string", Pattern: oaPatternSince, Examples: []any{"2026-01-02T15:04:05Z", "2026-01-02"}})
	params["StoryQuery"] = query("q", "Full-text search of the headline (PostgreSQL `websearch_to_tsquery`, English stemming): words (all must occur), "+
		"`\"quoted phrases\"`, `-excluded` words and `or`. 1 to 256 bytes, not blank; else 400 naming `q`.",
		&oaSchema{Type: "string", MinLength: oaPtr[int64](1), MaxLength: oaPtr[int64](256)})
	params["StoryIncludeBody"] = query("include_body", "Whether the items carry `body`. A boolean: `true` or `false`; the server also takes `1` and `0`, case-insensitive, and anything else gives 400.",
		&oaSchema{Type: "boolean", Default: true})
	params["StoryID"] = &oaParameter{Name: "id", In: "path", Required: true,
		Description: "Numeric id of the story: a positive integer that fits in 64 bits (else 400). No story with this id gives 404.",
		Schema:      &oaSchema{Type: "integer", Format: "int64", Minimum: oaPtr[int64](1)}}

	s := d.Components.Schemas
	itemFields := oaProps{
		"story": {AnyOf: []*oaSchema{oaRef("StoryRef"), {Type: "null"}}, Description: "The story the item belongs to; null only for items stored before stories were kept. " +
			"Always sent; not listed as required so that answers of v1 before it stay valid."},
		"received_at": {AnyOf: []*oaSchema{{Type: "string", Pattern: oaPatternDateTime}, {Type: "null"}},
			Description: "When feedapi stored the item: the database's clock when the row was written, not the importer's. `received_at` minus `created_at` is how late the source delivered it. Null for items stored before arrival times were kept."},
		"updated_at": {AnyOf: []*oaSchema{{Type: "string", Pattern: oaPatternDateTime}, {Type: "null"}},
			Description: "When an import last changed what the item says; null when never. Streams send a changed item again as an event `update`."},
	}
	for _, name := range []string{"Post", "FirehoseMessage"} {
		for k, v := range itemFields {
			s[name].Properties[k] = v
		}
	}
	s["StoryRef"] = oaObject("The story of an item.", oaProps{
		"uid":  {Type: "string", Pattern: `^st_[0-9]+$`, Description: "Stable identifier of the story, `st_<id>`: `/v1/stories/{id}` shows it."},
		"size": {Type: "integer", Minimum: oaPtr[int64](1), Description: "Number of items of the story, as of this answer."},
	}, "uid", "size")
	// An item of a story is the list's item plus its type: a copy of the
	// item's schema with one more property (additionalProperties is false).
	typed := func(name string) *oaSchema {
		item := *s[name]
		item.Properties = oaProps{"type": {Type: "string", Const: name, Description: "The kind of item: `" + name + "`."}}
		for k, v := range s[name].Properties {
			item.Properties[k] = v
		}
		// include_body=false leaves out the body of every item.
		item.Required = append(slices.DeleteFunc(slices.Clone(s[name].Required), func(r string) bool { return r == "body" }), "type")
		s["Story"+name] = &item
		return oaRef("Story" + name)
	}
	s["StoryItem"] = &oaSchema{Description: "An item of a story: a post or a firehose message as their lists show them, with `type` saying which.",
		OneOf: []*oaSchema{typed("Post"), typed("FirehoseMessage")}}
	s["Story"] = oaObject("The items of several sources that tell one event: the same news reworded, found by their normalized words "+
		"(MinHash over word shingles, then the words, figures and coins themselves) within 48 hours of the story's first item.", oaProps{
		"uid":           {Type: "string", Pattern: `^st_[0-9]+$`, Description: "Stable identifier, `st_<id>`."},
		"id":            oaID("Numeric id."),
		"headline":      {Type: "string", Description: "The first item's title, or the first line of its body."},
		"first_seen_at": oaDateTime("Creation time of the story's first item."),
		"last_seen_at":  oaDateTime("Creation time of its latest item: the list's order."),
		"size":          {Type: "integer", Minimum: oaPtr[int64](1), Description: "Number of items, as of this answer."},
		"sources":       {Type: "array", UniqueItems: true, Items: oaString(), Description: "The distinct source labels of its items, sorted."},
		"coins":         {Type: "array", UniqueItems: true, Items: &oaSchema{Type: "string", Pattern: `^[A-Z0-9]{1,12}$`}, Description: "The union of its items' coins, sorted."},
		"panes":         {Type: "array", UniqueItems: true, Items: &oaSchema{Type: "string", Enum: oaPanes}, Description: "The panes of its firehose messages, sorted."},
		"items":         {Type: "array", Items: oaRef("StoryItem"), Description: "Its items, oldest first: the first `items` of them in the list, all of them in `/v1/stories/{id}`."},
	}, "uid", "id", "headline", "first_seen_at", "last_seen_at", "size", "sources", "coins", "panes", "items")
	s["StoriesPage"] = oaEnvelope(&oaSchema{Type: "array", Items: oaRef("Story")}, true, "Meta")
	s["StoryResponse"] = oaEnvelope(oaRef("Story"), false, "Meta")
	s["SourceDelay"] = oaObject("How late a source's items arrived over the last 24 hours.", oaProps{
		"feed":      {Type: "string", Enum: []any{"posts", "firehose"}, Description: "The list of the source."},
		"source":    {Type: "string", Description: "The source label."},
		"items":     {Type: "integer", Minimum: oaPtr[int64](1), Description: "Items of the source received in the last 24 hours."},
		"median_ms": {Type: "integer", Format: "int64", Description: "Median of `received_at` minus `created_at` over those items, in milliseconds."},
		"p95_ms":    {Type: "integer", Format: "int64", Description: "95th percentile of `received_at` minus `created_at` over those items, in milliseconds."},
	}, "feed", "source", "items", "median_ms", "p95_ms")
	s["Sources"].Properties["delays"] = &oaSchema{Type: "array", Items: oaRef("SourceDelay"),
		Description: "Per source, how late its items arrived over the last 24 hours: posts' sources first, then the firehose's, each sorted by label; sources without items in that day are absent. Always sent; not listed as required so that answers of v1 before it stay valid."}

	p := d.Paths
	withCollapse := func(path string) {
		op := p[path].Get
		at := len(op.Parameters)
		for i, prm := range op.Parameters {
			if prm.Ref == "#/components/parameters/IncludeBody" || prm.Ref == "#/components/parameters/IncludeSummary" || prm.Name == "cursor" {
				at = i
				break
			}
		}
		op.Parameters = slices.Insert(slices.Clone(op.Parameters), at, oaParams("Collapse")...)
		if p[path].Head != nil {
			p[path].Head = oaHead(op, oaResponses())
		}
	}
	for _, path := range []string{"/v1/posts", "/v1/firehose", "/v1/posts/stream", "/v1/firehose/stream"} {
		withCollapse(path)
	}
	p["/v1/stories"] = &oaPathItem{Get: &oaOperation{
		OperationID: "listStories", Summary: "List stories", Tags: []string{oaTagStories}, Security: oaKeyed(),
		Description: "Stories, newest first by their latest item (`last_seen_at`, then `id`), a page at a time, each with its first items. " +
			"A story is in a pane when any of its items is; `coins` match the union of its items' coins; `q` searches the headline.",
		Parameters: oaParams("StoryLimit", "Cursor", "Coins", "StoryQuery", "StoryPane", "StorySince", "StoryItems", "StoryIncludeBody", "IfNoneMatch"),
		Responses:  oaKeyedResponses(oaSuccess("A page of stories.", "StoriesPage", true)),
	}}
	p["/v1/stories/{id}"] = &oaPathItem{Get: &oaOperation{
		OperationID: "getStory", Summary: "Get a story with all its items", Tags: []string{oaTagStories}, Security: oaKeyed(),
		Description: "One story by its numeric `id` (the number of an item's `story.uid`), with all its items, oldest first.",
		Parameters:  oaParams("StoryID", "StoryIncludeBody", "IfNoneMatch"),
		Responses:   oaKeyedResponses(oaSuccess("The story.", "StoryResponse", true), "404"),
	}}
	for _, path := range []string{"/v1/stories", "/v1/stories/{id}"} {
		p[path].Head = oaHead(p[path].Get, oaResponses())
	}
}
