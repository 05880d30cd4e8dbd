package db_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
)

// lateFirehose fills an empty firehose with four months of messages whose
// ids grow with their time, each month in its own blocks of ids, and
// messages out of that order: late ones (an old month, an id among the
// newest), an early one (the newest month, an old id) and one in the
// default partition. It returns the months' first ids.
func lateFirehose(t *testing.T, bdb *bun.DB) []int64 {
	t.Helper()
	ctx := context.Background()
	months := []time.Time{
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC),
	}
	for _, m := range months {
		if err := db.CreateFirehosePartition(ctx, bdb, m); err != nil {
			t.Fatal(err)
		}
	}
	type msg struct {
		id int64
		at time.Time
	}
	var msgs []msg
	var firsts []int64
	for k, m := range months {
		base := int64(k+1) * 1_000_000
		firsts = append(firsts, base)
		for i := int64(0); i < 90; i++ {
			msgs = append(msgs, msg{base + 3*i, m.Add(time.Duration(i) * 7 * time.Hour)})
		}
	}
	newest := firsts[3]
	for i := int64(0); i < 6; i++ {
		// Late: January and February, with ids among April's.
		msgs = append(msgs, msg{newest + 300 + 5*i, months[0].Add(time.Duration(i) * 24 * time.Hour)})
		msgs = append(msgs, msg{newest + 301 + 5*i, months[1].Add(time.Duration(i) * 24 * time.Hour)})
	}
	msgs = append(msgs,
		msg{firsts[0] + 1, months[3].Add(20 * 24 * time.Hour)},                // early: April with a January id
		msg{firsts[2] + 2, time.Date(2026, 7, 4, 0, 0, 0, 0, time.UTC)},       // no partition yet: the default
		msg{firsts[2] + 200_000, months[2].Add(3 * time.Hour)},                // March, alone in its block
		msg{firsts[1] + 3*45 + 1, months[0].Add(28*24*time.Hour + time.Hour)}, // January, among February's ids
	)
	panes := []string{"news", "crypto", "twitter"}
	coins := []string{"NULL", "ARRAY['BTC']", "ARRAY['ETH']", "ARRAY['BTC','SOL']", "NULL"}
	words := []string{"bitcoin rallies", "ether slips", "markets calm"}
	var values []string
	var args []any
	for i, m := range msgs {
		values = append(values, fmt.Sprintf("(?, '%s', ?, ?, ?, %t, %s)", panes[i%3], i%7 == 0, coins[i%5]))
		args = append(args, m.id, "src"+fmt.Sprint(i%4), words[i%3], m.at)
	}
	_, err := bdb.ExecContext(ctx, "INSERT INTO firehose_messages (id, pane, source, title, created_at, important, coins) VALUES "+
		strings.Join(values, ", "), args...)
	if err != nil {
		t.Fatalf("insert messages: %v", err)
	}
	if _, err := bdb.ExecContext(ctx, "ANALYZE firehose_messages"); err != nil {
		t.Fatal(err)
	}
	return firsts
}

// TestFirehosePagesAcrossMonthsWithLateMessages walks every page of several
// filters, both ways, over months whose ids overlap through late and early
// messages, and compares each page with plain SQL.
func TestFirehosePagesAcrossMonthsWithLateMessages(t *testing.T) {
	t.Parallel()
	bdb := emptyFirehose(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	firsts := lateFirehose(t, bdb)
	march := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	filters := []db.FirehoseFilter{
		{},
		{Pane: db.PaneTwitter},
		{Important: true},
		{Pane: db.PaneNews, Important: true},
		{Source: "src1"},
		{Since: march},
		{SearchFilter: db.SearchFilter{Coins: []string{"BTC"}}},
		{SearchFilter: db.SearchFilter{Coins: []string{"ETH", "SOL"}}},
		{SearchFilter: db.SearchFilter{Query: "bitcoin"}},
		{SearchFilter: db.SearchFilter{SinceID: firsts[2] + 30}},
		{Pane: db.PaneCrypto, SearchFilter: db.SearchFilter{Coins: []string{"BTC"}, SinceID: firsts[1]}},
	}
	reference := func(f db.FirehoseFilter, p db.Page) ([]int64, bool) {
		return referencePage(t, bdb, "firehose_messages", func(q *bun.SelectQuery) *bun.SelectQuery {
			if f.Pane != "" {
				q = q.Where("pane = ?", f.Pane)
			}
			if f.Important {
				q = q.Where("important")
			}
			if f.Source != "" {
				q = q.Where("strpos(lower(source), lower(?)) > 0", f.Source)
			}
			if !f.Since.IsZero() {
				q = q.Where("created_at >= ?", f.Since)
			}
			if len(f.Coins) > 0 {
				q = q.Where("coins && ?::text[]", "{"+strings.Join(f.Coins, ",")+"}")
			}
			if f.Query != "" {
				q = q.Where("fts @@ websearch_to_tsquery('english', ?)", f.Query)
			}
			if f.SinceID > 0 {
				q = q.Where("id > ?", f.SinceID)
			}
			return q
		}, p)
	}
	walk := func(step string) {
		t.Helper()
		for _, f := range filters {
			walkFilter(t, s, step, f, reference)
		}
	}
	walk("four months")
	// Retention drops January, late messages and all; its blocks go.
	if _, err := db.DropFirehoseBefore(ctx, bdb, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), io.Discard); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := bdb.NewRaw("SELECT count(*) FROM firehose_id_blocks WHERE month < '2026-02-01'").Scan(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d id blocks of the dropped month are left", left)
	}
	walk("after January was dropped")
}

// walkFilter walks every page of f, both ways and at several sizes, and
// compares each with reference.
func walkFilter(t *testing.T, s *db.Store, step string, f db.FirehoseFilter, reference func(db.FirehoseFilter, db.Page) ([]int64, bool)) {
	t.Helper()
	ctx := context.Background()
	for _, limit := range []int{1, 7, 40} {
		for _, backward := range []bool{false, true} {
			p := db.Page{Limit: limit, Backward: backward}
			pages := 0
			for {
				name := fmt.Sprintf("%s: filter=%+v page=%+v", step, f, p)
				rows, more, err := s.ListFirehose(ctx, f, p)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got := idsOf(rows, func(r db.FirehoseMessage) int64 { return r.ID })
				want, wantMore := reference(f, p)
				if !slices.Equal(got, want) || more != wantMore {
					t.Fatalf("%s: got %v (more %v), want %v (more %v)", name, got, more, want, wantMore)
				}
				if pages++; !more || pages > 500 {
					break
				}
				if backward {
					p.Before = got[0]
				} else {
					p.After = got[len(got)-1]
				}
			}
		}
	}
}

// TestFirehosePagesReadTheirMonths checks in the plans that a page in id
// order reads the partitions of the months its ids lie in, not all of them.
func TestFirehosePagesReadTheirMonths(t *testing.T) {
	t.Parallel()
	bdb := emptyFirehose(t)
	s := db.NewStore(bdb)
	firsts := lateFirehose(t, bdb)
	partitions := func(query string) []string {
		t.Helper()
		plan, _ := explain(t, bdb, query)
		var parts []string
		plan.walk(func(n planNode) {
			if n.Partition != "" && strings.HasPrefix(n.Partition, "firehose_messages_") && !slices.Contains(parts, n.Partition) {
				parts = append(parts, n.Partition)
			}
		})
		slices.Sort(parts)
		return parts
	}
	p5 := db.Page{Limit: 5}
	lateMonths := []string{"firehose_messages_2026m01", "firehose_messages_2026m02", "firehose_messages_2026m04"}
	march := []string{"firehose_messages_2026m03", "firehose_messages_default"}
	tests := []struct {
		name string
		f    db.FirehoseFilter
		p    db.Page
		want []string
	}{
		// The newest block is April's, with January's and February's late
		// messages: those months, not March.
		{"first page", db.FirehoseFilter{}, p5, lateMonths},
		{"pane", db.FirehoseFilter{Pane: db.PaneNews}, p5, lateMonths},
		{"important", db.FirehoseFilter{Important: true}, p5, lateMonths},
		{"coins", db.FirehoseFilter{SearchFilter: db.SearchFilter{Coins: []string{"BTC"}}}, p5, lateMonths},
		// Within March's first block: March, and the default partition
		// (its July message has an id there).
		{"deep page", db.FirehoseFilter{}, db.Page{Limit: 5, After: firsts[2] + 100}, march},
		{"deep page of a coin", db.FirehoseFilter{SearchFilter: db.SearchFilter{Coins: []string{"ETH"}}},
			db.Page{Limit: 5, After: firsts[2] + 100}, march},
		{"deep page of a word", db.FirehoseFilter{SearchFilter: db.SearchFilter{Query: "bitcoin"}},
			db.Page{Limit: 5, After: firsts[2] + 100}, march},
		{"deep page of a source", db.FirehoseFilter{Source: "src1"}, db.Page{Limit: 5, After: firsts[2] + 100}, march},
		// February's block holds a January message.
		{"since_id", db.FirehoseFilter{SearchFilter: db.SearchFilter{SinceID: firsts[1] + 3}}, db.Page{Limit: 5, Backward: true},
			[]string{"firehose_messages_2026m01", "firehose_messages_2026m02"}},
	}
	for _, tc := range tests {
		if got := partitions(s.FirehoseSQL(tc.f, tc.p)); !slices.Equal(got, tc.want) {
			t.Errorf("%s reads %v, want %v", tc.name, got, tc.want)
		}
	}
}
