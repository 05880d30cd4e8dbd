package importer_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
	"github.com/feedapi/feedapi/db/seed"
)

// BenchmarkImportStories compares the import throughput with story
// assignment to the same import without it (rows left with no story, as
// before stories existed), on the same lines: the demo generator's
// messages and posts (FEEDAPI_BENCH_LINES firehose messages, default
// 20,000, and half as many posts, a share of them retelling a recent story
// as real feeds do), exported as NDJSON in time order. Each round imports
// the file once in each mode, the two in alternating order, each into an
// emptied copy of the test template; "import" reads the file, "follow"
// reads it through a pipe with --follow (the live writer). Reported per
// mode: lines/s without and with stories, and the median over the rounds
// of the round's ratio with/without (target at least 0.75).
//
//	go test ./db/importer -run '^$' -bench 'ImportStories$' -benchtime 3x
func BenchmarkImportStories(b *testing.B) {
	n := benchLines(b)
	ctx := context.Background()
	src := bulk(b)
	if _, err := seed.Run(ctx, src, seed.Options{Posts: max(1, n/2), Firehose: n, Reset: true}, io.Discard); err != nil {
		b.Fatal(err)
	}
	files := map[importer.Kind][]byte{}
	for kind, t := range itemTables {
		files[kind] = export(b, src, t.export)
	}
	for _, kind := range []importer.Kind{importer.KindFirehose, importer.KindPosts} {
		for _, follow := range []bool{false, true} {
			b.Run(modeName(kind, follow), func(b *testing.B) {
				benchImportStories(b, files[kind], func(stories bool) float64 {
					bdb := bulk(b)
					if _, err := bdb.ExecContext(ctx, `TRUNCATE posts, firehose_messages, stories, story_members, story_bands`); err != nil {
						b.Fatal(err)
					}
					if _, err := bdb.ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
						b.Fatal(err)
					}
					rate := importRate(b, bdb, kind, files[kind], follow, stories)
					if err := bdb.Close(); err != nil {
						b.Fatal(err)
					}
					return rate
				})
			})
		}
	}
}

// itemTables are, for each kind the benchmarks import, its table, the
// kind of its items in the story index, and the query that exports its
// rows as the benchmarks' lines.
var itemTables = map[importer.Kind]struct {
	table  string
	item   db.ItemKind
	export string
}{
	importer.KindPosts:    {"posts", db.KindPost, postsExport},
	importer.KindFirehose: {"firehose_messages", db.KindFirehose, firehoseExport},
}

// modeName names a sub-benchmark: the kind, then "import" for a file or
// "follow" for a pipe read with --follow.
func modeName(kind importer.Kind, follow bool) string {
	if follow {
		return string(kind) + "/follow"
	}
	return string(kind) + "/import"
}

// benchLines is FEEDAPI_BENCH_LINES, 20,000 by default.
func benchLines(b *testing.B) int {
	v := os.Getenv("FEEDAPI_BENCH_LINES")
	if v == "" {
		return 20_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("FEEDAPI_BENCH_LINES=%q: want a positive number", v)
	}
	return n
}

// The exports of itemTables: the rows of the demo data as NDJSON, in time
// order.
const (
	firehoseExport = `SELECT json_strip_nulls(json_build_object('id', id, 'pane', pane, 'source', source,
			'source_name', source_name, 'name', name, 'username', username, 'title', title, 'body', body,
			'summary_ai', summary_ai, 'important', important, 'url', url, 'original_source_url', original_source_url,
			'created_at', created_at))::text FROM firehose_messages ORDER BY created_at, id`
	postsExport = `SELECT json_strip_nulls(json_build_object('id', id, 'source', source,
			'username', username, 'body', body, 'url', url, 'original_source_url', original_source_url,
			'created_at', created_at, 'raw', raw))::text FROM posts ORDER BY created_at, id`
)

// BenchmarkImportStoriesSteady is BenchmarkImportStories at the density
// of the reference data (5,000,000 firehose messages over 28 days,
// 1,000,000 posts over 84 days) and in the steady state of a writer that
// has run for a while: the last FEEDAPI_BENCH_LINES firehose messages
// (default 20,000, about two and a half hours of them) and the last half as
// many posts (about twenty hours) are imported into a database that holds
// everything before them, so that the story index holds the window before
// the first line, as it does for a writer that follows a feed. There most
// items join a story whose first items are indexed already, where
// BenchmarkImportStories, whose lines are a few hundred a day, starts a
// story and indexes it for nearly every line. Each import is undone before
// the next (the lines' rows, their index rows and the stories they began
// deleted), and reported as BenchmarkImportStories's.
//
//	go test ./db/importer -run '^$' -bench ImportStoriesSteady -benchtime 3x -timeout 60m
func BenchmarkImportStoriesSteady(b *testing.B) {
	n := benchLines(b)
	ctx := context.Background()
	bdb := bulk(b)
	const firehoseDays = 3
	if _, err := seed.Run(ctx, bdb, seed.Options{Posts: 1_000_000, Firehose: firehoseDays * 5_000_000 / 28, FirehoseDays: firehoseDays, Reset: true}, io.Discard); err != nil {
		b.Fatal(err)
	}
	for _, k := range []struct {
		kind  importer.Kind
		lines int
	}{
		{importer.KindFirehose, n},
		{importer.KindPosts, max(1, n/2)},
	} {
		var cut time.Time
		if err := bdb.NewRaw("SELECT created_at FROM "+itemTables[k.kind].table+" ORDER BY created_at DESC, id DESC OFFSET ? LIMIT 1", k.lines-1).Scan(ctx, &cut); err != nil {
			b.Fatal(err)
		}
		file := export(b, bdb, strings.Replace(itemTables[k.kind].export, "ORDER BY", "WHERE created_at >= '"+cut.Format(time.RFC3339Nano)+"' ORDER BY", 1))
		undo(b, bdb, k.kind, cut)
		for _, follow := range []bool{false, true} {
			b.Run(modeName(k.kind, follow), func(b *testing.B) {
				benchImportStories(b, file, func(stories bool) float64 {
					rate := importRate(b, bdb, k.kind, file, follow, stories)
					undo(b, bdb, k.kind, cut)
					return rate
				})
			})
		}
	}
}

// undo deletes the rows of kind created at or after cut, their story
// index rows and the stories they began, and vacuums: the database as it
// was before they were imported, but for the growth of the stories they
// joined.
func undo(b *testing.B, bdb *bun.DB, kind importer.Kind, cut time.Time) {
	ctx := context.Background()
	table, item := itemTables[kind].table, string(rune(itemTables[kind].item))
	for _, q := range []string{
		"DELETE FROM " + table + " WHERE created_at >= ?",
		"DELETE FROM story_bands WHERE kind = '" + item + "' AND seen_at >= ?",
		"DELETE FROM story_members WHERE kind = '" + item + "' AND seen_at >= ?",
		`DELETE FROM stories s WHERE first_seen_at >= ?
			AND NOT EXISTS (SELECT 1 FROM posts WHERE story_id = s.id) AND NOT EXISTS (SELECT 1 FROM firehose_messages WHERE story_id = s.id)`,
	} {
		if _, err := bdb.ExecContext(ctx, q, cut); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := bdb.ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
		b.Fatal(err)
	}
}

// benchImportStories runs rounds of two imports of file, one with stories
// and one without, in alternating order, and reports their rates and
// ratio; rate imports the file once and returns the lines imported per
// second.
func benchImportStories(b *testing.B, file []byte, rate func(stories bool) float64) {
	var without, with, ratios []float64
	round := 0
	for b.Loop() {
		b.StopTimer()
		r := map[bool]float64{}
		for k := range 2 {
			stories := (round+k)%2 == 0
			r[stories] = rate(stories)
		}
		without, with = append(without, r[false]), append(with, r[true])
		ratios = append(ratios, r[true]/r[false])
		round++
		b.StartTimer()
	}
	b.ReportMetric(median(without), "lines/s-without")
	b.ReportMetric(median(with), "lines/s-with")
	b.ReportMetric(median(ratios), "with/without")
	b.ReportMetric(slices.Min(ratios), "min-with/without")
}

// importRate imports file into bdb and returns the lines imported per
// second.
func importRate(b *testing.B, bdb *bun.DB, kind importer.Kind, file []byte, follow, stories bool) float64 {
	ctx := context.Background()
	lines := bytes.Count(file, []byte("\n"))
	opts := importer.Options{Follow: follow}
	if !stories {
		opts = importer.WithoutStories(opts)
	}
	var r io.Reader = bytes.NewReader(file)
	if follow {
		// A pipe, as from a scraper or `cat FILE |`.
		pr, pw := io.Pipe()
		go func() {
			for rest := file; len(rest) > 0; {
				chunk := rest[:min(len(rest), 64<<10)]
				rest = rest[len(chunk):]
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
			pw.Close()
		}()
		r = pr
	}
	start := time.Now()
	res, err := importer.Import(ctx, bdb, kind, r, opts)
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if res.Imported != lines {
		b.Fatalf("imported %d of %d lines (%d rejected)", res.Imported, lines, res.Rejected)
	}
	var unassigned int
	if err := bdb.NewRaw("SELECT count(*) FROM "+itemTables[kind].table+
		" WHERE story_id IS NULL AND received_at >= ?", start).Scan(ctx, &unassigned); err != nil {
		b.Fatal(err)
	}
	if stories != (unassigned == 0) || (!stories && unassigned != lines) {
		b.Fatalf("stories %v: %d of %d rows without a story", stories, unassigned, lines)
	}
	return float64(lines) / took.Seconds()
}

// bulk returns a fresh copy of the test template, connected as the
// import command connects (no statement timeout).
func bulk(b *testing.B) *bun.DB {
	_, url := dbtest.NewWithURL(b)
	bdb, err := db.Open(url, db.Options{NoStatementLimit: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bdb.Close() })
	return bdb
}

// export runs query (one text column per row) and returns the rows as
// lines.
func export(b testing.TB, bdb *bun.DB, query string) []byte {
	rows, err := bdb.QueryContext(context.Background(), query)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var out bytes.Buffer
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			b.Fatal(err)
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out.Bytes()
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
