package importer_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

// TestImportCoinsChangeIsAnUpdate: re-importing an item that differs only
// by its coins changes what the coins filter finds, so it is an update
// (updated_at set, a new stream position); re-importing it identical
// changes nothing; and updates of one batch in different months (different
// partitions of the firehose) get distinct stream positions.
func TestImportCoinsChangeIsAnUpdate(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx := context.Background()
	type state struct {
		Pos     int64
		Updated *time.Time
		Side    []string
	}
	cases := []struct {
		kind       importer.Kind
		table      string
		side       string
		base       []string
		id, second string
	}{
		{importer.KindFirehose, "firehose_messages", "firehose_coins", firehoseBase, `"id":20000201`, `"id":20000202`},
		{importer.KindPosts, "posts", "post_coins", postBase, `"id":20000201`, `"id":20000202`},
	}
	for _, c := range cases {
		read := func() state {
			t.Helper()
			var s state
			err := bdb.NewRaw(`SELECT stream_pos, updated_at,
				ARRAY(SELECT ticker FROM `+c.side+` WHERE id = 20000201 ORDER BY ticker) FROM `+c.table+` WHERE id = 20000201`).
				Scan(ctx, &s.Pos, &s.Updated, pgdialect.Array(&s.Side))
			if err != nil {
				t.Fatalf("%s: %v", c.table, err)
			}
			return s
		}
		importLines := func(lines ...string) {
			t.Helper()
			if res, rejects := run(t, bdb, c.kind, importer.Options{}, lines...); res.Rejected != 0 {
				t.Fatalf("%s: rejected: %s", c.table, rejects)
			}
		}
		btc := line(c.base, c.id, `"coins":["BTC"]`)
		importLines(btc)
		before := read()
		if before.Updated != nil || len(before.Side) != 1 || before.Side[0] != "BTC" {
			t.Fatalf("%s: new item: %+v, want no updated_at and coins [BTC]", c.table, before)
		}
		importLines(btc)
		if again := read(); again.Pos != before.Pos || again.Updated != nil {
			t.Errorf("%s: identical re-import: %+v, want unchanged %+v", c.table, again, before)
		}
		importLines(line(c.base, c.id, `"coins":["DOGE"]`))
		after := read()
		if len(after.Side) != 1 || after.Side[0] != "DOGE" {
			t.Fatalf("%s: coins after re-import %v, want [DOGE]", c.table, after.Side)
		}
		if after.Updated == nil {
			t.Errorf("%s: coins changed but updated_at is null", c.table)
		}
		if after.Pos <= before.Pos {
			t.Errorf("%s: coins changed: stream position %d, want after %d (streams send it again)", c.table, after.Pos, before.Pos)
		}
		// Two items of different months edited in one batch: each gets a
		// stream position of its own.
		april := `"created_at":"2026-04-01T10:00:00Z"`
		importLines(line(c.base, c.second, april))
		importLines(line(c.base, c.id, `"body":"edited"`), line(c.base, c.second, april, `"body":"edited"`))
		var positions, distinct int
		if err := bdb.NewRaw(`SELECT count(*), count(DISTINCT stream_pos) FROM `+c.table+` WHERE id IN (20000201, 20000202)`).
			Scan(ctx, &positions, &distinct); err != nil {
			t.Fatal(err)
		}
		if distinct != positions || positions != 2 {
			t.Errorf("%s: two updates in one batch: %d distinct stream positions for %d rows", c.table, distinct, positions)
		}
	}
}
