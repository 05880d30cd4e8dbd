package importer_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"strconv"
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
//	go test ./db/importer -run '^$' -bench ImportStories -benchtime 3x
func BenchmarkImportStories(b *testing.B) {
	n := 20_000
	if v := os.Getenv("FEEDAPI_BENCH_LINES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	src := bulk(b)
	if _, err := seed.Run(ctx, src, seed.Options{Posts: max(1, n/2), Firehose: n, Reset: true}, io.Discard); err != nil {
		b.Fatal(err)
	}
	files := map[importer.Kind][]byte{
		importer.KindFirehose: export(b, src, `SELECT json_strip_nulls(json_build_object('id', id, 'pane', pane, 'source', source,
			'source_name', source_name, 'name', name, 'username', username, 'title', title, 'body', body,
			'summary_ai', summary_ai, 'important', important, 'url', url, 'original_source_url', original_source_url,
			'created_at', created_at))::text FROM firehose_messages ORDER BY created_at, id`),
		importer.KindPosts: export(b, src, `SELECT json_strip_nulls(json_build_object('id', id, 'source', source,
			'username', username, 'body', body, 'url', url, 'original_source_url', original_source_url,
			'created_at', created_at, 'raw', raw))::text FROM posts ORDER BY created_at, id`),
	}
	for _, kind := range []importer.Kind{importer.KindFirehose, importer.KindPosts} {
		for _, follow := range []bool{false, true} {
			name := string(kind) + "/import"
			if follow {
				name = string(kind) + "/follow"
			}
			b.Run(name, func(b *testing.B) { benchImportStories(b, kind, files[kind], follow) })
		}
	}
}

func benchImportStories(b *testing.B, kind importer.Kind, file []byte, follow bool) {
	lines := bytes.Count(file, []byte("\n"))
	var without, with, ratios []float64
	round := 0
	for b.Loop() {
		b.StopTimer()
		rate := map[bool]float64{}
		for k := range 2 {
			stories := (round+k)%2 == 0
			rate[stories] = importRate(b, kind, file, lines, follow, stories)
		}
		without, with = append(without, rate[false]), append(with, rate[true])
		ratios = append(ratios, rate[true]/rate[false])
		round++
		b.StartTimer()
	}
	b.ReportMetric(median(without), "lines/s-without")
	b.ReportMetric(median(with), "lines/s-with")
	b.ReportMetric(median(ratios), "with/without")
	b.ReportMetric(slices.Min(ratios), "min-with/without")
}

// importRate imports file into an emptied database and returns the lines
// imported per second.
func importRate(b *testing.B, kind importer.Kind, file []byte, lines int, follow, stories bool) float64 {
	ctx := context.Background()
	bdb := bulk(b)
	if _, err := bdb.ExecContext(ctx, `TRUNCATE posts, firehose_messages, stories, story_members, story_bands`); err != nil {
		b.Fatal(err)
	}
	if _, err := bdb.ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
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
	if err := bdb.NewRaw("SELECT count(*) FROM "+map[importer.Kind]string{importer.KindPosts: "posts", importer.KindFirehose: "firehose_messages"}[kind]+
		" WHERE story_id IS NULL").Scan(ctx, &unassigned); err != nil {
		b.Fatal(err)
	}
	if stories != (unassigned == 0) || (!stories && unassigned != lines) {
		b.Fatalf("stories %v: %d of %d rows without a story", stories, unassigned, lines)
	}
	if err := bdb.Close(); err != nil {
		b.Fatal(err)
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
