package rest

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db"
)

// walk follows next_cursor from path until has_more is false and returns
// the ids in the order served, checking each page on the way.
func (a *api) walk(t testing.TB, path string, limit int) []int64 {
	t.Helper()
	var ids []int64
	next := path
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatalf("%s: more than 10000 pages", path)
		}
		r := a.get(t, next, a.intern)
		r.wantStatus(t, http.StatusOK)
		items := r.items(t)
		for _, it := range items {
			ids = append(ids, num(t, it["id"]))
		}
		p := r.env.Pagination
		if p == nil {
			t.Fatalf("%s: pagination null", next)
		}
		if !p.HasMore {
			if p.NextCursor != nil {
				t.Errorf("%s: last page with next_cursor %q, want null", next, *p.NextCursor)
			}
			if len(items) > limit {
				t.Errorf("%s: last page has %d items, limit %d", next, len(items), limit)
			}
			return ids
		}
		if p.NextCursor == nil || *p.NextCursor == "" {
			t.Fatalf("%s: has_more without next_cursor", next)
		}
		if len(items) != limit {
			t.Errorf("%s: a page before the last has %d items, want %d", next, len(items), limit)
		}
		if c := *p.NextCursor; url.QueryEscape(c) != c {
			t.Errorf("cursor %q is not URL-safe", c)
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		next = path + sep + "cursor=" + *p.NextCursor
	}
}

// wantDescendingUnique fails unless ids strictly decrease (newest first,
// nothing repeated).
func wantDescendingUnique(t testing.TB, what string, ids []int64) {
	t.Helper()
	for i := 1; i < len(ids); i++ {
		if ids[i] >= ids[i-1] {
			t.Fatalf("%s: id %d follows %d; want strictly decreasing ids", what, ids[i], ids[i-1])
		}
	}
}

func TestPaginationWalks(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	posts := a.addPosts(fxPostID, 23, "fx-walk")
	a.addPosts(fxPostID+1000, 5, "fx-other")
	msgs := a.addFirehose(fxFirehoseID, 23, "fxwalk", []db.Pane{db.PaneWire, db.PaneBlogs}, []bool{true, false, false})
	a.addBriefs(fxBriefID, 9)

	var wantPosts, wantWire, wantImportant []int64
	for i := len(posts) - 1; i >= 0; i-- {
		wantPosts = append(wantPosts, posts[i].ID)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Pane == db.PaneWire {
			wantWire = append(wantWire, msgs[i].ID)
		}
		if msgs[i].Important {
			wantImportant = append(wantImportant, msgs[i].ID)
		}
	}

	for _, size := range []int{1, 7, 50, 100} {
		limit := "limit=" + strconv.Itoa(size)
		t.Run("page size "+strconv.Itoa(size), func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				path string
				want []int64
			}{
				{"/v1/posts?source=fx-walk&" + limit, wantPosts},
				{"/v1/posts?source=fx-walk&include_body=false&since=2031-01-06T09:40:00Z&" + limit, wantPosts[:13]},
				{"/v1/firehose?source=FXWALK&pane=wire&" + limit, wantWire},
				{"/v1/firehose?source=fxwalk&important=true&include_summary=1&" + limit, wantImportant},
			} {
				got := a.walk(t, tc.path, size)
				if !slices.Equal(got, tc.want) {
					t.Errorf("%s: walked %v, want %v", tc.path, got, tc.want)
				}
			}
		})
	}

	t.Run("whole lists: every row once, newest first", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			path  string
			table string
			limit int
		}{
			{"/v1/posts?limit=100", "posts", 100},
			{"/v1/firehose?limit=100", "firehose_messages", 100},
			{"/v1/briefs?limit=7", "briefs", 7},
			{"/v1/briefs", "briefs", 50},
		} {
			ids := a.walk(t, tc.path, tc.limit)
			wantDescendingUnique(t, tc.path, ids)
			if got, want := len(ids), a.count(t, tc.table); got != want {
				t.Errorf("%s: walked %d rows, the table has %d", tc.path, got, want)
			}
		}
	})

	t.Run("a cursor keeps working after new items arrive", func(t *testing.T) {
		t.Parallel()
		b := newAPI(t)
		b.addPosts(fxPostID, 10, "fx-live")
		r := b.get(t, "/v1/posts?source=fx-live&limit=4", b.free)
		first := r.items(t)
		cursor := *r.env.Pagination.NextCursor
		b.addPosts(fxPostID+100, 3, "fx-live") // newer posts
		r = b.get(t, "/v1/posts?source=fx-live&limit=4&cursor="+cursor, b.free)
		r.wantStatus(t, http.StatusOK)
		second := r.items(t)
		if got, want := num(t, second[0]["id"]), num(t, first[3]["id"])-1; got != want {
			t.Errorf("page after the cursor starts at %d, want %d", got, want)
		}
	})
}

func TestCursorsAreBoundToTheirEndpoint(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.addPosts(fxPostID, 3, "fx")
	a.addFirehose(fxFirehoseID, 3, "fx", []db.Pane{db.PaneNews}, []bool{false})
	a.addBriefs(fxBriefID, 3)

	cursors := map[string]string{}
	for _, path := range []string{"/v1/posts", "/v1/firehose", "/v1/briefs"} {
		r := a.get(t, path+"?limit=1", a.free)
		r.wantStatus(t, http.StatusOK)
		if r.env.Pagination.NextCursor == nil {
			t.Fatalf("%s: no next_cursor", path)
		}
		cursors[path] = *r.env.Pagination.NextCursor
	}
	for from, cursor := range cursors {
		for path := range cursors {
			if path == from {
				continue
			}
			t.Run("cursor of "+from+" on "+path, func(t *testing.T) {
				t.Parallel()
				r := a.get(t, path+"?cursor="+cursor, a.free)
				r.wantStatus(t, http.StatusBadRequest)
				if r.env.Error.Code != "bad_request" || !strings.Contains(r.env.Error.Message, "cursor") {
					t.Errorf("error %+v, want bad_request naming cursor", r.env.Error)
				}
			})
		}
	}
	for path, cursor := range cursors {
		t.Run("tampered cursor on "+path, func(t *testing.T) {
			t.Parallel()
			for i := range len(cursor) {
				c := []byte(cursor)
				if c[i] == 'A' {
					c[i] = 'B'
				} else {
					c[i] = 'A'
				}
				r := a.get(t, path+"?cursor="+url.QueryEscape(string(c)), a.free)
				if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.env.Error.Message, "cursor") {
					t.Errorf("cursor with byte %d changed: status %d, error %+v; want 400 naming cursor", i, r.StatusCode, r.env.Error)
				}
			}
			for _, bad := range []string{cursor + "A", cursor[:len(cursor)-1], strings.ToUpper(cursor)} {
				r := a.get(t, path+"?cursor="+url.QueryEscape(bad), a.free)
				if r.StatusCode != http.StatusBadRequest {
					t.Errorf("cursor %q: status %d, want 400", bad, r.StatusCode)
				}
			}
		})
	}
}
