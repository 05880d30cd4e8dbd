package importer_test

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/feedapi/feedapi/db/coins"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

func TestBackfillCoinsDerivesOnlyWhatIsMissing(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx := context.Background()
	// Rows written before the column existed have NULL coins; one row was
	// given explicit coins by a writer meanwhile, which must stay.
	exec := func(q string) {
		t.Helper()
		execSetup(t, bdb, q)
	}
	exec("UPDATE posts SET coins = NULL WHERE id % 3 = 0")
	exec("UPDATE firehose_messages SET coins = NULL WHERE id % 2 = 0")
	exec("UPDATE posts SET coins = '{KEEP}' WHERE id = (SELECT max(id) FROM posts WHERE id % 3 = 1)")
	// Rows derived before the side tables existed have coins but no side
	// rows.
	exec("DELETE FROM post_coins WHERE id % 5 = 1")
	exec("DELETE FROM firehose_coins WHERE id % 2 = 1")
	var missingSide int
	if err := bdb.NewRaw(sideMissing).Scan(ctx, &missingSide); err != nil {
		t.Fatal(err)
	}
	if missingSide == 0 {
		t.Fatal("no side rows missing: the test data hold no coins")
	}
	var nullPosts, nullFirehose int
	if err := bdb.NewRaw("SELECT (SELECT count(*) FROM posts WHERE coins IS NULL), (SELECT count(*) FROM firehose_messages WHERE coins IS NULL)").Scan(ctx, &nullPosts, &nullFirehose); err != nil {
		t.Fatal(err)
	}

	stats, err := importer.BackfillCoins(ctx, bdb, 97, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Posts != nullPosts || stats.Firehose != nullFirehose {
		t.Errorf("stats %+v, want %d posts and %d messages", stats, nullPosts, nullFirehose)
	}
	if stats.PostSide+stats.FirehoseSide != missingSide {
		t.Errorf("stats %+v, want %d side rows added", stats, missingSide)
	}
	// The side tables hold exactly the (ticker, id) pairs of the coins.
	var missing, extra int
	if err := bdb.NewRaw(sideMissing).Scan(ctx, &missing); err != nil {
		t.Fatal(err)
	}
	if err := bdb.NewRaw(sideExtra).Scan(ctx, &extra); err != nil {
		t.Fatal(err)
	}
	if missing != 0 || extra != 0 {
		t.Errorf("side tables: %d pairs missing, %d extra", missing, extra)
	}
	// Every row now holds what the extractor derives from its texts (the
	// seed derived the others the same way), except the explicit one.
	var posts []struct {
		ID    int64    `bun:"id"`
		Body  string   `bun:"body"`
		Coins []string `bun:"coins,array"`
	}
	if err := bdb.NewRaw("SELECT id, body, coins FROM posts ORDER BY id").Scan(ctx, &posts); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, p := range posts {
		if slices.Equal(p.Coins, []string{"KEEP"}) {
			kept++
			continue
		}
		want := coins.Extract(p.Body)
		if p.Coins == nil || !slices.Equal(p.Coins, want) && len(want)+len(p.Coins) > 0 {
			t.Errorf("post %d: coins %v, want %v", p.ID, p.Coins, want)
		}
	}
	if kept != 1 {
		t.Errorf("%d rows keep their explicit coins, want 1", kept)
	}
	var wrong int
	if err := bdb.NewRaw("SELECT count(*) FROM firehose_messages WHERE coins IS NULL").Scan(ctx, &wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Errorf("%d messages still without coins", wrong)
	}
	// Run again: nothing left to do.
	again, err := importer.BackfillCoins(ctx, bdb, 97, io.Discard)
	if err != nil || again != (importer.BackfillStats{}) {
		t.Errorf("second run: %+v, %v; want nothing done", again, err)
	}
}

// sideMissing and sideExtra count the (ticker, id) pairs of the items'
// coins that the side tables lack, and the side rows no item's coins hold.
const (
	sideMissing = `SELECT (SELECT count(*) FROM (SELECT c, id FROM posts, unnest(coins) AS c EXCEPT SELECT ticker, id FROM post_coins) x)
		+ (SELECT count(*) FROM (SELECT c, id FROM firehose_messages, unnest(coins) AS c EXCEPT SELECT ticker, id FROM firehose_coins) x)`
	sideExtra = `SELECT (SELECT count(*) FROM (SELECT ticker, id FROM post_coins EXCEPT SELECT c, id FROM posts, unnest(coins) AS c) x)
		+ (SELECT count(*) FROM (SELECT ticker, id FROM firehose_coins EXCEPT SELECT c, id FROM firehose_messages, unnest(coins) AS c) x)`
)
