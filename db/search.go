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

// where writes the filter's conditions on alias. The full-text condition
// reads the stored document, the fts column that triggers fill on write
// (migration 20261124300001_fts_columns): it is what posts_fts_col_idx and
// firehose_fts_col_idx index, and a row tested on a walk in id order costs
// a read of it, never a to_tsvector.
func (f SearchFilter) where(q *sqlBuilder, alias string) {
	if len(f.Coins) > 0 {
		q.add(" AND "+alias+".coins && ?::text[]", pgdialect.Array(f.Coins))
	}
	if f.Query != "" {
		q.add(" AND "+alias+".fts @@ websearch_to_tsquery('english'::regconfig, ?)", f.Query)
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
