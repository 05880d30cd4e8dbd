package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
)

// TestStoriesEndpoints: /v1/stories walks every story of the filter
// newest first, each with its first items; /v1/stories/{id} gives one with
// all its items; bad parameters are 400s naming them.
func TestStoriesEndpoints(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	var want []int64
	if err := a.bdb.NewRaw(`SELECT id FROM stories WHERE 'wire' = ANY(panes) ORDER BY last_seen_at DESC, id DESC`).
		Scan(context.Background(), &want); err != nil {
		t.Fatal(err)
	}
	type item struct {
		Type  string `json:"type"`
		UID   string `json:"uid"`
		Story struct {
			UID  string `json:"uid"`
			Size int    `json:"size"`
		} `json:"story"`
	}
	type story struct {
		UID   string `json:"uid"`
		ID    int64  `json:"id"`
		Size  int    `json:"size"`
		Items []item `json:"items"`
	}
	var got []int64
	var big *story
	path := "/v1/stories?pane=wire&limit=25&items=2"
	for pages := 0; ; pages++ {
		if pages > 500 {
			t.Fatal("more than 500 pages")
		}
		r := a.get(t, path, a.pro)
		if r.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, r.StatusCode, r.plain)
		}
		var page []story
		if err := json.Unmarshal(r.env.Data, &page); err != nil {
			t.Fatal(err)
		}
		for i, s := range page {
			got = append(got, s.ID)
			if n := min(s.Size, 2); len(s.Items) != n {
				t.Errorf("story %d: %d items, want %d", s.ID, len(s.Items), n)
			}
			for _, it := range s.Items {
				if it.Story.UID != s.UID || it.Story.Size != s.Size {
					t.Errorf("story %s: item %s says story %+v", s.UID, it.UID, it.Story)
				}
				if want := map[string]string{"Post": "cp_", "FirehoseMessage": "tm_"}[it.Type]; !strings.HasPrefix(it.UID, want) || want == "" {
					t.Errorf("item %s of type %q", it.UID, it.Type)
				}
			}
			if big == nil && s.Size > 2 {
				big = &page[i]
			}
		}
		if !r.env.Pagination.HasMore {
			break
		}
		path = "/v1/stories?pane=wire&limit=25&items=2&cursor=" + *r.env.Pagination.NextCursor
	}
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("walk: %d stories, reference %d", len(got), len(want))
	}
	if big == nil {
		t.Fatal("no story of more than two items in the wire pane")
	}
	r := a.get(t, fmt.Sprintf("/v1/stories/%d?include_body=false", big.ID), a.pro)
	var one story
	if err := json.Unmarshal(r.env.Data, &one); r.StatusCode != 200 || err != nil {
		t.Fatalf("story %d: %d %v", big.ID, r.StatusCode, err)
	}
	if len(one.Items) != one.Size || one.Items[0].UID != big.Items[0].UID {
		t.Errorf("story %d: %d items (size %d), first %s; want all, the list's first %s", big.ID, len(one.Items), one.Size, one.Items[0].UID, big.Items[0].UID)
	}
	for _, c := range []struct {
		path  string
		code  int
		param string
	}{
		{"/v1/stories/999999999", 404, ""},
		{"/v1/stories/0", 400, "id"},
		{"/v1/stories?items=0", 400, "items"},
		{"/v1/stories?limit=26", 400, "limit"},
		{"/v1/stories?pane=tv", 400, "pane"},
		{"/v1/stories?cursor=abc", 400, "cursor"},
		{"/v1/posts?collapse=stories", 400, "collapse"},
		{"/v1/firehose/stream?collapse=1", 400, "collapse"},
	} {
		r := a.get(t, c.path, a.pro)
		if r.StatusCode != c.code || r.env.Error == nil || (c.param != "" && !strings.Contains(r.env.Error.Message, c.param)) {
			t.Errorf("%s: %d %s; want %d naming %q", c.path, r.StatusCode, r.plain, c.code, c.param)
		}
	}
}

// TestUpdatesAreStreamedOnce: an import that changes a post makes streams
// and subscriptions send it again, once, as an update, in order with the
// new posts; a stream resumed with Last-Event-ID across the update gets it
// exactly once; writing the same content again sends nothing.
func TestUpdatesAreStreamedOnce(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	key, _ := a.newKeyID(db.TierInternal)
	_, events := openStream(t, ctx, a.srv.URL+"/v1/posts/stream?source=UpdateTest&since=2000-01-01", key, "")
	w := dialGraphQL(t, ctx, a.srv.URL, "Authorization", "Bearer "+key)
	defer w.c.CloseNow()
	w.init(map[string]any{})
	w.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query": `subscription { postAdded(source: "UpdateTest", since: "2000-01-01T00:00:00Z") { id body updated updatedAt } }`}})
	// The subscription has started once it sends the post written now.
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := a.bdb.ExecContext(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(id int64) {
		exec(`INSERT INTO posts (id, source, username, body, created_at) VALUES (?, 'UpdateTest', 'tester', ?, now())`, id, fmt.Sprintf("post %d", id))
	}
	insert(8_000_001)
	type delivery struct {
		event string
		id    int64
	}
	next := func() (delivery, string) {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			return delivery{ev.name, postID(t, ev.data)}, ev.id
		case <-ctx.Done():
			t.Fatal("no event within the deadline")
		}
		return delivery{}, ""
	}
	// The subscription is read all along (a client that leaves pings
	// unanswered is cut).
	subs := make(chan delivery, 16)
	go func() {
		defer close(subs)
		for {
			m, err := w.read()
			if err != nil {
				return
			}
			if m["type"] == "ping" {
				w.send(map[string]any{"type": "pong"})
			}
			if m["id"] != "1" || m["type"] != "next" {
				continue
			}
			data, _ := m["payload"].(map[string]any)["data"].(map[string]any)
			p, _ := data["postAdded"].(map[string]any)
			ev := "post"
			if p["updated"] == true {
				ev = "update"
			}
			id, _ := p["id"].(float64)
			subs <- delivery{ev, int64(id)}
		}
	}()
	subNext := func() delivery {
		t.Helper()
		select {
		case d, ok := <-subs:
			if !ok {
				t.Fatal("subscription ended")
			}
			return d
		case <-ctx.Done():
			t.Fatal("no subscription delivery within the deadline")
		}
		return delivery{}
	}
	first, _ := next()
	if s := subNext(); first != (delivery{"post", 8_000_001}) || s != first {
		t.Fatalf("first deliveries: stream %+v, subscription %+v", first, s)
	}
	insert(8_000_002)
	_, resumeAt := next()
	// The same content again changes nothing; other content is an update.
	exec(`UPDATE posts SET body = body WHERE id = 8000001`)
	exec(`UPDATE posts SET body = 'post 8000001, corrected' WHERE id = 8000001`)
	insert(8_000_003)
	want := []delivery{{"update", 8_000_001}, {"post", 8_000_003}}
	var gotStream []delivery
	for range want {
		d, _ := next()
		gotStream = append(gotStream, d)
	}
	gotSub := []delivery{subNext()}
	for range want {
		gotSub = append(gotSub, subNext())
	}
	if !slices.Equal(gotStream, want) {
		t.Errorf("stream: %+v, want %+v", gotStream, want)
	}
	if want := append([]delivery{{"post", 8_000_002}}, want...); !slices.Equal(gotSub, want) {
		t.Errorf("subscription: %+v, want %+v", gotSub, want)
	}
	// Resume after the second post: the update and the third post, once.
	_, resumed := openStream(t, ctx, a.srv.URL+"/v1/posts/stream?source=UpdateTest&since=2000-01-01", key, resumeAt)
	insert(8_000_004)
	var gotResumed []delivery
	for len(gotResumed) < 3 {
		select {
		case ev := <-resumed:
			gotResumed = append(gotResumed, delivery{ev.name, postID(t, ev.data)})
		case <-ctx.Done():
			t.Fatalf("resumed stream: %+v before the deadline", gotResumed)
		}
	}
	if want := []delivery{{"update", 8_000_001}, {"post", 8_000_003}, {"post", 8_000_004}}; !slices.Equal(gotResumed, want) {
		t.Errorf("resumed stream: %+v, want %+v", gotResumed, want)
	}
}

// TestAnItemNewToTheReaderIsNotAnUpdate: a post changed before a stream
// or subscription reached it is new to its reader: it comes once, as a
// post with its latest content, not as the update of something the reader
// never got; one changed after the reader got it is an update, also after
// a resume with Last-Event-ID.
func TestAnItemNewToTheReaderIsNotAnUpdate(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	key, _ := a.newKeyID(db.TierInternal)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := a.bdb.ExecContext(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(id int64) {
		exec(`INSERT INTO posts (id, source, username, body, created_at) VALUES (?, 'NewToReader', 'tester', ?, now())`, id, fmt.Sprintf("post %d", id))
	}
	correct := func(id int64) {
		exec(`UPDATE posts SET body = body || ', corrected' WHERE id = ?`, id)
	}
	type delivery struct {
		event, body string
		id          int64
	}
	next := func(events <-chan sseEvent) (delivery, string) {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			var p struct {
				Body string `json:"body"`
			}
			if err := json.Unmarshal([]byte(ev.data), &p); err != nil {
				t.Fatal(err)
			}
			return delivery{ev.name, p.Body, postID(t, ev.data)}, ev.id
		case <-ctx.Done():
			t.Fatal("no event within the deadline")
		}
		return delivery{}, ""
	}
	insert(8_100_001)
	correct(8_100_001)
	insert(8_100_002)

	const stream = "/v1/posts/stream?source=NewToReader&since=2000-01-01"
	_, events := openStream(t, ctx, a.srv.URL+stream, key, "")
	var got []delivery
	var last string
	for range 2 {
		d, id := next(events)
		got, last = append(got, d), id
	}
	want := []delivery{{"post", "post 8100001, corrected", 8_100_001}, {"post", "post 8100002", 8_100_002}}
	if !slices.Equal(got, want) {
		t.Fatalf("replay since: %+v, want %+v", got, want)
	}

	w := dialGraphQL(t, ctx, a.srv.URL, "Authorization", "Bearer "+key)
	defer w.c.CloseNow()
	w.init(map[string]any{})
	w.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query": `subscription { postAdded(source: "NewToReader", since: "2000-01-01T00:00:00Z") { id updated } }`}})
	seen := map[float64]any{}
	for len(seen) < 2 {
		m, err := w.read()
		if err != nil {
			t.Fatal(err)
		}
		if m["type"] == "ping" {
			w.send(map[string]any{"type": "pong"})
		}
		if m["id"] != "1" || m["type"] != "next" {
			continue
		}
		p := m["payload"].(map[string]any)["data"].(map[string]any)["postAdded"].(map[string]any)
		seen[p["id"].(float64)] = p["updated"]
	}
	if seen[8_100_001] != false || seen[8_100_002] != false {
		t.Errorf("subscription since: updated %v, want false for both", seen)
	}

	// Resumed after what the first connection got: a post stored and
	// changed since is new; a change of one already given is an update.
	insert(8_100_003)
	correct(8_100_003)
	correct(8_100_002)
	_, resumed := openStream(t, ctx, a.srv.URL+stream, key, last)
	got = nil
	for range 2 {
		d, _ := next(resumed)
		got = append(got, d)
	}
	want = []delivery{{"post", "post 8100003, corrected", 8_100_003}, {"update", "post 8100002, corrected", 8_100_002}}
	if !slices.Equal(got, want) {
		t.Errorf("resumed: %+v, want %+v", got, want)
	}
}

// TestStoryItemsPageByPage: /v1/stories/{id} with limit, cursor or
// paginate gives the story's items a page at a time, each page with the
// story's fields: the walk shows every item once, in the database's order,
// and ends; without them the answer has all the items and no pagination;
// a cursor of another story or of another endpoint is a 400.
func TestStoryItemsPageByPage(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := context.Background()
	// The largest story, and the largest with both posts and messages.
	var ids []int64
	if err := a.bdb.NewRaw(`(SELECT id FROM stories ORDER BY size DESC, id LIMIT 1)
		UNION (SELECT s.id FROM stories s WHERE EXISTS (SELECT 1 FROM posts p WHERE p.story_id = s.id)
			AND EXISTS (SELECT 1 FROM firehose_messages m WHERE m.story_id = s.id) ORDER BY s.size DESC, s.id LIMIT 1)`).
		Scan(ctx, &ids); err != nil {
		t.Fatal(err)
	}
	type story struct {
		ID    int64 `json:"id"`
		Size  int   `json:"size"`
		Items []struct {
			UID string `json:"uid"`
		} `json:"items"`
	}
	var firstCursor string
	for _, id := range ids {
		var want []string // its items' uids, oldest first
		if err := a.bdb.NewRaw(`SELECT uid FROM (SELECT 'cp_' || id AS uid, id, created_at, 0 AS k FROM posts WHERE story_id = ?
			UNION ALL SELECT 'tm_' || id, id, created_at, 1 FROM firehose_messages WHERE story_id = ?) x ORDER BY created_at, k, id`, id, id).
			Scan(ctx, &want); err != nil {
			t.Fatal(err)
		}
		if len(want) < 7 {
			t.Fatalf("story %d: %d items, too few to page", id, len(want))
		}
		whole := a.get(t, fmt.Sprintf("/v1/stories/%d?include_body=false", id), a.pro)
		var s story
		if err := json.Unmarshal(whole.env.Data, &s); whole.StatusCode != 200 || err != nil || whole.env.Pagination != nil || len(s.Items) != len(want) {
			t.Fatalf("story %d whole: %d, %v, pagination %+v, %d items; want %d items, no pagination", id, whole.StatusCode, err, whole.env.Pagination, len(s.Items), len(want))
		}
		var got []string
		path := fmt.Sprintf("/v1/stories/%d?limit=3", id)
		for pages := 0; ; pages++ {
			if pages > len(want) {
				t.Fatalf("story %d: more pages than items", id)
			}
			r := a.get(t, path, a.pro)
			var page story
			if err := json.Unmarshal(r.env.Data, &page); r.StatusCode != 200 || err != nil || r.env.Pagination == nil {
				t.Fatalf("%s: %d %v %s", path, r.StatusCode, err, r.plain)
			}
			if page.ID != id || page.Size != len(want) || len(page.Items) > 3 || len(page.Items) == 0 {
				t.Fatalf("%s: story %d of size %d with %d items; want story %d of size %d, 1 to 3 items", path, page.ID, page.Size, len(page.Items), id, len(want))
			}
			for _, it := range page.Items {
				got = append(got, it.UID)
			}
			p := r.env.Pagination
			if !p.HasMore {
				if p.NextCursor != nil {
					t.Errorf("%s: last page with next_cursor %q", path, *p.NextCursor)
				}
				break
			}
			if firstCursor == "" {
				firstCursor = *p.NextCursor
			}
			path = fmt.Sprintf("/v1/stories/%d?limit=3&cursor=%s", id, *p.NextCursor)
		}
		if !slices.Equal(got, want) {
			t.Errorf("story %d page by page: %v\nwant %v", id, got, want)
		}
		r := a.get(t, fmt.Sprintf("/v1/stories/%d?paginate=true", id), a.pro)
		var page story
		if err := json.Unmarshal(r.env.Data, &page); r.StatusCode != 200 || err != nil || r.env.Pagination == nil ||
			len(page.Items) != min(len(want), 50) || r.env.Pagination.HasMore != (len(want) > 50) {
			t.Errorf("story %d paginate=true: %d %v, %d items, pagination %+v; want the first %d", id, r.StatusCode, err, len(page.Items), r.env.Pagination, min(len(want), 50))
		}
	}
	var other int64
	if err := a.bdb.NewRaw(`SELECT id FROM stories WHERE id <> ? ORDER BY id LIMIT 1`, ids[0]).Scan(ctx, &other); err != nil {
		t.Fatal(err)
	}
	list := a.get(t, "/v1/stories?limit=1", a.pro)
	for _, c := range []struct {
		path, param string
	}{
		{fmt.Sprintf("/v1/stories/%d?limit=0", ids[0]), "limit"},
		{fmt.Sprintf("/v1/stories/%d?limit=101", ids[0]), "limit"},
		{fmt.Sprintf("/v1/stories/%d?paginate=false&limit=3", ids[0]), "paginate"},
		{fmt.Sprintf("/v1/stories/%d?paginate=no", ids[0]), "paginate"},
		{fmt.Sprintf("/v1/stories/%d?cursor=%s", other, firstCursor), "cursor"},
		{fmt.Sprintf("/v1/stories/%d?cursor=%s", ids[0], *list.env.Pagination.NextCursor), "cursor"},
	} {
		r := a.get(t, c.path, a.pro)
		if r.StatusCode != 400 || r.env.Error == nil || !strings.Contains(r.env.Error.Message, c.param) {
			t.Errorf("%s: %d %s; want 400 naming %q", c.path, r.StatusCode, r.plain, c.param)
		}
	}
}
