package db_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// planNode is one node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType  string     `json:"Node Type"`
	IndexName string     `json:"Index Name"`
	Relation  string     `json:"Relation Name"`
	Plans     []planNode `json:"Plans"`
}

// walk calls f for n and every node below it.
func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

// explain returns the plan tree of query as the planner would run it if
// sequential scans, bitmap scans and sorts were all but forbidden: the test
// tables are small, and on them the planner rightly prefers those, so this
// shows whether the intended index paths exist at all. A Sort node that
// remains is one no index can avoid.
func explain(t *testing.T, bdb *bun.DB, query string) (planNode, string) {
	t.Helper()
	var out []string
	err := bdb.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		for _, set := range []string{"enable_seqscan", "enable_bitmapscan", "enable_sort"} {
			if _, err := tx.ExecContext(ctx, "SET LOCAL "+set+" = off"); err != nil {
				return err
			}
		}
		return tx.NewRaw("EXPLAIN (FORMAT JSON) "+query).Scan(ctx, &out)
	})
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(strings.Join(out, "")), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("decode plan of %s: %v", query, err)
	}
	return plans[0].Plan, strings.Join(out, "\n")
}

func TestQueriesCanUseTheirIndexes(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	s := db.NewStore(bdb)
	p50 := db.Page{Limit: 50}
	since := time.Now().Add(-time.Hour)
	monday := time.Date(2026, 11, 9, 0, 0, 0, 0, time.UTC)
	byPaneOrID := []string{"firehose_pane_id_idx", "firehose_messages_pkey"}
	tests := []struct {
		name    string
		query   string
		indexes []string // every one of them appears in the plan
		sorts   int      // Sort nodes allowed (each over a bounded set: see db/QUERIES.md)
		// oneOf, if set, lists indexes of which the plan uses at least one:
		// where the primary key read backwards with a filter is as good a
		// plan as the filter's own index (the planner's choice, by cost).
		oneOf []string
	}{
		{"posts first page", s.PostsSQL(db.PostFilter{}, p50), []string{"posts_pkey"}, 0, nil},
		{"posts next page", s.PostsSQL(db.PostFilter{}, db.Page{Limit: 50, After: 100}), []string{"posts_pkey"}, 0, nil},
		{"posts backward page", s.PostsSQL(db.PostFilter{}, db.Page{Limit: 50, Backward: true}), []string{"posts_pkey"}, 0, nil},
		{"posts of one source", s.PostsSQL(db.PostFilter{Source: "x"}, p50), []string{"posts_source_id_idx"}, 0, nil},
		// since: the recent branch reads created_at (a top-N sort of at
		// most db.SinceWindow rows), the other the id order; the two
		// branches' pages are sorted together (at most 2×(limit+1) rows).
		{"posts since", s.PostsSQL(db.PostFilter{Since: since}, p50),
			[]string{"posts_created_at_idx", "posts_pkey"}, 2, nil},
		{"posts since of one source", s.PostsSQL(db.PostFilter{Since: since, Source: "x"}, p50),
			[]string{"posts_created_at_idx", "posts_source_id_idx"}, 2, nil},
		{"posts of an ISO week", s.WeekPostsSQL(monday, 10), []string{"posts_week_id_idx"}, 1, nil},
		{"curated sources as a loose index scan", db.CuratedSourcesSQL, []string{"posts_source_id_idx"}, 1, nil},
		{"firehose first page", s.FirehoseSQL(db.FirehoseFilter{}, p50), []string{"firehose_messages_pkey"}, 0, nil},
		{"firehose pane", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneBlogs}, p50), nil, 0, byPaneOrID},
		{"firehose important", s.FirehoseSQL(db.FirehoseFilter{Important: true}, p50), []string{"firehose_messages_pkey"}, 0, nil},
		{"firehose pane and important", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneNews, Important: true}, p50),
			[]string{"firehose_important_pane_id_idx"}, 0, nil},
		// source: the matching groups from firehose_source_groups (see
		// below), a page per group merged
		// (top-N of at most limit+1 per group) and the rows by id, or the
		// id order walked (db.firehoseBySource).
		{"firehose source substring with escaped wildcards", s.FirehoseSQL(db.FirehoseFilter{Source: "co%in_desk"}, p50),
			[]string{"firehose_source_pane_important_id_idx", "firehose_messages_pkey"}, 2, nil},
		{"firehose one-letter source", s.FirehoseSQL(db.FirehoseFilter{Source: "c"}, p50),
			[]string{"firehose_source_pane_important_id_idx", "firehose_messages_pkey"}, 2, nil},
		{"firehose source, pane and important", s.FirehoseSQL(db.FirehoseFilter{Source: "cftc", Pane: db.PaneWire, Important: true}, db.Page{Limit: 50, After: 1000}),
			[]string{"firehose_source_pane_important_id_idx", "firehose_messages_pkey"}, 2, nil},
		{"firehose pane since", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneBlogs, Since: since}, p50),
			[]string{"firehose_created_at_idx"}, 2, byPaneOrID},
		{"firehose source since", s.FirehoseSQL(db.FirehoseFilter{Source: "coin", Since: since}, p50),
			[]string{"firehose_created_at_idx", "firehose_source_pane_important_id_idx"}, 4, nil},
		{"etf flows", s.EtfFlowsSQL(db.EtfFilter{Assets: []db.Asset{"BTC", "ETH"}, From: monday.AddDate(0, 0, -30), To: monday}, 100),
			[]string{"etf_flows_date_asset_idx"}, 0, nil},
		{"etf flows latest", s.LatestEtfFlowsSQL(db.EtfFilter{}), []string{"etf_flows_pkey"}, 0, nil},
		{"briefs first page", s.BriefsSQL(p50), []string{"briefs_pkey"}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, text := explain(t, bdb, tt.query)
			var used []string
			sorts := 0
			plan.walk(func(n planNode) {
				if n.IndexName != "" {
					used = append(used, n.IndexName)
				}
				switch n.NodeType {
				case "Seq Scan", "Bitmap Heap Scan":
					// firehose_source_groups has one row per source, pane
					// and flag, and no index a disabled bitmap scan leaves
					// usable: its trigram index is checked at scale by
					// TestFirehoseSourceSearchWorkFollowsMatches.
					if n.Relation != "firehose_source_groups" {
						t.Errorf("%s on %s", n.NodeType, n.Relation)
					}
				case "Sort", "Incremental Sort":
					sorts++
				}
			})
			for _, want := range tt.indexes {
				if !slices.Contains(used, want) {
					t.Errorf("plan does not use %s", want)
				}
			}
			if len(tt.oneOf) > 0 && !slices.ContainsFunc(tt.oneOf, func(i string) bool { return slices.Contains(used, i) }) {
				t.Errorf("plan uses none of %v", tt.oneOf)
			}
			if len(used) == 0 {
				t.Errorf("plan uses no index")
			}
			if sorts > tt.sorts {
				t.Errorf("plan has %d sorts, want at most %d", sorts, tt.sorts)
			}
			if t.Failed() {
				t.Logf("plan:\n%s", text)
			}
		})
	}
}
