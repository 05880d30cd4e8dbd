package db_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// referencePage answers page p of table, filtered by where, with the plainest
// SQL: the ids newest first, and whether more rows follow in p's direction.
// The store's answers are compared with it.
func referencePage(t *testing.T, bdb *bun.DB, table string, where func(*bun.SelectQuery) *bun.SelectQuery, p db.Page) (ids []int64, more bool) {
	t.Helper()
	q := where(bdb.NewSelect().Table(table).Column("id"))
	if p.Backward {
		if p.Before > 0 {
			q = q.Where("id > ?", p.Before)
		}
		q = q.Order("id ASC")
	} else {
		if p.After > 0 {
			q = q.Where("id < ?", p.After)
		}
		q = q.Order("id DESC")
	}
	if err := q.Limit(int64(p.Limit)+1).Scan(context.Background(), &ids); err != nil {
		t.Fatalf("reference page: %v", err)
	}
	if more = len(ids) > p.Limit; more {
		ids = ids[:p.Limit]
	}
	if p.Backward {
		slices.Reverse(ids)
	}
	return ids, more
}

// sinceBounds returns since values on both sides of the store's recent-rows
// window: the created_at of the row k-th newest for several k, one in the
// future and one before everything.
func sinceBounds(t *testing.T, bdb *bun.DB, table string) []time.Time {
	t.Helper()
	var out []time.Time
	for _, k := range []int{0, 7, db.SinceWindow - 1, db.SinceWindow, db.SinceWindow + 1, 2 * db.SinceWindow} {
		var ts []time.Time
		err := bdb.NewSelect().Table(table).Column("created_at").Order("created_at DESC").Offset(int64(k)).Limit(1).
			Scan(context.Background(), &ts)
		if err != nil {
			t.Fatalf("since bound: %v", err)
		}
		if len(ts) == 1 {
			out = append(out, ts[0])
		}
	}
	return append(out, time.Now().AddDate(1, 0, 0), time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
}

// boundWindows are the since bound windows the agreement tests run with:
// the store's own (0), larger than the test tables, and small enough that
// both of its sides are reached (see db.sinceSQL).
var boundWindows = []int{0, 50}

// pagesToTry are first, middle and backward pages of several sizes.
func pagesToTry(mid int64) []db.Page {
	return []db.Page{
		{Limit: 1}, {Limit: 50}, {Limit: 100},
		{Limit: 20, After: mid}, {Limit: 20, Backward: true}, {Limit: 20, Backward: true, Before: mid},
	}
}

func idsOf[T any](rows []T, id func(T) int64) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

func TestListPostsAgreesWithPlainSQL(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	var mid int64
	if err := bdb.NewRaw("SELECT id FROM posts ORDER BY id LIMIT 1 OFFSET (SELECT count(*) / 2 FROM posts)").Scan(ctx, &mid); err != nil {
		t.Fatal(err)
	}
	var source string
	if err := bdb.NewRaw("SELECT source FROM posts GROUP BY source ORDER BY count(*), source LIMIT 1").Scan(ctx, &source); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"", source, "no such source"} {
		for _, since := range append([]time.Time{{}}, sinceBounds(t, bdb, "posts")...) {
			for _, p := range pagesToTry(mid) {
				for _, window := range boundWindows {
					name := fmt.Sprintf("source=%q since=%s page=%+v window=%d", src, since.Format(time.RFC3339Nano), p, window)
					rows, more, err := s.WithSinceBoundWindow(window).ListPosts(ctx, db.PostFilter{Source: src, Since: since}, p)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					want, wantMore := referencePage(t, bdb, "posts", func(q *bun.SelectQuery) *bun.SelectQuery {
						if src != "" {
							q = q.Where("source = ?", src)
						}
						if !since.IsZero() {
							q = q.Where("created_at >= ?", since)
						}
						return q
					}, p)
					if got := idsOf(rows, func(r db.Post) int64 { return r.ID }); !slices.Equal(got, want) || more != wantMore {
						t.Errorf("%s: got %v (more %v), want %v (more %v)", name, got, more, want, wantMore)
					}
				}
			}
		}
	}
}

func TestListFirehoseAgreesWithPlainSQL(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	var mid int64
	if err := bdb.NewRaw("SELECT id FROM firehose_messages ORDER BY id LIMIT 1 OFFSET (SELECT count(*) / 2 FROM firehose_messages)").Scan(ctx, &mid); err != nil {
		t.Fatal(err)
	}
	filters := []db.FirehoseFilter{
		{},
		{Pane: db.PaneBlogs},
		{Important: true},
		{Pane: db.PaneNews, Important: true},
		{Source: "c"},    // one letter: no trigram could serve it
		{Source: "coin"}, // several sources
		{Source: "COIN"}, // case-insensitive
		{Source: "zz"},   // nothing
		{Source: "_"},    // a literal underscore, not a wildcard
		{Source: "o", Pane: db.PaneTwitter, Important: true},
	}
	for _, base := range filters {
		for _, since := range append([]time.Time{{}}, sinceBounds(t, bdb, "firehose_messages")...) {
			for _, p := range pagesToTry(mid) {
				for _, window := range boundWindows {
					f := base
					f.Since = since
					name := fmt.Sprintf("filter=%+v page=%+v window=%d", f, p, window)
					rows, more, err := s.WithSinceBoundWindow(window).ListFirehose(ctx, f, p)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					want, wantMore := referencePage(t, bdb, "firehose_messages", func(q *bun.SelectQuery) *bun.SelectQuery {
						if f.Pane != "" {
							q = q.Where("pane = ?", f.Pane)
						}
						if f.Important {
							q = q.Where("important")
						}
						if f.Source != "" {
							q = q.Where("strpos(lower(source), lower(?)) > 0", f.Source)
						}
						if !since.IsZero() {
							q = q.Where("created_at >= ?", since)
						}
						return q
					}, p)
					if got := idsOf(rows, func(r db.FirehoseMessage) int64 { return r.ID }); !slices.Equal(got, want) || more != wantMore {
						t.Errorf("%s: got %v (more %v), want %v (more %v)", name, got, more, want, wantMore)
					}
				}
			}
		}
	}
}

func TestListPostsOfWeeksAgreesWithPlainSQL(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	var newest time.Time
	if err := bdb.NewRaw("SELECT max(created_at) FROM posts").Scan(ctx, &newest); err != nil {
		t.Fatal(err)
	}
	day := newest.UTC().Truncate(24 * time.Hour)
	monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	var mid int64
	if err := bdb.NewRaw("SELECT id FROM posts WHERE created_at >= ? ORDER BY id LIMIT 1 OFFSET 5", monday).Scan(ctx, &mid); err != nil {
		t.Fatal(err)
	}
	var pages []db.WeekPage
	for _, p := range pagesToTry(mid) {
		for w := range 3 {
			from := monday.AddDate(0, 0, -7*w)
			pages = append(pages,
				db.WeekPage{From: from, To: from.AddDate(0, 0, 7), Page: p},                  // an ISO week
				db.WeekPage{From: from.AddDate(0, 0, 2), To: from.AddDate(0, 0, 9), Page: p}, // Wednesday to Wednesday
				db.WeekPage{From: from.Add(time.Hour), To: from.AddDate(0, 0, 7), Page: p},   // not from midnight
				db.WeekPage{From: from, To: from.AddDate(0, 0, 6), Page: p},                  // six days
			)
		}
	}
	got, err := s.ListPostsOfWeeks(ctx, pages)
	if err != nil {
		t.Fatal(err)
	}
	for i, wp := range pages {
		want, wantMore := referencePage(t, bdb, "posts", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("created_at >= ? AND created_at < ?", wp.From, wp.To)
		}, wp.Page)
		if ids := idsOf(got[i].Posts, func(r db.Post) int64 { return r.ID }); !slices.Equal(ids, want) || got[i].More != wantMore {
			t.Errorf("week %s..%s page %+v: got %v (more %v), want %v (more %v)",
				wp.From, wp.To, wp.Page, ids, got[i].More, want, wantMore)
		}
	}
}
