package db_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// walkAll reads every page of a list forward (or backward) with keyset
// bounds and returns the ids in the order of the pages, newest first; it
// fails on a page that is empty while more were promised.
func walkAll(t *testing.T, limit int, backward bool, list func(db.Page) ([]int64, bool, error)) []int64 {
	t.Helper()
	var all []int64
	p := db.Page{Limit: limit, Backward: backward}
	for range 10_000 {
		ids, more, err := list(p)
		if err != nil {
			t.Fatalf("page %+v: %v", p, err)
		}
		if more && len(ids) == 0 {
			t.Fatalf("page %+v: empty, yet more promised", p)
		}
		if backward {
			all = append(slices.Clone(ids), all...)
		} else {
			all = append(all, ids...)
		}
		if !more {
			return all
		}
		if backward {
			p.Before = ids[0]
		} else {
			p.After = ids[len(ids)-1]
		}
	}
	t.Fatal("more than 10,000 pages")
	return nil
}

// referenceIDs is every id of table matching where, newest first, by the
// plainest SQL: no index-shaped condition, no limit.
func referenceIDs(t *testing.T, bdb *bun.DB, table, where string, args ...any) []int64 {
	t.Helper()
	var ids []int64
	if err := bdb.NewRaw("SELECT id FROM "+table+" WHERE "+where+" ORDER BY id DESC", args...).Scan(context.Background(), &ids); err != nil {
		t.Fatalf("reference: %v", err)
	}
	return ids
}

// searchCase is one combination of the shared filters.
type searchCase struct {
	coins   []string
	query   string
	sinceID int64
}

func (c searchCase) filter() db.SearchFilter {
	return db.SearchFilter{Coins: c.coins, Query: c.query, SinceID: c.sinceID}
}

// where is the plain SQL of c on a table whose text is document: coins by
// unnesting the array (not the && the store uses), the search by the
// same to_tsvector on the row.
func (c searchCase) where(document string) (string, []any) {
	w, args := "true", []any{}
	if len(c.coins) > 0 {
		w += " AND EXISTS (SELECT 1 FROM unnest(coins) AS c WHERE c = ANY(?::text[]))"
		args = append(args, pgdialect.Array(c.coins))
	}
	if c.query != "" {
		w += " AND to_tsvector('english', " + document + ") @@ websearch_to_tsquery('english', ?)"
		args = append(args, c.query)
	}
	if c.sinceID > 0 {
		w += " AND id > ?"
		args = append(args, c.sinceID)
	}
	return w, args
}

// searchCases are the filters the walking tests try: a common and a rare
// coin, any-of, an unknown ticker, words, a phrase, an exclusion, or, and
// since_id alone and combined.
func searchCases(t *testing.T, bdb *bun.DB, table string) []searchCase {
	t.Helper()
	ctx := context.Background()
	var common, rare string
	if err := bdb.NewRaw("SELECT c FROM "+table+", unnest(coins) c GROUP BY c ORDER BY count(*) DESC, c LIMIT 1").Scan(ctx, &common); err != nil {
		t.Fatalf("common coin: %v", err)
	}
	if err := bdb.NewRaw("SELECT c FROM "+table+", unnest(coins) c GROUP BY c ORDER BY count(*), c LIMIT 1").Scan(ctx, &rare); err != nil {
		t.Fatalf("rare coin: %v", err)
	}
	var second string
	if err := bdb.NewRaw("SELECT c FROM "+table+", unnest(coins) c GROUP BY c ORDER BY count(*) DESC, c LIMIT 1 OFFSET 1").Scan(ctx, &second); err != nil {
		t.Fatalf("second coin: %v", err)
	}
	var mid int64
	if err := bdb.NewRaw("SELECT id FROM "+table+" ORDER BY id LIMIT 1 OFFSET (SELECT count(*) * 9 / 10 FROM "+table+")").Scan(ctx, &mid); err != nil {
		t.Fatal(err)
	}
	return []searchCase{
		{coins: []string{common}},
		{coins: []string{rare}},
		{coins: []string{rare, common}},
		{coins: []string{second, rare, common, second}}, // items about several of them once each
		{coins: []string{"NOSUCHCOIN"}},
		{query: "bitcoin"},
		{query: `"spot bitcoin"`},
		{query: "bitcoin -ether"},
		{query: "solana or xrp"},
		{query: "the"}, // only a stop word: matches nothing
		{query: "etf", coins: []string{common}},
		{sinceID: mid},
		{sinceID: mid, coins: []string{common}},
		{sinceID: mid, query: "bitcoin"},
	}
}

func TestListPostsSearchWalksEveryPage(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	var source string
	if err := bdb.NewRaw("SELECT source FROM posts GROUP BY source ORDER BY count(*) DESC LIMIT 1").Scan(ctx, &source); err != nil {
		t.Fatal(err)
	}
	var since time.Time
	if err := bdb.NewRaw("SELECT created_at FROM posts ORDER BY created_at DESC OFFSET 1500 LIMIT 1").Scan(ctx, &since); err != nil {
		t.Fatal(err)
	}
	for _, c := range searchCases(t, bdb, "posts") {
		for _, src := range []string{"", source} {
			for _, sn := range []time.Time{{}, since} {
				for _, backward := range []bool{false, true} {
					name := fmt.Sprintf("%+v source=%q since=%v backward=%v", c, src, !sn.IsZero(), backward)
					f := db.PostFilter{Source: src, Since: sn, SearchFilter: c.filter()}
					got := walkAll(t, 37, backward, func(p db.Page) ([]int64, bool, error) {
						rows, more, err := s.ListPosts(ctx, f, p)
						return idsOf(rows, func(r db.Post) int64 { return r.ID }), more, err
					})
					w, args := c.where("body")
					if src != "" {
						w += " AND source = ?"
						args = append(args, src)
					}
					if !sn.IsZero() {
						w += " AND created_at >= ?"
						args = append(args, sn)
					}
					if want := referenceIDs(t, bdb, "posts", w, args...); !slices.Equal(got, want) {
						t.Errorf("%s: got %d ids %v, want %d ids %v", name, len(got), head(got), len(want), head(want))
					}
				}
			}
		}
	}
}

func TestListFirehoseSearchWalksEveryPage(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	var since time.Time
	if err := bdb.NewRaw("SELECT created_at FROM firehose_messages ORDER BY created_at DESC OFFSET 1500 LIMIT 1").Scan(ctx, &since); err != nil {
		t.Fatal(err)
	}
	const document = "coalesce(title, '') || ' ' || coalesce(body, '') || ' ' || coalesce(summary_ai, '')"
	type other struct {
		pane      db.Pane
		source    string
		important bool
		since     time.Time
	}
	others := []other{{}, {pane: db.PaneCrypto}, {source: "coin"}, {important: true}, {pane: db.PaneNews, source: "e", since: since}, {since: since}}
	for _, c := range searchCases(t, bdb, "firehose_messages") {
		for _, o := range others {
			for _, backward := range []bool{false, true} {
				name := fmt.Sprintf("%+v %+v backward=%v", c, o, backward)
				f := db.FirehoseFilter{Pane: o.pane, Source: o.source, Important: o.important, Since: o.since, SearchFilter: c.filter()}
				got := walkAll(t, 41, backward, func(p db.Page) ([]int64, bool, error) {
					rows, more, err := s.ListFirehose(ctx, f, p)
					return idsOf(rows, func(r db.FirehoseMessage) int64 { return r.ID }), more, err
				})
				w, args := c.where(document)
				if o.pane != "" {
					w += " AND pane = ?"
					args = append(args, string(o.pane))
				}
				if o.source != "" {
					w += " AND strpos(lower(source), lower(?)) > 0"
					args = append(args, o.source)
				}
				if o.important {
					w += " AND important"
				}
				if !o.since.IsZero() {
					w += " AND created_at >= ?"
					args = append(args, o.since)
				}
				if want := referenceIDs(t, bdb, "firehose_messages", w, args...); !slices.Equal(got, want) {
					t.Errorf("%s: got %d ids %v, want %d ids %v", name, len(got), head(got), len(want), head(want))
				}
			}
		}
	}
}

// TestSearchCasesAreNotEmpty keeps the walking tests honest: the seeded
// data gives most cases rows to page through.
func TestSearchCasesAreNotEmpty(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	for _, table := range []string{"posts", "firehose_messages"} {
		document := "body"
		if table == "firehose_messages" {
			document = "coalesce(title, '') || ' ' || coalesce(body, '') || ' ' || coalesce(summary_ai, '')"
		}
		nonEmpty := 0
		for _, c := range searchCases(t, bdb, table) {
			w, args := c.where(document)
			if len(referenceIDs(t, bdb, table, w, args...)) > 0 {
				nonEmpty++
			}
		}
		if nonEmpty < 9 {
			t.Errorf("%s: %d search cases match rows, want at least 9", table, nonEmpty)
		}
	}
}

func TestCoinsListsEveryTickerThatOccurs(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	got, err := s.Coins(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := bdb.NewRaw(`SELECT c FROM (SELECT unnest(coins) c FROM posts UNION SELECT unnest(coins) FROM firehose_messages) x GROUP BY c ORDER BY c COLLATE "C"`).Scan(ctx, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) < 5 || !slices.Equal(got, want) {
		t.Fatalf("coins: got %v, want %v", got, want)
	}
	// A writer's new ticker is listed at once, through the trigger.
	if _, err := bdb.ExecContext(ctx, `UPDATE posts SET coins = '{ZZZTEST}' WHERE id = (SELECT min(id) FROM posts)`); err != nil {
		t.Fatal(err)
	}
	got, err = s.Coins(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "ZZZTEST") {
		t.Errorf("coins after an update: %v lacks ZZZTEST", got)
	}
}

func head(ids []int64) []int64 {
	if len(ids) > 8 {
		return ids[:8]
	}
	return ids
}
