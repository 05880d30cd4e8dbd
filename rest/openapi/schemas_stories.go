package openapi

import (
	"maps"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/feedapi/feedapi/rest/contract"
)

// storySchemas adds stories, updates and arrival times: the fields every
// post and firehose message gained, the stories and their envelopes, and
// the delays of /v1/sources.
func storySchemas(s openapi3.Schemas) {
	itemFields := props{
		"story": anyOf("The story the item belongs to; null only for items stored before stories were kept. "+
			"Always sent; not listed as required so that answers of v1 before it stay valid.", ref("StoryRef"), null()),
		"received_at": nullableDateTime("When feedapi stored the item: the database's clock when the row was written, inside the transaction " +
			"that stores it, so a moment before that transaction commits and the item becomes visible (not the commit time, and not the " +
			"importer's clock). An update keeps it. `received_at` minus `created_at` is how late the source delivered it. " +
			"Null for items stored before arrival times were kept."),
		"updated_at": nullableDateTime("When an import last changed what the item says; null when never. Streams send a changed item again as an event `update`."),
	}
	for _, name := range []string{"Post", "FirehoseMessage"} {
		maps.Copy(s[name].Value.Properties, itemFields)
	}
	storyUID := patterned(`^st_[0-9]+$`, "Stable identifier of the story, `st_<id>`: `/v1/stories/{id}` shows it.")
	s["StoryRef"] = object("The story of an item.", props{
		"uid":  storyUID,
		"size": integer(1, "Number of items of the story, as of this answer."),
	}, "uid", "size")

	// An item of a story is the list's item plus its type: a copy of the
	// item's schema with one more property (the schemas are closed).
	typed := func(name string) *openapi3.SchemaRef {
		item := *s[name].Value
		item.Properties = maps.Clone(item.Properties)
		item.Properties["type"] = val(&openapi3.Schema{Type: types("string"), Const: name, Description: "The kind of item: `" + name + "`."})
		// include_body=false leaves out the body of every item.
		item.Required = append(slices.DeleteFunc(slices.Clone(item.Required), func(r string) bool { return r == "body" }), "type")
		s["Story"+name] = val(&item)
		return ref("Story" + name)
	}
	s["StoryItem"] = val(&openapi3.Schema{Description: "An item of a story: a post or a firehose message as their lists show them, with `type` saying which.",
		OneOf: openapi3.SchemaRefs{typed("Post"), typed("FirehoseMessage")}})
	panes := contract.Anys(contract.PaneValues)
	s["Story"] = object("The items of several sources that tell one event: the same news reworded, found by their normalized words "+
		"(MinHash over word shingles, then the words, figures and coins themselves) within 48 hours of the story's first item.", props{
		"uid":           patterned(`^st_[0-9]+$`, "Stable identifier, `st_<id>`."),
		"id":            id("Numeric id."),
		"headline":      str("The first item's title, or the first line of its body."),
		"first_seen_at": dateTime("Creation time of the story's first item."),
		"last_seen_at":  dateTime("Creation time of its latest item: the list's order."),
		"size":          integer(1, "Number of items, as of this answer."),
		"sources":       set(str(""), "The distinct source labels of its items, sorted."),
		"coins":         set(patterned(contract.TickerPattern, ""), "The union of its items' coins, sorted."),
		"panes":         set(enum("", panes...), "The panes of its firehose messages, sorted."),
		"items":         arrayOf(ref("StoryItem"), "Its items, oldest first: the first `items` of them in the list; in `/v1/stories/{id}` all of them, or the page of them it asks for with `limit` and `cursor`."),
	}, "uid", "id", "headline", "first_seen_at", "last_seen_at", "size", "sources", "coins", "panes", "items")
	s["StoriesPage"] = envelope(arrayOf(ref("Story"), ""), true, "Meta")
	story := envelope(ref("Story"), false, "Meta")
	story.Value.Properties["pagination"] = anyOf("Null unless asked for: with `limit`, `cursor` or `paginate=true`, the story's `items` are a page of them, and this says how to read the later ones (`next_cursor` for `cursor`).",
		ref("Pagination"), null())
	s["StoryResponse"] = story

	s["SourceDelay"] = object("How late a source's items arrived over the last 24 hours.", props{
		"feed":      enum("The list of the source.", "posts", "firehose"),
		"source":    str("The source label."),
		"items":     integer(1, "Items of the source received in the last 24 hours."),
		"median_ms": val(&openapi3.Schema{Type: types("integer"), Format: "int64", Description: "Median of `received_at` minus `created_at` over those items, in milliseconds."}),
		"p95_ms":    val(&openapi3.Schema{Type: types("integer"), Format: "int64", Description: "95th percentile of `received_at` minus `created_at` over those items, in milliseconds."}),
	}, "feed", "source", "items", "median_ms", "p95_ms")
}

// sourceDelays is the delays field of /v1/sources.
func sourceDelays() *openapi3.SchemaRef {
	return arrayOf(ref("SourceDelay"), "Per source, how late its items arrived over the last 24 hours: posts' sources first, then the firehose's, "+
		"each sorted by label; sources without items in that day are absent. Always sent; not listed as required so that answers of v1 before it stay valid.")
}
