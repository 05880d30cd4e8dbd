package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph"
)

func TestPostsFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.addPosts(fxPostID, 6, "fx-alpha", fxMonday)          // hours 0..5
	b := e.addPosts(fxPostID+100, 4, "fx-alpha beta", fxMonday) // a label that merely contains the other
	newest := func(rows []db.Post, from int) []int64 {
		out := ids(rows[from:], func(p db.Post) int64 { return p.ID })
		slices.Reverse(out)
		return out
	}
	tests := []struct {
		name string
		args string
		want []int64
	}{
		{"source matches the label exactly", `source: "fx-alpha"`, newest(a, 0)},
		{"source is case-sensitive", `source: "FX-ALPHA"`, nil},
		{"unknown source gives an empty page", `source: "fx-nope"`, nil},
		{"since is inclusive", `source: "fx-alpha", since: "2031-01-06T03:00:00Z"`, newest(a, 3)},
		{"since takes an offset", `source: "fx-alpha", since: "2031-01-06T04:00:00+01:00"`, newest(a, 3)},
		{"since after everything gives an empty page", `source: "fx-alpha beta", since: "2032-01-01T00:00:00Z"`, nil},
		{"since alone", `since: "2031-01-06T02:00:00.000Z"`, append(newest(b, 2), newest(a, 2)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out struct{ Posts connPage }
			e.with(t).query(fmt.Sprintf(`{ posts(first: 100, %s) { nodes { id } } }`, tt.args), nil, &out)
			if got := out.Posts.ids(); !slices.Equal(got, tt.want) {
				t.Errorf("ids = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPostFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.addPosts(fxPostID, 1, "fx-fields", time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC))[0]
	var out struct{ Post map[string]any }
	e.query(fmt.Sprintf(`{ post(id: %d) { uid id source username body url originalSourceUrl createdAt raw } }`, p.ID), nil, &out)
	want := map[string]any{
		"uid": fmt.Sprintf("cp_%d", p.ID), "id": float64(p.ID), "source": "fx-fields", "username": p.Username,
		"body": p.Body, "url": *p.URL, "originalSourceUrl": nil, "createdAt": "2031-02-03T04:05:06.000Z",
		"raw": map[string]any{"n": float64(p.ID)},
	}
	for k, v := range want {
		if got := out.Post[k]; fmt.Sprint(got) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
}

func TestFirehoseFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	at := fxMonday
	// Each row: pane, source, important, minutes after fxMonday.
	rows := []db.FirehoseMessage{
		{ID: fxFirehoseID + 1, Pane: db.PaneNews, Source: "FX_Wire%Daily", Important: true},
		{ID: fxFirehoseID + 2, Pane: db.PaneNews, Source: "fxXwireYdaily", Important: false},
		{ID: fxFirehoseID + 3, Pane: db.PaneCrypto, Source: "fx_wire%daily", Important: false},
		{ID: fxFirehoseID + 4, Pane: db.PaneIansintel, Source: "fx-iansintel", Important: true},
		{ID: fxFirehoseID + 5, Pane: db.PaneTwitter, Source: `fx\back`, Important: true},
	}
	for i := range rows {
		rows[i].CreatedAt = at.Add(time.Duration(i) * time.Minute)
	}
	if _, err := e.bdb.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	id := func(n ...int64) []int64 {
		out := make([]int64, len(n))
		for i, k := range n {
			out[i] = fxFirehoseID + k
		}
		return out
	}
	tests := []struct {
		name string
		args string
		want []int64
	}{
		{"source is a case-insensitive substring", `source: "WIRE%DAILY"`, id(3, 1)},
		{"percent and underscore are literal", `source: "x_wire%d"`, id(3, 1)},
		{"underscore matches only itself", `source: "fx_w"`, id(3, 1)},
		{"backslash is literal", `source: "fx\\back"`, id(5)},
		{"pane", `source: "fx", pane: crypto`, id(3)},
		{"the service's own pane", `source: "fx", pane: iansintel`, id(4)},
		{"important true filters", `source: "fx", important: true`, id(5, 4, 1)},
		{"important false does not filter", `source: "fx", important: false`, id(5, 4, 3, 2, 1)},
		{"since", `source: "fx", since: "2031-01-06T00:03:00Z"`, id(5, 4)},
		{"filters combine", `source: "daily", pane: news, important: true`, id(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out struct{ Firehose connPage }
			e.with(t).query(fmt.Sprintf(`{ firehose(first: 100, %s) { nodes { id } } }`, tt.args), nil, &out)
			// Only the fixture rows: the demo data may match short substrings.
			got := slices.DeleteFunc(out.Firehose.ids(), func(id int64) bool { return id <= fxFirehoseID })
			if !slices.Equal(got, tt.want) {
				t.Errorf("ids = %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("every field", func(t *testing.T) {
		var out struct {
			Firehose struct{ Nodes []map[string]any }
		}
		e.with(t).query(`{ firehose(first: 1, source: "fx\\back") { nodes { uid id pane source sourceName name username title body summaryAi important url originalSourceUrl createdAt } } }`, nil, &out)
		if len(out.Firehose.Nodes) != 1 {
			t.Fatalf("got %d nodes", len(out.Firehose.Nodes))
		}
		n := out.Firehose.Nodes[0]
		want := map[string]any{"uid": fmt.Sprintf("tm_%d", fxFirehoseID+5), "pane": "twitter", "source": `fx\back`,
			"sourceName": nil, "summaryAi": nil, "important": true, "createdAt": "2031-01-06T00:04:00.000Z"}
		for k, v := range want {
			if got := n[k]; fmt.Sprint(got) != fmt.Sprint(v) {
				t.Errorf("%s = %v, want %v", k, got, v)
			}
		}
		if len(n) != 14 {
			t.Errorf("got %d fields, want all 14 present (null when empty)", len(n))
		}
	})
}

func TestBriefs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	briefs := e.addBriefs(fxBriefID, 2, fxMonday, 3)

	t.Run("list is newest first with every field", func(t *testing.T) {
		var out struct {
			Briefs struct{ Nodes []map[string]any }
		}
		e.with(t).query(`{ briefs(first: 2) { nodes { uid id weekStart weekEnd postCount createdAt content } } }`, nil, &out)
		want := []map[string]any{
			{"uid": fmt.Sprintf("wb_%d", briefs[1].ID), "weekStart": "2031-01-13", "weekEnd": "2031-01-19", "postCount": 3.0,
				"createdAt": "2031-01-20T00:00:00.000Z", "content": "# Week 1"},
			{"uid": fmt.Sprintf("wb_%d", briefs[0].ID), "weekStart": "2031-01-06", "weekEnd": "2031-01-12"},
		}
		if len(out.Briefs.Nodes) != 2 {
			t.Fatalf("got %d briefs", len(out.Briefs.Nodes))
		}
		for i, w := range want {
			for k, v := range w {
				if got := out.Briefs.Nodes[i][k]; fmt.Sprint(got) != fmt.Sprint(v) {
					t.Errorf("brief %d %s = %v, want %v", i, k, got, v)
				}
			}
		}
	})
	t.Run("posts of a brief are those of its week, sunday's last millisecond included", func(t *testing.T) {
		var out struct {
			Brief struct {
				Posts struct {
					Nodes []struct {
						ID        int64
						CreatedAt string
						Brief     struct{ ID int64 }
					}
				}
			}
		}
		e.with(t).query(fmt.Sprintf(`{ brief(id: %d) { posts { nodes { id createdAt brief { id } } } } }`, briefs[0].ID), nil, &out)
		nodes := out.Brief.Posts.Nodes
		if len(nodes) != 3 {
			t.Fatalf("got %d posts, want 3", len(nodes))
		}
		if got, want := nodes[0].CreatedAt, "2031-01-12T23:59:59.999Z"; got != want {
			t.Errorf("newest post createdAt = %s, want %s", got, want)
		}
		for _, n := range nodes {
			if n.Brief.ID != briefs[0].ID {
				t.Errorf("post %d: brief = %d, want %d", n.ID, n.Brief.ID, briefs[0].ID)
			}
		}
	})
	t.Run("a post outside every brief's week has no brief", func(t *testing.T) {
		p := e.addPosts(fxPostID+900_000, 1, "fx-lonely", fxMonday.AddDate(1, 0, 0))[0]
		var out struct {
			Post struct{ Brief *struct{ ID int64 } }
		}
		e.with(t).query(fmt.Sprintf(`{ post(id: %d) { brief { id } } }`, p.ID), nil, &out)
		if out.Post.Brief != nil {
			t.Errorf("brief = %+v, want null", out.Post.Brief)
		}
	})
}

func TestSingleItemNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name, query, code, param string
	}{
		{"post not found", `{ post(id: 8999999999999) { id } }`, "not_found", ""},
		{"brief not found", `{ brief(id: 8999999999) { id } }`, "not_found", ""},
		{"post id zero", `{ post(id: 0) { id } }`, "bad_request", "id"},
		{"brief id negative", `{ brief(id: -3) { id } }`, "bad_request", "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := e.with(t).do(db.TierInternal, tt.query, nil)
			if len(r.Errors) != 1 {
				t.Fatalf("errors = %+v, want one", r.Errors)
			}
			if got := r.Errors[0].Extensions; got.Code != tt.code || got.Param != tt.param {
				t.Errorf("extensions = %+v, want code %s param %q", got, tt.code, tt.param)
			}
			if string(r.Data) != `{"post":null}` && string(r.Data) != `{"brief":null}` {
				t.Errorf("data = %s, want the field null", r.Data)
			}
		})
	}
}

func TestSources(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addPosts(fxPostID, 3, "fx-b", fxMonday)
	e.addPosts(fxPostID+10, 2, "fx-a", fxMonday)
	e.addPosts(fxPostID+20, 1, "Fx-C", fxMonday)
	var out struct {
		Sources struct {
			CuratedSources []string
			FirehosePanes  []string
			EtfAssets      []string
		}
	}
	e.query(`{ sources { curatedSources firehosePanes etfAssets } }`, nil, &out)
	s := out.Sources
	if !slices.IsSorted(s.CuratedSources) {
		t.Errorf("curatedSources not sorted: %v", s.CuratedSources)
	}
	for _, want := range []string{"fx-a", "fx-b", "Fx-C"} {
		if n := countOf(s.CuratedSources, want); n != 1 {
			t.Errorf("curatedSources has %q %d times, want once", want, n)
		}
	}
	if got, want := s.FirehosePanes, []string{"blogs", "crypto", "iansintel", "news", "twitter", "wire"}; !slices.Equal(got, want) {
		t.Errorf("firehosePanes = %v, want %v", got, want)
	}
	if got, want := s.EtfAssets, []string{"BTC", "ETH", "HYPE", "SOL"}; !slices.Equal(got, want) {
		t.Errorf("etfAssets = %v, want %v", got, want)
	}

	t.Run("every listed source works as a filter", func(t *testing.T) {
		for _, src := range s.CuratedSources {
			var page struct{ Posts connPage }
			e.with(t).query(`query($s: String) { posts(first: 1, source: $s) { nodes { id } } }`, map[string]any{"s": src}, &page)
			if len(page.Posts.Nodes) != 1 {
				t.Errorf("source %q gives %d posts", src, len(page.Posts.Nodes))
			}
		}
	})
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

func TestHealth(t *testing.T) {
	t.Parallel()
	// The real ping gets seconds: the first connection to a freshly cloned
	// database is slow on a busy machine. Only the fake slow ping, which
	// waits for its deadline whatever the machine, gets a short one.
	const realWork, fakeWait = 30 * time.Second, 50 * time.Millisecond
	refused := func(context.Context) error { return errors.New("connection refused") }
	answers := func(context.Context) error { return nil }
	tests := []struct {
		name                  string
		ping, pingPrimary     func(context.Context) error
		pingTimeout           time.Duration
		wantStatus, wantDB    string
		wantPrimary, wantRepl string
	}{
		{"database answers", nil, nil, realWork, "ok", "ok", "ok", "none"},
		{"database unreachable", refused, nil, realWork, "degraded", "unreachable", "unreachable", "none"},
		{"database too slow", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, nil, fakeWait, "degraded", "unreachable", "unreachable", "none"},
		{"ping panics", func(context.Context) error { panic("driver bug") }, nil, realWork, "degraded", "unreachable", "unreachable", "none"},
		// With a read replica, database is the replica the queries read.
		{"replica and primary answer", nil, answers, realWork, "ok", "ok", "ok", "ok"},
		{"primary unreachable, replica answers", nil, refused, realWork, "degraded", "ok", "unreachable", "ok"},
		{"replica unreachable, primary answers", refused, answers, realWork, "degraded", "unreachable", "ok", "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, func(c *graph.Config) {
				c.Ping = tt.ping
				c.PingPrimary = tt.pingPrimary
				c.Limits.PingTimeout = tt.pingTimeout
			})
			r := e.do("", `{ health { status version apiVersion database databasePrimary databaseReplica } }`, nil)
			if len(r.Errors) > 0 {
				t.Fatalf("errors: %+v", r.Errors)
			}
			var out struct{ Health map[string]string }
			if err := json.Unmarshal(r.Data, &out); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"status": tt.wantStatus, "version": "test-1", "apiVersion": "v1", "database": tt.wantDB,
				"databasePrimary": tt.wantPrimary, "databaseReplica": tt.wantRepl}
			for k, v := range want {
				if got := out.Health[k]; got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}
