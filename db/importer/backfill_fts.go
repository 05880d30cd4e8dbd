package importer

import (
	"context"
	"fmt"
	"io"

	"github.com/uptrace/bun"
)

// ftsTables are the tables BackfillFTS fills, with the SQL of each row's
// document: the functions the fts triggers call (migration
// 20261124300001_fts_columns), so the backfill and the writers store the
// same value.
var ftsTables = []struct{ name, document string }{
	{"posts", "posts_fts_document(t.body)"},
	{"firehose_messages", "firehose_fts_document(t.title, t.body, t.summary_ai)"},
}

// BackfillFTS stores the full-text document (the fts column) of every
// post and firehose message whose fts is NULL (written before the column
// existed), batch rows at a time in id order, each batch one UPDATE
// statement in its own transaction: it runs beside the service on
// millions of rows, holds row locks for one batch only, and can be stopped
// and run again. Until a row is filled, the q filter does not match it.
func BackfillFTS(ctx context.Context, bdb *bun.DB, batch int, progress io.Writer) (BackfillStats, error) {
	if batch < 1 {
		return BackfillStats{}, fmt.Errorf("backfill fts: batch %d: must be positive", batch)
	}
	var stats BackfillStats
	for _, t := range ftsTables {
		var last int64
		total := 0
		for {
			// b is the batch (the next ids with fts NULL, up the primary
			// key from the last batch); hi is its last id, 0 when none is
			// left.
			var n int
			var hi int64
			err := bdb.NewRaw("WITH b AS (SELECT id FROM "+t.name+" WHERE id > ? AND fts IS NULL ORDER BY id LIMIT ?),\n"+
				"u AS (UPDATE "+t.name+" AS t SET fts = "+t.document+" FROM b WHERE t.id = b.id AND t.fts IS NULL RETURNING t.id)\n"+
				"SELECT (SELECT count(*) FROM u), coalesce((SELECT max(id) FROM b), 0)", last, batch).Scan(ctx, &n, &hi)
			if err != nil {
				return stats, fmt.Errorf("backfill fts of %s: %w", t.name, err)
			}
			if hi == 0 {
				break
			}
			total += n
			last = hi
			if progress != nil && n > 0 {
				fmt.Fprintf(progress, "%s: %d rows filled (up to id %d)\n", t.name, total, last)
			}
		}
		if t.name == "posts" {
			stats.Posts = total
		} else {
			stats.Firehose = total
		}
	}
	return stats, nil
}
