package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestShutdownCutsAClientThatDoesNotRead: a stream's client that stops
// reading while the server still has items for it does not hold up
// shutdown: on SIGTERM the reading client gets its final event, the one
// that does not read is cut, and the process exits 0 well within its
// grace, although a write to that client may block for longer.
func TestShutdownCutsAClientThatDoesNotRead(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)
	key, _ := newKey(t, bdb, db.TierPro)
	// A write may take a minute before the client counts as slow: only
	// shutdown can end the stuck stream within the grace.
	const grace = 15 * time.Second
	p := startServer(t, map[string]string{"DATABASE_URL": dbURL}, "--shutdown-grace", grace.String(),
		"--stream-slow-write", "1m")
	addr := strings.TrimPrefix(p.base, "http://")

	stuck, fd := dialSmallBuffer(t, addr, 4096)
	if _, err := fmt.Fprintf(stuck, "GET /v1/posts/stream?source=Stuck HTTP/1.1\r\nHost: feedapi\r\nAuthorization: Bearer %s\r\n\r\n", key); err != nil {
		t.Fatal(err)
	}
	head, err := bufio.NewReaderSize(stuck, 16).ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "HTTP/1.1 200") {
		t.Fatalf("the stuck client's stream: %q, %v", head, err)
	}
	reading, err := readingStream(p.base+"/v1/firehose/stream", key)
	if err != nil {
		t.Fatal(err)
	}
	// Megabytes for the client that reads nothing more: more than the
	// kernel's buffers on both sides hold.
	big := strings.Repeat("z", 150_000)
	if _, err := bdb.ExecContext(context.Background(), `INSERT INTO posts (id, source, username, body, created_at)
		SELECT g, 'Stuck', 'tester', ?, now() FROM generate_series(8800000, 8800039) g`, big); err != nil {
		t.Fatal(err)
	}
	// The server writes until the client's receive buffer is full.
	waitUntil(t, "the stuck client's buffer full", func() bool { return queued(t, fd) >= 2048 })

	p.signal(syscall.SIGTERM)
	start := time.Now()
	select {
	case body := <-reading:
		if !strings.Contains(body, `"code":"shutting_down"`) {
			t.Errorf("the reading client's stream ended with %q, want the shutting_down event", body)
		}
	case <-time.After(2 * grace):
		t.Fatal("the reading client's stream did not end")
	}
	if code := p.wait(2 * grace); code != 0 {
		t.Errorf("exit code %d, want 0 (a stream that does not read is cut)", code)
	}
	if took := time.Since(start); took >= grace {
		t.Errorf("exited %v after SIGTERM, not within the grace of %v", took, grace)
	}
}

// dialSmallBuffer connects to addr with a receive buffer of rcvbuf bytes
// (set before the handshake) and returns the connection and its descriptor.
func dialSmallBuffer(t *testing.T, addr string, rcvbuf int) (net.Conn, int) {
	t.Helper()
	fd := -1
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(f uintptr) {
			fd = int(f)
			serr = syscall.SetsockoptInt(int(f), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, fd
}

// queued is the number of bytes waiting unread in the socket fd.
func queued(t *testing.T, fd int) int {
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err != nil {
		t.Fatalf("FIONREAD: %v", err)
	}
	return n
}

// readingStream opens a stream and reads all of it, handing the body over
// when it ends.
func readingStream(url, key string) (<-chan string, error) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %d", url, res.StatusCode)
	}
	out := make(chan string, 1)
	go func() {
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		out <- string(b)
	}()
	return out, nil
}

// waitUntil polls cond until it holds, for at most a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
