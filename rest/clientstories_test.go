package rest

import (
	"context"
	"slices"
	"testing"
	"time"

	feedclient "github.com/feedapi/feedapi/rest/client"
)

// TestClientStories: the generated client on the stories' endpoints and on
// collapse=story, each answer checked against the document (newClient's
// transport) and against the database.
func TestClientStories(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := context.Background()
	c, tr := a.newClient(t, a.pro)

	t.Run("every page of stories", func(t *testing.T) {
		// The wire pane's latest stories, from the 40th newest on.
		var since time.Time
		if err := a.bdb.NewRaw(`SELECT last_seen_at FROM stories WHERE 'wire' = ANY(panes)
			ORDER BY last_seen_at DESC, id DESC OFFSET 39 LIMIT 1`).Scan(ctx, &since); err != nil {
			t.Fatal(err)
		}
		var want []int64
		if err := a.bdb.NewRaw(`SELECT id FROM stories WHERE 'wire' = ANY(panes) AND last_seen_at >= ?
			ORDER BY last_seen_at DESC, id DESC`, since).Scan(ctx, &want); err != nil {
			t.Fatal(err)
		}
		var got []int64
		for s, err := range c.AllStories(ctx, feedclient.ListStoriesParams{Limit: ptr(7), Items: ptr(2),
			Pane: ptr(feedclient.ListStoriesParamsPaneWire), Since: ptr(since.UTC().Format(time.RFC3339Nano))}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, s.Id)
			if s.Uid == "" || s.Headline == "" || s.Size < 1 || len(s.Items) != min(s.Size, 2) || !slices.Contains(s.Panes, feedclient.StoryPanes("wire")) {
				t.Errorf("story %d: uid %q, headline %q, size %d, %d items, panes %v", s.Id, s.Uid, s.Headline, s.Size, len(s.Items), s.Panes)
			}
		}
		if !slices.Equal(got, want) || len(want) < 40 {
			t.Errorf("AllStories: %d stories %v, want the %d of the database %v", len(got), got, len(want), want)
		}
	})

	t.Run("one story with all its items, and a 404", func(t *testing.T) {
		var id int64
		var size int
		if err := a.bdb.NewRaw(`SELECT id, size FROM stories WHERE size > 2 ORDER BY size DESC, id LIMIT 1`).Scan(ctx, &id, &size); err != nil {
			t.Fatal(err)
		}
		var want []int64 // the ids of its items, oldest first
		if err := a.bdb.NewRaw(`SELECT id FROM (SELECT id, created_at, 0 AS k FROM posts WHERE story_id = ?
			UNION ALL SELECT id, created_at, 1 FROM firehose_messages WHERE story_id = ?) x ORDER BY created_at, k, id`, id, id).
			Scan(ctx, &want); err != nil {
			t.Fatal(err)
		}
		r, err := c.GetStoryWithResponse(ctx, id, &feedclient.GetStoryParams{IncludeBody: ptr(false)})
		if err != nil || r.JSON200 == nil {
			t.Fatalf("get story %d: %v, status %d %s", id, err, r.StatusCode(), r.Body)
		}
		s := r.JSON200.Data
		var got []int64
		for _, it := range s.Items {
			m, err := it.AsStoryFirehoseMessage()
			if err != nil {
				t.Fatal(err)
			}
			if m.Type == "FirehoseMessage" {
				got = append(got, m.Id)
				if m.Story == nil || m.Story.Uid != s.Uid || m.Story.Size != size || m.Body != nil {
					t.Errorf("message %d: story %+v, body %v; want %s of size %d, no body", m.Id, m.Story, m.Body, s.Uid, size)
				}
				continue
			}
			p, err := it.AsStoryPost()
			if err != nil || p.Type != "Post" {
				t.Fatalf("item %s: neither a message nor a post (%v)", it, err)
			}
			got = append(got, p.Id)
			if p.Story == nil || p.Story.Uid != s.Uid || p.Body != nil {
				t.Errorf("post %d: story %+v, body %v; want %s, no body", p.Id, p.Story, p.Body, s.Uid)
			}
		}
		if s.Id != id || s.Size != size || !slices.Equal(got, want) {
			t.Errorf("story %d: id %d, size %d, items %v; want size %d, items %v", id, s.Id, s.Size, got, size, want)
		}
		if r.JSON200.Pagination != nil {
			t.Errorf("story %d whole: pagination %+v, want null", id, r.JSON200.Pagination)
		}
		// The same items a page at a time.
		var paged []int64
		for it, err := range c.AllStoryItems(ctx, id, feedclient.GetStoryParams{Limit: ptr(7), IncludeBody: ptr(false)}) {
			if err != nil {
				t.Fatal(err)
			}
			m, err := it.AsStoryFirehoseMessage()
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, m.Id) // a post's id is read alike
		}
		if !slices.Equal(paged, want) {
			t.Errorf("story %d page by page: %v, want %v", id, paged, want)
		}
		nf, err := c.GetStoryWithResponse(ctx, 999_999_999, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, "missing story", nf.StatusCode(), 404, nf.JSON404, feedclient.ErrorCodeNotFound)
	})

	t.Run("collapse=story on the firehose and the posts", func(t *testing.T) {
		// The first item of each story among those the filters keep, as
		// the database has them.
		var since time.Time
		if err := a.bdb.NewRaw(`SELECT created_at FROM firehose_messages WHERE pane = 'wire' ORDER BY created_at DESC OFFSET 80 LIMIT 1`).
			Scan(ctx, &since); err != nil {
			t.Fatal(err)
		}
		var wantMsgs []int64
		if err := a.bdb.NewRaw(`SELECT id FROM firehose_messages f WHERE pane = 'wire' AND created_at >= ?
			AND NOT EXISTS (SELECT 1 FROM firehose_messages g WHERE g.story_id = f.story_id AND g.id < f.id AND g.pane = 'wire' AND g.created_at >= ?)
			ORDER BY id DESC`, since, since).Scan(ctx, &wantMsgs); err != nil {
			t.Fatal(err)
		}
		var gotMsgs []int64
		stories := map[string]bool{}
		for m, err := range c.AllFirehose(ctx, feedclient.ListFirehoseParams{Limit: ptr(9), Pane: ptr(feedclient.ListFirehoseParamsPaneWire),
			Since: ptr(since.UTC().Format(time.RFC3339Nano)), Collapse: ptr(feedclient.ListFirehoseParamsCollapseStory)}) {
			if err != nil {
				t.Fatal(err)
			}
			gotMsgs = append(gotMsgs, m.Id)
			if m.Story != nil {
				if stories[m.Story.Uid] {
					t.Errorf("message %d: a second item of %s", m.Id, m.Story.Uid)
				}
				stories[m.Story.Uid] = true
			}
		}
		if !slices.Equal(gotMsgs, wantMsgs) || len(wantMsgs) == 0 {
			t.Errorf("collapsed firehose: %v, want %v", gotMsgs, wantMsgs)
		}
		var all int
		if err := a.bdb.NewRaw(`SELECT count(*) FROM firehose_messages WHERE pane = 'wire' AND created_at >= ?`, since).Scan(ctx, &all); err != nil {
			t.Fatal(err)
		}
		if all <= len(wantMsgs) {
			t.Errorf("the %d wire messages hold no two items of a story: the fixture does not exercise collapse", all)
		}

		if err := a.bdb.NewRaw(`SELECT created_at FROM posts ORDER BY created_at DESC OFFSET 80 LIMIT 1`).Scan(ctx, &since); err != nil {
			t.Fatal(err)
		}
		var wantPosts []int64
		if err := a.bdb.NewRaw(`SELECT id FROM posts p WHERE created_at >= ?
			AND NOT EXISTS (SELECT 1 FROM posts q WHERE q.story_id = p.story_id AND q.id < p.id AND q.created_at >= ?)
			ORDER BY id DESC`, since, since).Scan(ctx, &wantPosts); err != nil {
			t.Fatal(err)
		}
		var gotPosts []int64
		for p, err := range c.AllPosts(ctx, feedclient.ListPostsParams{Limit: ptr(9),
			Since: ptr(since.UTC().Format(time.RFC3339Nano)), Collapse: ptr(feedclient.ListPostsParamsCollapseStory)}) {
			if err != nil {
				t.Fatal(err)
			}
			gotPosts = append(gotPosts, p.Id)
		}
		if !slices.Equal(gotPosts, wantPosts) || len(wantPosts) == 0 {
			t.Errorf("collapsed posts: %v, want %v", gotPosts, wantPosts)
		}
	})

	if tr.n < 10 {
		t.Errorf("only %d exchanges were checked", tr.n)
	}
}
