package seed

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// searchIndex is a GIN index of posts or firehose_messages (coins and
// full text, migration 20261124200001_coins_search) and its definition.
type searchIndex struct{ name, def string }

// dropSearchIndexes drops the GIN indexes of the item tables inside tx and
// returns their definitions, for rebuildSearchIndexes after the COPY: built
// once over the loaded rows, they cost a fraction of what maintaining them
// row by row costs (a to_tsvector and a posting-tree insert per row and
// index). The tables are empty here (new or truncated), and the seed's
// transaction already excludes other writers; dropping takes the tables'
// ACCESS EXCLUSIVE lock, as TRUNCATE does, until the seed commits. The
// definitions are read from the catalog, so they never drift from the
// migrations.
func dropSearchIndexes(ctx context.Context, tx pgx.Tx) ([]searchIndex, error) {
	rows, err := tx.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename IN ('posts', 'firehose_messages')
			AND indexdef LIKE '% USING gin %' ORDER BY indexname`)
	if err != nil {
		return nil, fmt.Errorf("seed: list search indexes: %w", err)
	}
	idx, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (searchIndex, error) {
		var s searchIndex
		return s, r.Scan(&s.name, &s.def)
	})
	if err != nil {
		return nil, fmt.Errorf("seed: list search indexes: %w", err)
	}
	for _, s := range idx {
		if _, err := tx.Exec(ctx, "DROP INDEX "+pgx.Identifier{s.name}.Sanitize()); err != nil {
			return nil, fmt.Errorf("seed: drop index %s: %w", s.name, err)
		}
	}
	return idx, nil
}

// rebuildSearchIndexes creates the indexes dropSearchIndexes dropped.
func rebuildSearchIndexes(ctx context.Context, tx pgx.Tx, idx []searchIndex) error {
	for _, s := range idx {
		if _, err := tx.Exec(ctx, s.def); err != nil {
			return fmt.Errorf("seed: rebuild index %s: %w", s.name, err)
		}
	}
	return nil
}
