package importer_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

// TestBackfillStoriesAsImportingFresh: firehose messages and posts stored
// without stories (as before stories existed) get, from the backfill, the
// stories that importing the same items fresh gives them (the same
// grouping of items, the same size, headline, times, sources, coins and
// panes of each story); running it again changes nothing.
func TestBackfillStoriesAsImportingFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := dbtest.New(t)
	// The template's demo data, a share of it retelling recent stories.
	firehose := export(t, src, `SELECT json_strip_nulls(json_build_object('id', id, 'pane', pane, 'source', source,
		'source_name', source_name, 'name', name, 'username', username, 'title', title, 'body', body,
		'summary_ai', summary_ai, 'important', important, 'url', url, 'original_source_url', original_source_url,
		'created_at', created_at))::text FROM firehose_messages ORDER BY created_at, id LIMIT 3000`)

	load := func(stories bool) *bun.DB {
		bdb := dbtest.New(t)
		if _, err := bdb.ExecContext(ctx, `TRUNCATE posts, firehose_messages, stories, story_members, story_bands`); err != nil {
			t.Fatal(err)
		}
		opts := importer.Options{BatchSize: 250}
		if !stories {
			opts = importer.WithoutStories(opts)
		}
		if _, err := importer.Import(ctx, bdb, importer.KindFirehose, bytes.NewReader(firehose), opts); err != nil {
			t.Fatal(err)
		}
		return bdb
	}
	fresh, old := load(true), load(false)
	if n := unassigned(t, old); n != 3000 {
		t.Fatalf("before the backfill: %d of 3000 messages without a story", n)
	}
	var progress strings.Builder
	stats, err := importer.BackfillStories(ctx, old, 250, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Firehose != 3000 || stats.Posts != 0 {
		t.Errorf("stats %+v, want 3000 firehose messages", stats)
	}
	if n := unassigned(t, old); n != 0 {
		t.Errorf("after the backfill: %d messages without a story", n)
	}
	if !strings.Contains(progress.String(), "0 posts and 3000 firehose messages assigned") {
		t.Errorf("progress %q: want the counts", progress.String())
	}
	want, got := storiesByFirstItem(t, fresh), storiesByFirstItem(t, old)
	if len(want) < 100 || len(want) > 2900 {
		t.Fatalf("the fresh import made %d stories of 3000 messages: want retold stories among them", len(want))
	}
	if !maps.Equal(want, got) {
		n := 0
		for k, w := range want {
			if got[k] != w && n < 5 {
				t.Errorf("story of %s: backfill %q, fresh import %q", k, got[k], w)
				n++
			}
		}
		t.Errorf("%d stories after the backfill, %d after a fresh import, not the same", len(got), len(want))
	}

	before := storiesByFirstItem(t, old)
	again, err := importer.BackfillStories(ctx, old, 250, io.Discard)
	if err != nil || again != (importer.BackfillStats{}) {
		t.Errorf("second run: %+v, %v; want nothing done", again, err)
	}
	if after := storiesByFirstItem(t, old); !maps.Equal(before, after) {
		t.Errorf("second run changed the stories")
	}
}

// TestBackfillStoriesMergesTablesInTimeOrder: posts and firehose messages
// without stories are assigned in time order across the two tables, so
// that a post retelling a message joins the message's story; an item that
// has a story keeps it, and the others join it.
func TestBackfillStoriesMergesTablesInTimeOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := dbtest.New(t)
	fh := func(id, at, source, title string) string {
		return line(firehoseBase, `"id":`+id, `"created_at":"`+at+`"`, `"source":"`+source+`"`, `"title":"`+title+`"`)
	}
	post := line(postBase, `"id":20000501`, `"created_at":"2030-03-02T14:01:00Z"`,
		`"body":"JUST IN: SEC approves spot $SOL ETFs from six issuers."`)
	if _, err := importer.Import(ctx, bdb, importer.KindPosts, strings.NewReader(post), importer.WithoutStories(importer.Options{})); err != nil {
		t.Fatal(err)
	}
	lines := strings.Join([]string{
		fh("20000501", "2030-03-02T14:00:00Z", "Reuters", "SEC approves spot Solana ETFs from six issuers"),
		fh("20000502", "2030-03-02T14:05:00Z", "CoinDesk", "Spot Solana ETFs win SEC approval"),
		fh("20000503", "2030-03-02T15:00:00Z", "CoinDesk", "SEC approves first spot XRP ETFs"),
	}, "\n")
	if _, err := importer.Import(ctx, bdb, importer.KindFirehose, strings.NewReader(lines), importer.WithoutStories(importer.Options{})); err != nil {
		t.Fatal(err)
	}
	// One item already has a story (written by a writer with stories).
	kept := line(firehoseBase, `"id":20000504`, `"created_at":"2030-03-02T14:03:00Z"`, `"source":"The Block"`,
		`"title":"SEC greenlights spot SOL ETFs"`)
	if _, err := importer.Import(ctx, bdb, importer.KindFirehose, strings.NewReader(kept), importer.Options{}); err != nil {
		t.Fatal(err)
	}
	keptStory := storyOf(t, bdb, 20000504)

	stats, err := importer.BackfillStories(ctx, bdb, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if stats != (importer.BackfillStats{Posts: 1, Firehose: 3}) {
		t.Errorf("stats %+v, want 1 post and 3 messages", stats)
	}
	sol := storyOf(t, bdb, 20000501)
	var postStory int64
	if err := bdb.NewRaw("SELECT story_id FROM posts WHERE id = 20000501").Scan(ctx, &postStory); err != nil {
		t.Fatal(err)
	}
	if postStory != sol || storyOf(t, bdb, 20000502) != sol {
		t.Errorf("post in story %d, message 20000502 in %d: want both in the story of message 20000501 (%d)", postStory, storyOf(t, bdb, 20000502), sol)
	}
	if storyOf(t, bdb, 20000503) == sol {
		t.Errorf("the XRP message joined the SOL story")
	}
	if got := storyOf(t, bdb, 20000504); got != keptStory {
		t.Errorf("message 20000504: story %d, want %d kept", got, keptStory)
	}
	var size int
	var sources []string
	if err := bdb.NewRaw("SELECT size, sources FROM stories WHERE id = ?", sol).Scan(ctx, &size, pgdialect.Array(&sources)); err != nil {
		t.Fatal(err)
	}
	// The kept item's story is the SOL story: the others joined it.
	if sol != keptStory || size != 4 || !slices.Equal(sources, []string{"CoinDesk", "Reuters", "The Block"}) {
		t.Errorf("SOL story %d: size %d, sources %q; want story %d of the kept item, 4 items of CoinDesk (the post's source), Reuters and The Block",
			sol, size, sources, keptStory)
	}
}

// unassigned counts the firehose messages without a story.
func unassigned(t *testing.T, bdb *bun.DB) int {
	t.Helper()
	var n int
	if err := bdb.NewRaw("SELECT count(*) FROM firehose_messages WHERE story_id IS NULL").Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// storiesByFirstItem describes each story by its first item (the smallest
// id of its items), so that two databases' stories compare whatever ids
// they were given.
func storiesByFirstItem(t *testing.T, bdb *bun.DB) map[string]string {
	t.Helper()
	rows, err := bdb.QueryContext(context.Background(), `SELECT min(m.id), count(*), s.size, s.headline, s.first_seen_at, s.last_seen_at,
			s.sources::text, s.coins::text, s.panes::text, string_agg(m.id::text, ',' ORDER BY m.id)
		FROM firehose_messages m JOIN stories s ON s.id = m.story_id GROUP BY s.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var first, n, size int64
		var headline, firstSeen, lastSeen, sources, coins, panes, items string
		if err := rows.Scan(&first, &n, &size, &headline, &firstSeen, &lastSeen, &sources, &coins, &panes, &items); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprint(first)] = fmt.Sprintf("%d items (size %d) %q %s..%s %s %s %s [%s]", n, size, headline, firstSeen, lastSeen, sources, coins, panes, items)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
