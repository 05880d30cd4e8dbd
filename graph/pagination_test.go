package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db"
)

// connPage is one decoded page of any connection.
type connPage struct {
	Edges []struct {
		Cursor string
		Node   struct{ ID int64 }
	}
	Nodes    []struct{ ID int64 }
	PageInfo struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

// conn describes a connection for the generic pagination tests: field is
// the selection with %s where the Relay arguments go, path the keys from
// data to the connection.
type conn struct {
	name  string
	field string
	path  []string
}

func (c conn) query() string {
	inner := "{ edges { cursor node { id } } nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }"
	sel := strings.Replace(c.field, "@", inner, 1)
	if !strings.Contains(sel, "%s") {
		return "{ " + sel + " }"
	}
	sel = strings.Replace(sel, "%s", "first: $first, after: $after, last: $last, before: $before", 1)
	return "query($first: Int, $after: String, $last: Int, $before: String) { " + sel + " }"
}

// page fetches one page with the given variables and checks that nodes and
// edges agree.
func (e *env) page(c conn, vars map[string]any) connPage {
	e.t.Helper()
	var data map[string]json.RawMessage
	e.query(c.query(), vars, &data)
	raw := data[c.path[0]]
	for _, k := range c.path[1:] {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			e.t.Fatal(err)
		}
		raw = m[k]
	}
	var p connPage
	if err := json.Unmarshal(raw, &p); err != nil {
		e.t.Fatal(err)
	}
	if len(p.Edges) != len(p.Nodes) {
		e.t.Fatalf("%s: %d edges, %d nodes", c.name, len(p.Edges), len(p.Nodes))
	}
	for i := range p.Nodes {
		if p.Edges[i].Node.ID != p.Nodes[i].ID {
			e.t.Fatalf("%s: edge %d is %d, node is %d", c.name, i, p.Edges[i].Node.ID, p.Nodes[i].ID)
		}
	}
	if len(p.Nodes) > 0 && (p.PageInfo.StartCursor == nil || *p.PageInfo.StartCursor != p.Edges[0].Cursor ||
		p.PageInfo.EndCursor == nil || *p.PageInfo.EndCursor != p.Edges[len(p.Edges)-1].Cursor) {
		e.t.Fatalf("%s: start/end cursors do not match the edges", c.name)
	}
	return p
}

func (p connPage) ids() []int64 {
	out := make([]int64, len(p.Nodes))
	for i, n := range p.Nodes {
		out[i] = n.ID
	}
	return out
}

// walkForward follows endCursor with first=size until hasNextPage is false;
// between pages it calls between (if not nil).
func (e *env) walkForward(c conn, size int, between func(page int)) []int64 {
	e.t.Helper()
	var all []int64
	vars := map[string]any{"first": size}
	for n := 0; ; n++ {
		p := e.page(c, vars)
		if got, want := p.PageInfo.HasPreviousPage, n > 0; got != want {
			e.t.Fatalf("%s forward page %d: hasPreviousPage = %v, want %v", c.name, n, got, want)
		}
		if p.PageInfo.HasNextPage && len(p.Nodes) != size {
			e.t.Fatalf("%s forward page %d: %d nodes before the end, want %d", c.name, n, len(p.Nodes), size)
		}
		all = append(all, p.ids()...)
		if !p.PageInfo.HasNextPage {
			return all
		}
		if between != nil {
			between(n)
		}
		vars = map[string]any{"first": size, "after": *p.PageInfo.EndCursor}
	}
}

// walkBackward follows startCursor with last=size until hasPreviousPage is
// false and returns the ids newest first.
func (e *env) walkBackward(c conn, size int, between func(page int)) []int64 {
	e.t.Helper()
	var all []int64
	vars := map[string]any{"last": size}
	for n := 0; ; n++ {
		p := e.page(c, vars)
		if got, want := p.PageInfo.HasNextPage, n > 0; got != want {
			e.t.Fatalf("%s backward page %d: hasNextPage = %v, want %v", c.name, n, got, want)
		}
		if p.PageInfo.HasPreviousPage && len(p.Nodes) != size {
			e.t.Fatalf("%s backward page %d: %d nodes before the end, want %d", c.name, n, len(p.Nodes), size)
		}
		all = append(p.ids(), all...)
		if !p.PageInfo.HasPreviousPage {
			return all
		}
		if between != nil {
			between(n)
		}
		vars = map[string]any{"last": size, "before": *p.PageInfo.StartCursor}
	}
}

func TestPaginationVisitsEveryRowOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	posts := e.addPosts(fxPostID, 23, "fx-pages", fxMonday)
	e.addPosts(fxPostID+100, 5, "fx-other", fxMonday) // interleaved ids of another source
	briefs := e.addBriefs(fxBriefID, 3, fxMonday, 17)
	e.addFirehose(fxFirehoseID, 40, []db.Pane{db.PaneNews, db.PaneWire}, []string{"Zz%Pg_feed", "other"}, []bool{true, false, false}, fxMonday)

	desc := func(ids []int64) []int64 { slices.Reverse(ids); return ids }
	postIDs := desc(ids(posts, func(p db.Post) int64 { return p.ID }))

	// The complete lists, from one big page each.
	allBriefs := e.page(conn{"briefs", "briefs(first: 100) @", []string{"briefs"}}, nil).ids()
	weekIDs := e.page(conn{"week", fmt.Sprintf("brief(id: %d) { posts(first: 100) @ }", briefs[1].ID), []string{"brief", "posts"}}, nil).ids()
	if len(weekIDs) != 17 {
		t.Fatalf("brief %d has %d posts, want 17", briefs[1].ID, len(weekIDs))
	}
	allFirehose := e.page(conn{"firehose", `firehose(first: 100, source: "%pg_") @`, []string{"firehose"}}, nil).ids()
	if len(allFirehose) != 20 {
		t.Fatalf("firehose source %%pg_ has %d messages, want 20", len(allFirehose))
	}

	tests := []struct {
		conn conn
		want []int64
	}{
		{conn{"posts", `posts(source: "fx-pages", %s) @`, []string{"posts"}}, postIDs},
		{conn{"briefs", `briefs(%s) @`, []string{"briefs"}}, allBriefs},
		{conn{"firehose", `firehose(source: "%pg_", %s) @`, []string{"firehose"}}, allFirehose},
		{conn{"brief posts", fmt.Sprintf("brief(id: %d) { posts(%%s) @ }", briefs[1].ID), []string{"brief", "posts"}}, weekIDs},
	}
	for _, tt := range tests {
		for _, size := range []int{1, 3, 7, 100} {
			t.Run(fmt.Sprintf("%s forward by %d", tt.conn.name, size), func(t *testing.T) {
				if got := e.with(t).walkForward(tt.conn, size, nil); !slices.Equal(got, tt.want) {
					t.Errorf("got %v\nwant %v", got, tt.want)
				}
			})
			t.Run(fmt.Sprintf("%s backward by %d", tt.conn.name, size), func(t *testing.T) {
				if got := e.with(t).walkBackward(tt.conn, size, nil); !slices.Equal(got, tt.want) {
					t.Errorf("got %v\nwant %v", got, tt.want)
				}
			})
		}
	}
}

func TestPaginationWhileRowsArrive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	posts := e.addPosts(fxPostID, 20, "fx-live", fxMonday)
	want := ids(posts, func(p db.Post) int64 { return p.ID })
	slices.Reverse(want)
	c := conn{"posts", `posts(source: "fx-live", %s) @`, []string{"posts"}}

	t.Run("forward pages keep their place while newer rows arrive", func(t *testing.T) {
		next := fxPostID + 1000
		got := e.with(t).walkForward(c, 6, func(int) {
			e.addPosts(next, 2, "fx-live", fxMonday.AddDate(0, 1, 0))
			next += 2
		})
		if !slices.Equal(got, want) {
			t.Errorf("got %v\nwant %v", got, want)
		}
	})
	t.Run("backward pages reach the rows that arrived", func(t *testing.T) {
		next := fxPostID + 2000
		var added []int64
		got := e.with(t).walkBackward(c, 6, func(page int) {
			if page < 2 {
				for _, p := range e.addPosts(next, 2, "fx-live", fxMonday.AddDate(0, 2, 0)) {
					added = append(added, p.ID)
				}
				next += 2
			}
		})
		// Everything at the start of the walk (the first subtest's rows
		// included) plus what arrived, each once, newest first.
		all := e.page(conn{"posts", `posts(source: "fx-live", first: 100) @`, []string{"posts"}}, nil).ids()
		if !slices.Equal(got, all) {
			t.Errorf("got %v\nwant %v", got, all)
		}
		for _, id := range added {
			if !slices.Contains(got, id) {
				t.Errorf("row %d that arrived during the walk is missing", id)
			}
		}
	})
}
