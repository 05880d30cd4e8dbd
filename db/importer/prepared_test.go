package importer_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

// TestImportKeepsNoBatchPrepared: an import's connections do not keep its
// batches' statements prepared on the server. Each batch's upsert carries
// its rows' values, so a kept statement is a new one per batch, megabytes
// of the server's memory each for batches of the default size, held until
// the connection closes.
func TestImportKeepsNoBatchPrepared(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx := context.Background()
	var posts, messages []string
	for i := range 6 {
		posts = append(posts, line(postBase, fmt.Sprintf(`"id":%d`, 61_000_001+i), fmt.Sprintf(`"body":"Post number %d of the batch test"`, i)))
		messages = append(messages, line(firehoseBase, fmt.Sprintf(`"id":%d`, 61_000_001+i), fmt.Sprintf(`"title":"Message number %d of the batch test"`, i)))
	}
	for kind, lines := range map[importer.Kind][]string{importer.KindPosts: posts, importer.KindFirehose: messages} {
		if res, rejects := run(t, bdb, kind, importer.Options{BatchSize: 2}, lines...); res.Imported != len(lines) {
			t.Fatalf("%s: imported %d of %d lines: %s", kind, res.Imported, len(lines), rejects)
		}
	}
	// Every connection the imports used is idle in the pool.
	var conns []bun.Conn
	for range bdb.Stats().Idle {
		c, err := bdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	if len(conns) == 0 {
		t.Fatal("no connection left in the pool to look at")
	}
	for _, c := range conns {
		var kept []string
		if err := c.NewRaw(`SELECT left(statement, 60) FROM pg_prepared_statements
			WHERE statement LIKE 'INSERT INTO "posts"%' OR statement LIKE 'INSERT INTO "firehose_messages"%'`).
			Scan(ctx, &kept); err != nil {
			t.Fatal(err)
		}
		if len(kept) > 0 {
			t.Errorf("a connection keeps %d batch statements prepared, the first %q; want none", len(kept), kept[0])
		}
	}
}
