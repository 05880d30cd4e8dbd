package db

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun/dialect/pgdialect"
)

// SearchFilter holds the filters that posts and the firehose share beyond
// their own: coins, full-text search and a newer-than id. Zero fields do
// not filter.
type SearchFilter struct {
	// Coins keeps items that mention any of these tickers (upper case).
	Coins []string
	// Query keeps items matching this websearch_to_tsquery text (words,
	// "quoted phrases", -excluded, or).
	Query string
	// SinceID keeps items with an id larger than it.
	SinceID int64
	// CollapseStory keeps only the first item of each story among the
	// items the other filters keep: a page never shows a second item of a
	// story, and a walk over every page shows each story once, whatever
	// the page boundaries (the condition holds for the row alone, not for
	// the page). In a list the first item is the one with the smallest id;
	// in a stream, the first stored (the smallest stream position at
	// insert), since a stream sends items in that order and cannot take
	// back an item it sent when an item of the same story with a smaller
	// id commits later.
	CollapseStory bool

	// siblings writes the list's other filters on a sibling row (alias),
	// for CollapseStory; set by the list and stream statements.
	siblings func(q *sqlBuilder, alias string)
	table    string
	// streamOrder makes CollapseStory keep the first item in stream order
	// rather than in id order; set by streamWhere.
	streamOrder bool

	// coinsNot excludes items about any of these tickers: the branch of
	// one ticker in coinBranches leaves out the items of the tickers
	// before it, which their own branches return.
	coinsNot []string

	// window keeps the items of some months of created_at (the
	// firehose's months a page reads, see firehosewindow.go); nil: all.
	window timeWindow
}

// where writes the filter's conditions on alias. The full-text condition
// reads the stored document, the fts column that triggers fill on write
// (migration 20261124300001_fts_columns): it is what posts_fts_col_idx and
// firehose_fts_col_idx index, and a row tested on a walk in id order costs
// a read of it, never a to_tsvector.
func (f SearchFilter) where(q *sqlBuilder, alias string) {
	if f.Query != "" {
		q.add(" AND "+alias+".fts @@ websearch_to_tsquery('english'::regconfig, ?)", f.Query)
	}
	if f.SinceID > 0 {
		q.add(" AND "+alias+".id > ?", f.SinceID)
	}
	f.window.write(q, alias)
	if f.CollapseStory && f.siblings != nil && f.streamOrder {
		// A sibling stored before the row: its position at insert, which
		// an update keeps in inserted_pos, is smaller. Every such sibling
		// lies below the stream's bound with the row, so the answer is
		// final once the row can be read, on a resume as live. One range
		// of the story index (story_id, created_at, id), which carries the
		// positions.
		q.add(" AND NOT EXISTS (SELECT 1 FROM " + f.table + " c WHERE c.story_id = " + alias + ".story_id" +
			" AND coalesce(c.inserted_pos, c.stream_pos) < coalesce(" + alias + ".inserted_pos, " + alias + ".stream_pos)")
		f.siblings(q, "c")
		q.add(")")
	} else if f.CollapseStory && f.siblings != nil {
		// One probe of the story index (story_id, id): the siblings with a
		// smaller id come first, and the first that matches the filters
		// ends the probe.
		q.add(" AND NOT EXISTS (SELECT 1 FROM " + f.table + " c WHERE c.story_id = " + alias + ".story_id AND c.id < " + alias + ".id")
		f.siblings(q, "c")
		q.add(")")
	}
}

// collapse prepares f's CollapseStory for the rows of table, whose other
// filters other writes on a sibling row.
func (f *SearchFilter) collapse(table string, other func(q *sqlBuilder, alias string)) {
	if !f.CollapseStory {
		return
	}
	g := *f
	f.table = table
	f.siblings = func(q *sqlBuilder, alias string) {
		other(q, alias)
		if g.Query != "" {
			q.add(" AND "+alias+".fts @@ websearch_to_tsquery('english'::regconfig, ?)", g.Query)
		}
		if g.SinceID > 0 {
			q.add(" AND "+alias+".id > ?", g.SinceID)
		}
		if tickers := uniqueTickers(g.Coins); len(tickers) > 0 {
			q.add(" AND "+alias+".coins && ?::text[]", pgdialect.Array(tickers))
		}
	}
}

// streamWhere writes the filter's conditions on alias for a read of a
// stream, which walks a range of stream positions, not ids: the coins
// condition is one probe of the side table side per row of the range.
func (f SearchFilter) streamWhere(q *sqlBuilder, alias, side string) {
	f.streamOrder = true
	f.where(q, alias)
	if tickers := uniqueTickers(f.Coins); len(tickers) > 0 {
		q.add(" AND EXISTS (SELECT 1 FROM "+side+" k WHERE k.ticker = ANY(?::text[]) AND k.id = "+alias+".id)",
			pgdialect.Array(tickers))
	}
}

// Side tables of the coins filter: one row per (ticker, item id), primary
// key (ticker, id), kept by triggers (migration 20261124400001).
const (
	postCoins     = "post_coins"
	firehoseCoins = "firehose_coins"
)

// coins writes the coins condition on alias, whose side table is side, as
// semi-joins on the side table, bounded by the page's keyset bound: with
// one ticker the planner chooses by the ticker's frequency between reading
// its range of the side table newest first, the items joined back by id (a
// rare ticker: the work follows the page), and the id order of the other
// filters with one side-table probe per row (a common ticker), or a merge
// of both orders. Several tickers are one branch each (coinBranches), so
// here Coins holds at most one; coinsNot is probed per row.
func (f SearchFilter) coins(q *sqlBuilder, alias, side string, p Page) {
	if len(f.Coins) == 0 {
		return
	}
	cmp, _, bound := p.dir()
	// One ticker is an equality, so that the planner knows the side rows
	// of one ticker unique by id and may read them in id order.
	if tickers := uniqueTickers(f.Coins); len(tickers) == 1 {
		q.add(" AND EXISTS (SELECT 1 FROM "+side+" k WHERE k.ticker = ? AND k.id = "+alias+".id", tickers[0])
	} else {
		q.add(" AND EXISTS (SELECT 1 FROM "+side+" k WHERE k.ticker = ANY(?::text[]) AND k.id = "+alias+".id", pgdialect.Array(tickers))
	}
	if bound > 0 {
		q.add(" AND k.id "+cmp+" ?", bound)
	}
	q.add(")")
	if len(f.coinsNot) > 0 {
		q.add(" AND NOT EXISTS (SELECT 1 FROM "+side+" k WHERE k.ticker = ANY(?::text[]) AND k.id = "+alias+".id)",
			pgdialect.Array(f.coinsNot))
	}
}

// coinBranches writes the page of f for several tickers as one branch per
// ticker, each the page of one ticker (written by branch) without the items
// of the tickers before it, so that no item appears twice; the branches'
// pages, each in id order, are merged (a Merge Append) and cut to the page.
// It reports false, writing nothing, for at most one ticker.
func coinBranches(q *sqlBuilder, f SearchFilter, p Page, branch func(SearchFilter)) bool {
	tickers := uniqueTickers(f.Coins)
	if len(tickers) <= 1 {
		return false
	}
	q.add("SELECT u.* FROM (")
	for i, t := range tickers {
		if i > 0 {
			q.add("\nUNION ALL\n")
		}
		b := f
		b.Coins, b.coinsNot = []string{t}, tickers[:i]
		q.add("(")
		branch(b)
		q.add(")")
	}
	q.add(") u")
	p.orderLimit(q, "u")
	return true
}

// uniqueTickers returns tickers sorted, without repeats.
func uniqueTickers(tickers []string) []string {
	tickers = slices.Clone(tickers)
	slices.Sort(tickers)
	return slices.Compact(tickers)
}

// Coins returns every ticker that occurs in posts or firehose messages,
// sorted: each is a coins filter that may match. It reads coin_tickers,
// which triggers keep (one row per ticker), never the items.
func (s *Store) Coins(ctx context.Context) ([]string, error) {
	tickers := []string{}
	if err := s.db.NewRaw(`SELECT ticker FROM coin_tickers ORDER BY ticker COLLATE "C"`).Scan(ctx, &tickers); err != nil {
		return nil, fmt.Errorf("coins: %w", err)
	}
	return tickers, nil
}
