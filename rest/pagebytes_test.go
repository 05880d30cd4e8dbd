package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph"
)

// bigPosts inserts posts of source, oldest first, each with a raw payload
// of about kib[i] KiB, and returns their ids, newest first.
func (a *api) bigPosts(from int64, source string, kib []int) []int64 {
	a.t.Helper()
	rows := make([]db.Post, len(kib))
	ids := make([]int64, len(kib))
	for i, k := range kib {
		raw, err := json.Marshal(map[string]string{"text": strings.Repeat("r", k<<10)})
		if err != nil {
			a.t.Fatal(err)
		}
		rows[i] = db.Post{ID: from + int64(i) + 1, Source: source, Username: "u", Body: fmt.Sprintf("post %d", i),
			Raw: raw, CreatedAt: fxTime.Add(time.Duration(i) * time.Minute)}
		ids[len(kib)-1-i] = rows[i].ID
	}
	if _, err := a.bdb.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		a.t.Fatalf("insert posts: %v", err)
	}
	return ids
}

// TestPagesAreBoundedInBytes: a /v1 page holds at most the page limit of
// text (FEEDAPI_MAX_PAGE_BYTES, here its least, 1 MiB): it ends early with
// has_more and a cursor that goes on from its last item, so that walking
// the cursors gives every item once, each page whole; an item alone over
// the limit is a 400 that names the parameter to turn off.
func TestPagesAreBoundedInBytes(t *testing.T) {
	t.Parallel()
	const limit = graph.MinPageBytes
	a := newAPI(t, func(c *Config) { c.Graph.Limits.MaxPageBytes = limit })

	t.Run("a page ends early once its raw payloads pass the limit", func(t *testing.T) {
		t.Parallel()
		a := a.with(t)
		// Twelve posts of 300 KiB: three fit a page.
		want := a.bigPosts(fxPostID+1000, "fx-big", slices.Repeat([]int{300}, 12))
		var got []int64
		path := "/v1/posts?source=fx-big&include_raw=true&limit=100"
		pages := 0
		for cursor := ""; ; {
			r := a.get(t, path+cursor, a.free)
			r.wantStatus(t, http.StatusOK)
			pages++
			text := 0
			for _, it := range r.items(t) {
				var id int64
				if err := json.Unmarshal(it["id"], &id); err != nil {
					t.Fatal(err)
				}
				got = append(got, id)
				var body string
				_ = json.Unmarshal(it["body"], &body)
				text += len(it["raw"]) + len(body)
			}
			if text > limit {
				t.Errorf("page %d holds %d bytes of text, over the limit of %d", pages, text, limit)
			}
			if len(r.plain) > limit+64<<10 {
				t.Errorf("page %d is %d bytes, over the limit of %d and the short fields", pages, len(r.plain), limit)
			}
			if !r.env.Pagination.HasMore {
				break
			}
			if r.env.Pagination.NextCursor == nil || pages > len(want) {
				t.Fatalf("page %d: has_more without a cursor, or no end: %s", pages, r.plain)
			}
			cursor = "&cursor=" + url.QueryEscape(*r.env.Pagination.NextCursor)
		}
		if !slices.Equal(got, want) {
			t.Errorf("walked %v, want %v (each once, newest first)", got, want)
		}
		if pages != 4 {
			t.Errorf("%d pages, want 4 of three posts (900 KiB each)", pages)
		}
		// Without raw the same posts take one page.
		r := a.get(t, "/v1/posts?source=fx-big&limit=100", a.free)
		r.wantStatus(t, http.StatusOK)
		if n := len(r.items(t)); n != 12 || r.env.Pagination.HasMore {
			t.Errorf("without include_raw: %d posts, has_more %v; want all 12 on one page", n, r.env.Pagination.HasMore)
		}
	})

	t.Run("an item alone over the limit is a 400 naming include_raw", func(t *testing.T) {
		t.Parallel()
		a := a.with(t)
		// Newest first: 100 KiB, then 1.2 MiB.
		ids := a.bigPosts(fxPostID+2000, "fx-huge", []int{1229, 100})
		r := a.get(t, "/v1/posts?source=fx-huge&include_raw=true", a.free)
		r.wantStatus(t, http.StatusOK)
		if n := len(r.items(t)); n != 1 || !r.env.Pagination.HasMore || r.env.Pagination.NextCursor == nil {
			t.Fatalf("first page: %d posts, pagination %+v; want the small post and more", n, r.env.Pagination)
		}
		next := "/v1/posts?source=fx-huge&include_raw=true&cursor=" + url.QueryEscape(*r.env.Pagination.NextCursor)
		for _, path := range []string{next, "/v1/posts/" + strconv.FormatInt(ids[1], 10) + "?include_raw=true"} {
			r := a.get(t, path, a.free)
			r.wantStatus(t, http.StatusBadRequest)
			if r.env.Error.Code != "bad_request" || !strings.Contains(r.env.Error.Message, "include_raw=false") ||
				!strings.Contains(r.env.Error.Message, strconv.FormatInt(ids[1], 10)) {
				t.Errorf("%s: %s; want bad_request naming the post and include_raw", path, r.plain)
			}
		}
		// Without raw it is served.
		a.get(t, "/v1/posts/"+strconv.FormatInt(ids[1], 10), a.free).wantStatus(t, http.StatusOK)
		r = a.get(t, strings.Replace(next, "include_raw=true", "include_raw=false", 1), a.free)
		r.wantStatus(t, http.StatusOK)
		if n := len(r.items(t)); n != 1 || r.env.Pagination.HasMore {
			t.Errorf("without raw from the cursor: %d posts, has_more %v; want the large post, last", n, r.env.Pagination.HasMore)
		}
	})

	t.Run("a summary alone over the limit is a 400 naming include_summary", func(t *testing.T) {
		t.Parallel()
		a := a.with(t)
		summary := strings.Repeat("s", limit+1)
		m := db.FirehoseMessage{ID: fxFirehoseID + 3000, Pane: db.PaneNews, Source: "fx-long-summary", SummaryAI: &summary, CreatedAt: fxTime}
		if _, err := a.bdb.NewInsert().Model(&m).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := a.get(t, "/v1/firehose?source=fx-long-summary&include_summary=true", a.free)
		r.wantStatus(t, http.StatusBadRequest)
		if !strings.Contains(r.env.Error.Message, "include_summary=false") {
			t.Errorf("%s; want a message naming include_summary", r.plain)
		}
		a.get(t, "/v1/firehose?source=fx-long-summary", a.free).wantStatus(t, http.StatusOK)
	})
}

// TestPageLimitHasAFloor: a page limit below what one item can hold is a
// configuration error, not pages that refuse ordinary items.
func TestPageLimitHasAFloor(t *testing.T) {
	t.Parallel()
	cfg := newAPI(t).cfg
	cfg.Graph.Limits.MaxPageBytes = graph.MinPageBytes - 1
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), strconv.Itoa(graph.MinPageBytes)) {
		t.Errorf("New with a page limit of %d: %v, want an error naming the least, %d", graph.MinPageBytes-1, err, graph.MinPageBytes)
	}
}

// TestSlowAnswerIsSentWhole: the server's WriteTimeout, counted from the
// request's headers, does not cut an answer that took long to build: the
// body gets a deadline of its own when it is sent.
func TestSlowAnswerIsSentWhole(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.addPosts(fxPostID+4000, 100, "fx-slow")
	const timeout = 100 * time.Millisecond
	srv := NewServer("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An answer that takes longer to build than the write timeout
		// allows in all: by construction, not by a guess at a slow query.
		time.Sleep(3 * timeout)
		a.handler.ServeHTTP(w, r)
	}), 0)
	srv.WriteTimeout = timeout
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })

	req, err := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/v1/posts?source=fx-slow&limit=100&include_raw=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.free)
	hr, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET: %v (the answer was cut)", err)
	}
	defer hr.Body.Close()
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		t.Fatalf("read body: %v (the answer was cut)", err)
	}
	if hr.StatusCode != http.StatusOK || strconv.Itoa(len(body)) != hr.Header.Get("Content-Length") {
		t.Fatalf("status %d, %d bytes of a Content-Length of %s", hr.StatusCode, len(body), hr.Header.Get("Content-Length"))
	}
	var env struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || len(env.Data) != 100 {
		t.Errorf("body: %d items, %v; want 100", len(env.Data), err)
	}
}

// bigStory inserts a story of id, headline and latest item time at, whose
// items are, oldest first, posts (kib > 0) and firehose messages (kib < 0)
// with bodies of |kib| KiB, the item ids from from on.
func (a *api) bigStory(id int64, headline string, at time.Time, from int64, kib []int) {
	a.t.Helper()
	ctx := context.Background()
	if _, err := a.bdb.NewRaw(`INSERT INTO stories (id, first_seen_at, last_seen_at, size, headline, sources, coins, panes)
		VALUES (?, ?, ?, ?, ?, '{fx-story}', '{}', '{news}')`, id, at.Add(-time.Hour), at, len(kib), headline).Exec(ctx); err != nil {
		a.t.Fatalf("insert story: %v", err)
	}
	for i, k := range kib {
		created := at.Add(time.Duration(i-len(kib)+1) * time.Minute)
		item := from + int64(i)
		if k > 0 {
			p := db.Post{ID: item, Source: "fx-story", Username: "u", Body: strings.Repeat("b", k<<10),
				Raw: json.RawMessage(`{}`), CreatedAt: created, StoryID: &id}
			if _, err := a.bdb.NewInsert().Model(&p).Exec(ctx); err != nil {
				a.t.Fatalf("insert post: %v", err)
			}
			continue
		}
		body := strings.Repeat("m", (-k)<<10)
		m := db.FirehoseMessage{ID: item, Pane: db.PaneNews, Source: "fx-story", Body: &body, CreatedAt: created, StoryID: &id}
		if _, err := a.bdb.NewInsert().Model(&m).Exec(ctx); err != nil {
			a.t.Fatalf("insert message: %v", err)
		}
	}
}

// storyText returns the ids of a story's items and the bytes of their
// bodies.
func storyText(t testing.TB, story json.RawMessage) ([]int64, int) {
	t.Helper()
	var s struct {
		Items []struct {
			ID   int64   `json:"id"`
			Body *string `json:"body"`
		} `json:"items"`
	}
	if err := json.Unmarshal(story, &s); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	n := 0
	for _, it := range s.Items {
		ids = append(ids, it.ID)
		if it.Body != nil {
			n += len(*it.Body)
		}
	}
	return ids, n
}

// TestStoriesAreBoundedInBytes: the stories' answers hold the page budget
// of the other lists, counting the bodies of their items: a story whose
// items' bodies pass it is a 400 naming include_body, not a 200 over it;
// a page of stories ends early, and walking its cursors gives every story
// once.
func TestStoriesAreBoundedInBytes(t *testing.T) {
	t.Parallel()
	const limit = graph.MinPageBytes
	a := newAPI(t, func(c *Config) { c.Graph.Limits.MaxPageBytes = limit })

	t.Run("a story over the limit is a 400 naming include_body", func(t *testing.T) {
		t.Parallel()
		a := a.with(t)
		// Five posts of 400 KiB: 2 MiB, twice the limit.
		const id = 9_000_000_001_001
		a.bigStory(id, "Bytesize flood lorem", fxTime.Add(24*time.Hour), fxPostID+6000, []int{400, 400, 400, 400, 400})
		for _, path := range []string{
			"/v1/stories/" + strconv.FormatInt(id, 10),
			"/v1/stories?q=Bytesize&items=5",
			"/v1/stories?q=Bytesize&items=3",
		} {
			r := a.get(t, path, a.free)
			r.wantStatus(t, http.StatusBadRequest)
			if r.env.Error == nil || r.env.Error.Code != "bad_request" || !strings.Contains(r.env.Error.Message, "include_body=false") ||
				!strings.Contains(r.env.Error.Message, strconv.FormatInt(id, 10)) {
				t.Errorf("%s: %.300s; want a bad_request naming the story and include_body", path, r.plain)
			}
			if len(r.plain) > limit {
				t.Errorf("%s: %d bytes, over the limit of %d", path, len(r.plain), limit)
			}
		}
		// Without bodies the story is served whole; two items fit.
		r := a.get(t, "/v1/stories/"+strconv.FormatInt(id, 10)+"?include_body=false", a.free)
		r.wantStatus(t, http.StatusOK)
		if ids, text := storyText(t, r.env.Data); len(ids) != 5 || text != 0 {
			t.Errorf("include_body=false: %d items with %d bytes of body; want all 5, no body", len(ids), text)
		}
		r = a.get(t, "/v1/stories?q=Bytesize&items=2", a.free)
		r.wantStatus(t, http.StatusOK)
		stories := r.items(t)
		if len(stories) != 1 || r.env.Pagination.HasMore {
			t.Fatalf("items=2: %d stories, has_more %v; want the story alone", len(stories), r.env.Pagination.HasMore)
		}
		if ids, text := storyText(t, mustJSON(t, stories[0])); len(ids) != 2 || text != 800<<10 {
			t.Errorf("items=2: %d items with %d bytes of body; want 2 with 800 KiB", len(ids), text)
		}
	})

	t.Run("a page of stories ends early and its cursors give every story once", func(t *testing.T) {
		t.Parallel()
		a := a.with(t)
		// Seven stories of a 300 KiB post and a 100 KiB message, each
		// newer than the one before: two fit a page (with two items).
		var want []int64
		for i := range 7 {
			id := int64(9_000_000_002_000 + i)
			a.bigStory(id, "Walkabout story", fxTime.Add(48*time.Hour+time.Duration(i)*time.Hour),
				fxPostID+7000+int64(10*i), []int{300, -100})
			want = append([]int64{id}, want...)
		}
		var got []int64
		pages := 0
		for cursor := ""; ; {
			r := a.get(t, "/v1/stories?q=Walkabout&items=2&limit=25"+cursor, a.free)
			r.wantStatus(t, http.StatusOK)
			pages++
			text := 0
			for _, s := range r.items(t) {
				var id int64
				if err := json.Unmarshal(s["id"], &id); err != nil {
					t.Fatal(err)
				}
				got = append(got, id)
				items, n := storyText(t, mustJSON(t, s))
				if len(items) != 2 {
					t.Errorf("story %d: %d items, want 2", id, len(items))
				}
				text += n
			}
			if text > limit {
				t.Errorf("page %d holds %d bytes of bodies, over the limit of %d", pages, text, limit)
			}
			if !r.env.Pagination.HasMore {
				break
			}
			if r.env.Pagination.NextCursor == nil || pages > len(want) {
				t.Fatalf("page %d: has_more without a cursor, or no end: %.300s", pages, r.plain)
			}
			cursor = "&cursor=" + url.QueryEscape(*r.env.Pagination.NextCursor)
		}
		if !slices.Equal(got, want) {
			t.Errorf("walked %v, want %v (each once, newest first)", got, want)
		}
		if pages != 4 {
			t.Errorf("%d pages, want 4 (two stories of 400 KiB each, then one)", pages)
		}
		// Without bodies they take one page.
		r := a.get(t, "/v1/stories?q=Walkabout&items=2&limit=25&include_body=false", a.free)
		r.wantStatus(t, http.StatusOK)
		if n := len(r.items(t)); n != 7 || r.env.Pagination.HasMore {
			t.Errorf("include_body=false: %d stories, has_more %v; want all 7 on one page", n, r.env.Pagination.HasMore)
		}
	})
}

// mustJSON marshals v.
func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
