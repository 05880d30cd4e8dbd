package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// deliveryBudget is how long a client may take to receive what it waits
// for: seconds of real work on a busy machine, not a latency bound.
const deliveryBudget = 90 * time.Second

// streamEvent is one Server-Sent Event.
type streamEvent struct{ name, id, data string }

// sseClient is one open SSE stream of a test.
type sseClient struct {
	name   string
	res    *http.Response
	events chan streamEvent
	got    []int64  // post ids received, in order
	ids    []string // their event ids
}

// openSSE opens a stream; it fails the test unless the answer is a stream.
func openSSE(t *testing.T, ctx context.Context, name, url, key, lastID string) *sseClient {
	t.Helper()
	c, status, body := tryOpenSSE(ctx, name, url, key, lastID)
	if c == nil {
		t.Fatalf("%s: open %s: %d %s", name, url, status, body)
	}
	return c
}

// tryOpenSSE opens a stream, or returns the answer that is not one.
func tryOpenSSE(ctx context.Context, name, url, key, lastID string) (*sseClient, int, string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, err.Error()
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return nil, res.StatusCode, string(b)
	}
	c := &sseClient{name: name, res: res, events: make(chan streamEvent, 256)}
	go func() {
		defer close(c.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		var ev streamEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					c.events <- ev
				}
				ev = streamEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return c, http.StatusOK, ""
}

// take receives post events until the client has want posts in all.
func (c *sseClient) take(t *testing.T, want int) {
	t.Helper()
	deadline := time.After(deliveryBudget)
	for len(c.got) < want {
		select {
		case ev, ok := <-c.events:
			if !ok {
				t.Fatalf("%s: stream ended after %d of %d posts", c.name, len(c.got), want)
			}
			if ev.name != "post" {
				t.Fatalf("%s: unexpected event %+v", c.name, ev)
			}
			var p struct {
				ID int64 `json:"id"`
			}
			if err := json.Unmarshal([]byte(ev.data), &p); err != nil || p.ID == 0 {
				t.Fatalf("%s: event data %q is not a post", c.name, ev.data)
			}
			c.got = append(c.got, p.ID)
			c.ids = append(c.ids, ev.id)
		case <-deadline:
			t.Fatalf("%s: %d of %d posts after %s: %v", c.name, len(c.got), want, deliveryBudget, c.got)
		}
	}
}

// close ends the stream and drains what was in flight, which is dropped:
// a client that disconnects has not received it.
func (c *sseClient) close() {
	c.res.Body.Close()
	for range c.events {
	}
}

// writePosts inserts the ids as posts of source, a few per transaction,
// from concurrent writers, so that commits interleave out of the order of
// ids and positions.
func writePosts(ctx context.Context, bdb *bun.DB, source string, ids []int64) error {
	const writers, perTx = 3, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w * perTx; i < len(ids); i += writers * perTx {
				batch := ids[i:min(i+perTx, len(ids))]
				err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					for _, id := range batch {
						if _, err := tx.ExecContext(ctx, `INSERT INTO posts (id, source, username, body, created_at)
							VALUES (?, ?, 'tester', ?, now())`, id, source, fmt.Sprintf("post %d", id)); err != nil {
							return err
						}
						time.Sleep(time.Millisecond)
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// subscription is a postAdded subscription over graphql-transport-ws.
type subscription struct {
	ws   *websocket.Conn
	next chan int64 // ids of the posts received
	err  chan error
}

func subscribePosts(t *testing.T, ctx context.Context, base, key string) *subscription {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, strings.Replace(base, "http", "ws", 1)+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	ws.SetReadLimit(1 << 20)
	send := func(v any) {
		b, _ := json.Marshal(v)
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + key}})
	_, b, err := ws.Read(ctx)
	if err != nil || !strings.Contains(string(b), `"connection_ack"`) {
		t.Fatalf("connection_init: %s %v", b, err)
	}
	send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query": `subscription { postAdded { id source } }`}})
	s := &subscription{ws: ws, next: make(chan int64, 1024), err: make(chan error, 1)}
	go func() {
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				s.err <- err
				return
			}
			var m struct {
				Type    string `json:"type"`
				Payload struct {
					Data struct {
						PostAdded struct {
							ID int64 `json:"id"`
						} `json:"postAdded"`
					} `json:"data"`
				} `json:"payload"`
			}
			if err := json.Unmarshal(b, &m); err != nil || m.Type != "next" || m.Payload.Data.PostAdded.ID == 0 {
				s.err <- fmt.Errorf("subscription message %s", b)
				return
			}
			s.next <- m.Payload.Data.PostAdded.ID
		}
	}()
	return s
}

// TestStreamsAcrossDatabaseRestart: two server processes, A reaching the
// database through a proxy (its pool and its listening connection both),
// B directly. SSE streams on both, clients that disconnect and resume with
// Last-Event-ID (from A on B, and from B on A once A is back), a GraphQL
// subscription on A and a poller of A's first page (cached for an hour, so
// that only the change signal can refresh it) run while writers insert
// posts in concurrent transactions. Halfway A's database connections are
// cut, as a database restart would, and posts are written while A is cut
// off; then the database comes back and no more posts are written until
// every client has caught up, so that only A's reconnection and catch-up
// can deliver them. Every client receives every post exactly once, in
// stream order; the poller's page ends up equal to the database's; and A
// streams live again afterwards. With a heartbeat of an hour, nothing but
// the change signal wakes a stream.
func TestStreamsAcrossDatabaseRestart(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)
	key, _ := newKey(t, bdb, db.TierInternal)
	proxy := newFaultProxy(t, "127.0.0.1:5432")
	env := map[string]string{
		"FEEDAPI_RATE_LIMIT":       "1000000",
		"FEEDAPI_STREAM_HEARTBEAT": "1h",
		"FEEDAPI_POLL_CACHE_TTL":   "1h",
	}
	envA := map[string]string{"DATABASE_URL": withHost(t, dbURL, proxy.Addr())}
	envB := map[string]string{"DATABASE_URL": dbURL}
	for k, v := range env {
		envA[k], envB[k] = v, v
	}
	a := startServer(t, envA)
	b := startServer(t, envB)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const source = "RestartTest"
	stream := func(p *process) string { return p.base + "/v1/posts/stream?source=" + source }
	onA := openSSE(t, ctx, "A", stream(a), key, "")
	onB := openSSE(t, ctx, "B", stream(b), key, "")
	leavesA := openSSE(t, ctx, "A, then B", stream(a), key, "")
	leavesB := openSSE(t, ctx, "B, then A", stream(b), key, "")

	// The subscription starts at the end of the stream when its resolver
	// runs, which the protocol does not announce: posts of another source
	// are written until it gets one, and then it runs.
	sub := subscribePosts(t, ctx, a.base, key)
	for i := int64(0); ; i++ {
		if err := writePosts(ctx, bdb, "Sentinel", []int64{8_000_000 + i}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-sub.next:
		case err := <-sub.err:
			t.Fatalf("subscription: %v", err)
		case <-time.After(200 * time.Millisecond):
			continue
		}
		break
	}
	var subGot []int64
	takeSub := func(want int) {
		t.Helper()
		deadline := time.After(deliveryBudget)
		for len(subGot) < want {
			select {
			case id := <-sub.next:
				if id >= 9_000_000 { // not a sentinel
					subGot = append(subGot, id)
				}
			case err := <-sub.err:
				t.Fatalf("subscription: %v after %d of %d posts", err, len(subGot), want)
			case <-deadline:
				t.Fatalf("subscription: %d of %d posts after %s", len(subGot), want, deliveryBudget)
			}
		}
	}

	// The poller: A's first page of the source with its ETag, as a bot
	// polls every few seconds (here as fast as it can).
	var pollMu sync.Mutex
	var lastPoll []int64
	pollErrs := make(chan error, 1)
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	pollDone := make(chan struct{})
	go func() {
		defer close(pollDone)
		etag := ""
		for pollCtx.Err() == nil {
			r, err := send(a.base, http.MethodGet, "/v1/posts?limit=100&source="+source, key, nil,
				map[string]string{"If-None-Match": etag})
			if err != nil {
				continue
			}
			switch r.status {
			case http.StatusNotModified:
			case http.StatusOK:
				var posts []struct {
					ID int64 `json:"id"`
				}
				if err := json.Unmarshal(r.env.Data, &posts); err != nil {
					pollErrs <- fmt.Errorf("poll: %v: %s", err, r.body)
					return
				}
				ids := make([]int64, len(posts))
				for i, p := range posts {
					ids[i] = p.ID
				}
				if !slices.IsSortedFunc(ids, func(x, y int64) int { return int(y - x) }) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
					pollErrs <- fmt.Errorf("poll: page not newest first without repeats: %v", ids)
					return
				}
				etag = r.header.Get("ETag")
				pollMu.Lock()
				lastPoll = ids
				pollMu.Unlock()
			case http.StatusInternalServerError: // while A is cut off
			default:
				pollErrs <- fmt.Errorf("poll: %d %s", r.status, r.body)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	// The ids of the three rounds of writes, shuffled: writers commit them
	// in no order of id.
	all := make([]int64, 90)
	for i := range all {
		all[i] = int64(9_000_000 + i)
	}
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	before, during, after := all[:30], all[30:60], all[60:]

	if err := writePosts(ctx, bdb, source, before); err != nil {
		t.Fatal(err)
	}
	leavesA.take(t, 5)
	leavesA.close()
	resumedOnB := openSSE(t, ctx, "A, then B", stream(b), key, leavesA.ids[len(leavesA.ids)-1])

	// The database "restarts" for A: every connection of A to it is cut,
	// new ones are refused, and posts are written meanwhile.
	proxy.Cut(refuse)
	leavesB.take(t, 5)
	leavesB.close()
	if err := writePosts(ctx, bdb, source, during); err != nil {
		t.Fatal(err)
	}
	if r := a.get(t, "/v1/health", ""); r.status != http.StatusServiceUnavailable {
		t.Fatalf("A's health during the cut: %d %s, want 503", r.status, r.body)
	}
	proxy.Restore()

	// The client that left B resumes on A as soon as A answers again.
	var resumedOnA *sseClient
	deadline := time.Now().Add(deliveryBudget)
	for resumedOnA == nil {
		var status int
		var body string
		resumedOnA, status, body = tryOpenSSE(ctx, "B, then A", stream(a), key, leavesB.ids[len(leavesB.ids)-1])
		if resumedOnA == nil {
			if status != http.StatusInternalServerError || time.Now().After(deadline) {
				t.Fatalf("resume on A after the restart: %d %s", status, body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	var want []int64
	order := func() {
		t.Helper()
		want = nil
		if err := bdb.NewRaw("SELECT id FROM posts WHERE source = ? ORDER BY stream_pos", source).Scan(ctx, &want); err != nil {
			t.Fatal(err)
		}
	}
	pollCaughtUp := func(n int) {
		t.Helper()
		var page []int64
		if err := bdb.NewRaw("SELECT id FROM posts WHERE source = ? ORDER BY id DESC", source).Scan(ctx, &page); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(deliveryBudget)
		for {
			pollMu.Lock()
			got := lastPoll
			pollMu.Unlock()
			if slices.Equal(got, page) {
				return
			}
			select {
			case err := <-pollErrs:
				t.Fatal(err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("A's first page after %d posts: %v, want %v", n, got, page)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	check := func(name string, got []int64, ids []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %d posts %v,\nwant %d in stream order %v", name, len(got), got, len(want), want)
		}
		if len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Errorf("%s: an event id repeats: %v", name, ids)
		}
	}
	// Nothing is written now: only A's catch-up after its reconnection
	// brings it the posts written while it was cut off.
	for _, round := range [][]int64{nil, after} {
		if round != nil {
			if err := writePosts(ctx, bdb, source, round); err != nil {
				t.Fatal(err)
			}
		}
		order()
		n := len(want)
		for _, c := range []*sseClient{onA, onB} {
			c.take(t, n)
		}
		resumedOnB.take(t, n-len(leavesA.got))
		resumedOnA.take(t, n-len(leavesB.got))
		takeSub(n)
		pollCaughtUp(n)
		check("A", onA.got, onA.ids)
		check("B", onB.got, onB.ids)
		check("A, then B", append(slices.Clone(leavesA.got), resumedOnB.got...), append(slices.Clone(leavesA.ids), resumedOnB.ids...))
		check("B, then A", append(slices.Clone(leavesB.got), resumedOnA.got...), append(slices.Clone(leavesB.ids), resumedOnA.ids...))
		check("subscription", subGot, nil)
		if t.Failed() {
			return
		}
	}
	stopPoll()
	<-pollDone
	select {
	case err := <-pollErrs:
		t.Fatal(err)
	default:
	}
	for _, c := range []*sseClient{onA, onB, resumedOnA, resumedOnB} {
		select {
		case ev, ok := <-c.events:
			if ok {
				t.Errorf("%s: an event beyond the posts written: %+v", c.name, ev)
			}
		default:
		}
	}
}
