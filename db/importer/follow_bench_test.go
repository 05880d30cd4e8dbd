package importer_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

// BenchmarkFollowLatency measures, for `import --follow posts`, the time from
// writing a line into the pipe to its commit, seen as the arrival of a
// notification that a trigger (created here, in the benchmark's own
// database) sends at commit. Reported as p50-ms and p99-ms; "sequential"
// writes a line when the previous one is committed (a quiet scraper),
// "200/s" writes at a steady 200 lines a second whatever the commits do.
//
//	go test ./db/importer -run '^$' -bench FollowLatency -benchtime 1000x
func BenchmarkFollowLatency(b *testing.B) {
	for _, rate := range []int{0, 200} {
		name := "sequential"
		if rate > 0 {
			name = strconv.Itoa(rate) + "/s"
		}
		b.Run(name, func(b *testing.B) { benchFollow(b, rate) })
	}
}

func benchFollow(b *testing.B, rate int) {
	ctx := context.Background()
	bdb, url := dbtest.NewWithURL(b)
	if _, err := bdb.ExecContext(ctx, `
		CREATE FUNCTION bench_follow_notify() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN PERFORM pg_notify('bench_follow', NEW.id::text); RETURN NULL; END $$;
		CREATE TRIGGER bench_follow AFTER INSERT ON posts FOR EACH ROW EXECUTE FUNCTION bench_follow_notify();`); err != nil {
		b.Fatal(err)
	}
	listener, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer listener.Close(ctx)
	if _, err := listener.Exec(ctx, "LISTEN bench_follow"); err != nil {
		b.Fatal(err)
	}

	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := importer.Import(ctx, bdb, importer.KindPosts, r, importer.Options{Follow: true, Rejects: io.Discard})
		done <- err
	}()
	const first = 20_000_000
	var mu sync.Mutex
	sent := make(map[int64]time.Time, b.N)
	write := func(id int64) {
		mu.Lock()
		sent[id] = time.Now()
		mu.Unlock()
		if _, err := io.WriteString(w, line(postBase, fmt.Sprintf(`"id":%d`, id))+"\n"); err != nil {
			panic(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	receive := func() {
		n, err := listener.WaitForNotification(ctx)
		if err != nil {
			b.Fatal(err)
		}
		at := time.Now()
		id, _ := strconv.ParseInt(n.Payload, 10, 64)
		mu.Lock()
		lat = append(lat, at.Sub(sent[id]))
		mu.Unlock()
	}

	b.ResetTimer()
	if rate == 0 {
		for i := range b.N {
			write(first + int64(i))
			receive()
		}
	} else {
		go func() {
			tick := time.NewTicker(time.Second / time.Duration(rate))
			defer tick.Stop()
			for i := range b.N {
				<-tick.C
				write(first + int64(i))
			}
		}()
		for range b.N {
			receive()
		}
	}
	b.StopTimer()
	w.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(q(1), "max-ms")
}
