package db_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/story"
)

// BenchmarkAssignOneItem is the cost of assigning one new item to a story
// (features, the probe of the band index, the decision) with
// FEEDAPI_BENCH_STORIES stories (default 1,000,000) in the window's index:
// one indexed item each, with its bands, all seen in the 48 hours before
// the new items. Reported as p50-ms and p99-ms of single-item Assign
// calls (each in its own transaction, rolled back), half of them
// near-duplicates of an indexed item, and apart for the two halves
// (new-…, dup-…: an item of a new story finds few candidates, a
// near-duplicate about a hundred); with -v the plans of one item's
// lookups are logged (auto_explain's, with the statements inside the
// lookup functions). The fill is checkpointed before the calls, so that they do not
// share the machine with the write-back of a million rows. The floor is
// measured in the same loop, on the same connection and as many times:
// after each Assign, in its transaction, a SELECT 1
// (select1-p50-ms, select1-p99-ms) and a one-row primary-key read of a
// random indexed member (pk-p50-ms, pk-p99-ms), so that the share of the
// machine (a round trip, a page read) in the assignment's figures shows.
//
// Each item is also assigned by a writer that keeps the window's index in
// memory (warm-p50-ms, warm-p99-ms, and warm-… for the same halves; each
// call in its own transaction, rolled back), warmed before the calls: its
// load of the window (warm-load-s) and the heap its copy takes per
// indexed item (warm-heap-B/item).
//
//	go test ./db -run '^$' -bench AssignOneItem -benchtime 2000x -v
func BenchmarkAssignOneItem(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("FEEDAPI_BENCH_STORIES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	_, url := dbtest.NewWithURL(b)
	bdb, err := db.Open(url, db.Options{NoStatementLimit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer bdb.Close()
	// One connection: the assignment and the floor share it.
	bdb.SetMaxOpenConns(1)
	now := time.Date(2030, 1, 10, 0, 0, 0, 0, time.UTC)
	// The indexed items: headlines of a few words from a vocabulary, so
	// that bands repeat as in real feeds, numbered so that each differs.
	headline := func(i int) string {
		return fmt.Sprintf("Token%d %s %s after %s update %d", i%5000, verbs[i%len(verbs)], nouns[(i/7)%len(nouns)], nouns[(i/13)%len(nouns)], i)
	}
	seenAt := func(i int) time.Time { return now.Add(-time.Duration(n-i) * (47 * time.Hour / time.Duration(n))) }
	fillStoryIndex(b, url, n, headline, seenAt)
	var stories int
	if err := bdb.NewRaw("SELECT count(*) FROM stories WHERE last_seen_at > ?", now.Add(-48*time.Hour)).Scan(ctx, &stories); err != nil {
		b.Fatal(err)
	}
	if testing.Verbose() {
		// The plans of one item's lookup: the probe of the bands of a
		// near-duplicate; and a warm writer's, which fetches what the
		// transactions its last snapshot could not see indexed (from the
		// current xmax on), with the last hour of the window as a range it
		// does not hold, and without (a writer whose copy holds its
		// batch's window). Most of the statements run inside the lookup
		// functions, whose plans EXPLAIN does not show: auto_explain
		// logs every statement's, sent to this connection as notices.
		f := story.Of(headline(n/2), "")
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			b.Fatal(err)
		}
		var notices []string
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		var xmax int64
		if err := conn.QueryRow(ctx, "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint").Scan(&xmax); err != nil {
			b.Fatal(err)
		}
		for _, lookup := range []struct {
			name, query string
			args        []any
		}{
			{"a probe", db.LookupProbeSQL, []any{f.Bands(), now.Add(-story.Window), now.Add(story.Window), story.MaxPerBand}},
			{"a warm writer's that loads a range", db.LookupWindowSQL, []any{xmax, []int64{}, []time.Time{now.Add(-time.Hour)}, []time.Time{now}, 2*n + 1}},
			{"a warm writer's that holds its window", db.LookupWindowSQL, []any{xmax, []int64{}, []time.Time{}, []time.Time{}, 2*n + 1}},
		} {
			// The second run's: the pages the first read are in the cache,
			// as a writer's are.
			for run := range 2 {
				if run == 1 {
					if _, err := conn.Exec(ctx, `LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
						SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on;
						SET auto_explain.log_nested_statements = on; SET client_min_messages = log`); err != nil {
						b.Fatal(err)
					}
					notices = nil
				}
				rows, err := conn.Query(ctx, lookup.query, append([]any{[]int64{}, []int64{900_000_000}, 1}, lookup.args...)...)
				if err != nil {
					b.Fatal(err)
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := conn.Exec(ctx, "SET auto_explain.log_min_duration = -1; SET client_min_messages = notice"); err != nil {
				b.Fatal(err)
			}
			b.Logf("plans of one item's lookup, %s, with %d stories:\n%s", lookup.name, stories, strings.Join(notices, "\n"))
		}
		conn.Close(ctx)
	}
	// A writer that keeps the window in memory, warmed by two batches (the
	// first probes, the second loads the window): its copy's load and size.
	warm := db.StoryAssigner{MaxWindow: 2 * n}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var load time.Duration
	for i := range 2 {
		item := []db.StoryItem{{Kind: db.KindFirehose, ID: int64(800_000_000 + i), Title: "Warm-up item of the writer", CreatedAt: now,
			Source: "bench2", Pane: "wire", Story: new(int64)}}
		start := time.Now()
		if _, err := warm.Assign(ctx, db.SQLQuerier{DB: bdb.DB}, item); err != nil {
			b.Fatal(err)
		}
		load = time.Since(start)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := db.WindowHeld(&warm)
	if held < n {
		b.Fatalf("the warm writer holds %d items, want the %d indexed", held, n)
	}
	var took, tookNew, tookDup, warmNew, warmDup, select1, pk []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		title := headline(i * 7919 % n)
		if i%2 == 1 {
			title = fmt.Sprintf("Brand new %s story number %d", nouns[i%len(nouns)], i)
		}
		item := []db.StoryItem{{Kind: db.KindFirehose, ID: int64(900_000_000 + i), Title: title, CreatedAt: now,
			Source: "bench2", Pane: "wire", Story: new(int64)}}
		var fresh db.StoryAssigner
		tx, err := bdb.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		_, err = fresh.Assign(ctx, db.SQLQuerier{DB: tx.Tx}, item)
		took = append(took, time.Since(start))
		if i%2 == 1 {
			tookNew = append(tookNew, took[len(took)-1])
		} else {
			tookDup = append(tookDup, took[len(took)-1])
		}
		if err == nil {
			var one int
			start = time.Now()
			err = tx.Tx.QueryRowContext(ctx, "SELECT 1").Scan(&one)
			select1 = append(select1, time.Since(start))
		}
		if err == nil {
			var s int64
			start = time.Now()
			err = tx.Tx.QueryRowContext(ctx, "SELECT story_id FROM story_members WHERE kind = 'f' AND item_id = $1",
				int64(100_000_000+(i*104729)%n)).Scan(&s)
			pk = append(pk, time.Since(start))
		}
		_ = tx.Rollback()
		if err != nil {
			b.Fatal(err)
		}
		item[0].ID += 50_000_000
		if tx, err = bdb.BeginTx(ctx, nil); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		_, err = warm.Assign(ctx, db.SQLQuerier{DB: tx.Tx}, item)
		if i%2 == 1 {
			warmNew = append(warmNew, time.Since(start))
		} else {
			warmDup = append(warmDup, time.Since(start))
		}
		_ = tx.Rollback()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	q := func(took []time.Duration, p float64) float64 {
		slices.Sort(took)
		return float64(took[int(math.Ceil(p*float64(len(took))))-1]) / float64(time.Millisecond)
	}
	b.ReportMetric(float64(stories), "stories")
	b.ReportMetric(q(took, 0.5), "p50-ms")
	b.ReportMetric(q(took, 0.99), "p99-ms")
	b.ReportMetric(q(tookNew, 0.5), "new-p50-ms")
	b.ReportMetric(q(tookNew, 0.99), "new-p99-ms")
	b.ReportMetric(q(tookDup, 0.5), "dup-p50-ms")
	b.ReportMetric(q(tookDup, 0.99), "dup-p99-ms")
	warmAll := append(slices.Clone(warmNew), warmDup...)
	b.ReportMetric(q(warmAll, 0.5), "warm-p50-ms")
	b.ReportMetric(q(warmAll, 0.99), "warm-p99-ms")
	b.ReportMetric(q(warmNew, 0.5), "warm-new-p50-ms")
	b.ReportMetric(q(warmNew, 0.99), "warm-new-p99-ms")
	b.ReportMetric(q(warmDup, 0.5), "warm-dup-p50-ms")
	b.ReportMetric(q(warmDup, 0.99), "warm-dup-p99-ms")
	b.ReportMetric(load.Seconds(), "warm-load-s")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(held), "warm-heap-B/item")
	b.ReportMetric(q(select1, 0.5), "select1-p50-ms")
	b.ReportMetric(q(select1, 0.99), "select1-p99-ms")
	b.ReportMetric(q(pk, 0.5), "pk-p50-ms")
	b.ReportMetric(q(pk, 0.99), "pk-p99-ms")
}

var (
	verbs = []string{"rises", "falls", "lists", "launches", "breaks", "hits", "files", "approves", "delays", "buys"}
	nouns = []string{"exchange", "ETF", "stablecoin", "validator", "treasury", "wallet", "bridge", "fund", "token", "network", "protocol", "miner"}
)

// fillStoryIndex writes the story index of n stories of one item each
// (item i: headline(i), seen at seenAt(i)), set-based: the features and
// bands computed here and copied in, the band index built once after.
func fillStoryIndex(b *testing.B, url string, n int, headline func(int) string, seenAt func(int) time.Time) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var indexDef string
	if err := conn.QueryRow(ctx, "SELECT pg_get_indexdef('story_bands_probe_idx'::regclass)").Scan(&indexDef); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "TRUNCATE stories, story_members, story_bands; DROP INDEX story_bands_probe_idx"); err != nil {
		b.Fatal(err)
	}
	feats := make([]string, n)
	bands := make([][]int64, n)
	for i := range n {
		f := story.Of(headline(i), "")
		feats[i], bands[i] = f.Encode(), f.Bands()
	}
	i := 0
	members := func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		i++
		return []any{"f", int64(100_000_000 + i - 1), int64(i), seenAt(i - 1), seenAt(i - 1), feats[i-1]}, nil
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"story_members"}, []string{"kind", "item_id", "story_id", "seen_at", "story_start", "features"},
		pgx.CopyFromFunc(members)); err != nil {
		b.Fatal(err)
	}
	item, k := 0, 0
	bandRows := func() ([]any, error) {
		for item < n && k == len(bands[item]) {
			item, k = item+1, 0
		}
		if item == n {
			return nil, nil
		}
		k++
		return []any{bands[item][k-1], seenAt(item), "f", int64(100_000_000 + item)}, nil
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"story_bands"}, []string{"band", "seen_at", "kind", "item_id"}, pgx.CopyFromFunc(bandRows)); err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO stories (id, first_seen_at, last_seen_at, size, headline, sources, coins, panes)
			SELECT story_id, seen_at, seen_at, 1, 'story ' || story_id, '{bench}', '{}', '{news}' FROM story_members`,
		`SELECT setval('stories_id_seq', (SELECT max(id) FROM stories))`,
		indexDef,
		`VACUUM ANALYZE stories, story_members, story_bands`,
		`CHECKPOINT`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
}
