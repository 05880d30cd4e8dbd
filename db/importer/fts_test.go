package importer_test

import (
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

// The full-text documents as the tests compute them, independently of the
// functions and triggers of the migration.
const (
	postsDocSQL    = "to_tsvector('english', body)"
	firehoseDocSQL = "to_tsvector('english', coalesce(title, '') || ' ' || coalesce(body, '') || ' ' || coalesce(summary_ai, ''))"
)

// staleFTS counts the rows of posts and firehose messages whose stored fts
// is not the document of their texts (NULL counts as stale).
func staleFTS(t *testing.T, bdb *bun.DB) (posts, firehose int) {
	t.Helper()
	// Every row's document is recomputed: no statement timeout (see execSetup).
	err := bdb.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
			return err
		}
		return tx.NewRaw("SELECT (SELECT count(*) FROM posts WHERE fts IS DISTINCT FROM "+postsDocSQL+"), "+
			"(SELECT count(*) FROM firehose_messages WHERE fts IS DISTINCT FROM "+firehoseDocSQL+")").
			Scan(ctx, &posts, &firehose)
	})
	if err != nil {
		t.Fatal(err)
	}
	return posts, firehose
}

// execSetup runs a setup statement over a whole seeded table without the
// pool's statement timeout (a bound a loaded machine can miss): one
// transaction with SET LOCAL.
func execSetup(t *testing.T, bdb *bun.DB, q string) {
	t.Helper()
	err := bdb.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, q)
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestFTSFollowsEveryWriter(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		execSetup(t, bdb, q)
	}
	check := func(step string) {
		t.Helper()
		if p, f := staleFTS(t, bdb); p != 0 || f != 0 {
			t.Errorf("after %s: %d posts and %d firehose messages with a stale fts", step, p, f)
		}
	}
	check("the seed")

	// Updates of each text the document comes from, of other columns
	// only, and attempts to store something else in fts.
	steps := []struct{ name, sql string }{
		{"posts body", "UPDATE posts SET body = body || ' zebrafish' WHERE id % 5 = 0"},
		{"posts other column", "UPDATE posts SET username = username || 'x' WHERE id % 7 = 0"},
		{"posts fts set to NULL", "UPDATE posts SET fts = NULL WHERE id % 11 = 0"},
		{"firehose title", "UPDATE firehose_messages SET title = 'Zebrafish ' || coalesce(title, '') WHERE id % 5 = 0"},
		{"firehose body to NULL", "UPDATE firehose_messages SET body = NULL WHERE id % 6 = 0"},
		{"firehose summary", "UPDATE firehose_messages SET summary_ai = 'Penguins were seen.' WHERE id % 4 = 0"},
		{"firehose fts set to NULL", "UPDATE firehose_messages SET fts = NULL WHERE id % 13 = 0"},
		{"posts insert with a wrong fts", "INSERT INTO posts (id, source, username, body, url, created_at, raw, coins, fts)" +
			" SELECT id + 50000000, source, username, 'Quokka sightings', url, created_at, raw, coins, 'wrong'::tsvector FROM posts WHERE id % 9 = 0"},
	}
	for _, s := range steps {
		exec(s.sql)
		check(s.name)
	}

	// Import: new rows and upserts that change the texts.
	res, rejects := run(t, bdb, importer.KindPosts, importer.Options{},
		line(postBase, `"body":"Narwhal ETF approved"`),
		line(postBase, `"id":10000002`, `"body":"Walrus coin listed"`),
		line(postBase, `"body":"Narwhal ETF rejected after all"`))
	if res.Imported != 3 || rejects != "" {
		t.Fatalf("posts import: %+v, %q", res, rejects)
	}
	var minID int64
	if err := bdb.NewRaw("SELECT min(id) FROM firehose_messages").Scan(ctx, &minID); err != nil {
		t.Fatal(err)
	}
	res, rejects = run(t, bdb, importer.KindFirehose, importer.Options{},
		line(firehoseBase, `"title":"Okapi spotted"`, `"summary_ai":"An okapi."`),
		line(firehoseBase, `"id":`+strconv.FormatInt(minID, 10), `"body":"Axolotl rally"`))
	if res.Imported != 2 || rejects != "" {
		t.Fatalf("firehose import: %+v, %q", res, rejects)
	}
	check("the imports")
	var hits int
	if err := bdb.NewRaw("SELECT (SELECT count(*) FROM posts WHERE fts @@ websearch_to_tsquery('english', 'narwhals rejected'))"+
		" + (SELECT count(*) FROM firehose_messages WHERE fts @@ websearch_to_tsquery('english', 'axolotl'))").Scan(ctx, &hits); err != nil {
		t.Fatal(err)
	}
	if hits != 2 {
		t.Errorf("%d rows match the imported words, want 2", hits)
	}
}

func TestBackfillFTSFillsOnlyWhatIsMissing(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		execSetup(t, bdb, q)
	}
	// Rows written before the column existed have fts NULL: the update
	// trigger would refill them, so it is off while they are made.
	exec("ALTER TABLE posts DISABLE TRIGGER posts_fts_update")
	exec("ALTER TABLE firehose_messages DISABLE TRIGGER firehose_fts_update")
	exec("UPDATE posts SET fts = NULL WHERE id % 3 = 0")
	exec("UPDATE firehose_messages SET fts = NULL WHERE id % 2 = 0")
	exec("ALTER TABLE posts ENABLE TRIGGER posts_fts_update")
	exec("ALTER TABLE firehose_messages ENABLE TRIGGER firehose_fts_update")
	var nullPosts, nullFirehose int
	if err := bdb.NewRaw("SELECT (SELECT count(*) FROM posts WHERE fts IS NULL), (SELECT count(*) FROM firehose_messages WHERE fts IS NULL)").
		Scan(ctx, &nullPosts, &nullFirehose); err != nil {
		t.Fatal(err)
	}
	if nullPosts == 0 || nullFirehose == 0 {
		t.Fatalf("nothing to backfill: %d posts, %d messages", nullPosts, nullFirehose)
	}
	if p, f := staleFTS(t, bdb); p != nullPosts || f != nullFirehose {
		t.Fatalf("%d and %d stale before the backfill, want the NULLs (%d, %d)", p, f, nullPosts, nullFirehose)
	}

	stats, err := importer.BackfillFTS(ctx, bdb, 97, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Posts != nullPosts || stats.Firehose != nullFirehose {
		t.Errorf("stats %+v, want %d posts and %d messages", stats, nullPosts, nullFirehose)
	}
	if p, f := staleFTS(t, bdb); p != 0 || f != 0 {
		t.Errorf("after the backfill: %d posts and %d messages with a stale fts", p, f)
	}
	again, err := importer.BackfillFTS(ctx, bdb, 97, io.Discard)
	if err != nil || again != (importer.BackfillStats{}) {
		t.Errorf("second run: %+v, %v; want nothing done", again, err)
	}
}
