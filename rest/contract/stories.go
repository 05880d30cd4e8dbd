package contract

import (
	"fmt"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/limits"
)

// TagStories groups the stories endpoints.
const TagStories = "stories"

// Collapse is collapse=story on the lists and their streams: one item per
// story.
func Collapse() Param {
	return Enum("collapse", "collapse", []string{"story"}, "Collapse",
		"`story`: only the first item (the smallest `id`) of each story among the items the other filters keep, "+
			"so that an event told by many sources shows once (each item's `story` says how many tell it). Exact across pages: a walk over every page "+
			"never shows a second item of a story and never skips one. On a stream, the first item of a story is the first stored: an item is not sent when an item of its story "+
			"stored before it matches the filters, whatever their ids, and the update of an item sent is sent. Any other value gives 400 naming `collapse`.")
}

// storyEndpoints are /v1/stories and /v1/stories/{id}.
func storyEndpoints() []Endpoint {
	includeBody := Bool("include_body", "includeBody", true, true, "StoryIncludeBody", "Whether the items carry `body`.")
	items := Limit("StoryItems", fmt.Sprintf("How many of each story's first items to show, oldest first: an integer from %d to %d; else 400. `/v1/stories/{id}` shows them all.",
		limits.PageMin, limits.StoryItemsMax), limits.StoryItemsMax, limits.StoryItemsDefault)
	items.Name, items.Variable, items.Paging = "items", "items", false
	since := Since()
	since.Component = "StorySince"
	since.Description = "Only stories whose latest item was created at or after this instant: an RFC 3339 date-time with `Z` or an offset " +
		"(write `+` as `%2B`), or a bare date `YYYY-MM-DD` meaning 00:00 UTC that day."
	return []Endpoint{
		{
			Path: "/v1/stories", Query: "stories", Shape: Page,
			Params: []Param{
				Limit("StoryLimit", fmt.Sprintf("Page size, an integer from %d to %d; out of range gives 400 (never clamped).", limits.PageMin, limits.StoriesPageMaxREST),
					limits.StoriesPageMaxREST, limits.StoriesPageDefault),
				Cursor(),
				Coins(),
				Search("StoryQuery", "the headline"),
				Enum("pane", "pane", PaneValues, "StoryPane", "Only stories with a firehose message in this pane, written exactly; any other value gives 400 listing the panes."),
				since,
				items,
				includeBody,
			},
			OperationID: "listStories", Summary: "List stories", Tag: TagStories,
			Description: "Stories, newest first by their latest item (`last_seen_at`, then `id`), a page at a time, each with its first items. " +
				"A story is in a pane when any of its items is; `coins` match the union of its items' coins; `q` searches the headline.",
			Response: "StoriesPage", OK: "A page of stories.",
		},
		{
			Path: "/v1/stories/{id}", Query: "story", Shape: PagedItem, Kind: "story",
			Params:      append([]Param{includeBody}, storyItemPaging()...),
			Check:       StoryItemPages,
			OperationID: "getStory", Summary: "Get a story with all its items", Tag: TagStories,
			Description: "One story by its numeric `id` (the number of an item's `story.uid`), with all its items, oldest first, and `pagination` null. " +
				"A story can hold thousands of items: `limit`, `cursor` or `paginate=true` ask for its items a page at a time instead, " +
				"the story's fields on every page and `pagination` saying how to read its later items.",
			Response: "StoryResponse", OK: "The story.", PathID: "StoryID",
		},
	}
}

// storyItemPaging are the parameters that page the items of one story.
func storyItemPaging() []Param {
	limit := Limit("StoryItemLimit", fmt.Sprintf("Items a page, an integer from %d to %d; out of range gives 400 (never clamped). "+
		"Asks for the items a page at a time (%d a page when only `paginate` or `cursor` is given); without any of `limit`, `cursor` and `paginate`, all the items come at once.",
		limits.PageMin, limits.PageMax, limits.PageDefault), limits.PageMax, limits.PageDefault)
	limit.Default, limit.Schema.Default = nil, nil
	cursor := Cursor()
	cursor.Component = "StoryItemCursor"
	cursor.Description = "The previous page's `pagination.next_cursor`, passed back as is: the page of the story's items after it. " +
		"Opaque and bound to the story that issued it: an undecodable, tampered or another story's cursor gives 400."
	paginate := Paginate()
	paginate.Component = "StoryPaginate"
	paginate.Description = "Whether the items come a page at a time (`limit` of them, else " + fmt.Sprint(limits.PageDefault) +
		"), with `pagination` (`{next_cursor, has_more}`) to read the later ones; `limit` and `cursor` imply it, and `paginate=false` with either gives 400. " +
		"A boolean: `true` or `false`; the server also takes `1` and `0`, case-insensitive, and anything else gives 400."
	return []Param{limit, cursor, paginate}
}

// StoryItemPages decides whether /v1/stories/{id} pages the story's
// items: when asked with paginate=true, a limit or a cursor. It then sets
// PagingParam and a page size (limits.PageDefault unless a limit is
// given); paginate=false with a limit or a cursor is refused.
func StoryItemPages(vars map[string]any) error {
	_, limited := vars["first"]
	asked := limited || vars["after"] != nil
	if vars[PagingParam] == false && asked {
		return apperr.Invalid(PagingParam, "paginate cannot be false with limit or cursor: they ask for the story's items a page at a time")
	}
	if vars[PagingParam] == true || asked {
		vars[PagingParam] = true
		if !limited {
			vars["first"] = limits.PageDefault
		}
	}
	return nil
}
