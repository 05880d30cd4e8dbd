package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

// manySourcesRows is how many firehose messages manySources adds: spread
// over about 30,000 Twitter accounts, so some 35,000 (source, pane,
// important) groups with the seeded ones.
const manySourcesRows = 45_000

// manySources returns a test database whose firehose holds, besides the
// seeded messages (written by COPY), the messages of tens of thousands of
// sources, written by every kind of writer the firehose_source_groups
// triggers must follow: plain INSERT, the importer's upserts (some moving
// rows to another source), UPDATE of the pane and important flag, DELETE.
func manySources(t *testing.T) *bun.DB {
	t.Helper()
	bdb := dbtest.New(t)
	ctx := context.Background()
	// Setup is real work: no statement timeout, however busy the machine.
	exec := func(query string, args ...any) {
		t.Helper()
		err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, query, args...)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	// Handles like tw:degenCoin1234; no underscore, no %, never "zq" nor
	// "cftc". Eight in ten in the twitter pane, one in ten important.
	exec(`INSERT INTO firehose_messages (id, pane, source, title, important, created_at)
SELECT 200000000 + i,
	CASE WHEN i % 10 < 8 THEN 'twitter' ELSE (ARRAY['news', 'crypto', 'wire', 'blogs', 'iansintel'])[1 + i % 5] END,
	'tw:' || (ARRAY['crypto', 'btc', 'Eth', 'sol', 'defi', 'degen', 'whale', 'alpha', 'chart', 'onchain', 'macro', 'nft', 'yield', 'moon', 'based', 'ape'])[1 + k % 16]
		|| (ARRAY['trader', 'news', 'Coin', 'hunter', 'guy', 'labs', 'capital', 'research', 'signals', 'watch', 'bull', 'bear', 'maxi', 'dev', 'fund', 'wizard'])[1 + (k / 16) % 16]
		|| k,
	'message ' || i,
	hashint4(i + 7) % 10 = 0,
	timestamptz '2026-11-01 00:00:00Z' + i * interval '20 seconds'
FROM generate_series(1, ?) i, LATERAL (SELECT (hashint4(i) & 2147483647) % 30000 AS k) h`, manySourcesRows)

	// The importer: rows moved to new sources (an upsert by id that changes
	// the source), and rows whose sources hold the LIKE wildcards.
	var lines []string
	for i := range 300 {
		id := 200000000 + 97*(i+1)
		src := fmt.Sprintf("tw:movedZQ%d", i%4)
		lines = append(lines, fmt.Sprintf(`{"id":%d,"pane":"twitter","source":%q,"important":%v,"created_at":"2026-11-02T10:%02d:%02dZ"}`,
			id, src, i%3 == 0, i/60, i%60))
	}
	for i, src := range []string{"tw:a_b", "tw:a%b", "tw:axb", "tw:aXb", "tw:50%off", "tw:a\\b", "tw:A_B", "tw:ÄrgerÉcole"} {
		for j := range 5 {
			lines = append(lines, fmt.Sprintf(`{"id":%d,"pane":"twitter","source":%q,"important":%v,"created_at":"2026-11-03T0%d:%02d:00Z"}`,
				210000000+10*i+j, src, j == 0, i, j))
		}
	}
	res, err := importer.Import(ctx, bdb, importer.KindFirehose, strings.NewReader(strings.Join(lines, "\n")), importer.Options{BatchSize: 100})
	if err != nil || res.Err() != nil {
		t.Fatalf("import: %v, %v", err, res.Err())
	}
	exec(`UPDATE firehose_messages SET important = true WHERE id BETWEEN 200000000 AND 200009999 AND id % 7 = 0`)
	exec(`UPDATE firehose_messages SET pane = 'news' WHERE id BETWEEN 200010000 AND 200019999 AND id % 11 = 0`)
	exec(`DELETE FROM firehose_messages WHERE id BETWEEN 200020000 AND 200029999 AND id % 13 = 0`)
	exec(`ANALYZE firehose_messages, firehose_source_groups`)
	return bdb
}

// ilikeIDs returns the ids of every message matching f, newest first, by
// the plainest SQL: source ILIKE a pattern escaped here, in SQL.
func ilikeIDs(t *testing.T, bdb *bun.DB, f db.FirehoseFilter) []int64 {
	t.Helper()
	q := bdb.NewSelect().Table("firehose_messages").Column("id").
		Where(`source ILIKE '%' || replace(replace(replace(?, '\', '\\'), '%', '\%'), '_', '\_') || '%'`, f.Source).
		Order("id DESC")
	if f.Pane != "" {
		q = q.Where("pane = ?", f.Pane)
	}
	if f.Important {
		q = q.Where("important")
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", f.Since)
	}
	var ids []int64
	if err := q.Scan(context.Background(), &ids); err != nil {
		t.Fatalf("reference: %v", err)
	}
	return ids
}

// walkFirehose pages through f from the newest row to the oldest (or, with
// backward, from the oldest to the newest) and returns the ids newest first.
func walkFirehose(t *testing.T, s *db.Store, f db.FirehoseFilter, limit int, backward bool) []int64 {
	t.Helper()
	var pages [][]int64
	p := db.Page{Limit: limit, Backward: backward}
	for n := 0; ; n++ {
		if n > 2000 {
			t.Fatalf("more than %d pages", n)
		}
		rows, more, err := s.ListFirehose(context.Background(), f, p)
		if err != nil {
			t.Fatalf("page %+v: %v", p, err)
		}
		if len(rows) > limit || (more && len(rows) < limit) {
			t.Fatalf("page %+v: %d rows, more %v", p, len(rows), more)
		}
		ids := idsOf(rows, func(r db.FirehoseMessage) int64 { return r.ID })
		pages = append(pages, ids)
		if !more {
			break
		}
		if backward {
			p.Before = ids[0]
		} else {
			p.After = ids[len(ids)-1]
		}
	}
	if backward {
		slices.Reverse(pages)
	}
	return slices.Concat(pages...)
}

func TestListFirehoseSourceAgreesWithILIKEAtHighCardinality(t *testing.T) {
	t.Parallel()
	bdb := manySources(t)
	ctx := context.Background()
	var groups int
	if err := bdb.NewRaw("SELECT count(*) FROM firehose_source_groups").Scan(ctx, &groups); err != nil {
		t.Fatal(err)
	}
	if groups < 30_000 {
		t.Fatalf("%d source groups, want tens of thousands", groups)
	}
	// since values: the newest third of the added rows (the id-order
	// branch of the since gate), and the newest few hundred (the recent
	// branch).
	sinceMany := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(2 * manySourcesRows / 3 * 20 * time.Second)
	var sinceFew time.Time
	if err := bdb.NewRaw("SELECT created_at FROM firehose_messages ORDER BY created_at DESC OFFSET ? LIMIT 1", db.SinceWindow/2).Scan(ctx, &sinceFew); err != nil {
		t.Fatal(err)
	}
	filters := []db.FirehoseFilter{
		{Source: "zzzq"},                      // nothing
		{Source: "zq"},                        // two letters: only the moved rows
		{Source: "movedzq1", Important: true}, // moved by upserts, case-insensitive
		{Source: "cftc"},                      // rare, seeded by COPY
		{Source: "coin"},                      // thousands of sources
		{Source: "COIN", Pane: db.PaneTwitter, Important: true},
		{Source: "e", Pane: db.PaneNews},    // one letter, moved by UPDATE of the pane
		{Source: "tw:", Pane: db.PaneBlogs}, // every added source of a pane
		{Source: "a_b"},                     // _ literal: not tw:axb
		{Source: "a%b"},                     // % literal: not tw:a_b
		{Source: "%"},
		{Source: `\`},
		{Source: "ärgerécOLE"},    // case-insensitive beyond ASCII
		{Source: "whalesignals1"}, // a few accounts
		{Source: "coin", Since: sinceMany},
		{Source: "coin", Pane: db.PaneTwitter, Since: sinceFew},
		{Source: "zzzq", Since: sinceMany},
		{Source: "o", Important: true, Since: sinceMany}, // most sources
	}
	base := db.NewStore(bdb)
	stores := []struct {
		name string
		s    *db.Store
	}{
		{"defaults", base},
		// Few groups read one by one, a short walk: the walk fills some
		// pages, and falls back to the groups on the others.
		{"walk of 300 rows beyond 2 groups", base.WithSourceSearchLimits(2, 300)},
		{"walk of 40 rows beyond 1 group", base.WithSourceSearchLimits(1, 40).WithSinceBoundWindow(50)},
	}
	for _, f := range filters {
		want := ilikeIDs(t, bdb, f)
		limit := 100
		if len(want) < 60 {
			limit = 3
		}
		for _, st := range stores {
			for _, backward := range []bool{false, true} {
				name := fmt.Sprintf("%s/filter=%+v/backward=%v", st.name, f, backward)
				got := walkFirehose(t, st.s, f, limit, backward)
				if !slices.Equal(got, want) {
					t.Errorf("%s: got %d ids, want %d (first difference at %d)", name, len(got), len(want), firstDiff(got, want))
				}
			}
		}
	}
}

// firstDiff returns the first index at which a and b differ.
func firstDiff(a, b []int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestFirehoseSourceGroupsFollowWriters checks that every (source, pane,
// important) of the firehose has its row in firehose_source_groups after
// each kind of writer, and that TRUNCATE (seed --reset) empties it.
func TestFirehoseSourceGroupsFollowWriters(t *testing.T) {
	t.Parallel()
	bdb := manySources(t)
	ctx := context.Background()
	missing := func() int {
		var n int
		err := bdb.NewRaw(`SELECT count(*) FROM (SELECT DISTINCT source, pane, important FROM firehose_messages) m
WHERE NOT EXISTS (SELECT 1 FROM firehose_source_groups g WHERE (g.source, g.pane, g.important) = (m.source, m.pane, m.important))`).Scan(ctx, &n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := missing(); n != 0 {
		t.Errorf("after COPY, INSERT, import, UPDATE, DELETE: %d groups missing", n)
	}
	if _, err := bdb.ExecContext(ctx, "TRUNCATE firehose_messages"); err != nil {
		t.Fatal(err)
	}
	var groups int
	if err := bdb.NewRaw("SELECT count(*) FROM firehose_source_groups").Scan(ctx, &groups); err != nil {
		t.Fatal(err)
	}
	if groups != 0 {
		t.Errorf("after TRUNCATE: %d groups, want 0", groups)
	}
	if _, err := bdb.ExecContext(ctx, `INSERT INTO firehose_messages (id, pane, source, created_at) VALUES (1, 'wire', 'sec', now())`); err != nil {
		t.Fatal(err)
	}
	rows, _, err := db.NewStore(bdb).ListFirehose(ctx, db.FirehoseFilter{Source: "SE"}, db.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := idsOf(rows, func(r db.FirehoseMessage) int64 { return r.ID }); !slices.Equal(got, []int64{1}) || missing() != 0 {
		t.Errorf("after TRUNCATE and INSERT: got %v, want [1]; %d groups missing", got, missing())
	}
}

// TestFirehoseSourceSearchWorkFollowsMatches checks, by the shared buffers
// its statement touches (not by time: a busy machine changes time, not
// buffers), that searching a rare or absent substring among tens of
// thousands of sources reads about as much as its matches need, not a
// page or more per source.
func TestFirehoseSourceSearchWorkFollowsMatches(t *testing.T) {
	t.Parallel()
	bdb := manySources(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	// A per-group walk of ~35,000 groups touches over 100,000 buffers; the
	// trigram lookup of a few groups and their pages, some dozens, a few
	// index descents per group in each partition of the firehose, and the
	// heap pages of a page of rows (more as rows gain columns). The bound
	// tells the hundreds from the hundred thousand.
	var partitions int
	if err := bdb.NewRaw("SELECT count(*) FROM pg_inherits WHERE inhparent = 'firehose_messages'::regclass").Scan(ctx, &partitions); err != nil {
		t.Fatal(err)
	}
	maxBuffers := 500 + 40*partitions
	tests := []struct {
		name string
		f    db.FirehoseFilter
		p    db.Page
	}{
		{"absent", db.FirehoseFilter{Source: "zzzq"}, db.Page{Limit: 50}},
		{"absent in a pane", db.FirehoseFilter{Source: "zzzq", Pane: db.PaneTwitter}, db.Page{Limit: 50}},
		{"absent, important", db.FirehoseFilter{Source: "zzzq", Important: true}, db.Page{Limit: 50}},
		{"rare", db.FirehoseFilter{Source: "cftc"}, db.Page{Limit: 50}},
		{"rare, next page", db.FirehoseFilter{Source: "movedzq"}, db.Page{Limit: 50, After: 200020000}},
		{"rare, backward", db.FirehoseFilter{Source: "cftc"}, db.Page{Limit: 50, Backward: true}},
		{"one account", db.FirehoseFilter{Source: "whalesignals12"}, db.Page{Limit: 50}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out []string
			query := s.FirehoseSQL(tt.f, tt.p)
			if err := bdb.NewRaw("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+query).Scan(ctx, &out); err != nil {
				t.Fatal(err)
			}
			var plans []struct {
				Plan struct {
					planNode
					Hit  int `json:"Shared Hit Blocks"`
					Read int `json:"Shared Read Blocks"`
				} `json:"Plan"`
			}
			text := strings.Join(out, "\n")
			if err := json.Unmarshal([]byte(text), &plans); err != nil || len(plans) != 1 {
				t.Fatalf("decode plan: %v", err)
			}
			got := plans[0].Plan.Hit + plans[0].Plan.Read
			t.Logf("%d buffers", got)
			if got > maxBuffers {
				t.Errorf("statement touched %d buffers, want at most %d; plan:\n%s", got, maxBuffers, text)
			}
			trigram := false
			plans[0].Plan.walk(func(n planNode) { trigram = trigram || n.IndexName == "firehose_source_groups_source_trgm_idx" })
			if !trigram {
				t.Errorf("the groups are not looked up through their trigram index; plan:\n%s", text)
			}
		})
	}
}
