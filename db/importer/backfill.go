package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db/coins"
)

// BackfillStats counts what BackfillCoins did, per table.
type BackfillStats struct {
	Posts, Firehose int
	// PostSide and FirehoseSide count the rows added to the coins side
	// tables (post_coins, firehose_coins) for rows whose coins were
	// derived before the side tables existed.
	PostSide, FirehoseSide int
}

// backfillTable is one table the backfill derives coins for: its name
// and the texts the tickers come from (as the importer reads them).
type backfillTable struct {
	name    string
	columns string // the text columns, as t1, t2 and t3
	side    string // the coins side table
}

var backfillTables = []backfillTable{
	{"posts", "body AS t1, NULL AS t2, NULL AS t3", "post_coins"},
	{"firehose_messages", "title AS t1, body AS t2, summary_ai AS t3", "firehose_coins"},
}

// BackfillCoins derives the coins of every post and firehose message
// whose coins are NULL (written before the column existed), batch rows at
// a time in id order, each batch in its own short transaction, so it runs
// beside the service on millions of rows, holds no lock for long, and can
// be stopped and run again: it resumes where the NULLs are. A row that a
// writer gives coins meanwhile is left as the writer wrote it.
func BackfillCoins(ctx context.Context, bdb *bun.DB, batch int, progress io.Writer) (BackfillStats, error) {
	if batch < 1 {
		return BackfillStats{}, fmt.Errorf("backfill coins: batch %d: must be positive", batch)
	}
	var stats BackfillStats
	for _, t := range backfillTables {
		n, err := backfillTableCoins(ctx, bdb, t, batch, progress)
		if err != nil {
			return stats, err
		}
		side, err := backfillSide(ctx, bdb, t, batch, progress)
		if err != nil {
			return stats, err
		}
		if t.name == "posts" {
			stats.Posts, stats.PostSide = n, side
		} else {
			stats.Firehose, stats.FirehoseSide = n, side
		}
	}
	return stats, nil
}

// backfillSide adds the side-table rows of t's rows whose coins are set
// but whose side rows are missing (derived before migration
// 20261124400001 added the side tables, whose triggers keep them since),
// batch rows at a time up the primary key, each batch one statement. Rows
// derived by backfillTableCoins got theirs from the triggers. It returns
// the number of side rows added (0 when run again).
//
// A writer that changes a row's coins while its batch runs may leave a
// side row of its old coins behind (the batch read them before the
// writer's trigger ran): run the backfill before writers edit coins, as
// after the migration.
func backfillSide(ctx context.Context, bdb *bun.DB, t backfillTable, batch int, progress io.Writer) (int, error) {
	var last int64
	total := 0
	for {
		var upTo *int64
		var n int
		err := bdb.NewRaw("WITH b AS (SELECT id, coins FROM "+t.name+" WHERE id > ? AND coins IS NOT NULL ORDER BY id LIMIT ?),\n"+
			"ins AS (INSERT INTO "+t.side+" (ticker, id) SELECT DISTINCT c, b.id FROM b, unnest(b.coins) AS c ON CONFLICT DO NOTHING RETURNING 1)\n"+
			"SELECT (SELECT max(id) FROM b), (SELECT count(*) FROM ins)", last, batch).Scan(ctx, &upTo, &n)
		if err != nil {
			return total, fmt.Errorf("backfill coins of %s: side rows: %w", t.name, err)
		}
		if upTo == nil {
			return total, nil
		}
		total += n
		last = *upTo
		// A batch that added nothing (the usual case, the side rows being
		// there) is not worth a line.
		if progress != nil && n > 0 {
			fmt.Fprintf(progress, "%s: %d side rows added (up to id %d)\n", t.side, total, last)
		}
	}
}

type backfillRow struct {
	ID      int64   `bun:"id"`
	Title   *string `bun:"t1"`
	Body    *string `bun:"t2"`
	Summary *string `bun:"t3"`
}

type derived struct {
	ID    int64    `json:"id"`
	Coins []string `json:"c"`
}

func backfillTableCoins(ctx context.Context, bdb *bun.DB, t backfillTable, batch int, progress io.Writer) (int, error) {
	// The walk goes up the primary key from the last id done, so each batch
	// reads only rows not yet seen.
	var last int64
	total := 0
	for {
		var rows []backfillRow
		err := bdb.NewRaw("SELECT id, "+t.columns+" FROM "+t.name+
			" WHERE id > ? AND coins IS NULL ORDER BY id LIMIT ?", last, batch).Scan(ctx, &rows)
		if err != nil {
			return total, fmt.Errorf("backfill coins of %s: read: %w", t.name, err)
		}
		if len(rows) == 0 {
			return total, nil
		}
		out := make([]derived, len(rows))
		for i, r := range rows {
			var texts []string
			for _, s := range []*string{r.Title, r.Body, r.Summary} {
				if s != nil {
					texts = append(texts, *s)
				}
			}
			c := coins.Extract(texts...)
			if c == nil {
				c = []string{}
			}
			out[i] = derived{ID: r.ID, Coins: c}
		}
		payload, err := json.Marshal(out)
		if err != nil {
			return total, fmt.Errorf("backfill coins of %s: %w", t.name, err)
		}
		res, err := bdb.ExecContext(ctx, "UPDATE "+t.name+" AS x SET coins = ARRAY(SELECT jsonb_array_elements_text(v.c))"+
			" FROM jsonb_to_recordset(?::jsonb) AS v(id bigint, c jsonb) WHERE x.id = v.id AND x.coins IS NULL", string(payload))
		if err != nil {
			return total, fmt.Errorf("backfill coins of %s: write: %w", t.name, err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
		last = rows[len(rows)-1].ID
		if progress != nil && n > 0 {
			fmt.Fprintf(progress, "%s: %d rows derived (up to id %d)\n", t.name, total, last)
		}
	}
}
