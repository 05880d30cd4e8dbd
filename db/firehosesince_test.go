package db_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db"
)

// walkIDs walks every page of f, limit rows a page, newest first.
func walkIDs(t *testing.T, s *db.Store, f db.FirehoseFilter, limit int) []int64 {
	t.Helper()
	ids := []int64{}
	p := db.Page{Limit: limit}
	for range 1000 {
		rows, more, err := s.ListFirehose(context.Background(), f, p)
		if err != nil {
			t.Fatalf("list firehose %+v %+v: %v", f, p, err)
		}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		if !more {
			return ids
		}
		p.After = rows[len(rows)-1].ID
	}
	t.Fatalf("%+v: no last page after 1000 pages", f)
	return nil
}

// TestSinceFromTheOldestIsExact checks the pages of a since at or before the
// oldest message (everything kept), which skip the recent-rows gate: they
// hold every message, and still none older than since when an older message
// arrives after the oldest time was read.
func TestSinceFromTheOldestIsExact(t *testing.T) {
	t.Parallel()
	bdb := emptyFirehose(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	start := time.Date(2026, 8, 20, 0, 0, 0, 0, time.UTC)
	at := map[int64]time.Time{}
	coins := map[int64]string{}
	for id := int64(1); id <= 40; id++ {
		at[id] = start.Add(time.Duration(id) * 53 * time.Hour) // into October
		if id%3 == 0 {
			coins[id] = "BTC"
		}
	}
	addMessages(t, bdb, at, coins)
	oldest := at[1]

	since := oldest.Add(-time.Hour)
	if sql := s.FirehoseSQL(db.FirehoseFilter{Since: since}, db.Page{Limit: 7}); strings.Contains(sql, "recent AS") {
		t.Errorf("since before the oldest message runs the recent-rows gate:\n%s", sql)
	}
	if sql := s.FirehoseSQL(db.FirehoseFilter{Since: at[20]}, db.Page{Limit: 7}); !strings.Contains(sql, "recent AS") {
		t.Errorf("since in the middle skips the recent-rows gate:\n%s", sql)
	}
	filters := []db.FirehoseFilter{
		{}, {Source: "sr"}, {SearchFilter: db.SearchFilter{Coins: []string{"BTC"}}}, {Pane: db.PaneNews},
	}
	for _, f := range filters {
		all := walkIDs(t, s, f, 7)
		for _, from := range []time.Time{since, oldest} {
			g := f
			g.Since = from
			if got := walkIDs(t, s, g, 7); !slices.Equal(got, all) {
				t.Errorf("%+v: %v, want every message %v", g, got, all)
			}
		}
	}

	// A message older than since arrives; the oldest time read above is
	// still the one the store uses.
	addMessages(t, bdb, map[int64]time.Time{100: oldest.Add(-2 * time.Hour)}, map[int64]string{100: "BTC"})
	for _, f := range filters {
		g := f
		g.Since = since
		var want []int64
		q := bdb.NewSelect().Table("firehose_messages").Column("id").Where("created_at >= ?", since).OrderExpr("id DESC")
		if f.Source != "" {
			q = q.Where("source ILIKE ?", "%"+f.Source+"%")
		}
		if f.Pane != "" {
			q = q.Where("pane = ?", string(f.Pane))
		}
		if len(f.Coins) > 0 {
			q = q.Where("? = ANY(coins)", f.Coins[0])
		}
		if err := q.Scan(ctx, &want); err != nil {
			t.Fatal(err)
		}
		if got := walkIDs(t, s, g, 7); !slices.Equal(got, want) {
			t.Errorf("%+v after an older message arrived: %v, want %v", g, got, want)
		}
		if got := walkIDs(t, s, f, 7); !slices.Contains(got, 100) {
			t.Errorf("%+v without since: %v, want the older message 100 too", f, got)
		}
	}
}

// TestStreamStartIsExact checks a firehose stream started with since, by
// either of StreamStart's reads: the start is the plain aggregate's (the
// smallest position at insert of the rows created since), and the stream
// sends exactly the rows created since, in position order, an updated one
// at its new position, and no older message imported later.
func TestStreamStartIsExact(t *testing.T) {
	t.Parallel()
	bdb := emptyFirehose(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	start := time.Date(2026, 8, 20, 0, 0, 0, 0, time.UTC)
	first, second := map[int64]time.Time{}, map[int64]time.Time{}
	for id := int64(1); id <= 40; id++ {
		at := start.Add(time.Duration(id) * 53 * time.Hour) // into October
		if id <= 30 {
			first[id] = at
		} else {
			second[id] = at
		}
	}
	// Two statements: positions follow neither ids nor times. Then the
	// first-stored row of the newest ten is updated: its position at
	// insert is the smallest of the rows since its time.
	addMessages(t, bdb, first, nil)
	addMessages(t, bdb, second, nil)
	var firstStored int64
	if err := bdb.NewRaw("SELECT id FROM firehose_messages WHERE id > 30 ORDER BY stream_pos LIMIT 1").Scan(ctx, &firstStored); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{5, firstStored} {
		if _, err := bdb.ExecContext(ctx, "UPDATE firehose_messages SET title = 'edited' WHERE id = ?", id); err != nil {
			t.Fatal(err)
		}
	}
	oldest := first[1]

	walk := func(s *db.Store, since time.Time) []int64 {
		t.Helper()
		after, err := s.StreamStart(ctx, "firehose", since)
		if err != nil {
			t.Fatal(err)
		}
		bound, _, err := s.StreamBound(ctx, "firehose")
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for range 100 {
			rows, more, err := s.StreamFirehose(ctx, db.FirehoseFilter{Since: since}, db.StreamRange{After: after, Bound: bound, Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				ids = append(ids, r.ID)
				after = r.StreamPos
			}
			if !more {
				return ids
			}
		}
		t.Fatalf("since %s: no end after 100 reads", since)
		return nil
	}
	want := func(since time.Time) (ids []int64, start int64) {
		t.Helper()
		if err := bdb.NewRaw(`SELECT coalesce(array_agg(id ORDER BY stream_pos), '{}'),
			coalesce(min(coalesce(inserted_pos, stream_pos)), 9223372036854775807) - 1
			FROM firehose_messages WHERE created_at >= ?`, since).Scan(ctx, pgdialect.Array(&ids), &start); err != nil {
			t.Fatal(err)
		}
		return ids, start
	}

	// Both reads: the recent rows (all 40 fit), and the indexes in
	// position order (at most 1 or 5 recent rows read first).
	stores := map[string]*db.Store{"recent rows": s, "indexed": s.WithStreamStartRows(1), "indexed after 5": s.WithStreamStartRows(5)}
	for name, s := range stores {
		for _, since := range []time.Time{oldest.Add(-time.Hour), oldest, first[12], second[31], second[35], second[40].Add(time.Hour)} {
			w, wantStart := want(since)
			if got, err := s.StreamStart(ctx, "firehose", since); err != nil || got != wantStart {
				t.Errorf("%s, since %s: start %d, %v; want %d", name, since, got, err, wantStart)
			}
			if got := walk(s, since); !slices.Equal(got, w) {
				t.Errorf("%s, since %s: stream sent %v, want %v", name, since, got, w)
			}
		}
	}
	// An older message imported later is not sent.
	before := oldest.Add(-time.Hour)
	addMessages(t, bdb, map[int64]time.Time{50: oldest.Add(-2 * time.Hour)}, nil)
	for name, s := range stores {
		if got := walk(s, before); slices.Contains(got, 50) || len(got) != len(first)+len(second) {
			t.Errorf("%s, since %s, after an older message: stream sent %v, want the 40 messages, not 50", name, before, got)
		}
	}
}
