package importer_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

// storyOf returns the story id of a firehose message.
func storyOf(t *testing.T, bdb *bun.DB, id int64) int64 {
	t.Helper()
	var s *int64
	if err := bdb.NewRaw("SELECT story_id FROM firehose_messages WHERE id = ?", id).Scan(context.Background(), &s); err != nil {
		t.Fatalf("story of %d: %v", id, err)
	}
	if s == nil {
		t.Fatalf("message %d has no story", id)
	}
	return *s
}

// TestImportStories: reworded items of one event join one story, whatever
// the table and the batch they arrive in; another event about the same
// coin, the same words a month later, and a templated headline with
// another figure start stories of their own; the stories table counts them.
func TestImportStories(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	fh := func(id, at, source, title string) string {
		return line(firehoseBase, `"id":`+id, `"created_at":"`+at+`"`, `"source":"`+source+`"`, `"title":"`+title+`"`)
	}
	// Batch size 2: the story continues across batches written concurrently.
	res, rejects := run(t, bdb, importer.KindFirehose, importer.Options{BatchSize: 2},
		fh("20000001", "2030-03-02T14:00:00Z", "Reuters", "SEC approves spot Solana ETFs from six issuers"),
		fh("20000002", "2030-03-02T14:02:00Z", "CoinDesk", "SEC Greenlights First Spot SOL ETFs, Trading Could Start Tuesday"),
		fh("20000003", "2030-03-02T14:05:00Z", "The Block", "Spot Solana ETFs win SEC approval"),
		fh("20000004", "2030-03-02T15:00:00Z", "CoinDesk", "SEC approves first spot XRP ETFs"),
		fh("20000005", "2030-04-02T14:00:00Z", "Reuters", "SEC approves spot Solana ETFs from six issuers"),
		fh("20000006", "2030-03-02T22:00:00Z", "Farside", "Bitcoin ETFs see $512M net inflows"),
		fh("20000007", "2030-03-03T22:00:00Z", "Farside", "Bitcoin ETFs see $301M net inflows"),
	)
	if res.Rejected != 0 {
		t.Fatalf("rejected: %s", rejects)
	}
	post := line(postBase, `"id":20000001`, `"created_at":"2030-03-02T14:20:00Z"`,
		`"body":"JUST IN: 🇺🇸 SEC approves spot $SOL ETFs.\nTrading could start tomorrow."`)
	if res, rejects := run(t, bdb, importer.KindPosts, importer.Options{}, post); res.Rejected != 0 {
		t.Fatalf("rejected: %s", rejects)
	}
	sol := storyOf(t, bdb, 20000001)
	for _, id := range []int64{20000002, 20000003} {
		if got := storyOf(t, bdb, id); got != sol {
			t.Errorf("message %d: story %d, want %d (the SOL ETF story)", id, got, sol)
		}
	}
	var postStory int64
	if err := bdb.NewRaw("SELECT story_id FROM posts WHERE id = 20000001").Scan(context.Background(), &postStory); err != nil {
		t.Fatal(err)
	}
	if postStory != sol {
		t.Errorf("post: story %d, want %d (the SOL ETF story)", postStory, sol)
	}
	seen := map[int64]int64{sol: 20000001}
	for _, id := range []int64{20000004, 20000005, 20000006, 20000007} {
		s := storyOf(t, bdb, id)
		if other, ok := seen[s]; ok {
			t.Errorf("message %d: in the story of message %d, want a story of its own", id, other)
		}
		seen[s] = id
	}
	var size int
	var sources, coins, panes []string
	var headline string
	read := func() {
		t.Helper()
		if err := bdb.NewRaw("SELECT size, sources, coins, panes, headline FROM stories WHERE id = ?", sol).
			Scan(context.Background(), &size, pgdialect.Array(&sources), pgdialect.Array(&coins), pgdialect.Array(&panes), &headline); err != nil {
			t.Fatal(err)
		}
	}
	read()
	if want := []string{"CoinDesk", "Reuters", "The Block"}; !slices.Equal(sources, want) {
		t.Errorf("SOL story: sources %q, want %q", sources, want)
	}
	if !slices.Equal(coins, []string{"SOL"}) || !slices.Equal(panes, []string{"news"}) {
		t.Errorf("SOL story: coins %q, panes %q; want [SOL], [news]", coins, panes)
	}
	if size != 4 || headline != "SEC approves spot Solana ETFs from six issuers" {
		t.Errorf("SOL story: size %d, headline %q; want 4, the first item's title", size, headline)
	}
	// A later item from a source, and on a pane, the story lacks adds
	// them to its lists, in order and once each.
	tweet := line(firehoseBase, `"id":20000008`, `"created_at":"2030-03-02T16:00:00Z"`, `"pane":"twitter"`,
		`"source":"@WatcherGuru"`, `"body":"JUST IN: 🇺🇸 SEC approves spot $SOL ETFs."`)
	if res, rejects := run(t, bdb, importer.KindFirehose, importer.Options{}, tweet); res.Rejected != 0 {
		t.Fatalf("rejected: %s", rejects)
	}
	if got := storyOf(t, bdb, 20000008); got != sol {
		t.Fatalf("the tweet: story %d, want %d (the SOL ETF story)", got, sol)
	}
	read()
	if want := []string{"@WatcherGuru", "CoinDesk", "Reuters", "The Block"}; !slices.Equal(sources, want) || size != 5 {
		t.Errorf("SOL story after the tweet: sources %q, size %d; want %q, 5", sources, size, want)
	}
	if !slices.Equal(coins, []string{"SOL"}) || !slices.Equal(panes, []string{"news", "twitter"}) {
		t.Errorf("SOL story after the tweet: coins %q, panes %q; want [SOL], [news twitter]", coins, panes)
	}
}

// TestImportUpdates: importing an existing id with other content keeps its
// id and story, sets updated_at and moves it to a new stream position;
// importing the same content again changes nothing.
func TestImportUpdates(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx := context.Background()
	first := line(firehoseBase, `"id":20000101`, `"title":"Exchange halts withdrawals"`)
	run(t, bdb, importer.KindFirehose, importer.Options{}, first)
	type state struct {
		Story, Pos     int64
		Received       time.Time
		Updated        *time.Time
		Title          string
		DBNow          time.Time
		ReceivedBefore bool
	}
	read := func() state {
		var s state
		if err := bdb.NewRaw(`SELECT story_id, stream_pos, received_at, updated_at, title, now(), received_at <= clock_timestamp()
			FROM firehose_messages WHERE id = 20000101`).Scan(ctx, &s.Story, &s.Pos, &s.Received, &s.Updated, &s.Title, &s.DBNow, &s.ReceivedBefore); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := read()
	if before.Updated != nil {
		t.Errorf("new item: updated_at %v, want null", before.Updated)
	}
	if d := before.DBNow.Sub(before.Received); d < 0 || d > time.Minute || !before.ReceivedBefore {
		t.Errorf("received_at %v: want the database's clock when written (now %v)", before.Received, before.DBNow)
	}
	run(t, bdb, importer.KindFirehose, importer.Options{}, first)
	again := read()
	again.DBNow = before.DBNow
	if again != before {
		t.Errorf("identical re-import changed the row: %+v, was %+v", again, before)
	}
	run(t, bdb, importer.KindFirehose, importer.Options{}, line(firehoseBase, `"id":20000101`, `"title":"Exchange halts withdrawals after hack"`))
	after := read()
	if after.Updated == nil || after.Title != "Exchange halts withdrawals after hack" {
		t.Fatalf("updated item: updated_at %v, title %q", after.Updated, after.Title)
	}
	if after.Story != before.Story || !after.Received.Equal(before.Received) {
		t.Errorf("updated item: story %d, received_at %v; want %d, %v kept", after.Story, after.Received, before.Story, before.Received)
	}
	if after.Pos <= before.Pos {
		t.Errorf("updated item: stream position %d, want after %d (streams send it again)", after.Pos, before.Pos)
	}
}
