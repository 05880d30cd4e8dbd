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
	Partition string     `json:"-"` // the partition Relation names, before toParents
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
//
// With bitmaps set, bitmap scans stay enabled: the caller then allows the
// bitmaps of those indexes only (see bitmapsOK).
func explain(t *testing.T, bdb *bun.DB, query string, bitmaps ...string) (planNode, string) {
	t.Helper()
	var out []string
	off := []string{"enable_seqscan", "enable_bitmapscan", "enable_sort"}
	if len(bitmaps) > 0 {
		off = []string{"enable_seqscan", "enable_sort"}
	}
	err := bdb.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		for _, set := range off {
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
	plan := plans[0].Plan
	plan.toParents(parentIndexes(t, bdb))
	return plan, strings.Join(out, "\n")
}

// parentIndexes maps the name of each index of a partition to the name of
// the partitioned table's index it belongs to.
func parentIndexes(t *testing.T, bdb *bun.DB) map[string]string {
	t.Helper()
	var rows []struct {
		Part   string `bun:"part"`
		Parent string `bun:"parent"`
	}
	err := bdb.NewRaw(`SELECT c.relname AS part, p.relname AS parent FROM pg_inherits h
		JOIN pg_class c ON c.oid = h.inhrelid JOIN pg_class p ON p.oid = h.inhparent WHERE c.relkind = 'i'`).Scan(context.Background(), &rows)
	if err != nil {
		t.Fatalf("partition indexes: %v", err)
	}
	m := make(map[string]string, len(rows))
	for _, r := range rows {
		m[r.Part] = r.Parent
	}
	return m
}

// toParents names, in n and below, the partitioned table's index (and
// table) instead of a partition's: a plan reads a partitioned table
// through the same index of each partition it does not prune.
func (n *planNode) toParents(parents map[string]string) {
	if p, ok := parents[n.IndexName]; ok {
		n.IndexName = p
	}
	if strings.HasPrefix(n.Relation, "firehose_messages_") {
		n.Partition, n.Relation = n.Relation, "firehose_messages"
	}
	for i := range n.Plans {
		n.Plans[i].toParents(parents)
	}
}

// bitmapsOK reports whether every index a Bitmap Heap Scan reads (through
// Bitmap Index Scans, BitmapAnd and BitmapOr) is one of allowed.
func bitmapsOK(n planNode, allowed []string) bool {
	ok := true
	n.walk(func(c planNode) {
		if c.NodeType == "Bitmap Index Scan" && !slices.Contains(allowed, c.IndexName) {
			ok = false
		}
	})
	return ok
}

// ginIndexes returns the GIN indexes of table: after migration
// 20261124400001 dropped the GIN indexes of coins, the full-text search's
// (looked up, not named, so that the check follows a change of that index).
func ginIndexes(t *testing.T, bdb *bun.DB, table string) []string {
	t.Helper()
	var names []string
	err := bdb.NewRaw(`SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = ?::regclass AND a.amname = 'gin' ORDER BY 1`, table).Scan(context.Background(), &names)
	if err != nil || len(names) == 0 {
		t.Fatalf("GIN indexes of %s: %v %v", table, names, err)
	}
	return names
}

func TestQueriesCanUseTheirIndexes(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	s := db.NewStore(bdb)
	p50 := db.Page{Limit: 50}
	since := time.Now().Add(-time.Hour)
	monday := time.Date(2026, 11, 9, 0, 0, 0, 0, time.UTC)
	byPaneOrID := []string{"firehose_pane_id_idx", "firehose_messages_pkey"}
	budget := db.Page{Limit: 50, MaxBytes: 4 << 20}
	noRaw := []string{"raw"}
	postsStartRecent, postsStartIndexed := s.StreamStartSQL("posts", since.AddDate(-10, 0, 0))
	firehoseStartRecent, firehoseStartIndexed := s.StreamStartSQL("firehose", since.AddDate(-10, 0, 0))
	tests := []struct {
		name    string
		query   string
		indexes []string // every one of them appears in the plan
		sorts   int      // Sort nodes allowed (each over a bounded set: see db/QUERIES.md)
		// oneOf, if set, lists indexes of which the plan uses at least one:
		// where the primary key read backwards with a filter is as good a
		// plan as the filter's own index (the planner's choice, by cost).
		oneOf []string
		// bitmaps, if set, are the indexes whose bitmap scans the plan may
		// use (bitmap scans then stay enabled); no other bitmap is allowed.
		bitmaps []string
	}{
		{"posts first page", s.PostsSQL(db.PostFilter{}, p50), []string{"posts_pkey"}, 0, nil, nil},
		{"posts next page", s.PostsSQL(db.PostFilter{}, db.Page{Limit: 50, After: 100}), []string{"posts_pkey"}, 0, nil, nil},
		{"posts backward page", s.PostsSQL(db.PostFilter{}, db.Page{Limit: 50, Backward: true}), []string{"posts_pkey"}, 0, nil, nil},
		{"posts of one source", s.PostsSQL(db.PostFilter{Source: "x"}, p50), []string{"posts_source_id_idx"}, 0, nil, nil},
		// since: the recent branch reads created_at (a top-N sort of at
		// most db.SinceWindow rows), the other the id order; the two
		// branches' pages are sorted together (at most 2×(limit+1) rows).
		{"posts since", s.PostsSQL(db.PostFilter{Since: since}, p50),
			[]string{"posts_created_at_idx", "posts_pkey"}, 2, nil, nil},
		{"posts since of one source", s.PostsSQL(db.PostFilter{Since: since, Source: "x"}, p50),
			[]string{"posts_created_at_idx", "posts_source_id_idx"}, 2, nil, nil},
		{"posts of an ISO week", s.WeekPostsSQL(monday, 10), []string{"posts_week_id_idx"}, 1, nil, nil},
		{"curated sources as a loose index scan", db.CuratedSourcesSQL, []string{"posts_source_id_idx"}, 1, nil, nil},
		// A stream's start with since: the recent rows in created_at
		// order, then (far back) each half the first entry of an index in
		// position order, not every row since since.
		{"posts stream start, recent rows", postsStartRecent, []string{"posts_created_at_idx"}, 0, nil, nil},
		{"posts stream start, indexed", postsStartIndexed, []string{"posts_stream_pos_idx", "posts_inserted_pos_idx"}, 0, nil, nil},
		{"firehose stream start, recent rows", firehoseStartRecent, []string{"firehose_created_at_idx"}, 0, nil, nil},
		{"firehose stream start, indexed", firehoseStartIndexed, []string{"firehose_stream_pos_idx", "firehose_inserted_pos_idx"}, 0, nil, nil},
		{"firehose first page", s.FirehoseSQL(db.FirehoseFilter{}, p50), []string{"firehose_messages_pkey"}, 0, nil, nil},
		{"firehose pane", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneBlogs}, p50), nil, 0, byPaneOrID, nil},
		{"firehose important", s.FirehoseSQL(db.FirehoseFilter{Important: true}, p50), []string{"firehose_messages_pkey"}, 0, nil, nil},
		{"firehose pane and important", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneNews, Important: true}, p50),
			[]string{"firehose_important_pane_id_idx"}, 0, nil, nil},
		// source: the matching groups from firehose_source_groups (see
		// below), a page per group merged
		// (top-N of at most limit+1 per group) and the rows by id, or the
		// id order walked (db.firehoseBySource).
		{"firehose source substring with escaped wildcards", s.FirehoseSQL(db.FirehoseFilter{Source: "co%in_desk"}, p50),
			[]string{"firehose_source_pane_important_id_idx", "firehose_messages_pkey"}, 2, nil, nil},
		{"firehose one-letter source", s.FirehoseSQL(db.FirehoseFilter{Source: "c"}, p50),
			[]string{"firehose_source_pane_important_id_idx", "firehose_messages_pkey"}, 2, nil, nil},
		{"firehose source, pane and important", s.FirehoseSQL(db.FirehoseFilter{Source: "cftc", Pane: db.PaneWire, Important: true}, db.Page{Limit: 50, After: 1000}),
			[]string{"firehose_source_pane_important_id_idx", "firehose_messages_pkey"}, 2, nil, nil},
		{"firehose pane since", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneBlogs, Since: since}, p50),
			[]string{"firehose_created_at_idx"}, 2, byPaneOrID, nil},
		{"firehose source since", s.FirehoseSQL(db.FirehoseFilter{Source: "coin", Since: since}, p50),
			[]string{"firehose_created_at_idx", "firehose_source_pane_important_id_idx"}, 4, nil, nil},
		{"etf flows", s.EtfFlowsSQL(db.EtfFilter{Assets: []db.Asset{"BTC", "ETH"}, From: monday.AddDate(0, 0, -30), To: monday}, 100),
			[]string{"etf_flows_date_asset_idx"}, 0, nil, nil},
		{"etf flows latest", s.LatestEtfFlowsSQL(db.EtfFilter{}), []string{"etf_flows_pkey"}, 0, nil, nil},
		{"briefs first page", s.BriefsSQL(db.BriefFilter{}, p50), []string{"briefs_pkey"}, 0, nil, nil},
		// Within a byte budget (db/bound.go): the same page, its running
		// total taken in the order it is read, without a sort; with raw,
		// measured row by row, the rows measured put back in order (a
		// sort of at most limit+1 rows).
		{"posts first page within a byte budget", s.PostsSQL(db.PostFilter{Omit: noRaw}, budget), []string{"posts_pkey"}, 0, nil, nil},
		{"posts since within a byte budget", s.PostsSQL(db.PostFilter{Since: since, Omit: noRaw}, budget),
			[]string{"posts_created_at_idx", "posts_pkey"}, 2, nil, nil},
		{"posts with raw within a byte budget", s.PostsSQL(db.PostFilter{}, budget), []string{"posts_pkey"}, 1, nil, nil},
		{"posts since with raw within a byte budget", s.PostsSQL(db.PostFilter{Since: since}, budget),
			[]string{"posts_created_at_idx", "posts_pkey"}, 3, nil, nil},
		{"firehose pane within a byte budget", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneBlogs}, budget), nil, 0, byPaneOrID, nil},
		{"briefs within a byte budget", s.BriefsSQL(db.BriefFilter{}, budget), []string{"briefs_pkey"}, 0, nil, nil},
	}
	// coins: the side tables' primary keys (ticker, id), either read in
	// id order for one ticker (a rare one) or probed per row of the other
	// filters' id order (a common one); several tickers are branches
	// merged in id order. Never a sort, whatever the ticker.
	deep := db.Page{Limit: 50, After: 1000}
	back := db.Page{Limit: 50, Backward: true, Before: 1000}
	coins := func(c ...string) db.SearchFilter { return db.SearchFilter{Coins: c} }
	common, rare := coins("BTC"), coins("CRV")
	for _, c := range []struct {
		name  string
		query string
		sorts int
	}{
		{"posts coins common", s.PostsSQL(db.PostFilter{SearchFilter: common}, p50), 0},
		{"posts coins rare", s.PostsSQL(db.PostFilter{SearchFilter: rare}, p50), 0},
		{"posts coins rare deep page", s.PostsSQL(db.PostFilter{SearchFilter: rare}, deep), 0},
		{"posts coins rare backward page", s.PostsSQL(db.PostFilter{SearchFilter: rare}, back), 0},
		{"posts coins rare of one source", s.PostsSQL(db.PostFilter{Source: "x", SearchFilter: rare}, deep), 0},
		{"posts coins common of one source", s.PostsSQL(db.PostFilter{Source: "x", SearchFilter: common}, p50), 0},
		{"posts coins any of three", s.PostsSQL(db.PostFilter{SearchFilter: coins("CRV", "BTC", "ETH")}, deep), 0},
		{"posts coins since", s.PostsSQL(db.PostFilter{Since: since, SearchFilter: rare}, p50), 2},
		{"firehose coins common", s.FirehoseSQL(db.FirehoseFilter{SearchFilter: common}, p50), 0},
		{"firehose coins rare deep page", s.FirehoseSQL(db.FirehoseFilter{SearchFilter: rare}, deep), 0},
		{"firehose coins rare of a pane", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneNews, SearchFilter: rare}, deep), 0},
		{"firehose coins common of a pane", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneNews, SearchFilter: common}, p50), 0},
		{"firehose coins any of two of a pane", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneCrypto, SearchFilter: coins("CRV", "BTC")}, p50), 0},
		{"firehose coins rare of a source", s.FirehoseSQL(db.FirehoseFilter{Source: "coin", SearchFilter: rare}, deep), 2},
		{"firehose coins since", s.FirehoseSQL(db.FirehoseFilter{Since: since, SearchFilter: rare}, p50), 2},
	} {
		side := "post_coins_pkey"
		if strings.HasPrefix(c.name, "firehose") {
			side = "firehose_coins_pkey"
		}
		tests = append(tests, struct {
			name    string
			query   string
			indexes []string
			sorts   int
			oneOf   []string
			bitmaps []string
		}{c.name, c.query, []string{side}, c.sorts, nil, nil})
	}
	// q (kept minimal: the full-text condition and its indexes are
	// another change's): no sequential scan, and a bitmap only of the
	// table's full-text GIN index, for a rare phrase.
	postsFTS, firehoseFTS := ginIndexes(t, bdb, "posts"), ginIndexes(t, bdb, "firehose_messages")
	qf := func(q string) db.SearchFilter { return db.SearchFilter{Query: q} }
	for _, c := range []struct {
		name    string
		query   string
		bitmaps []string
	}{
		{"posts q common", s.PostsSQL(db.PostFilter{SearchFilter: qf("bitcoin")}, p50), postsFTS},
		{"posts q rare phrase deep page", s.PostsSQL(db.PostFilter{SearchFilter: qf(`"curve finance"`)}, deep), postsFTS},
		{"posts q of one source", s.PostsSQL(db.PostFilter{Source: "x", SearchFilter: qf("bitcoin")}, p50), postsFTS},
		{"firehose q common of a pane", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneNews, SearchFilter: qf("bitcoin")}, p50), firehoseFTS},
		{"firehose q rare phrase", s.FirehoseSQL(db.FirehoseFilter{SearchFilter: qf(`"commitments of traders"`)}, deep), firehoseFTS},
	} {
		tests = append(tests, struct {
			name    string
			query   string
			indexes []string
			sorts   int
			oneOf   []string
			bitmaps []string
		}{c.name, c.query, nil, 1, nil, c.bitmaps})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, text := explain(t, bdb, tt.query, tt.bitmaps...)
			var used []string
			sorts := 0
			plan.walk(func(n planNode) {
				if n.IndexName != "" {
					used = append(used, n.IndexName)
				}
				switch n.NodeType {
				case "Bitmap Heap Scan":
					if len(tt.bitmaps) > 0 && bitmapsOK(n, tt.bitmaps) {
						break
					}
					if n.Relation != "firehose_source_groups" {
						t.Errorf("%s on %s", n.NodeType, n.Relation)
					}
				case "Seq Scan":
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
