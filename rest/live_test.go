package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest/contract"
)

// The live feeds from outside: websockets, subscriptions over HTTP, and
// what every feed shares with the requests (limits, revocation).

// wsConn is a graphql-transport-ws client of the test's own.
type wsConn struct {
	t  *testing.T
	c  *websocket.Conn
	ct context.Context
}

// dialGraphQL opens a websocket to a's /graphql with the subprotocol of
// graphql-ws, with header pairs on the upgrade.
func dialGraphQL(t *testing.T, ctx context.Context, base string, header ...string) *wsConn {
	t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	c, _, err := websocket.Dial(ctx, strings.Replace(base, "http", "ws", 1)+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: h})
	if err != nil {
		t.Fatalf("dial /graphql: %v", err)
	}
	c.SetReadLimit(1 << 20)
	return &wsConn{t: t, c: c, ct: ctx}
}

func (w *wsConn) send(v any) {
	w.t.Helper()
	b, _ := json.Marshal(v)
	if err := w.c.Write(w.ct, websocket.MessageText, b); err != nil {
		w.t.Fatalf("websocket write: %v", err)
	}
}

// sendRaw sends text as it is.
func (w *wsConn) sendRaw(text string) error {
	return w.c.Write(w.ct, websocket.MessageText, []byte(text))
}

// read returns the next message, or the error that ended the connection.
func (w *wsConn) read() (map[string]any, error) {
	ctx, cancel := context.WithTimeout(w.ct, time.Minute)
	defer cancel()
	_, b, err := w.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("message %q: %w", b, err)
	}
	return m, nil
}

// init sends connection_init with payload and wants connection_ack.
func (w *wsConn) init(payload any) {
	w.t.Helper()
	w.send(map[string]any{"type": "connection_init", "payload": payload})
	m, err := w.read()
	if err != nil || m["type"] != "connection_ack" {
		w.t.Fatalf("connection_init: %v, %v", m, err)
	}
}

// next reads messages until one of operation id, answering the server's
// pings as graphql-ws clients do, and returns it.
func (w *wsConn) next(id string) map[string]any {
	w.t.Helper()
	for {
		m, err := w.read()
		if err != nil {
			w.t.Fatalf("operation %s: %v", id, err)
		}
		if m["type"] == "ping" {
			w.send(map[string]any{"type": "pong"})
		}
		if m["id"] == id {
			return m
		}
	}
}

// closeStatus reads until the server closes the connection and returns
// its close code and reason.
func (w *wsConn) closeStatus() (websocket.StatusCode, string) {
	for {
		_, err := w.read()
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason
			}
			return -1, err.Error()
		}
	}
}

// openFiles is the number of open descriptors of this process.
func openFiles(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

// TestRefusedWebsocketInit: a connection_init that the server refuses (no
// key, a made-up key, a key of a tier that may not use /graphql, a payload
// that is not an object) gets a close frame with the protocol's code and a
// reason, and a socket that never sends connection_init is closed; however
// many are refused, the server's goroutines and descriptors come back to
// where they were.
func TestRefusedWebsocketInit(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	tests := []struct {
		name    string
		message string // sent after the upgrade; "" sends nothing
		code    websocket.StatusCode
		reason  string
	}{
		{"no key", `{"type":"connection_init","payload":{}}`, 4401, "connection_init needs the key"},
		{"a made-up key", `{"type":"connection_init","payload":{"Authorization":"Bearer fapi_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}`, 4401, "API key is missing, invalid or revoked"},
		{"a free key", `{"type":"connection_init","payload":{"Authorization":"Bearer ` + a.free + `"}}`, 4403, "tier internal"},
		{"a payload that is not an object", `{"type":"connection_init","payload":[1,2]}`, 4400, "JSON object"},
		{"no connection_init", "", 4408, "initialisation timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := dialGraphQL(t, ctx, a.srv.URL)
			defer w.c.CloseNow()
			if tt.message != "" {
				if err := w.sendRaw(tt.message); err != nil {
					t.Fatal(err)
				}
			}
			code, reason := w.closeStatus()
			if code != tt.code || !strings.Contains(reason, tt.reason) {
				t.Errorf("closed with %d %q, want %d and a reason with %q", code, reason, tt.code, tt.reason)
			}
		})
	}

	t.Run("refusals leave nothing behind", func(t *testing.T) {
		// Warm up: the server's pool and the client's transport.
		a.get(t, "/v1/health", "")
		time.Sleep(100 * time.Millisecond)
		goroutines, files := runtime.NumGoroutine(), openFiles(t)
		for i := range 200 {
			w := dialGraphQL(t, ctx, a.srv.URL)
			payload := `{"type":"connection_init","payload":{}}`
			if i%2 == 1 {
				payload = `{"type":"connection_init","payload":[1,2]}`
			}
			if err := w.sendRaw(payload); err != nil {
				t.Fatal(err)
			}
			if code, _ := w.closeStatus(); code != 4401 && code != 4400 {
				t.Fatalf("refusal %d closed with %d", i, code)
			}
			w.c.CloseNow()
		}
		const slack = 10
		deadline := time.Now().Add(30 * time.Second)
		for {
			g, f := runtime.NumGoroutine(), openFiles(t)
			if g <= goroutines+slack && f <= files+slack {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 200 refused inits: %d goroutines (%d before), %d descriptors (%d before)", g, goroutines, f, files)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestSubscriptionOnATransportThatCannotCarryIt: a subscription sent as a
// plain POST or GET (as GraphiQL without a websocket URL would) is refused
// before execution with 422 and a message naming the transports that
// carry subscriptions, never a server error.
func TestSubscriptionOnATransportThatCannotCarryIt(t *testing.T) {
	a := newAPI(t)
	query := `subscription { postAdded { id } }`
	body, _ := json.Marshal(map[string]any{"query": query})
	for _, r := range []*resp{
		a.do(t, http.MethodPost, "/graphql", a.intern, bytes.NewReader(body), "Content-Type", "application/json"),
		a.get(t, "/graphql?query="+strings.ReplaceAll(query, " ", "%20"), a.intern),
	} {
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(r.plain), "websocket") ||
			!strings.Contains(string(r.plain), `"code":"bad_request"`) {
			t.Errorf("%s: %d %s; want 422 bad_request naming the websocket", r.Request.Method, r.StatusCode, r.plain)
		}
	}
}

// TestSubscriptionsAreLimitedWithStreams: a key's websocket subscriptions
// and SSE streams share its tier's limit of open live feeds; one
// subscription over it is an error of that operation (rate_limited), the
// others go on.
func TestSubscriptionsAreLimitedWithStreams(t *testing.T) {
	a := newAPI(t, withLive(live.Config{Limits: map[string]int{"internal": 2}}))
	key, id := a.newKeyID(db.TierInternal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, _ := openStream(t, ctx, a.srv.URL+"/v1/firehose/stream", key, "")
	defer stream.Body.Close()
	w := dialGraphQL(t, ctx, a.srv.URL, "Authorization", "Bearer "+key)
	defer w.c.CloseNow()
	w.init(map[string]any{})
	w.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": `subscription { postAdded { id } }`}})
	waitFor(t, "the subscription running", func() bool { return a.cfg.Live.Opened(id) == 2 })
	w.send(map[string]any{"id": "2", "type": "subscribe", "payload": map[string]any{"query": `subscription { firehoseMessageAdded { id } }`}})
	m := w.next("2")
	if m["type"] != "next" || !strings.Contains(fmt.Sprint(m["payload"]), "code:rate_limited") {
		t.Fatalf("a third live feed of a key limited to 2: %v; want its errors with rate_limited", m)
	}
	if m := w.next("2"); m["type"] != "complete" {
		t.Fatalf("after the refusal: %v, want complete", m)
	}
	// The refused subscription took no slot: a query on the socket runs.
	w.send(map[string]any{"id": "3", "type": "subscribe", "payload": map[string]any{"query": `{ health { status } }`}})
	if m := w.next("3"); m["type"] != "next" {
		t.Fatalf("a query beside the subscription: %v", m)
	}
}

// TestSocketOperationsAreCharged: every operation sent on a websocket
// counts against its key's rate limit as a request does; once it is spent
// the operation is answered rate_limited and does not run.
func TestSocketOperationsAreCharged(t *testing.T) {
	const limit = 5
	a := newAPI(t, func(c *Config) { c.Auth.TierRateLimits = map[string]int{"internal": limit} })
	key := a.newKey(db.TierInternal)
	ctx := context.Background()
	w := dialGraphQL(t, ctx, a.srv.URL)
	defer w.c.CloseNow()
	// The connection counts once.
	w.init(map[string]any{"Authorization": "Bearer " + key})
	ran, refused := 0, 0
	for i := range 2 * limit {
		id := fmt.Sprint(i)
		w.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": `{ posts(first: 1) { nodes { id } } }`}})
		m := w.next(id)
		switch {
		case m["type"] == "next" && m["payload"].(map[string]any)["errors"] == nil:
			ran++
		case strings.Contains(fmt.Sprint(m["payload"]), "rate_limited"):
			refused++
		default:
			t.Fatalf("operation %d: %v", i, m)
		}
	}
	if ran != limit-1 || refused != limit+1 {
		t.Errorf("%d operations ran and %d were refused on a socket of a key limited to %d a minute (the connection counts once); want %d and %d",
			ran, refused, limit, limit-1, limit+1)
	}
	// The socket's use shows on the key's next request.
	r := a.get(t, "/v1/sources", key)
	r.wantStatus(t, http.StatusTooManyRequests)
}

// TestRevokedKeysFeedsEnd: once a key is revoked, its open SSE stream ends
// with an unauthorized event, its websocket closes with 4401 (its
// subscription with an unauthorized error first, when the error is sent
// before the close), and its subscription over GraphQL's SSE transport
// ends, all within seconds.
func TestRevokedKeysFeedsEnd(t *testing.T) {
	a := newAPI(t)
	a = a.variant(t, withLive(live.Config{Revoked: a.keys.Revoked, RevocationCheck: 100 * time.Millisecond}))
	key, id := a.newKeyID(db.TierInternal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, events := openStream(t, ctx, a.srv.URL+"/v1/posts/stream", key, "")
	w := dialGraphQL(t, ctx, a.srv.URL)
	defer w.c.CloseNow()
	w.init(map[string]any{"Authorization": "Bearer " + key})
	w.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": `subscription { postAdded { id } }`}})
	sseBody, _ := json.Marshal(map[string]any{"query": `subscription { firehoseMessageAdded { id } }`})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.srv.URL+"/graphql", bytes.NewReader(sseBody))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	sse, err := client.Do(req)
	if err != nil || sse.StatusCode != http.StatusOK {
		t.Fatalf("subscription over SSE: %v %v", sse, err)
	}
	defer sse.Body.Close()
	waitFor(t, "three live feeds open", func() bool { return a.cfg.Live.Opened(id) == 3 })

	if _, err := a.keys.Revoke(ctx, key); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	select {
	case ev := <-events:
		if ev.name != "error" || !strings.Contains(ev.data, `"code":"unauthorized"`) {
			t.Errorf("the stream's last event: %+v, want an error event with unauthorized", ev)
		}
	case <-time.After(time.Minute):
		t.Fatal("the stream of a revoked key goes on")
	}
	if code, reason := w.closeStatus(); code != 4401 || !strings.Contains(reason, "revoked") {
		t.Errorf("the websocket of a revoked key closed with %d %q, want 4401", code, reason)
	}
	if _, err := io.Copy(io.Discard, sse.Body); err != nil {
		t.Errorf("the SSE subscription of a revoked key: %v", err)
	}
	t.Logf("every feed ended %v after the revocation", time.Since(revoked).Round(time.Millisecond))
	waitFor(t, "the revoked key's slots freed", func() bool { return a.cfg.Live.Opened(id) == 0 })
}

// newKeyID issues a key of tier and returns it with its id.
func (a *api) newKeyID(tier db.Tier) (string, int64) {
	a.t.Helper()
	secret, k, err := a.keys.Create(context.Background(), tier, "test "+string(tier))
	if err != nil {
		a.t.Fatalf("create key: %v", err)
	}
	return secret, k.ID
}

// withLive gives the API live feeds of cfg, which the test can inspect.
func withLive(cfg live.Config) func(*Config) {
	return func(c *Config) { c.Live = live.New(cfg) }
}

// TestStreamClientThatSendsIsCut: a client that sends bytes after its
// stream's request (which nothing answers) is cut at its first byte: the
// server reads no more of it, and its slot is freed.
func TestStreamClientThatSendsIsCut(t *testing.T) {
	a := newAPI(t, withLive(live.Config{}))
	key, id := a.newKeyID(db.TierFree)
	rs := openRawStream(t, a.srv.Listener.Addr().String(), "/v1/posts/stream", key, 0)
	if _, err := rs.chunk(); err != nil {
		t.Fatal(err)
	}
	// Mebibytes of junk: the server stops reading at the first byte.
	junk := bytes.Repeat([]byte("x"), 1<<20)
	go func() {
		for range 8 {
			if _, err := rs.conn.Write(junk); err != nil {
				return
			}
		}
	}()
	_ = rs.conn.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := io.Copy(io.Discard, rs.br); err != nil && !isReset(err) {
		t.Fatalf("the stream of a client that sends: %v, want it closed", err)
	}
	waitFor(t, "the cut stream's slot freed", func() bool { return a.cfg.Live.Opened(id) == 0 })
}

// isReset reports a connection the peer reset (it closed with our bytes unread).
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && strings.Contains(op.Err.Error(), "reset")
}

// TestStreamHasNoHead: HEAD on either stream is 405 with Allow: GET, like
// any method a stream does not take, and does not count against the key.
func TestStreamHasNoHead(t *testing.T) {
	a := newAPI(t)
	key := a.newKey(db.TierFree)
	before := a.get(t, "/v1/sources", key).Header.Get("RateLimit-Remaining")
	for _, path := range []string{"/v1/posts/stream", "/v1/firehose/stream"} {
		r := a.do(t, http.MethodHead, path, key, nil)
		if r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET" {
			t.Errorf("HEAD %s: %d, Allow %q; want 405 with Allow: GET", path, r.StatusCode, r.Header.Get("Allow"))
		}
	}
	after := a.get(t, "/v1/sources", key).Header.Get("RateLimit-Remaining")
	if want := fmt.Sprint(atoi(t, before) - 1); after != want {
		t.Errorf("RateLimit-Remaining %s after two HEADs and a GET from %s, want %s: a HEAD was charged", after, before, want)
	}
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// TestStreamsTakeTheirListsParameters: each stream takes exactly its list's
// parameters but for paging (every filter, and the choice of fields), and
// the OpenAPI document says so: a parameter added to a list that its
// stream does not take, or that the document does not list, fails here.
func TestStreamsTakeTheirListsParameters(t *testing.T) {
	a := newAPI(t)
	s := a.handler.(*apiHandler)
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Ref  string `json:"$ref"`
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"paths"`
		Components struct {
			Parameters map[string]struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(a.doc, &doc); err != nil {
		t.Fatal(err)
	}
	documented := func(path string) []string {
		var out []string
		for _, p := range doc.Paths[path]["get"].Parameters {
			name, in := p.Name, p.In
			if p.Ref != "" {
				c := doc.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
				name, in = c.Name, c.In
			}
			if in == "query" {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	names := func(ps []contract.Param) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, st := range s.streamEps {
		list := strings.TrimSuffix(st.Path, "/stream")
		var want []string
		for _, ep := range s.endpoints {
			if ep.Path != list {
				continue
			}
			for _, p := range ep.Params {
				if !slices.Contains([]string{"limit", "cursor", "since_id", "after"}, p.Name) {
					want = append(want, p.Name)
				}
			}
		}
		if len(want) == 0 {
			t.Fatalf("%s: no list %s", st.Path, list)
		}
		want = append(want, "cursor")
		slices.Sort(want)
		if got := names(st.Params); !slices.Equal(got, want) {
			t.Errorf("%s takes %v, want its list's parameters but paging, and its cursor: %v", st.Path, got, want)
		}
		if got := documented(st.Path); !slices.Equal(got, want) {
			t.Errorf("the OpenAPI document gives %s the parameters %v, the router %v", st.Path, got, want)
		}
	}
}

// TestStreamsFilterLikeTheirLists: the coins and q filters of the lists
// work on their streams: a stream sends only the items its list would
// show with the same filters.
func TestStreamsFilterLikeTheirLists(t *testing.T) {
	hub := live.NewHub()
	a := newAPI(t, withLive(live.Config{Hub: hub}))
	key := a.newKey(db.TierPro)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, coins := openStream(t, ctx, a.srv.URL+"/v1/posts/stream?source=FilterTest&coins=btc", key, "")
	_, query := openStream(t, ctx, a.srv.URL+"/v1/firehose/stream?q=%22spot+etf%22", key, "")
	if _, err := a.bdb.ExecContext(ctx, `INSERT INTO posts (id, source, username, body, created_at, coins) VALUES
		(9100001, 'FilterTest', 't', 'ETH moves', now(), ARRAY['ETH']),
		(9100002, 'FilterTest', 't', 'BTC moves', now(), ARRAY['BTC'])`); err != nil {
		t.Fatal(err)
	}
	if _, err := a.bdb.ExecContext(ctx, `INSERT INTO firehose_messages (id, pane, source, title, body, important, created_at) VALUES
		(9200001, 'news', 'wire', 'Markets', 'nothing about funds', false, now()),
		(9200002, 'news', 'wire', 'SEC approves spot ETF', 'a spot ETF for SOL', false, now())`); err != nil {
		t.Fatal(err)
	}
	hub.Publish(live.KindPosts)
	hub.Publish(live.KindFirehose)
	for _, c := range []struct {
		name   string
		events <-chan sseEvent
		want   string
	}{{"coins=btc", coins, `"id":9100002`}, {`q="spot etf"`, query, `"id":9200002`}} {
		select {
		case ev := <-c.events:
			if !strings.Contains(ev.data, c.want) {
				t.Errorf("%s: the stream sent %s, want only the item with %s", c.name, ev.data, c.want)
			}
		case <-time.After(time.Minute):
			t.Errorf("%s: nothing within a minute", c.name)
		}
	}
}

// TestPollingAfterIsExact: while concurrent writers commit posts with
// shuffled ids (an id may become visible after a larger one), a poller
// that passes each answer's meta.position as after, walking next_cursor,
// gets every post exactly once; each answer holds its items in the order
// they became visible, newest first.
func TestPollingAfterIsExact(t *testing.T) {
	a := newAPI(t)
	key := a.newKey(db.TierInternal)
	ctx := context.Background()
	const source = "ExactPoll"
	start := a.get(t, "/v1/posts?source="+source, key)
	start.wantStatus(t, http.StatusOK)
	var meta struct {
		Meta struct {
			Position string `json:"position"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(start.plain, &meta); err != nil || meta.Meta.Position == "" {
		t.Fatalf("a first page without meta.position: %s", start.plain)
	}
	position := meta.Meta.Position

	const writers, perTx, txs = 3, 4, 8
	all := make([]int64, writers*perTx*txs)
	for i := range all {
		all[i] = int64(9_300_000 + i)
	}
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	done := make(chan error, writers)
	for w := range writers {
		mine := all[w*perTx*txs : (w+1)*perTx*txs]
		go func() {
			for i := range txs {
				if err := insertPosts(ctx, a.bdb, source, mine[i*perTx:(i+1)*perTx], 2*time.Millisecond); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	seen := map[int64]int{}
	var got []int64
	poll := func() {
		path := "/v1/posts?limit=5&source=" + source + "&after=" + position
		next := ""
		for {
			r := a.get(t, path, key)
			r.wantStatus(t, http.StatusOK)
			if next == "" {
				if err := json.Unmarshal(r.plain, &meta); err != nil || meta.Meta.Position == "" {
					t.Fatalf("an after answer without meta.position: %s", r.plain)
				}
				next = meta.Meta.Position
			}
			for _, item := range r.items(t) {
				var id int64
				_ = json.Unmarshal(item["id"], &id)
				seen[id]++
				got = append(got, id)
			}
			if r.env.Pagination == nil || !r.env.Pagination.HasMore {
				break
			}
			path = "/v1/posts?limit=5&source=" + source + "&after=" + position + "&cursor=" + *r.env.Pagination.NextCursor
		}
		position = next
	}
	finished := 0
	for finished < writers {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished++
		default:
		}
		poll()
	}
	// The writers have committed; one more answer sees what became visible
	// since the last.
	poll()
	for _, id := range all {
		if seen[id] != 1 {
			t.Errorf("post %d seen %d times", id, seen[id])
		}
	}
	if len(got) != len(all) {
		t.Errorf("%d items from the polls, want %d", len(got), len(all))
	}
	// A poll now holds nothing: nothing became visible since.
	r := a.get(t, "/v1/posts?source="+source+"&after="+position, key)
	if items := r.items(t); len(items) != 0 {
		t.Errorf("a poll after everything was seen holds %d items", len(items))
	}
	bad := a.get(t, "/v1/posts?after=nope", key)
	if bad.StatusCode != http.StatusBadRequest || !strings.Contains(string(bad.plain), "after must be") {
		t.Errorf("a bad after: %d %s", bad.StatusCode, bad.plain)
	}
}

// TestStreamSendsItemsOverThePageBudget: a stream reads its pages within
// the byte budget of a page, yet an item whose raw payload alone is over
// the budget is still sent, whole, by itself (a stream cannot skip it):
// every item arrives, once, in order.
func TestStreamSendsItemsOverThePageBudget(t *testing.T) {
	hub := live.NewHub()
	a := newAPI(t, withLive(live.Config{Hub: hub}), func(c *Config) { c.Graph.Limits.MaxPageBytes = graph.MinPageBytes })
	key := a.newKey(db.TierInternal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, events := openStream(t, ctx, a.srv.URL+"/v1/posts/stream?source=BigStream&include_raw=true", key, "")
	sizes := []int{600 << 10, 600 << 10, 1536 << 10, 600 << 10}
	for i, n := range sizes {
		if _, err := a.bdb.ExecContext(ctx, `INSERT INTO posts (id, source, username, body, created_at, raw)
			VALUES (?, 'BigStream', 'b', 'b', now(), jsonb_build_object('blob', repeat('r', ?)))`, 9_600_000+i, n); err != nil {
			t.Fatal(err)
		}
	}
	hub.Publish(live.KindPosts)
	var got []int64
	var ids []string
	collect(t, "big items", events, &got, &ids, len(sizes))
	for i, id := range got {
		if id != int64(9_600_000+i) {
			t.Fatalf("got %v, want the four posts in order", got)
		}
	}
}
