package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph/live"
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

// endSink records how its member ended, taking its time to write the end
// (as a stream's final event over a slow network does).
type endSink struct{ ended chan live.End }

func (s *endSink) Deliver(*live.Member[[]int], *live.Page[[]int]) bool { return true }
func (s *endSink) Beat(*live.Member[[]int]) bool                       { return true }
func (s *endSink) Cut(m *live.Member[[]int])                           { m.Leave() }
func (s *endSink) End(m *live.Member[[]int], e live.End) {
	time.Sleep(200 * time.Millisecond)
	s.ended <- e
	m.Leave()
}

// TestServeEndsFeedsJoinedDuringShutdown: a stream's request in flight
// when SIGTERM comes joins its feed after the feeds have been ended (its
// handler hands the connection over and returns); serve still ends that
// feed, and waits for its final event, before it returns.
func TestServeEndsFeedsJoinedDuringShutdown(t *testing.T) {
	t.Parallel()
	l := live.New(live.Config{Heartbeat: time.Hour})
	feed := live.NewFeed[[]int](l, live.KindPosts, "test")
	read := func(context.Context, string) (*live.Page[[]int], error) { return &live.Page[[]int]{Next: "0"}, nil }
	sink := &endSink{ended: make(chan live.End, 1)}
	inHandler, feedsEnded := make(chan struct{}), make(chan struct{})
	var once sync.Once
	endFeeds := func(ctx context.Context) error {
		err := l.Shutdown(ctx)
		once.Do(func() { close(feedsEnded) })
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(inHandler)
		<-feedsEnded
		first, err := feed.Read(r.Context(), "k", read, "")
		if err != nil {
			t.Error(err)
			return
		}
		feed.Join(r.Context(), "k", read, sink, first, nil).Ready(false)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- serveOn(ctx, ln, srv, time.Minute, slog.New(slog.DiscardHandler), nil, endFeeds)
	}()
	go func() {
		if res, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
			res.Body.Close()
		}
	}()
	<-inHandler
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-sink.ended:
		if e.Code != live.EndShutdown.Code {
			t.Errorf("the feed joined during shutdown ended with %q, want %q", e.Code, live.EndShutdown.Code)
		}
	default:
		t.Error("serve returned before the feed joined during shutdown had its final event")
	}
}
