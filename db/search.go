package db

import (
	"context"
	"fmt"

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
}

// postsDocument and firehoseDocument are the indexed expressions of
// posts_fts_idx and firehose_fts_idx, on the alias %[1]s: a query must
// write them exactly so to use the index.
const (
	postsDocument    = "to_tsvector('english'::regconfig, %[1]s.body)"
	firehoseDocument = "to_tsvector('english'::regconfig, coalesce(%[1]s.title, '') || ' ' || coalesce(%[1]s.body, '') || ' ' || coalesce(%[1]s.summary_ai, ''))"
)

// where writes the filter's conditions on alias, whose full-text document
// is the expression document (postsDocument or firehoseDocument).
func (f SearchFilter) where(q *sqlBuilder, alias, document string) {
	if len(f.Coins) > 0 {
		q.add(" AND "+alias+".coins && ?::text[]", pgdialect.Array(f.Coins))
	}
	if f.Query != "" {
		q.add(" AND "+fmt.Sprintf(document, alias)+" @@ websearch_to_tsquery('english'::regconfig, ?)", f.Query)
	}
	if f.SinceID > 0 {
		q.add(" AND "+alias+".id > ?", f.SinceID)
	}
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
