package graph_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
)

func TestRelationsAreBatched(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addBriefs(fxBriefID, 12, fxMonday, 6)

	type briefPage struct {
		Briefs struct {
			Nodes []struct {
				ID    int64
				Posts struct {
					Nodes []struct {
						ID    int64
						Brief struct{ ID int64 }
					}
				}
			}
		}
	}
	tests := []struct {
		name   string
		query  string
		want   int64 // statements
		briefs int
	}{
		// briefs, then posts of all the weeks; each post's brief is the one
		// its posts were read through, known without a third statement.
		{"one brief", `{ briefs(first: 1) { nodes { id posts(first: 5) { nodes { id brief { id } } } } } }`, 2, 1},
		{"two briefs", `{ briefs(first: 2) { nodes { id posts(first: 5) { nodes { id brief { id } } } } } }`, 2, 2},
		{"ten briefs", `{ briefs(first: 10) { nodes { id posts(first: 5) { nodes { id brief { id } } } } } }`, 2, 10},
		{"ten briefs through edges", `{ briefs(first: 10) { edges { node { id posts(first: 5) { edges { node { id brief { id } } } } } } } }`, 2, 10},
		{"without relations", `{ briefs(first: 10) { nodes { id } } }`, 1, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Not parallel: the statement counter is shared by the test's database.
			before := e.queries.Load()
			var raw json.RawMessage
			e.with(t).query(tt.query, nil, &raw)
			if got := e.queries.Load() - before; got != tt.want {
				t.Errorf("%d SQL statements, want %d", got, tt.want)
			}
			var out briefPage
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatal(err)
			}
			if out.Briefs.Nodes == nil {
				return // the edges form: counted only
			}
			if len(out.Briefs.Nodes) != tt.briefs {
				t.Fatalf("%d briefs, want %d", len(out.Briefs.Nodes), tt.briefs)
			}
			for _, b := range out.Briefs.Nodes {
				if tt.want == 1 {
					continue
				}
				if len(b.Posts.Nodes) != 5 {
					t.Errorf("brief %d: %d posts, want 5", b.ID, len(b.Posts.Nodes))
				}
				for _, p := range b.Posts.Nodes {
					if p.Brief.ID != b.ID {
						t.Errorf("brief %d: post %d says brief %d", b.ID, p.ID, p.Brief.ID)
					}
				}
			}
		})
	}

	t.Run("post briefs of a long page", func(t *testing.T) {
		before := e.queries.Load()
		var out struct {
			Posts struct {
				Nodes []struct {
					ID    int64
					Brief *struct{ ID int64 }
				}
			}
		}
		e.with(t).query(`{ posts(first: 72) { nodes { id brief { id } } } }`, nil, &out)
		if got := e.queries.Load() - before; got != 2 {
			t.Errorf("%d SQL statements, want 2", got)
		}
		for _, p := range out.Posts.Nodes {
			if p.Brief == nil || p.Brief.ID != fxBriefID+1+(p.ID-fxPostID)/1000-1 {
				t.Errorf("post %d: brief %v", p.ID, p.Brief)
			}
		}
	})
	t.Run("posts pages of one brief continue with its cursor", func(t *testing.T) {
		var first struct {
			Brief struct{ Posts connPage }
		}
		q := `query($after: String) { brief(id: %d) { posts(first: 4, after: $after) { edges { cursor node { id } } nodes { id } pageInfo { hasNextPage hasPreviousPage endCursor startCursor } } } }`
		e.with(t).query(fmt.Sprintf(q, fxBriefID+3), nil, &first)
		var second struct {
			Brief struct{ Posts connPage }
		}
		e.with(t).query(fmt.Sprintf(q, fxBriefID+3), map[string]any{"after": *first.Brief.Posts.PageInfo.EndCursor}, &second)
		if len(first.Brief.Posts.Nodes) != 4 || len(second.Brief.Posts.Nodes) != 2 || second.Brief.Posts.PageInfo.HasNextPage {
			t.Errorf("pages of 4 then %d (hasNextPage %v), want 4 then 2 and the end", len(second.Brief.Posts.Nodes), second.Brief.Posts.PageInfo.HasNextPage)
		}
	})
}

func TestLatestFlowIsBatched(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addEtf([]db.Asset{db.AssetBTC, db.AssetETH, db.AssetSOL, db.AssetHYPE}, time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC), 5)
	before := e.queries.Load()
	var out struct {
		EtfFlows []struct {
			UID    string
			Latest struct{ UID string }
		}
	}
	e.query(`{ etfFlows(from: "2031-03-01", first: 20) { uid latest { uid latest { uid } } } }`, nil, &out)
	// The list, then one batch for all assets (the nested latest hits the cache).
	if got := e.queries.Load() - before; got != 2 {
		t.Errorf("%d SQL statements, want 2", got)
	}
	if len(out.EtfFlows) != 20 {
		t.Fatalf("%d flows, want 20", len(out.EtfFlows))
	}
	for _, f := range out.EtfFlows {
		asset := strings.Split(f.UID, "_")[1]
		if want := "etf_" + asset + "_2031-03-05"; f.Latest.UID != want {
			t.Errorf("%s: latest = %s, want %s", f.UID, f.Latest.UID, want)
		}
	}
}
