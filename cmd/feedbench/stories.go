package main

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// storiesDeepPages is how many pages of 100 stories the stories-deep
// scenario walks before the page it asks for: stories page forwards only,
// so a cursor near the end of the list would cost a walk over all of it.
const storiesDeepPages = 50

// storyScenarios are the stories endpoints and collapse=story on the lists
// (group "stories"): opt-in, run with --scenarios stories.
var storyScenarios = []scenario{
	{name: "stories-first", doc: "GET /v1/stories, the first page (20 stories, 3 items each)",
		prepare: static("/v1/stories"), group: "stories", optIn: true},
	{name: "stories-pane", doc: "GET /v1/stories?pane=twitter",
		prepare: static("/v1/stories", "pane", "twitter"), group: "stories", optIn: true},
	{name: "stories-coins", doc: "GET /v1/stories?coins=ETH",
		prepare: static("/v1/stories", "coins", "ETH"), group: "stories", optIn: true},
	{name: "stories-q", doc: "GET /v1/stories?q=--common-word",
		prepare: prepStoriesQ, group: "stories", optIn: true},
	{name: "stories-since", doc: "GET /v1/stories?since=T, T an hour before the newest story's last item",
		prepare: prepStoriesSince, group: "stories", optIn: true},
	{name: "stories-deep", doc: "GET /v1/stories?cursor=C, C after " + strconv.Itoa(storiesDeepPages) + " pages of 100 stories",
		prepare: prepStoriesDeep, group: "stories", optIn: true},
	{name: "story-one", doc: "GET /v1/stories/ID, round-robin over the newest 100 stories of several items",
		prepare: prepStoryOne(storyWhole), group: "stories", optIn: true},
	{name: "story-one-page", doc: "GET /v1/stories/ID?paginate=true, the first page of items (50) of the same stories",
		prepare: prepStoryOne(storyFirstPage), group: "stories", optIn: true},
	{name: "story-one-page-last", doc: "GET /v1/stories/ID?paginate=true&cursor=C, the last page of items (50) of the same stories",
		prepare: prepStoryOne(storyLastPage), group: "stories", optIn: true},
	{name: "firehose-collapse", doc: "GET /v1/firehose?collapse=story, the first page",
		prepare: static("/v1/firehose", "collapse", "story"), group: "stories", optIn: true},
	{name: "firehose-collapse-pane", doc: "GET /v1/firehose?collapse=story&pane=twitter",
		prepare: static("/v1/firehose", "collapse", "story", "pane", "twitter"), group: "stories", optIn: true},
	{name: "firehose-collapse-deep", doc: "GET /v1/firehose?collapse=story&cursor=C, the page before the oldest 100 (internal key)",
		prepare: prepCollapseDeep("firehose", nil), group: "stories", optIn: true},
	{name: "firehose-collapse-pane-deep", doc: "GET /v1/firehose?collapse=story&pane=twitter&cursor=C, the page before the oldest 100 (internal key)",
		prepare: prepCollapseDeep("firehose", url.Values{"pane": {"twitter"}}), group: "stories", optIn: true},
	{name: "posts-collapse", doc: "GET /v1/posts?collapse=story, the first page",
		prepare: static("/v1/posts", "collapse", "story"), group: "stories", optIn: true},
	{name: "posts-collapse-source", doc: "GET /v1/posts?collapse=story&source=LABEL, a mid-volume curated source (--source)",
		prepare: prepPostsCollapseSource, group: "stories", optIn: true},
	{name: "posts-collapse-deep", doc: "GET /v1/posts?collapse=story&cursor=C, the page before the oldest 100 (internal key)",
		prepare: prepCollapseDeep("posts", nil), group: "stories", optIn: true},
}

func prepStoriesQ(_ context.Context, d *discovery) (nextFunc, error) {
	return roundRobin(d.get("/v1/stories", url.Values{"q": {d.opts.commonWord}})), nil
}

// storyPage is the part of a GraphQL page of stories that discovery reads.
type storyPage struct {
	Stories struct {
		Nodes []struct {
			ID         int64     `json:"id"`
			Size       int       `json:"size"`
			LastSeenAt time.Time `json:"lastSeenAt"`
		} `json:"nodes"`
		PageInfo struct {
			HasNextPage bool   `json:"hasNextPage"`
			EndCursor   string `json:"endCursor"`
		} `json:"pageInfo"`
	} `json:"stories"`
}

// storiesPage reads one GraphQL page of 100 stories after cursor (empty:
// the first).
func (d *discovery) storiesPage(ctx context.Context, cursor string) (storyPage, error) {
	args := "first: 100"
	if cursor != "" {
		args += ", after: " + gqlString(cursor)
	}
	var out storyPage
	err := d.graphql(ctx, "{ stories("+args+") { nodes { id size lastSeenAt } pageInfo { hasNextPage endCursor } } }", &out)
	return out, err
}

func prepStoriesSince(ctx context.Context, d *discovery) (nextFunc, error) {
	page, err := d.storiesPage(ctx, "")
	if err != nil {
		return nil, err
	}
	if len(page.Stories.Nodes) == 0 {
		return nil, skip("no stories")
	}
	since := page.Stories.Nodes[0].LastSeenAt.Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	d.notef("stories-since: since=%s", since)
	return roundRobin(d.get("/v1/stories", url.Values{"since": {since}})), nil
}

func prepStoriesDeep(ctx context.Context, d *discovery) (nextFunc, error) {
	cursor := ""
	for range storiesDeepPages {
		page, err := d.storiesPage(ctx, cursor)
		if err != nil {
			return nil, err
		}
		if !page.Stories.PageInfo.HasNextPage {
			return nil, skip("fewer than %d stories: no deep page to fetch", storiesDeepPages*100)
		}
		cursor = page.Stories.PageInfo.EndCursor
	}
	return roundRobin(d.get("/v1/stories", url.Values{"cursor": {cursor}})), nil
}

// storyItemsPage is the page size of the story-one-page scenarios: the
// server's default.
const storyItemsPage = 50

// newestStories returns the ids of the newest 100 stories of several items.
func (d *discovery) newestStories(ctx context.Context) ([]int64, error) {
	var ids []int64
	cursor := ""
	for len(ids) < 100 {
		page, err := d.storiesPage(ctx, cursor)
		if err != nil {
			return nil, err
		}
		for _, s := range page.Stories.Nodes {
			if s.Size > 1 && len(ids) < 100 {
				ids = append(ids, s.ID)
			}
		}
		if !page.Stories.PageInfo.HasNextPage {
			break
		}
		cursor = page.Stories.PageInfo.EndCursor
	}
	if len(ids) == 0 {
		return nil, skip("no story of several items")
	}
	return ids, nil
}

// storyRead is what a story-one scenario asks of each story.
type storyRead int

const (
	storyWhole     storyRead = iota // all its items
	storyFirstPage                  // paginate=true: its first storyItemsPage items
	storyLastPage                   // its last page: after the cursor of the item storyItemsPage+1 from the end
)

// prepStoryOne returns the prepare function of the story-one scenarios:
// GET /v1/stories/ID over the newest stories, each read as read says (the
// cursors of the last pages read from all of each story's cursors at once).
func prepStoryOne(read storyRead) func(context.Context, *discovery) (nextFunc, error) {
	return func(ctx context.Context, d *discovery) (nextFunc, error) {
		ids, err := d.newestStories(ctx)
		if err != nil {
			return nil, err
		}
		targets := make([]vegeta.Target, len(ids))
		for i, id := range ids {
			var q url.Values
			if read != storyWhole {
				q = url.Values{"paginate": {"true"}}
			}
			if read == storyLastPage {
				var out struct {
					Story struct {
						ItemsConnection struct {
							Edges []struct{ Cursor string } `json:"edges"`
						} `json:"itemsConnection"`
					} `json:"story"`
				}
				if err := d.graphql(ctx, fmt.Sprintf("{ story(id: %d) { itemsConnection { edges { cursor } } } }", id), &out); err != nil {
					return nil, err
				}
				if edges := out.Story.ItemsConnection.Edges; len(edges) > storyItemsPage {
					q.Set("cursor", edges[len(edges)-storyItemsPage-1].Cursor)
				}
			}
			targets[i] = d.get("/v1/stories/"+strconv.FormatInt(id, 10), q)
		}
		return roundRobin(targets...), nil
	}
}

func prepPostsCollapseSource(ctx context.Context, d *discovery) (nextFunc, error) {
	label := d.opts.source
	if label == "" {
		var err error
		if label, err = d.midVolumeSource(ctx); err != nil {
			return nil, err
		}
	}
	d.notef("posts-collapse-source: source=%q", label)
	return roundRobin(d.get("/v1/posts", url.Values{"collapse": {"story"}, "source": {label}})), nil
}

// prepCollapseDeep returns the prepare function of a deep page of list
// under collapse=story and the filters of narrow: the page after the
// oldest 100 items the filters and the collapse keep.
func prepCollapseDeep(list string, narrow url.Values) func(context.Context, *discovery) (nextFunc, error) {
	return func(ctx context.Context, d *discovery) (nextFunc, error) {
		q := url.Values{"collapse": {"story"}}
		for k, v := range narrow {
			q[k] = v
		}
		cursor, err := d.deepCursor(ctx, list, q)
		if err != nil {
			return nil, err
		}
		q.Set("cursor", cursor)
		return roundRobin(d.get("/v1/"+list, q)), nil
	}
}
