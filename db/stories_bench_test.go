package db_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// BenchmarkAssignOneItem is the cost of assigning one new item to a story
// (features, the probe of the band index, the decision) with
// FEEDAPI_BENCH_STORIES stories (default 1,000,000) in the window's index:
// one indexed item each, with its bands, all seen in the 48 hours before
// the new items. Reported as p50-ms and p99-ms of single-item Assign
// calls (each in its own transaction, rolled back), half of them
// near-duplicates of an indexed item.
//
//	go test ./db -run '^$' -bench AssignOneItem -benchtime 2000x
func BenchmarkAssignOneItem(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("FEEDAPI_BENCH_STORIES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	bdb := dbtest.New(b)
	now := time.Date(2030, 1, 10, 0, 0, 0, 0, time.UTC)
	// The indexed items: headlines of a few words from a vocabulary, so
	// that bands repeat as in real feeds, numbered so that each differs.
	var as db.StoryAssigner
	const batch = 5000
	headline := func(i int) string {
		return fmt.Sprintf("Token%d %s %s after %s update %d", i%5000, verbs[i%len(verbs)], nouns[(i/7)%len(nouns)], nouns[(i/13)%len(nouns)], i)
	}
	for from := 0; from < n; from += batch {
		items := make([]db.StoryItem, 0, batch)
		for i := from; i < min(from+batch, n); i++ {
			items = append(items, db.StoryItem{Kind: db.KindFirehose, ID: int64(100_000_000 + i), Title: headline(i),
				CreatedAt: now.Add(-time.Duration(n-i) * (47 * time.Hour / time.Duration(n))), Source: "bench", Pane: "news", Story: new(int64)})
		}
		tx, err := bdb.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := as.Assign(ctx, db.SQLQuerier{DB: tx.Tx}, items)
		if err == nil {
			err = plan.Write(ctx, db.SQLQuerier{DB: tx.Tx})
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if _, err := bdb.ExecContext(ctx, "ANALYZE stories, story_members, story_bands"); err != nil {
		b.Fatal(err)
	}
	var stories int
	if err := bdb.NewRaw("SELECT count(*) FROM stories WHERE last_seen_at > ?", now.Add(-48*time.Hour)).Scan(ctx, &stories); err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
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
		_ = tx.Rollback()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(took)
	q := func(p float64) float64 {
		return float64(took[int(math.Ceil(p*float64(len(took))))-1]) / float64(time.Millisecond)
	}
	b.ReportMetric(float64(stories), "stories")
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

var (
	verbs = []string{"rises", "falls", "lists", "launches", "breaks", "hits", "files", "approves", "delays", "buys"}
	nouns = []string{"exchange", "ETF", "stablecoin", "validator", "treasury", "wallet", "bridge", "fund", "token", "network", "protocol", "miner"}
)
