package live

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memSink is a sink that takes every page at once and keeps its items.
type memSink struct {
	mu    sync.Mutex
	items []int
	ended *End
}

func (s *memSink) Deliver(_ *Member[[]int], p *Page[[]int]) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = append(s.items, p.Items...)
	return true
}
func (s *memSink) Beat(*Member[[]int]) bool { return true }
func (s *memSink) End(m *Member[[]int], e End) {
	s.mu.Lock()
	s.ended = &e
	s.mu.Unlock()
	m.Leave()
}
func (s *memSink) Cut(m *Member[[]int]) { m.Leave() }

func (s *memSink) got() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.items...)
}

// fakeFeed is a feed of ints whose positions are the ints themselves: a
// read after p gives the items above p up to the last one written.
type fakeFeed struct {
	mu      sync.Mutex
	last    int
	failing bool
	reads   atomic.Int64
}

func (f *fakeFeed) read(_ context.Context, after string) (*Page[[]int], error) {
	f.reads.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing {
		return nil, errors.New("connection refused")
	}
	from := f.last
	if after != "" {
		from, _ = strconv.Atoi(after)
	}
	var items []int
	for i := from + 1; i <= f.last; i++ {
		items = append(items, i)
	}
	return &Page[[]int]{Items: items, N: len(items), Next: strconv.Itoa(f.last)}, nil
}

func (f *fakeFeed) write(n int, failing bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last += n
	f.failing = failing
}

// join adds a member with sink to the feed's group "k" at its current end.
func join(t *testing.T, feed *Feed[[]int], ff *fakeFeed, sink Sink[[]int]) *Member[[]int] {
	t.Helper()
	first, err := feed.Read(context.Background(), "k", ff.read, "")
	if err != nil {
		t.Fatal(err)
	}
	m := feed.Join(context.Background(), "k", ff.read, sink, first, nil)
	m.Ready(false)
	return m
}

// lockedBuffer is a log destination for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), msg)
}

// TestFailedReadsBackOff: while the database does not answer, a group of
// many members retries its read with a backoff that grows (not every few
// milliseconds per member), logs the outage once, and once reads work
// again every member gets every item.
func TestFailedReadsBackOff(t *testing.T) {
	var logs lockedBuffer
	hub := NewHub()
	l := New(Config{Hub: hub, Heartbeat: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	feed := NewFeed[[]int](l, KindPosts, "test")
	ff := &fakeFeed{}
	sinks := make([]*memSink, 50)
	for i := range sinks {
		sinks[i] = &memSink{}
		join(t, feed, ff, sinks[i])
	}
	before := ff.reads.Load()
	ff.write(1, true)
	hub.Publish(KindPosts)
	const outage = 3 * time.Second
	time.Sleep(outage)
	failed := ff.reads.Load() - before
	// 250 ms, 500 ms, 1 s, 2 s (each drawn from its upper half): at most
	// five reads in three seconds, however many members.
	if failed > 6 || failed < 2 {
		t.Errorf("%d reads in a %v outage by a group of %d members; want a few, backing off", failed, outage, len(sinks))
	}
	if n := logs.lines("live: read failed"); n != 1 {
		t.Errorf("%d log lines of failed reads in the outage, want 1:\n%s", n, logs.b.String())
	}
	ff.write(2, false)
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range sinks {
		for len(s.got()) < 3 {
			if time.Now().After(deadline) {
				t.Fatalf("after the outage a member has %v, want [1 2 3]", s.got())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got := s.got(); len(got) != 3 || got[0] != 1 || got[2] != 3 {
			t.Errorf("a member got %v, want [1 2 3]", got)
		}
	}
	if n := logs.lines("live: reads recovered"); n != 1 {
		t.Errorf("%d log lines of the recovery, want 1", n)
	}
	t.Logf("%d reads during the outage", failed)
}

// TestShutdownEndsEveryMember: Shutdown gives each idle member its final
// event and cuts each one that is still delivering, and returns once all
// have left.
func TestShutdownEndsEveryMember(t *testing.T) {
	l := New(Config{Heartbeat: time.Hour})
	feed := NewFeed[[]int](l, KindPosts, "test")
	ff := &fakeFeed{}
	idle := &memSink{}
	join(t, feed, ff, idle)
	stuck := &stuckSink{cut: make(chan struct{})}
	first, _ := feed.Read(context.Background(), "k", ff.read, "")
	m := feed.Join(context.Background(), "k", ff.read, stuck, first, nil)
	go func() { <-stuck.cut; m.Leave() }() // its background write fails once cut
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if idle.ended == nil || idle.ended.Code != "shutting_down" {
		t.Errorf("the idle member ended with %v, want shutting_down", idle.ended)
	}
	if feed.Groups() != 0 {
		t.Errorf("%d groups after shutdown", feed.Groups())
	}
}

// stuckSink delivers in the background for ever (its client does not read).
type stuckSink struct{ cut chan struct{} }

func (s *stuckSink) Deliver(*Member[[]int], *Page[[]int]) bool { return false }
func (s *stuckSink) Beat(*Member[[]int]) bool                  { return false }
func (s *stuckSink) End(m *Member[[]int], _ End)               { m.Leave() }
func (s *stuckSink) Cut(*Member[[]int])                        { close(s.cut) }

// TestOpenFeedLimitAndRevocation: a key's feeds take its tier's slots;
// a revoked key's watched feeds are ended within a check interval.
func TestOpenFeedLimitAndRevocation(t *testing.T) {
	var revoked atomic.Bool
	l := New(Config{Limits: map[string]int{"free": 2}, RevocationCheck: 20 * time.Millisecond,
		Revoked: func(_ context.Context, ids []int64) ([]int64, error) {
			if revoked.Load() {
				return ids, nil
			}
			return nil, nil
		}})
	r1, err := l.Acquire(1, "free")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.Acquire(1, "free")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(1, "free"); err == nil || !strings.Contains(err.Error(), "rate_limited") {
		t.Errorf("a third feed of a free key: %v, want rate_limited", err)
	}
	if _, err := l.Acquire(2, "free"); err != nil {
		t.Errorf("another key: %v", err)
	}
	r1()
	r1() // a second release frees nothing more
	if got := l.Opened(1); got != 1 {
		t.Errorf("%d open after one release of two, want 1", got)
	}
	r2()
	ended := make(chan End, 1)
	stop := l.Watch(1, func(e End) { ended <- e })
	defer stop()
	revoked.Store(true)
	select {
	case e := <-ended:
		if e.Code != "unauthorized" {
			t.Errorf("ended with %v", e)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch of a revoked key was not ended")
	}
}
