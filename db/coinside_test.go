package db_test

import (
	"context"
	"testing"

	"github.com/feedapi/feedapi/db/dbtest"
)

// TestCoinSideTablesFollowEveryWriter checks that post_coins and
// firehose_coins hold exactly the (ticker, id) pairs of the items' coins
// after each kind of write: the seed's COPY, inserts, upserts, updates of
// coins, deletes and TRUNCATE.
func TestCoinSideTablesFollowEveryWriter(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx := context.Background()
	check := func(step string) {
		t.Helper()
		for _, tt := range []struct{ items, side string }{{"posts", "post_coins"}, {"firehose_messages", "firehose_coins"}} {
			var missing, extra, pairs int
			err := bdb.NewRaw(`SELECT
				(SELECT count(*) FROM (SELECT c, id FROM `+tt.items+`, unnest(coins) AS c EXCEPT SELECT ticker, id FROM `+tt.side+`) x),
				(SELECT count(*) FROM (SELECT ticker, id FROM `+tt.side+` EXCEPT SELECT c, id FROM `+tt.items+`, unnest(coins) AS c) x),
				(SELECT count(*) FROM `+tt.side+`)`).Scan(ctx, &missing, &extra, &pairs)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			if missing != 0 || extra != 0 {
				t.Errorf("after %s: %s lacks %d pairs of %s and holds %d extra", step, tt.side, missing, tt.items, extra)
			}
			t.Logf("after %s: %d rows in %s", step, pairs, tt.side)
		}
	}
	check("seed")
	for _, step := range []struct{ name, sql string }{
		{"update of coins", `UPDATE posts SET coins = CASE WHEN id % 2 = 0 THEN '{ZZZ,BTC}'::text[] ELSE NULL END WHERE id % 7 = 0`},
		{"update of other columns", `UPDATE firehose_messages SET title = title || '.' WHERE id % 5 = 0`},
		{"update of firehose coins", `UPDATE firehose_messages SET coins = array_append(coins, 'ZZZ') WHERE id % 3 = 0`},
		{"delete", `DELETE FROM firehose_messages WHERE id % 11 = 0`},
		{"insert", `INSERT INTO posts (id, source, username, body, url, created_at, coins)
			SELECT id + 900000000, source, username, body, url, created_at, coins FROM posts WHERE id % 13 = 0`},
		{"upsert", `INSERT INTO posts (id, source, username, body, url, created_at, coins)
			SELECT id, source, username, body, url, created_at, '{YYY}' FROM posts WHERE id % 17 = 0
			ON CONFLICT (id) DO UPDATE SET coins = excluded.coins`},
		{"truncate", `TRUNCATE posts`},
	} {
		if _, err := bdb.ExecContext(ctx, step.sql); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		check(step.name)
	}
}
