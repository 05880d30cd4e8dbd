package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph"
)

// TestCollapseWalksMatchReference walks every page of posts and the
// firehose with collapse: story, under several filters (each statement
// shape: id order, source groups, the since gate, coin branches), forwards
// and backwards, and compares the ids with a plain-SQL reference: the
// smallest id of each story among the rows the filters keep (an item
// without a story stands alone).
func TestCollapseWalksMatchReference(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name, field, args, where string
		backward                 bool
	}{
		{"firehose", "firehose", "", "true", false},
		{"firehose backward", "firehose", "", "true", true},
		{"firehose twitter", "firehose", `, pane: twitter`, "pane = 'twitter'", false},
		{"firehose BTC", "firehose", `, coins: ["btc"]`, "coins && ARRAY['BTC']", false},
		{"firehose q", "firehose", `, q: "bitcoin"`, "fts @@ websearch_to_tsquery('english', 'bitcoin')", false},
		{"firehose source", "firehose", `, source: "tw:"`, "source ILIKE '%tw:%'", false},
		{"firehose news important since", "firehose", `, pane: news, important: true, since: "2026-11-01T00:00:00Z"`,
			"pane = 'news' AND important AND created_at >= '2026-11-01T00:00:00Z'", false},
		{"firehose twitter ETH or SOL backward", "firehose", `, pane: twitter, coins: ["ETH", "SOL"]`,
			"pane = 'twitter' AND coins && ARRAY['ETH', 'SOL']", true},
		{"posts", "posts", "", "true", false},
		{"posts ETH or SOL", "posts", `, coins: ["ETH", "SOL"]`, "coins && ARRAY['ETH', 'SOL']", false},
		{"posts BTC since backward", "posts", `, coins: ["BTC"], since: "2026-11-01T00:00:00Z"`,
			"coins && ARRAY['BTC'] AND created_at >= '2026-11-01T00:00:00Z'", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := e.with(t)
			table := map[string]string{"firehose": "firehose_messages", "posts": "posts"}[c.field]
			var want []int64
			if err := e.bdb.NewRaw(fmt.Sprintf(`SELECT min(id) FROM %s WHERE %s GROUP BY coalesce(story_id, -id) ORDER BY 1 DESC`,
				table, c.where)).Scan(context.Background(), &want); err != nil {
				t.Fatal(err)
			}
			var got []int64
			stories := map[int64]bool{}
			after := ""
			for page := 0; ; page++ {
				if page > 1000 {
					t.Fatal("more than 1000 pages")
				}
				afterArg := ""
				switch {
				case c.backward && after != "":
					afterArg = fmt.Sprintf(`, before: %q`, after)
				case after != "":
					afterArg = fmt.Sprintf(`, after: %q`, after)
				}
				size := "first: 97"
				if c.backward {
					size = "last: 97"
				}
				var out map[string]struct {
					Nodes []struct {
						ID    int64 `json:"id"`
						Story *struct {
							ID int64 `json:"id"`
						} `json:"story"`
					} `json:"nodes"`
					PageInfo struct {
						HasNextPage     bool   `json:"hasNextPage"`
						HasPreviousPage bool   `json:"hasPreviousPage"`
						StartCursor     string `json:"startCursor"`
						EndCursor       string `json:"endCursor"`
					} `json:"pageInfo"`
				}
				e.query(fmt.Sprintf(`{ %s(%s, collapse: story%s%s) { nodes { id story { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
					c.field, size, afterArg, c.args), nil, &out)
				conn := out[c.field]
				var ids []int64
				for _, n := range conn.Nodes {
					ids = append(ids, n.ID)
					if n.Story != nil {
						if stories[n.Story.ID] {
							t.Fatalf("story %d given twice (item %d)", n.Story.ID, n.ID)
						}
						stories[n.Story.ID] = true
					}
				}
				if c.backward {
					// Each page is newest first; the pages come from the
					// oldest end, each before the last.
					got = append(ids, got...)
					if !conn.PageInfo.HasPreviousPage {
						break
					}
					after = conn.PageInfo.StartCursor
					continue
				}
				got = append(got, ids...)
				if !conn.PageInfo.HasNextPage {
					break
				}
				after = conn.PageInfo.EndCursor
			}
			if len(want) < 10 {
				t.Fatalf("reference: %d items, want a walk of several pages", len(want))
			}
			if !slices.Equal(got, want) {
				t.Errorf("walk: %d items, reference %d; first difference at %d", len(got), len(want), firstDifference(got, want))
			}
		})
	}
}

func firstDifference(a, b []int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestStories walks the stories newest first and reads each story with
// its items: the order, the filters and the sizes agree with the items.
func TestStories(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var want []int64
	if err := e.bdb.NewRaw(`SELECT id FROM stories WHERE 'twitter' = ANY(panes) ORDER BY last_seen_at DESC, id DESC`).
		Scan(context.Background(), &want); err != nil {
		t.Fatal(err)
	}
	type story struct {
		ID       int64    `json:"id"`
		UID      string   `json:"uid"`
		Size     int      `json:"size"`
		Headline string   `json:"headline"`
		Sources  []string `json:"sources"`
		Items    []struct {
			Typename  string `json:"__typename"`
			ID        int64  `json:"id"`
			CreatedAt string `json:"createdAt"`
			Source    string `json:"source"`
			Story     struct {
				Size int `json:"size"`
			} `json:"story"`
		} `json:"items"`
	}
	var got []int64
	var some []story
	after := ""
	for {
		afterArg := ""
		if after != "" {
			afterArg = fmt.Sprintf(`, after: %q`, after)
		}
		var out struct {
			Stories struct {
				Nodes    []story `json:"nodes"`
				PageInfo struct {
					HasNextPage bool   `json:"hasNextPage"`
					EndCursor   string `json:"endCursor"`
				} `json:"pageInfo"`
			} `json:"stories"`
		}
		e.query(`{ stories(first: 40, pane: twitter`+afterArg+`) { nodes { id uid size headline sources
			items { __typename ... on FirehoseMessage { id createdAt source story { size } } ... on Post { id createdAt source story { size } } } }
			pageInfo { hasNextPage endCursor } } }`, nil, &out)
		for _, s := range out.Stories.Nodes {
			got = append(got, s.ID)
			if s.Size > 1 && len(some) < 20 {
				some = append(some, s)
			}
			if len(s.Items) != s.Size {
				t.Errorf("story %d: %d items, size %d", s.ID, len(s.Items), s.Size)
			}
			if s.UID != fmt.Sprintf("st_%d", s.ID) {
				t.Errorf("story %d: uid %q", s.ID, s.UID)
			}
			for i, it := range s.Items {
				if it.Story.Size != s.Size {
					t.Errorf("story %d: item %d says size %d", s.ID, it.ID, it.Story.Size)
				}
				if i > 0 && it.CreatedAt < s.Items[i-1].CreatedAt {
					t.Errorf("story %d: items not oldest first", s.ID)
				}
			}
		}
		if !out.Stories.PageInfo.HasNextPage {
			break
		}
		after = out.Stories.PageInfo.EndCursor
	}
	if !slices.Equal(got, want) {
		t.Errorf("stories in twitter: walk of %d, reference %d; first difference at %d", len(got), len(want), firstDifference(got, want))
	}
	if len(some) == 0 {
		t.Fatal("no story of several items in the demo data")
	}
	var one struct {
		Story struct {
			ID    int64 `json:"id"`
			Items []struct {
				ID int64 `json:"id"`
			} `json:"items"`
		} `json:"story"`
	}
	e.query(fmt.Sprintf(`{ story(id: %d) { id items(first: 1) { ... on FirehoseMessage { id } ... on Post { id } } } }`, some[0].ID), nil, &one)
	if len(one.Story.Items) != 1 || one.Story.Items[0].ID != some[0].Items[0].ID {
		t.Errorf("story(id).items(first: 1): %+v, want the first item %d", one.Story.Items, some[0].Items[0].ID)
	}

	// The largest of them page by page: its items, once each, in order.
	big := slices.MaxFunc(some, func(a, b story) int { return a.Size - b.Size })
	var walked []int64
	var foreign string
	after = ""
	for pages := 0; ; pages++ {
		if pages > big.Size {
			t.Fatalf("story %d: more pages than items", big.ID)
		}
		afterArg := ""
		if after != "" {
			afterArg = fmt.Sprintf(`, after: %q`, after)
		}
		var page struct {
			Story struct {
				ItemsConnection struct {
					Edges []struct {
						Cursor string `json:"cursor"`
						Node   struct {
							ID int64 `json:"id"`
						} `json:"node"`
					} `json:"edges"`
					Nodes []struct {
						ID int64 `json:"id"`
					} `json:"nodes"`
					PageInfo struct {
						HasNextPage bool   `json:"hasNextPage"`
						EndCursor   string `json:"endCursor"`
					} `json:"pageInfo"`
				} `json:"itemsConnection"`
			} `json:"story"`
		}
		e.query(fmt.Sprintf(`{ story(id: %d) { itemsConnection(first: 2%s) {
			edges { cursor node { ... on FirehoseMessage { id } ... on Post { id } } }
			nodes { ... on FirehoseMessage { id } ... on Post { id } }
			pageInfo { hasNextPage endCursor } } } }`, big.ID, afterArg), nil, &page)
		c := page.Story.ItemsConnection
		if len(c.Nodes) == 0 || len(c.Nodes) > 2 || len(c.Edges) != len(c.Nodes) || c.Edges[len(c.Edges)-1].Cursor != c.PageInfo.EndCursor {
			t.Fatalf("story %d after %q: %+v", big.ID, after, c)
		}
		for i, n := range c.Nodes {
			walked = append(walked, n.ID)
			if c.Edges[i].Node.ID != n.ID {
				t.Errorf("story %d: edge %d holds %d, node %d", big.ID, i, c.Edges[i].Node.ID, n.ID)
			}
		}
		foreign = c.PageInfo.EndCursor
		if !c.PageInfo.HasNextPage {
			break
		}
		after = c.PageInfo.EndCursor
	}
	var whole []int64
	for _, it := range big.Items {
		whole = append(whole, it.ID)
	}
	if !slices.Equal(walked, whole) {
		t.Errorf("story %d page by page: %v, want %v", big.ID, walked, whole)
	}
	other := some[0].ID
	if other == big.ID {
		other = some[1].ID
	}
	for _, c := range []struct{ query, param string }{
		{fmt.Sprintf(`{ story(id: %d) { itemsConnection(first: 2, after: %q) { nodes { __typename } } } }`, other, foreign), "cursor"},
		{fmt.Sprintf(`{ story(id: %d) { itemsConnection(first: 0) { nodes { __typename } } } }`, other), "first"},
		{fmt.Sprintf(`{ story(id: %d) { itemsConnection(first: 101) { nodes { __typename } } } }`, other), "first"},
	} {
		r := e.do("internal", c.query, nil)
		if len(r.Errors) != 1 || r.Errors[0].Extensions.Code != "bad_request" || r.Errors[0].Extensions.Param != c.param {
			t.Errorf("%s: errors %+v, want one bad_request on %q", c.query, r.Errors, c.param)
		}
	}
}

// TestStoriesBadInput: bad arguments are refused naming the argument.
func TestStoriesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct{ query, param, code string }{
		{`{ stories(first: 0) { nodes { id } } }`, "first", "bad_request"},
		{`{ stories(first: 101) { nodes { id } } }`, "first", "bad_request"},
		{`{ stories(after: "nope") { nodes { id } } }`, "cursor", "bad_request"},
		{`{ stories(coins: ["not a ticker"]) { nodes { id } } }`, "coins", "bad_request"},
		{`{ story(id: 0) { id } }`, "id", "bad_request"},
		{`{ story(id: 999999999) { id } }`, "", "not_found"},
	} {
		r := e.do("internal", c.query, nil)
		if len(r.Errors) != 1 || r.Errors[0].Extensions.Code != c.code || r.Errors[0].Extensions.Param != c.param {
			t.Errorf("%s: errors %+v, want one %s on %q", c.query, r.Errors, c.code, c.param)
		}
	}
}

// TestStoriesAreBoundedInBytes: under the response cap, a story whose
// items' selected texts pass it is refused with the cap's error, its
// texts measured in the database and never read; without them it is
// served whole, and a page of stories counts its stories' first items.
func TestStoriesAreBoundedInBytes(t *testing.T) {
	t.Parallel()
	const limit = 20_000
	e := newEnv(t, func(c *graph.Config) { c.Limits.MaxResponseBytes = limit })
	ctx := context.Background()
	story := fxPostID + 5_000
	at := fxMonday.AddDate(0, 0, 3)
	if _, err := e.bdb.NewRaw(`INSERT INTO stories (id, first_seen_at, last_seen_at, size, headline, sources, coins, panes)
		VALUES (?, ?, ?, 5, 'Quokkabytes story', '{fx-story}', '{}', '{news}')`, story, at, at.Add(4*time.Minute)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// Five posts of 8000 bytes of body: 40000, twice the cap.
	posts := make([]db.Post, 5)
	for i := range posts {
		posts[i] = db.Post{ID: fxPostID + 5_000 + int64(i), Source: "fx-story", Username: "u", Body: strings.Repeat("b", 8000),
			Raw: json.RawMessage(`{}`), CreatedAt: at.Add(time.Duration(i) * time.Minute), StoryID: &story}
	}
	if _, err := e.bdb.NewInsert().Model(&posts).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	capped := fmt.Sprintf("the response is larger than the limit of %d bytes; ask for fewer items or fields", limit)
	for _, c := range []struct {
		name, query string
		refused     bool
		items       int
	}{
		{"a story with its bodies", fmt.Sprintf(`{ story(id: %d) { id items { ... on Post { id body } } } }`, story), true, 0},
		{"a story without bodies", fmt.Sprintf(`{ story(id: %d) { id items { ... on Post { id } } } }`, story), false, 5},
		{"stories with two items' bodies", `{ stories(q: "Quokkabytes") { nodes { id items(first: 2) { ... on Post { id body } } } } }`, false, 2},
		{"stories with three items' bodies", `{ stories(q: "Quokkabytes") { nodes { id items(first: 3) { ... on Post { id body } } } } }`, true, 0},
		{"a page of two items' bodies", fmt.Sprintf(`{ story(id: %d) { id itemsConnection(first: 2) { nodes { ... on Post { id body } } pageInfo { hasNextPage } } } }`, story), false, 2},
		{"a page of three items' bodies", fmt.Sprintf(`{ story(id: %d) { id itemsConnection(first: 3) { nodes { ... on Post { id body } } } } }`, story), true, 0},
		{"stories with a page of two items' bodies", `{ stories(q: "Quokkabytes") { nodes { id itemsConnection(first: 2) { edges { node { ... on Post { id body } } } } } } }`, false, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.queries.Load()
			r := e.with(t).do(db.TierInternal, c.query, nil)
			if c.refused {
				if len(r.Errors) != 1 || r.Errors[0].Message != capped {
					t.Errorf("errors = %+v, want the cap's %q", r.Errors, capped)
				}
				// The story, then its measure: the bodies are never read.
				if n := e.queries.Load() - before; n > 2 {
					t.Errorf("%d SQL statements ran, want 2 (the story and the measure of its items)", n)
				}
				return
			}
			if len(r.Errors) > 0 || len(r.Data) > limit {
				t.Fatalf("errors = %+v, data %d bytes; want the data", r.Errors, len(r.Data))
			}
			if n := strings.Count(string(r.Data), `"id":`) - 1; n != c.items {
				t.Errorf("%d items in %.200s, want %d", n, r.Data, c.items)
			}
			// The stories, their measure, their posts and messages: the
			// page's measure serves the reads of its items.
			if n := e.queries.Load() - before; strings.Contains(c.query, "stories(") && n != 4 {
				t.Errorf("%d SQL statements ran, want 4 (the stories, one measure, the posts, the messages)", n)
			}
		})
	}
}
