package db_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// streamItem is an item of a stream fed to an assigner.
type streamItem struct {
	kind                db.ItemKind
	id                  int64
	at                  time.Time
	title, body, source string
	pane                string
}

// seededStream is the demo data's posts, then its firehose messages, each
// in time order, as an import of the two files would write them: with new
// ids, ten years on, so that the test database's own stories are not
// theirs.
func seededStream(t *testing.T) []streamItem {
	t.Helper()
	ctx := context.Background()
	src := dbtest.New(t)
	var items []streamItem
	rows, err := src.QueryContext(ctx, `SELECT 'p', id, created_at, '', body, source, '' FROM posts
		UNION ALL SELECT 'f', id, created_at, coalesce(title, ''), coalesce(body, ''), source, pane::text FROM firehose_messages
		ORDER BY 1 DESC, 3, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var it streamItem
		var kind string
		if err := rows.Scan(&kind, &it.id, &it.at, &it.title, &it.body, &it.source, &it.pane); err != nil {
			t.Fatal(err)
		}
		it.kind = db.ItemKind(kind[0])
		it.id += 1_000_000_000
		it.at = it.at.AddDate(10, 0, 0)
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return items
}

// assignBatch assigns items with a, in a transaction of bdb that writes the
// plan and commits, and returns each item's story.
func assignBatch(t *testing.T, bdb *bun.DB, a *db.StoryAssigner, items []streamItem) []int64 {
	t.Helper()
	ctx := context.Background()
	tx, err := bdb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	stories := make([]int64, len(items))
	list := make([]db.StoryItem, len(items))
	for i, it := range items {
		list[i] = db.StoryItem{Kind: it.kind, ID: it.id, CreatedAt: it.at, Title: it.title, Body: it.body,
			Source: it.source, Pane: it.pane, Story: &stories[i]}
	}
	q := db.SQLQuerier{DB: tx.Tx}
	plan, err := a.Assign(ctx, q, list)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Write(ctx, q); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return stories
}

// TestStoryWindowDecidesAsTheProbe: a writer that keeps the window's index
// in memory gives every item of a realistic stream the story that a writer
// probing the database gives it, as its window slides over 12 weeks of
// posts and then extends back to the firehose's first day; and so does a
// writer whose window outgrows the bound set on it, which probes from then
// on.
func TestStoryWindowDecidesAsTheProbe(t *testing.T) {
	t.Parallel()
	items := seededStream(t)
	const batch = 200
	run := func(maxWindow int) (stories []int64, held int) {
		bdb := dbtest.New(t)
		a := db.StoryAssigner{MaxWindow: maxWindow}
		for chunk := range slices.Chunk(items, batch) {
			stories = append(stories, assignBatch(t, bdb, &a, chunk)...)
		}
		return stories, db.WindowHeld(&a)
	}
	probed, held := run(-1)
	if held != -1 {
		t.Fatalf("MaxWindow -1: the assigner holds a window of %d items", held)
	}
	distinct := len(slices.Compact(slices.Sorted(slices.Values(probed))))
	if distinct > len(items)*9/10 || distinct < len(items)/4 {
		t.Fatalf("%d items in %d stories: the stream does not repeat events as real feeds do", len(items), distinct)
	}
	for _, tc := range []struct {
		name      string
		maxWindow int
		probes    bool // at the end
	}{
		{"window", 0, false},
		{"window outgrown", 300, true},
	} {
		got, held := run(tc.maxWindow)
		if tc.probes != (held == -1) || (!tc.probes && held < batch) {
			t.Errorf("%s: the assigner holds %d items at the end (-1: it probes)", tc.name, held)
		}
		diff := 0
		for i := range items {
			if got[i] != probed[i] {
				if diff < 5 {
					t.Errorf("%s: item %c %d (%s): story %d, the probe gives %d", tc.name, items[i].kind, items[i].id,
						items[i].at.Format(time.RFC3339), got[i], probed[i])
				}
				diff++
			}
		}
		if diff > 0 {
			t.Errorf("%s: %d of %d items in another story than the probe's", tc.name, diff, len(items))
		}
	}
}

// TestStoryWindowSeesOtherWriters: a writer that keeps the window in memory
// finds the items another writer indexed after it loaded the window, both
// one committed between its batches and one whose transaction was still
// open during its last batch's lookup (while a younger one had committed)
// and committed after it.
func TestStoryWindowSeesOtherWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := dbtest.New(t)
	t0 := time.Date(2040, 5, 6, 14, 0, 0, 0, time.UTC)
	fh := func(id int64, min int, source, title string) streamItem {
		return streamItem{kind: db.KindFirehose, id: 1_000_000_000 + id, at: t0.Add(time.Duration(min) * time.Minute), title: title, source: source, pane: "wire"}
	}
	var warm, other db.StoryAssigner
	sol := assignBatch(t, bdb, &warm, []streamItem{fh(1, 0, "Reuters", "SEC approves spot Solana ETFs from six issuers")})[0]
	assignBatch(t, bdb, &warm, []streamItem{fh(2, 1, "CoinDesk", "Tether mints another $1B USDT on Tron")})
	if held := db.WindowHeld(&warm); held < 1 {
		t.Fatalf("after two batches the writer holds %d items, want its window", held)
	}

	// The other writer's first item: its transaction is open while the
	// warm writer looks up its third batch.
	tx, err := bdb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var riot int64
	open := db.StoryItem{Kind: db.KindFirehose, ID: 1_000_000_003, CreatedAt: t0.Add(2 * time.Minute), Source: "The Block", Pane: "wire",
		Title: "Bitcoin miner Riot buys 5,000 new rigs from Bitmain", Story: &riot}
	plan, err := other.Assign(ctx, db.SQLQuerier{DB: tx.Tx}, []db.StoryItem{open})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Write(ctx, db.SQLQuerier{DB: tx.Tx}); err != nil {
		t.Fatal(err)
	}
	// A third writer commits after it began: the open transaction is
	// older than the newest one the lookup sees committed.
	var third db.StoryAssigner
	assignBatch(t, bdb, &third, []streamItem{fh(9, 2, "Cointelegraph", "Arbitrum DAO votes on a gaming fund")})
	assignBatch(t, bdb, &warm, []streamItem{fh(4, 3, "Decrypt", "Polygon upgrades its proof-of-stake chain")})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// Its second, committed between the warm writer's batches.
	grayscale := assignBatch(t, bdb, &other, []streamItem{fh(5, 4, "CoinDesk", "Grayscale files to convert its XRP trust into an ETF")})[0]

	got := assignBatch(t, bdb, &warm, []streamItem{
		fh(6, 10, "Blockworks", "Riot buys 5,000 rigs from Bitmain as bitcoin miners expand"),
		fh(7, 11, "The Block", "Grayscale files to turn XRP trust into spot ETF"),
		fh(8, 12, "Decrypt", "Spot Solana ETFs approved by the SEC"),
	})
	for i, want := range []struct {
		story int64
		of    string
	}{{riot, "the other writer's open transaction"}, {grayscale, "the other writer's committed batch"}, {sol, "its own first batch"}} {
		if got[i] != want.story {
			t.Errorf("rewording %d: story %d, want %d, the story of %s", i+1, got[i], want.story, want.of)
		}
	}
	if held := db.WindowHeld(&warm); held < 5 {
		t.Errorf("the writer holds %d items, want at least the 5 stories' first items", held)
	}
}
