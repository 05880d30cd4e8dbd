//go:build unix

package rest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest/auth"
)

// startStreamServer is startReplica that also returns the server (its
// streams' state) and logs to log.
func startStreamServer(t *testing.T, url, appName string, ks *keys.Service, streams live.Config, log *slog.Logger) (*apiHandler, *httptest.Server) {
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
		Graph: graph.Config{Store: db.NewStore(pool)}, Version: "test", Logger: log,
		Auth: auth.Config{Keys: ks, RateLimit: 100000, AuthFailureLimit: 100000}, Live: lv,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := h.(*apiHandler)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); cancel(); <-done })
	return s, srv
}

// rawStream is a stream read over a TCP connection of the test's own: no
// goroutine of the client, and the bytes as the server sent them.
type rawStream struct {
	conn net.Conn
	br   *bufio.Reader
	head string
}

// openRawStream sends the request of a stream and reads the response head
// (only the head: the body stays in the socket). rcvbuf > 0 sets the
// socket's receive buffer, before it connects (a buffer shrunk after the
// handshake can stall the connection for minutes).
func openRawStream(t *testing.T, addr, path, key string, rcvbuf int) *rawStream {
	t.Helper()
	var d net.Dialer
	if rcvbuf > 0 {
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
			}); err != nil {
				return err
			}
			return serr
		}
	}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: feedapi\r\nAuthorization: Bearer %s\r\n\r\n", path, key); err != nil {
		t.Fatal(err)
	}
	// Byte by byte: the reader must not take body bytes along with the head.
	rs := &rawStream{conn: conn, br: bufio.NewReaderSize(conn, 16)}
	var head strings.Builder
	for !strings.HasSuffix(head.String(), "\r\n\r\n") {
		b := make([]byte, 1)
		if _, err := io.ReadFull(conn, b); err != nil {
			t.Fatalf("read the head of %s: %v (so far %q)", path, err, head.String())
		}
		head.Write(b)
	}
	rs.head = head.String()
	if !strings.HasPrefix(rs.head, "HTTP/1.1 200 ") {
		t.Fatalf("open %s: %q", path, rs.head)
	}
	return rs
}

// chunk reads one chunk of the body and returns its payload; io.EOF after
// the last chunk (0\r\n\r\n).
func (rs *rawStream) chunk() ([]byte, error) {
	line, err := rs.br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("chunk size line: %w", err)
	}
	if !strings.HasSuffix(line, "\r\n") {
		return nil, fmt.Errorf("chunk size line %q does not end in CRLF", line)
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(line, "\r\n"), 16, 64)
	if err != nil {
		return nil, fmt.Errorf("chunk size line %q: %w", line, err)
	}
	p := make([]byte, n+2)
	if _, err := io.ReadFull(rs.br, p); err != nil {
		return nil, fmt.Errorf("chunk of %d bytes: %w", n, err)
	}
	if string(p[n:]) != "\r\n" {
		return nil, fmt.Errorf("chunk of %d bytes ends in %q, not CRLF", n, p[n:])
	}
	if n == 0 {
		return nil, io.EOF
	}
	return p[:n], nil
}

// events reads the events of the chunked body into out until it ends.
func (rs *rawStream) events(out chan<- sseEvent) {
	pr, pw := io.Pipe()
	go func() {
		for {
			p, err := rs.chunk()
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			if _, err := pw.Write(p); err != nil {
				return
			}
		}
	}()
	readEvents(pr, out)
}

// TestFanoutGoroutinesPerIdleStream: an idle stream costs the server at
// most one goroutine (its connection's watcher; net/http's two per
// connection end with the hand-over), and closing the clients frees the
// slots and the goroutines.
func TestFanoutGoroutinesPerIdleStream(t *testing.T) {
	bdb, url := dbtest.NewWithURL(t)
	ks := keys.NewService(bdb, keys.Options{})
	key, _, err := ks.Create(context.Background(), db.TierInternal, "goroutines")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ks.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	s, srv := startStreamServer(t, url, "feedapi_listen_goroutines", ks, live.Config{Heartbeat: time.Hour}, nil)
	addr := srv.Listener.Addr().String()
	// The group's goroutine comes with the first stream.
	first := openRawStream(t, addr, "/v1/posts/stream?source=Idle", key, 0)
	waitFor(t, "first stream open", func() bool { return s.live.Opened(p.KeyID) == 1 })
	before := runtime.NumGoroutine()
	const n = 40
	conns := make([]*rawStream, n)
	for i := range conns {
		conns[i] = openRawStream(t, addr, "/v1/posts/stream?source=Idle", key, 0)
	}
	// slack: goroutines of the test's process that come and go (the
	// database pool's connections); net/http's two per connection would
	// be 2n.
	const slack = 10
	waitFor(t, fmt.Sprintf("at most one goroutine per stream (%d before)", before), func() bool {
		return runtime.NumGoroutine()-before <= n+slack
	})
	if got := s.live.Opened(p.KeyID); got != n+1 {
		t.Errorf("%d streams hold a slot, want %d", got, n+1)
	}
	// Every stream still gets what is written.
	if err := insertPosts(context.Background(), bdb, "Idle", []int64{7_200_000}, 0); err != nil {
		t.Fatal(err)
	}
	for i, rs := range append(conns, first) {
		for {
			p, err := rs.chunk()
			if err != nil {
				t.Fatalf("stream %d: %v", i, err)
			}
			if bytes.HasPrefix(p, []byte("event: post\n")) {
				break
			}
		}
	}
	for _, rs := range conns {
		rs.conn.Close()
	}
	waitFor(t, "the closed streams' slots freed", func() bool { return s.live.Opened(p.KeyID) == 1 })
	waitFor(t, "the closed streams' goroutines gone", func() bool { return runtime.NumGoroutine() <= before+slack })
	first.conn.Close()
	waitFor(t, "the group gone with its last stream", func() bool {
		return s.streamEps[0].feed.Groups() == 0 && s.live.Opened(p.KeyID) == 0
	})
}

// TestFanoutDrainCompletesPartialWrites: a client that stops reading while
// more than the socket buffers hold is written gets, once it reads again,
// every post exactly once and in order, those written while it was behind
// included (it catches up from its own position), and then live posts.
func TestFanoutDrainCompletesPartialWrites(t *testing.T) {
	bdb, url := dbtest.NewWithURL(t)
	ks := keys.NewService(bdb, keys.Options{})
	key, _, err := ks.Create(context.Background(), db.TierInternal, "drain")
	if err != nil {
		t.Fatal(err)
	}
	// No write is slow enough to end the stream.
	s, srv := startStreamServer(t, url, "feedapi_listen_drain", ks, live.Config{SlowWrite: time.Hour}, nil)
	ctx := context.Background()
	rs := openRawStream(t, srv.Listener.Addr().String(), "/v1/posts/stream?source=Drain", key, 4096)
	// Reading the comment chunk makes sure the stream has joined before
	// the posts are written.
	if p, err := rs.chunk(); err != nil || !bytes.HasPrefix(p, []byte(": feedapi stream")) {
		t.Fatalf("first chunk %q, %v", p, err)
	}
	// 6 MB in one transaction: one read, one chunk, more than the kernel
	// takes for a client that does not read.
	big := strings.Repeat("y", 150_000)
	if _, err := bdb.ExecContext(ctx, `INSERT INTO posts (id, source, username, body, created_at)
		SELECT g, 'Drain', 'tester', ?, now() FROM generate_series(7300000, 7300039) g`, big); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a write left to the drain", func() bool { return s.drains.Load() > 0 })
	// Written while the stream is behind.
	if err := insertPosts(ctx, bdb, "Drain", []int64{7_300_100, 7_300_101, 7_300_102}, 0); err != nil {
		t.Fatal(err)
	}
	events := make(chan sseEvent, 16)
	go rs.events(events)
	var got []int64
	var ids []string
	collect(t, "drained", events, &got, &ids, 43)
	if err := insertPosts(ctx, bdb, "Drain", []int64{7_300_200}, 0); err != nil {
		t.Fatal(err)
	}
	collect(t, "live", events, &got, &ids, 44)
	if want := streamOrder(t, ctx, bdb, "Drain"); !slices.Equal(got, want) {
		t.Errorf("got %v,\nwant %v", got, want)
	}
}

// TestFanoutWireAndAccessLog: on the wire a stream is a chunked HTTP/1.1
// body (Connection: close: the server closes the connection after it);
// at shutdown the final event is followed by the last chunk and the close.
// The access log has one line for the stream, status 200, written when it
// ended, with its bytes; and a client's close frees its slot for the next
// stream of its key.
func TestFanoutWireAndAccessLog(t *testing.T) {
	bdb, url := dbtest.NewWithURL(t)
	ks := keys.NewService(bdb, keys.Options{})
	key, _, err := ks.Create(context.Background(), db.TierFree, "wire")
	if err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var logBuf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logBuf.Write(p)
	}), nil))
	s, srv := startStreamServer(t, url, "feedapi_listen_wire", ks,
		live.Config{Limits: map[string]int{"free": 1}}, log)
	addr := srv.Listener.Addr().String()

	// A client's close frees the key's only slot.
	closed := openRawStream(t, addr, "/v1/posts/stream?source=Wire", key, 0)
	closed.conn.Close()
	// A stream that resumes from a bad position is refused with 429 while
	// the slot is taken, with 400 once it is free.
	waitFor(t, "the closed stream's slot freed", func() bool {
		return badResumeStatus(t, srv.URL, key) == http.StatusBadRequest
	})
	rs := openRawStream(t, addr, "/v1/posts/stream?source=Wire", key, 0)
	for _, h := range []string{"\r\nTransfer-Encoding: chunked\r\n", "\r\nContent-Type: text/event-stream\r\n", "\r\nConnection: close\r\n"} {
		if !strings.Contains(rs.head, h) {
			t.Errorf("head %q lacks %q", rs.head, strings.TrimSpace(h))
		}
	}
	p, err := rs.chunk()
	if err != nil || string(p) != ": feedapi stream; retry after 1 s on disconnect\nretry: 1000\n\n" {
		t.Fatalf("first chunk %q, %v", p, err)
	}
	if err := insertPosts(context.Background(), bdb, "Wire", []int64{7_400_000}, 0); err != nil {
		t.Fatal(err)
	}
	p, err = rs.chunk()
	if err != nil || !bytes.HasPrefix(p, []byte("event: post\nid: ")) || !bytes.HasSuffix(p, []byte("}\n\n")) {
		t.Fatalf("post chunk %q, %v", p, err)
	}
	go func() { _ = s.live.Shutdown(context.Background()) }()
	p, err = rs.chunk()
	want := `event: error` + "\n" + `data: {"error":{"code":"shutting_down","message":"the server is shutting down; reconnect with Last-Event-ID to resume"}}` + "\n\n"
	if err != nil || string(p) != want {
		t.Fatalf("final chunk %q, %v; want %q", p, err, want)
	}
	if p, err := rs.chunk(); err != io.EOF {
		t.Fatalf("after the final event: %q, %v; want the last chunk", p, err)
	}
	rs.conn.SetReadDeadline(time.Now().Add(time.Minute))
	if rest, err := io.ReadAll(rs.br); err != nil || len(rest) > 0 {
		t.Errorf("after the last chunk: %q, %v; want the server's close", rest, err)
	}

	type line struct {
		Msg        string  `json:"msg"`
		Route      string  `json:"route"`
		Status     int     `json:"status"`
		Bytes      int64   `json:"bytes"`
		DurationMS float64 `json:"duration_ms"`
	}
	var streamLines []line
	waitFor(t, "the stream's access log line", func() bool {
		logMu.Lock()
		defer logMu.Unlock()
		streamLines = nil
		for _, l := range strings.Split(logBuf.String(), "\n") {
			var ln line
			if json.Unmarshal([]byte(l), &ln) == nil && ln.Msg == "request" && ln.Route == "/v1/posts/stream" && ln.Status == 200 {
				streamLines = append(streamLines, ln)
			}
		}
		// The closed stream and the last one.
		return len(streamLines) >= 2
	})
	last := streamLines[len(streamLines)-1]
	if min := int64(len(": feedapi stream; retry after 1 s on disconnect\nretry: 1000\n\n") + len(want)); last.Bytes <= min {
		t.Errorf("the last stream's line says %d bytes, want more than %d (the comment, a post, the final event)", last.Bytes, min)
	}
}

// badResumeStatus is the status of a stream asked with a Last-Event-ID
// that is not a position.
func badResumeStatus(t *testing.T, base, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/posts/stream", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Last-Event-ID", "nope")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	_, _ = io.Copy(io.Discard, r.Body)
	return r.StatusCode
}

// writerFunc is an io.Writer.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestFanoutHeartbeats: every stream of a group gets its heartbeat
// comments, each at its own time.
func TestFanoutHeartbeats(t *testing.T) {
	bdb, url := dbtest.NewWithURL(t)
	ks := keys.NewService(bdb, keys.Options{})
	key, _, err := ks.Create(context.Background(), db.TierInternal, "heartbeats")
	if err != nil {
		t.Fatal(err)
	}
	_, srv := startStreamServer(t, url, "feedapi_listen_heartbeats", ks, live.Config{Heartbeat: 50 * time.Millisecond}, nil)
	var streams []*rawStream
	for range 3 {
		streams = append(streams, openRawStream(t, srv.Listener.Addr().String(), "/v1/posts/stream?source=Beat", key, 0))
	}
	for i, rs := range streams {
		rs.conn.SetReadDeadline(time.Now().Add(time.Minute))
		if p, err := rs.chunk(); err != nil || !bytes.HasPrefix(p, []byte(": feedapi stream")) {
			t.Fatalf("stream %d: first chunk %q, %v", i, p, err)
		}
		for range 2 {
			if p, err := rs.chunk(); err != nil || string(p) != ": heartbeat\n\n" {
				t.Fatalf("stream %d: %q, %v; want a heartbeat", i, p, err)
			}
		}
	}
}
