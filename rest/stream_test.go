package rest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest/auth"
)

// replica is one server process of a stream test: its own pool, its own
// listening connection and hub, its own handler.
type replica struct {
	srv *httptest.Server
	hub *live.Hub
}

// startReplica serves the API over the database at url like feedapi serve
// does, with a listener whose connections are named appName (so that the
// test can cut them).
func startReplica(t *testing.T, url, appName string, ks *keys.Service, streams live.Config) *replica {
	t.Helper()
	pool, err := db.Open(url, db.Options{MaxOpenConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	hub := live.NewHub()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = db.Listen(ctx, url+"&application_name="+appName, db.ListenOptions{MinBackoff: 10 * time.Millisecond}, hub.Resync, hub.Notice)
	}()
	streams.Hub = hub
	lv := live.New(streams)
	h, err := New(Config{
		Graph: graph.Config{Store: db.NewStore(pool)}, Version: "test",
		Auth: auth.Config{Keys: ks, RateLimit: 100000, AuthFailureLimit: 100000}, Live: lv,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); cancel(); <-done })
	return &replica{srv: srv, hub: hub}
}

// sseEvent is one event of a stream.
type sseEvent struct {
	name, id, data string
}

// readEvents reads events of an open stream into out until the body ends.
func readEvents(body io.Reader, out chan<- sseEvent) {
	defer close(out)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.name != "" {
				out <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// openStream opens an SSE stream and returns its events; the stream is
// open (headers received) when it returns.
func openStream(t *testing.T, ctx context.Context, url, key, lastID string) (*http.Response, <-chan sseEvent) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("open stream %s: %d %s", url, res.StatusCode, b)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream content type %q", ct)
	}
	events := make(chan sseEvent, 64)
	go readEvents(res.Body, events)
	return res, events
}

// insertPosts writes posts with the given ids in one transaction, pausing
// between rows so that concurrent writers interleave and commit out of
// the order of their rows' ids and positions.
func insertPosts(ctx context.Context, bdb *bun.DB, source string, ids []int64, pause time.Duration) error {
	return bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `INSERT INTO posts (id, source, username, body, created_at)
				VALUES (?, ?, 'tester', ?, now())`, id, source, fmt.Sprintf("post %d", id)); err != nil {
				return err
			}
			time.Sleep(pause)
		}
		return nil
	})
}

// postID reads the id of a post event's data (the item as /v1/posts shows it).
func postID(t *testing.T, data string) int64 {
	var p struct {
		ID     int64  `json:"id"`
		UID    string `json:"uid"`
		Source string `json:"source"`
	}
	if err := json.Unmarshal([]byte(data), &p); err != nil || p.UID != fmt.Sprintf("cp_%d", p.ID) {
		t.Fatalf("event data %q is not a post: %v", data, err)
	}
	return p.ID
}

// collect takes post events until it has want ids or the deadline passes.
func collect(t *testing.T, name string, events <-chan sseEvent, got *[]int64, ids *[]string, want int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for len(*got) < want {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("%s: stream ended after %d of %d posts", name, len(*got), want)
			}
			if ev.name != "post" {
				t.Fatalf("%s: unexpected event %+v", name, ev)
			}
			*got = append(*got, postID(t, ev.data))
			*ids = append(*ids, ev.id)
		case <-deadline:
			t.Fatalf("%s: %d of %d posts after 60 s", name, len(*got), want)
		}
	}
}

// TestStreamsDeliverEveryItemOnceInOrder: concurrent writers insert posts
// with ids in no particular order (lower ids committed after higher ones,
// as imports with explicit ids do), while SSE streams on two server
// processes, a stream that disconnects and resumes on the other process
// with Last-Event-ID, and a GraphQL subscription over the websocket read.
// Halfway the listening connection of one process is cut, as a database
// restart would; it reconnects and catches up. Every client gets every
// post exactly once, in the same order (the stream positions), and the
// positions of the events only grow.
func TestStreamsDeliverEveryItemOnceInOrder(t *testing.T) {
	bdb, url := dbtest.NewWithURL(t)
	ks := keys.NewService(bdb, keys.Options{})
	key, _, err := ks.Create(context.Background(), db.TierInternal, "streams")
	if err != nil {
		t.Fatal(err)
	}
	// A long heartbeat: only the change signal (and its resync) wakes the
	// streams, so that a lost notification would show as a missing post.
	cfg := live.Config{Heartbeat: time.Hour}
	a := startReplica(t, url, "feedapi_listen_a", ks, cfg)
	b := startReplica(t, url, "feedapi_listen_b", ks, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	_, evA := openStream(t, ctx, a.srv.URL+"/v1/posts/stream?source=StreamTest", key, "")
	_, evB := openStream(t, ctx, b.srv.URL+"/v1/posts/stream?source=StreamTest&include_body=false", key, "")
	resCut, evCut := openStream(t, ctx, a.srv.URL+"/v1/posts/stream?source=StreamTest", key, "")
	// Other sources are not sent.
	_, evOther := openStream(t, ctx, a.srv.URL+"/v1/posts/stream?source=Nobody", key, "")

	ws, _, err := websocket.Dial(ctx, strings.Replace(a.srv.URL, "http", "ws", 1)+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(1 << 20)
	wsSend := func(v any) {
		b, _ := json.Marshal(v)
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	wsRead := func() map[string]any {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("websocket: %v", err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	wsSend(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + key}})
	if m := wsRead(); m["type"] != "connection_ack" {
		t.Fatalf("connection_init: %v", m)
	}
	wsSend(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query": `subscription { postAdded(source: "StreamTest") { id source } }`}})

	// The ids, shuffled: writers commit them in no order of id.
	const writers, perTx, txs = 3, 4, 10
	total := writers * perTx * txs
	all := make([]int64, total)
	for i := range all {
		all[i] = int64(5_000_000 + i)
	}
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	// Wait until the subscription runs (it starts at the end of the stream
	// as it is then): its first read has happened once a write wakes it.
	time.Sleep(200 * time.Millisecond)

	var wg sync.WaitGroup
	errs := make(chan error, writers)
	cutDone := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := all[w*perTx*txs : (w+1)*perTx*txs]
			for i := range txs {
				if w == 0 && i == txs/2 {
					// Cut process A's listening connection, as a restart
					// of the database would.
					if _, err := bdb.ExecContext(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'feedapi_listen_a'"); err != nil {
						errs <- err
						return
					}
					close(cutDone)
				}
				if err := insertPosts(ctx, bdb, "StreamTest", mine[i*perTx:(i+1)*perTx], time.Millisecond); err != nil {
					errs <- err
					return
				}
			}
		}()
	}

	// The resuming client: takes a few posts, disconnects, resumes on B.
	var cutGot []int64
	var cutIDs []string
	collect(t, "resumed", evCut, &cutGot, &cutIDs, 7)
	resCut.Body.Close()
	for range evCut {
	}
	_, evResumed := openStream(t, ctx, b.srv.URL+"/v1/posts/stream?source=StreamTest", key, cutIDs[len(cutIDs)-1])

	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("writer: %v", err)
	}
	<-cutDone

	// The order every client must see: the stream positions.
	want := streamOrder(t, ctx, bdb, "StreamTest")
	if len(want) != total {
		t.Fatalf("%d posts written, want %d", len(want), total)
	}
	check := func(name string, got []int64, ids []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %d posts %v,\nwant %d in stream order %v", name, len(got), got, len(want), want)
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] == ids[i-1] {
				t.Errorf("%s: event id %s repeated", name, ids[i])
			}
		}
	}
	var gotA, gotB, gotR []int64
	var idsA, idsB, idsR []string
	collect(t, "A", evA, &gotA, &idsA, total)
	collect(t, "B", evB, &gotB, &idsB, total)
	collect(t, "resumed", evResumed, &gotR, &idsR, total-len(cutGot))
	check("A", gotA, idsA)
	check("B", gotB, idsB)
	check("resumed", append(cutGot, gotR...), append(cutIDs, idsR...))

	// The subscription starts at the end of the stream as it was when its
	// resolver ran, which the protocol does not announce: it must get a
	// suffix of the stream order (all of it, unless the writers were
	// quicker than the 200 ms above), up to the last post.
	var gotWS []int64
	for len(gotWS) == 0 || gotWS[len(gotWS)-1] != want[len(want)-1] {
		m := wsRead()
		if m["type"] != "next" {
			t.Fatalf("subscription: %v", m)
		}
		raw, _ := json.Marshal(m["payload"])
		var p struct {
			Data struct {
				PostAdded struct {
					ID int64 `json:"id"`
				} `json:"postAdded"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		gotWS = append(gotWS, p.Data.PostAdded.ID)
		if len(gotWS) > total {
			break
		}
	}
	if len(gotWS) > total || !slices.Equal(gotWS, want[total-len(gotWS):]) {
		t.Errorf("subscription: got %v, want a suffix of %v", gotWS, want)
	}
	t.Logf("subscription got %d of %d posts", len(gotWS), total)
	_ = ws.Close(websocket.StatusNormalClosure, "")

	select {
	case ev := <-evOther:
		t.Errorf("a stream of another source got %+v", ev)
	default:
	}
}

// TestStreamLimitAndBadResume: a stream over the per-key limit of its tier
// is refused with 429 in the envelope before it starts, and a resume
// position that is not one of the stream's is a 400 naming the header.
func TestStreamLimitAndBadResume(t *testing.T) {
	bdb, url := dbtest.NewWithURL(t)
	ks := keys.NewService(bdb, keys.Options{})
	key, _, err := ks.Create(context.Background(), db.TierFree, "limited")
	if err != nil {
		t.Fatal(err)
	}
	a := startReplica(t, url, "feedapi_listen_limit", ks, live.Config{Limits: map[string]int{"free": 1}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, _ := openStream(t, ctx, a.srv.URL+"/v1/firehose/stream?pane=crypto", key, "")
	defer res.Body.Close()

	get := func(path string, header ...string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, a.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	code, body := get("/v1/posts/stream")
	if code != http.StatusTooManyRequests || !strings.Contains(body, `"code":"rate_limited"`) || !strings.Contains(body, "open streams") {
		t.Errorf("second stream: %d %s", code, body)
	}
	res.Body.Close()
	// The slot frees when the stream ends; a bad resume position is 400.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body = get("/v1/posts/stream", "Last-Event-ID", "nope")
		if code != http.StatusTooManyRequests || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code != http.StatusBadRequest || !strings.Contains(body, "Last-Event-ID") {
		t.Errorf("bad Last-Event-ID: %d %s", code, body)
	}
	code, body = get("/v1/posts/stream?pane=crypto")
	if code != http.StatusBadRequest || !strings.Contains(body, "pane") {
		t.Errorf("a filter of another endpoint: %d %s", code, body)
	}
}

// TestSlowReaderIsDropped: a client that stops reading while items keep
// coming gets, once it reads again, the items the server could write and
// then a final slow_reader event, and the stream ends.
func TestSlowReaderIsDropped(t *testing.T) {
	bdb, url := dbtest.NewWithURL(t)
	ks := keys.NewService(bdb, keys.Options{})
	key, _, err := ks.Create(context.Background(), db.TierInternal, "slow")
	if err != nil {
		t.Fatal(err)
	}
	a := startReplica(t, url, "feedapi_listen_slow", ks, live.Config{SlowWrite: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.srv.URL+"/v1/posts/stream", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	// 40 MB of posts, more than the socket buffers hold, while the client
	// does not read.
	big := strings.Repeat("x", 100_000)
	for i := range 8 {
		if _, err := bdb.ExecContext(ctx, `INSERT INTO posts (id, source, username, body, created_at)
			SELECT g, 'Slow', 'tester', ?, now() FROM generate_series(?::bigint, ?::bigint) g`,
			big, 6_000_000+i*50, 6_000_000+i*50+49); err != nil {
			t.Fatal(err)
		}
	}
	// The server's writes block for longer than SlowWrite whatever the
	// machine's speed: nothing reads until the database holds every row.
	time.Sleep(time.Second)
	events := make(chan sseEvent, 16)
	go readEvents(res.Body, events)
	var last sseEvent
	n := 0
	for ev := range events {
		last = ev
		n++
	}
	if last.name != "error" || !strings.Contains(last.data, `"code":"slow_reader"`) {
		t.Fatalf("after %d events the stream ended with %+v, want a slow_reader event", n, last)
	}
	if n >= 401 {
		t.Errorf("the slow reader got all %d posts; it was not dropped", n-1)
	}
}

// TestStreamSince: with since, a stream first sends every matching post
// created since then, in position order, then goes on live.
func TestStreamSince(t *testing.T) {
	bdb, url := dbtest.NewWithURL(t)
	ks := keys.NewService(bdb, keys.Options{})
	key, _, err := ks.Create(context.Background(), db.TierPro, "since")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := insertPosts(ctx, bdb, "SinceTest", []int64{7_000_003, 7_000_001}, 0); err != nil {
		t.Fatal(err)
	}
	if err := insertPosts(ctx, bdb, "SinceTest", []int64{7_000_002}, 0); err != nil {
		t.Fatal(err)
	}
	a := startReplica(t, url, "feedapi_listen_since", ks, live.Config{})
	_, events := openStream(t, ctx, a.srv.URL+"/v1/posts/stream?source=SinceTest&since=2000-01-01", key, "")
	if err := insertPosts(ctx, bdb, "SinceTest", []int64{7_000_000}, 0); err != nil {
		t.Fatal(err)
	}
	var got []int64
	var ids []string
	collect(t, "since", events, &got, &ids, 4)
	if want := streamOrder(t, ctx, bdb, "SinceTest"); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestStreamReadsAtHeartbeatWithoutSignal: a stream reads the database at
// each heartbeat whatever the signal says, so that a lost notification
// delays an item by a heartbeat at most: with a hub that never signals, a
// post still arrives, read afresh rather than taken from the stream's
// shared last read.
func TestStreamReadsAtHeartbeatWithoutSignal(t *testing.T) {
	bdb, url := dbtest.NewWithURL(t)
	ks := keys.NewService(bdb, keys.Options{})
	key, _, err := ks.Create(context.Background(), db.TierPro, "heartbeat")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := db.Open(url, db.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	h, err := New(Config{
		Graph: graph.Config{Store: db.NewStore(pool)}, Version: "test",
		Auth: auth.Config{Keys: ks, RateLimit: 100000, AuthFailureLimit: 100000},
		// A hub that no listener feeds: only heartbeats wake the stream.
		Live: live.New(live.Config{Hub: live.NewHub(), Heartbeat: 100 * time.Millisecond}),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, events := openStream(t, ctx, srv.URL+"/v1/posts/stream?source=Unsignalled", key, "")
	if err := insertPosts(ctx, bdb, "Unsignalled", []int64{7_100_000}, 0); err != nil {
		t.Fatal(err)
	}
	var got []int64
	var ids []string
	collect(t, "unsignalled", events, &got, &ids, 1)
	if got[0] != 7_100_000 {
		t.Errorf("got post %d, want 7100000", got[0])
	}
}

// streamOrder returns the ids of source's posts in the order every stream
// must send them: their stream positions.
func streamOrder(t *testing.T, ctx context.Context, bdb *bun.DB, source string) []int64 {
	t.Helper()
	var ids []int64
	if err := bdb.NewRaw("SELECT id FROM posts WHERE source = ? ORDER BY stream_pos", source).Scan(ctx, &ids); err != nil {
		t.Fatal(err)
	}
	return ids
}
