package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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
// each arrival. It reports commit→client latency (from the writer's clock
// after its commit, and from the item's received_at, the database's clock
// when it stored the row), the server's memory per idle stream and its
// goroutines before, during and after.
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
	rawClient bool // sseRaw instead of sse

	// received holds each benchmark item's received_at (Unix ns; 0 until
	// a client has seen it), as the clients read it from the items: the
	// same for every client, so whichever sees it first stores it.
	received []atomic.Int64
}

// noteReceived records the received_at of item i (an index into the
// benchmark's items).
func (b *streamBench) noteReceived(i int64, at time.Time) {
	if !at.IsZero() && i >= 0 && i < int64(len(b.received)) {
		b.received[i].CompareAndSwap(0, at.UnixNano())
	}
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
	b.received = make([]atomic.Int64, b.items)
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
			switch {
			case i < b.streams && b.rawClient:
				err = b.sseRaw(ctx, &opened, firstID, arrivals[i], &got[i])
			case i < b.streams:
				err = b.sse(ctx, &opened, firstID, arrivals[i], &got[i])
			default:
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

	received := make([]time.Time, b.items)
	for i := range b.received {
		if ns := b.received[i].Load(); ns != 0 {
			received[i] = time.Unix(0, ns)
		}
	}
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	if b.streams > 0 {
		l := latencies(arrivals[:b.streams], commits)
		rl := latencies(arrivals[:b.streams], received)
		fmt.Fprintf(b.stdout, "SSE: %d streams x %d items: commit->client p50 %s, p99 %s, max %s; missing %d\n",
			b.streams, b.items, r(l.p50), r(l.p99), r(l.max), l.missing)
		fmt.Fprintf(b.stdout, "SSE: received_at->client p50 %s, p99 %s, max %s (%d items without received_at)\n",
			r(rl.p50), r(rl.p99), r(rl.max), rl.missing-l.missing)
		fmt.Fprintf(b.stdout, "SSE: the 3 items whose last arrival came latest: %s\n", slowestItems(arrivals[:b.streams], commits, 3))
	}
	if b.subs > 0 {
		l := latencies(arrivals[b.streams:], commits)
		rl := latencies(arrivals[b.streams:], received)
		fmt.Fprintf(b.stdout, "subscriptions: %d x %d items: commit->client p50 %s, p99 %s, max %s; missing %d\n",
			b.subs, b.items, r(l.p50), r(l.p99), r(l.max), l.missing)
		fmt.Fprintf(b.stdout, "subscriptions: received_at->client p50 %s, p99 %s, max %s (%d items without received_at)\n",
			r(rl.p50), r(rl.p99), r(rl.max), rl.missing-l.missing)
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

// latency is the spread of the delays from a start time of each item to
// its arrivals at the clients.
type latency struct {
	p50, p99, max time.Duration
	missing       int // arrivals that did not happen or have no start time
}

// latencies returns the spread of arrivals[c][i] − from[i] over every
// client c and item i; a zero arrival or start time counts as missing.
func latencies(arrivals [][]time.Time, from []time.Time) latency {
	var l latency
	var ls []time.Duration
	for _, client := range arrivals {
		for i, at := range client {
			if at.IsZero() || from[i].IsZero() {
				l.missing++
				continue
			}
			ls = append(ls, at.Sub(from[i]))
		}
	}
	if len(ls) == 0 {
		return l
	}
	slices.Sort(ls)
	l.p50, l.p99, l.max = ls[len(ls)/2], ls[len(ls)*99/100], ls[len(ls)-1]
	return l
}

// slowestItems describes the n items whose last arrival (over the clients)
// came latest after their commit: whether a tail is one item that
// reached everyone late (a burst, a pause) or spread over all of them.
func slowestItems(arrivals [][]time.Time, commits []time.Time, n int) string {
	type item struct {
		i             int
		p50, p99, max time.Duration
	}
	var items []item
	for i, c := range commits {
		var ls []time.Duration
		for _, at := range arrivals {
			if !at[i].IsZero() {
				ls = append(ls, at[i].Sub(c))
			}
		}
		if len(ls) == 0 {
			continue
		}
		slices.Sort(ls)
		items = append(items, item{i, ls[len(ls)/2], ls[len(ls)*99/100], ls[len(ls)-1]})
	}
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(b.max, a.max) })
	var parts []string
	for _, it := range items[:min(n, len(items))] {
		parts = append(parts, fmt.Sprintf("#%d (at %s) p50 %s p99 %s max %s", it.i, commits[it.i].Sub(commits[0]).Round(time.Millisecond),
			it.p50.Round(100*time.Microsecond), it.p99.Round(100*time.Microsecond), it.max.Round(100*time.Microsecond)))
	}
	return strings.Join(parts, "; ")
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
			ID         int64     `json:"id"`
			ReceivedAt time.Time `json:"received_at"`
		}
		if json.Unmarshal([]byte(line[len("data: "):]), &p) == nil {
			if i := p.ID - firstID; i >= 0 && i < int64(len(at)) {
				at[i] = time.Now()
				got.Add(1)
				b.noteReceived(i, p.ReceivedAt)
			}
		}
	}
	return nil
}

// streamPath is the path and query of the benchmark's streams.
func (b *streamBench) streamPath() string {
	p := b.base.JoinPath("/v1/posts/stream").EscapedPath()
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // JoinPath on a root without a path
	}
	return p + "?source=" + streamSource + "&include_body=false"
}

// sseRaw is sse over a TCP connection of its own, without net/http's
// transport and a line scanner: it reads the chunked body and looks only at
// the data lines, so that the benchmark's 2 cores go to the server rather
// than to its clients.
func (b *streamBench) sseRaw(ctx context.Context, opened *sync.WaitGroup, firstID int64, at []time.Time, got *atomic.Int64) error {
	once := sync.OnceFunc(opened.Done)
	defer once()
	if b.base.Scheme != "http" {
		return fmt.Errorf("--stream-client raw: %s is not http://", b.base)
	}
	host := b.base.Host
	if b.base.Port() == "" {
		host = net.JoinHostPort(host, "80")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", b.streamPath(), b.base.Host, b.key); err != nil {
		return err
	}
	br := bufio.NewReaderSize(conn, 2048)
	status, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	chunked := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		if line == "\r\n" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Transfer-Encoding") && strings.Contains(v, "chunked") {
			chunked = true
		}
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200 ") {
		body, _ := io.ReadAll(io.LimitReader(br, 4096))
		return fmt.Errorf("stream: %s %s", strings.TrimSpace(status), body)
	}
	once()
	// The body, dechunked, line by line; a line may span chunks.
	var line []byte
	consume := func(p []byte) {
		for len(p) > 0 {
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				line = append(line, p...)
				return
			}
			l := p[:i]
			if len(line) > 0 {
				line = append(line, l...)
				l = line
			}
			if data, ok := bytes.CutPrefix(l, []byte("data: ")); ok {
				if id, ok := postIDOf(data); ok {
					if i := id - firstID; i >= 0 && i < int64(len(at)) {
						at[i] = time.Now()
						got.Add(1)
						if b.received[i].Load() == 0 {
							b.noteReceived(i, receivedAtOf(data))
						}
					}
				}
			}
			line = line[:0]
			p = p[i+1:]
		}
	}
	if !chunked {
		buf := make([]byte, 2048)
		for {
			n, err := br.Read(buf)
			consume(buf[:n])
			if err != nil {
				return nil
			}
		}
	}
	for {
		size, err := br.ReadString('\n')
		if err != nil {
			return nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil {
			return fmt.Errorf("stream: chunk size %q", size)
		}
		if n == 0 {
			return nil
		}
		for n > 0 {
			p, err := br.Peek(int(min(n, int64(br.Size()))))
			if len(p) == 0 && err != nil {
				return nil
			}
			consume(p)
			_, _ = br.Discard(len(p))
			n -= int64(len(p))
		}
		if _, err := br.Discard(2); err != nil { // CRLF
			return nil
		}
	}
}

// postIDOf reads the id of a post's JSON, {"id":N,...} as the streams
// write it, else whatever the order of its fields.
func postIDOf(data []byte) (int64, bool) {
	if rest, ok := bytes.CutPrefix(data, []byte(`{"id":`)); ok {
		end := bytes.IndexAny(rest, ",}")
		if end > 0 {
			if id, err := strconv.ParseInt(string(rest[:end]), 10, 64); err == nil {
				return id, true
			}
		}
	}
	var p struct {
		ID int64 `json:"id"`
	}
	if json.Unmarshal(data, &p) != nil {
		return 0, false
	}
	return p.ID, true
}

// receivedAtOf reads the received_at of an item's JSON (zero when it has
// none or it is not an RFC 3339 time).
func receivedAtOf(data []byte) time.Time {
	const key = `"received_at":"`
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return time.Time{}
	}
	rest := data[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:end]))
	if err != nil {
		return time.Time{}
	}
	return t
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
		"query": `subscription { postAdded(source: "` + streamSource + `") { id receivedAt } }`}}); err != nil {
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
						ID         int64     `json:"id"`
						ReceivedAt time.Time `json:"receivedAt"`
					} `json:"postAdded"`
				} `json:"data"`
			} `json:"payload"`
		}
		if json.Unmarshal(m, &msg) != nil {
			continue
		}
		if msg.Type == "ping" {
			// A client that does not answer the server's pings is taken
			// for dead.
			if err := send(map[string]any{"type": "pong"}); err != nil {
				return nil
			}
			continue
		}
		if msg.Type == "next" {
			if i := msg.Payload.Data.PostAdded.ID - firstID; i >= 0 && i < int64(len(at)) {
				at[i] = time.Now()
				got.Add(1)
				b.noteReceived(i, msg.Payload.Data.PostAdded.ReceivedAt)
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
