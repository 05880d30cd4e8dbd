package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	_ "github.com/jackc/pgx/v5/stdlib" // the writer's driver
)

// streamBench is the stream scenario: N SSE streams (and M GraphQL
// subscriptions) open on the service, a writer inserting posts into its
// database and timestamping each commit, and every client timestamping
// each arrival. It reports commit→client latency, the server's memory per
// idle stream and its goroutines before, during and after.
type streamBench struct {
	base      *url.URL
	key       string
	dbURL     string
	adminURL  string
	pid       int
	streams   int
	subs      int
	items     int
	interval  time.Duration
	stdout    io.Writer
	transport *http.Transport
}

// streamSource labels the benchmark's posts; streams filter on it.
const streamSource = "FeedbenchStream"

func (b *streamBench) run(ctx context.Context) error {
	db, err := sql.Open("pgx", b.dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	var firstID int64
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(id), 0) + 1000000 FROM posts").Scan(&firstID); err != nil {
		return fmt.Errorf("writer: %w", err)
	}
	b.transport = &http.Transport{MaxIdleConnsPerHost: -1, DisableCompression: true}
	gBefore, _ := b.goroutines(ctx)
	rssBefore := b.rss()
	memBefore, memErr := b.liveMemory(ctx)
	runtime.GC()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clients := b.streams + b.subs
	arrivals := make([][]time.Time, clients) // per client, by item index
	got := make([]atomic.Int64, clients)
	var opened sync.WaitGroup
	var done sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for i := range clients {
		arrivals[i] = make([]time.Time, b.items)
		opened.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			var err error
			if i < b.streams {
				err = b.sse(ctx, &opened, firstID, arrivals[i], &got[i])
			} else {
				err = b.subscription(ctx, &opened, firstID, arrivals[i], &got[i])
			}
			if err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
		if i%200 == 199 {
			time.Sleep(50 * time.Millisecond) // do not flood the listener's backlog
		}
	}
	opened.Wait()
	fmt.Fprintf(b.stdout, "opened %d streams and %d subscriptions in %s\n", b.streams, b.subs, time.Since(start).Round(time.Millisecond))
	time.Sleep(2 * time.Second) // settle
	gOpen, _ := b.goroutines(ctx)
	rssOpen := b.rss()
	memOpen, memOpenErr := b.liveMemory(ctx)

	// The writer keeps a schedule: item i is due at i·interval from the
	// first, whatever its inserts take (a late insert goes at once).
	commits := make([]time.Time, b.items)
	first := time.Now()
	for i := range b.items {
		if d := time.Until(first.Add(time.Duration(i) * b.interval)); d > 0 {
			time.Sleep(d)
		}
		id := firstID + int64(i)
		if _, err := db.ExecContext(ctx, `INSERT INTO posts (id, source, username, body, created_at) VALUES ($1, $2, 'feedbench', 'stream benchmark', now())`, id, streamSource); err != nil {
			return fmt.Errorf("writer: %w", err)
		}
		commits[i] = time.Now()
	}
	fmt.Fprintf(b.stdout, "wrote %d items in %s (%.1f/s asked, %.1f/s written)\n", b.items, time.Since(first).Round(time.Millisecond),
		float64(time.Second)/float64(max(b.interval, time.Nanosecond)), float64(b.items)/max(time.Since(first).Seconds(), 1e-9))
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		all := true
		for i := range got {
			if got[i].Load() < int64(b.items) {
				all = false
				break
			}
		}
		if all {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	done.Wait()
	close(errs)
	nerr := 0
	for err := range errs {
		if nerr == 0 {
			fmt.Fprintln(b.stdout, "first client error:", err)
		}
		nerr++
	}

	lat := func(from, to int) (p50, p99, maxL time.Duration, missing int) {
		var ls []time.Duration
		for c := from; c < to; c++ {
			for i, at := range arrivals[c] {
				if at.IsZero() {
					missing++
					continue
				}
				ls = append(ls, at.Sub(commits[i]))
			}
		}
		if len(ls) == 0 {
			return 0, 0, 0, missing
		}
		slices.Sort(ls)
		return ls[len(ls)/2], ls[len(ls)*99/100], ls[len(ls)-1], missing
	}
	p50, p99, mx, miss := lat(0, b.streams)
	fmt.Fprintf(b.stdout, "SSE: %d streams x %d items: commit->client p50 %s, p99 %s, max %s; missing %d\n",
		b.streams, b.items, p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), mx.Round(10*time.Microsecond), miss)
	if b.subs > 0 {
		p50, p99, mx, miss = lat(b.streams, clients)
		fmt.Fprintf(b.stdout, "subscriptions: %d x %d items: commit->client p50 %s, p99 %s, max %s; missing %d\n",
			b.subs, b.items, p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), mx.Round(10*time.Microsecond), miss)
	}
	if rssBefore > 0 {
		fmt.Fprintf(b.stdout, "server RSS: %d KiB before, %d KiB with the clients open and idle: %.1f KiB per client (RSS keeps heap the runtime has not returned)\n",
			rssBefore>>10, rssOpen>>10, float64(rssOpen-rssBefore)/1024/float64(clients))
	}
	if memErr == nil && memOpenErr == nil {
		per := func(before, open int64) float64 { return float64(open-before) / 1024 / float64(clients) }
		fmt.Fprintf(b.stdout, "server live memory after GC: heap %d -> %d KiB (%.1f KiB per client), goroutine stacks %d -> %d KiB (%.1f KiB per client): %.1f KiB per client in all\n",
			memBefore.heap>>10, memOpen.heap>>10, per(memBefore.heap, memOpen.heap),
			memBefore.stack>>10, memOpen.stack>>10, per(memBefore.stack, memOpen.stack),
			per(memBefore.heap+memBefore.stack, memOpen.heap+memOpen.stack))
	} else {
		fmt.Fprintf(b.stdout, "server live memory: not read (%v)\n", errors.Join(memErr, memOpenErr))
	}
	time.Sleep(3 * time.Second) // let the server see the clients go
	gAfter, err := b.goroutines(context.Background())
	if err == nil {
		fmt.Fprintf(b.stdout, "server goroutines: %d before, %d open, %d after close\n", gBefore, gOpen, gAfter)
	}
	if nerr > 0 {
		return fmt.Errorf("%d clients failed", nerr)
	}
	return nil
}

// sse runs one SSE client: it records when each benchmark post arrives.
func (b *streamBench) sse(ctx context.Context, opened *sync.WaitGroup, firstID int64, at []time.Time, got *atomic.Int64) error {
	once := sync.OnceFunc(opened.Done)
	defer once()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.base.JoinPath("/v1/posts/stream").String()+"?source="+streamSource+"&include_body=false", nil)
	req.Header.Set("Authorization", "Bearer "+b.key)
	res, err := b.transport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		return fmt.Errorf("stream: %d %s", res.StatusCode, body)
	}
	once()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		var p struct {
			ID int64 `json:"id"`
		}
		if json.Unmarshal([]byte(line[len("data: "):]), &p) == nil {
			if i := p.ID - firstID; i >= 0 && i < int64(len(at)) {
				at[i] = time.Now()
				got.Add(1)
			}
		}
	}
	return nil
}

// subscription runs one graphql-transport-ws client of postAdded.
func (b *streamBench) subscription(ctx context.Context, opened *sync.WaitGroup, firstID int64, at []time.Time, got *atomic.Int64) error {
	once := sync.OnceFunc(opened.Done)
	defer once()
	u := *b.base
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	ws, _, err := websocket.Dial(ctx, u.JoinPath("/graphql").String(), &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: http.Header{"Authorization": {"Bearer " + b.key}}})
	if err != nil {
		return err
	}
	defer ws.CloseNow() //nolint:errcheck
	send := func(v any) error {
		m, _ := json.Marshal(v)
		return ws.Write(ctx, websocket.MessageText, m)
	}
	if err := send(map[string]any{"type": "connection_init"}); err != nil {
		return err
	}
	if _, _, err := ws.Read(ctx); err != nil {
		return err
	}
	if err := send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query": `subscription { postAdded(source: "` + streamSource + `") { id } }`}}); err != nil {
		return err
	}
	once()
	for {
		_, m, err := ws.Read(ctx)
		if err != nil {
			return nil
		}
		var msg struct {
			Type    string `json:"type"`
			Payload struct {
				Data struct {
					PostAdded struct {
						ID int64 `json:"id"`
					} `json:"postAdded"`
				} `json:"data"`
			} `json:"payload"`
		}
		if json.Unmarshal(m, &msg) == nil && msg.Type == "next" {
			if i := msg.Payload.Data.PostAdded.ID - firstID; i >= 0 && i < int64(len(at)) {
				at[i] = time.Now()
				got.Add(1)
			}
		}
	}
}

// goroutines reads go_goroutines from the admin listener's /metrics.
func (b *streamBench) goroutines(ctx context.Context) (int, error) {
	if b.adminURL == "" {
		return 0, fmt.Errorf("no --admin-url")
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(b.adminURL, "/")+"/metrics", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("no go_goroutines in /metrics")
}

// liveMemory is the server's memory in use after a garbage collection.
type liveMemory struct {
	heap, stack int64 // bytes of live heap objects and of goroutine stacks
}

// liveMemory has the server collect its garbage (the admin listener's
// /debug/pprof/heap?gc=1) and then reads its heap and stack bytes from
// /metrics (go_memstats_heap_alloc_bytes, go_memstats_stack_inuse_bytes:
// runtime.MemStats read at the scrape). Unlike RSS it leaves out heap the
// runtime holds but no longer uses.
func (b *streamBench) liveMemory(ctx context.Context) (liveMemory, error) {
	var m liveMemory
	if b.adminURL == "" {
		return m, fmt.Errorf("no --admin-url")
	}
	base := strings.TrimSuffix(b.adminURL, "/")
	get := func(path string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		if res.StatusCode != http.StatusOK {
			res.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", path, res.Status)
		}
		return res, nil
	}
	res, err := get("/debug/pprof/heap?gc=1")
	if err != nil {
		return m, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res, err = get("/metrics"); err != nil {
		return m, err
	}
	defer res.Body.Close()
	found := 0
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		for name, dst := range map[string]*int64{"go_memstats_heap_alloc_bytes ": &m.heap, "go_memstats_stack_inuse_bytes ": &m.stack} {
			if v, ok := strings.CutPrefix(sc.Text(), name); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return m, fmt.Errorf("%s: %w", name, err)
				}
				*dst = int64(f)
				found++
			}
		}
	}
	if found != 2 {
		return m, fmt.Errorf("no heap and stack bytes in /metrics")
	}
	return m, nil
}

// rss reads the server's VmRSS (0 without --pid).
func (b *streamBench) rss() int64 {
	if b.pid <= 0 {
		return 0
	}
	m, err := readStatus(statusPath(b.pid))
	if err != nil {
		return 0
	}
	return int64(m.RSS)
}
