package main

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestStreamsEndOnShutdown: on SIGTERM every open stream gets its final
// shutting_down event and the end of its body before the process exits
// (with 0): the streams took their connections from net/http, whose
// Shutdown no longer waits for them, so serve does.
func TestStreamsEndOnShutdown(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)
	key, _ := newKey(t, bdb, db.TierPro)
	p := startServer(t, map[string]string{"DATABASE_URL": dbURL}, "--shutdown-grace", "20s")
	type result struct {
		body string
		err  error
	}
	paths := []string{"/v1/posts/stream", "/v1/posts/stream?source=Nobody", "/v1/firehose/stream"}
	results := make(chan result, len(paths))
	for _, path := range paths {
		req, _ := http.NewRequest(http.MethodGet, p.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
		go func() {
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			results <- result{string(b), err}
		}()
	}
	p.signal(syscall.SIGTERM)
	const final = "event: error\ndata: {\"error\":{\"code\":\"shutting_down\","
	for range paths {
		select {
		case r := <-results:
			if r.err != nil || !strings.Contains(r.body, final) || !strings.HasSuffix(r.body, "\n\n") {
				t.Errorf("a stream at shutdown: %q, %v; want the shutting_down event and the end of the body", r.body, r.err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("a stream still open 60 s after SIGTERM")
		}
	}
	if code := p.wait(60 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}
