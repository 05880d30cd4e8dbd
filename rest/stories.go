package rest

import (
	"bytes"
	"strconv"
)

// Stories (the items of several sources telling one event), updates and
// arrival times on /v1: the stories endpoints and the collapse parameter
// of the lists and their streams.

// storyItemsInList is how many items each story of /v1/stories shows by
// default (items=…): its first ones, oldest first.
const (
	storyItemsInList    = 3
	maxStoryItemsInList = 5
	maxStoriesInList    = 25 // a page of stories with their items costs as a page of 100 posts
)

// collapseParam is collapse=story on the lists and their streams: one item
// per story.
func collapseParam() param {
	return enumParam("collapse", "collapse", []string{"story"})
}

// storyEndpoints are /v1/stories and /v1/stories/{id}.
func storyEndpoints(panes []string) []endpoint {
	return []endpoint{
		{
			pattern: "/v1/stories", query: "stories", shape: shapePage, rename: storyItemNames,
			params: []param{
				limitParam(1, maxStoriesInList, 20),
				cursorParam(),
				coinsParam(),
				queryParam(),
				enumParam("pane", "pane", panes),
				sinceParam(),
				countParam("items", "items", 1, maxStoryItemsInList, storyItemsInList),
				boolParam("include_body", "includeBody", true),
			},
		},
		{
			pattern: "/v1/stories/{id}", query: "story", shape: shapeItem, kind: "story", rename: storyItemNames,
			params: []param{boolParam("include_body", "includeBody", true)},
		},
	}
}

// countParam is an integer from lo to hi.
func countParam(name, variable string, lo, hi, def int) param {
	p := limitParam(lo, hi, def)
	p.name, p.variable = name, variable
	p.allowed = "an integer from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi)
	return p
}

// storyItemNames gives a post's fields of a story their list names: a
// GraphQL selection of a union cannot name two fields alike whose types
// differ (Post.body is String!, FirehoseMessage.body String), so the
// queries read them under other names. The names are replaced as JSON
// keys only: inside a JSON string a quote is escaped, so "post_body": does
// not occur there.
func storyItemNames(data []byte) []byte {
	for _, r := range [][2][]byte{
		{[]byte(`"post_username":`), []byte(`"username":`)},
		{[]byte(`"post_body":`), []byte(`"body":`)},
	} {
		data = bytes.ReplaceAll(data, r[0], r[1])
	}
	return data
}
