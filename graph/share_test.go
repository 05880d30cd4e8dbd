package graph

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestSharedReads: a consumer takes a read of its key of its generation or
// later, and one that passes notBefore never gets a read started before it.
func TestSharedReads(t *testing.T) {
	tests := []struct {
		name      string
		gen       uint64
		notBefore func(first time.Time) time.Time
		wantReads int
	}{
		{"same generation shares", 1, func(time.Time) time.Time { return time.Time{} }, 1},
		{"older generation shares", 0, func(time.Time) time.Time { return time.Time{} }, 1},
		{"newer generation reads again", 2, func(time.Time) time.Time { return time.Time{} }, 2},
		{"a timer's read reads again", 1, func(first time.Time) time.Time { return first.Add(time.Nanosecond) }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSharedReads[int]()
			reads := 0
			read := func() (int, error) { reads++; return reads, nil }
			current := func() uint64 { return 1 }
			before := time.Now()
			if _, err := s.Do("k", 1, time.Time{}, current, read); err != nil {
				t.Fatal(err)
			}
			got, err := s.Do("k", tt.gen, tt.notBefore(time.Now()), func() uint64 { return tt.gen }, read)
			if err != nil {
				t.Fatal(err)
			}
			if reads != tt.wantReads || got != tt.wantReads {
				t.Errorf("%d reads, result %d; want %d", reads, got, tt.wantReads)
			}
			// Another key never shares.
			if _, err := s.Do("other", 0, before, current, read); err != nil || reads != tt.wantReads+1 {
				t.Errorf("another key: %d reads, %v", reads, err)
			}
		})
	}
}

// TestSharedReadsForgetFinishedReads: a finished read is kept for sharing
// only for sharedReadTTL, so the rendered pages of positions that every
// consumer has left (streams that closed) do not stay in memory; a read
// still running is never dropped.
func TestSharedReadsForgetFinishedReads(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	s := newSharedReads[int](func() time.Time { return now })
	current := func() uint64 { return 1 }
	read := func() (int, error) { return 1, nil }
	for i := range 100 {
		if _, err := s.Do(fmt.Sprint("closed-stream-", i), 1, time.Time{}, current, read); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.kept(); got != 100 {
		t.Fatalf("right after the reads: %d kept, want 100", got)
	}

	release := make(chan struct{})
	running := make(chan struct{})
	go func() {
		_, _ = s.Do("running", 1, time.Time{}, current, func() (int, error) {
			close(running)
			<-release
			return 2, nil
		})
	}()
	<-running

	now = now.Add(sharedReadTTL - time.Second)
	if _, err := s.Do("fresh", 1, time.Time{}, current, read); err != nil {
		t.Fatal(err)
	}
	if got := s.kept(); got != 102 {
		t.Fatalf("before the TTL: %d kept, want 102", got)
	}
	now = now.Add(2 * time.Second)
	if _, err := s.Do("later", 1, time.Time{}, current, read); err != nil {
		t.Fatal(err)
	}
	// The 100 finished reads are gone; "running", "fresh" and "later" stay.
	if got := s.kept(); got != 3 {
		t.Fatalf("after the TTL: %d kept, want 3", got)
	}
	close(release)
}

// stmtCounter counts the SQL statements of a store.
type stmtCounter struct{ n *atomic.Int64 }

func (h stmtCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }
func (h stmtCounter) AfterQuery(context.Context, *bun.QueryEvent)                        { h.n.Add(1) }

// TestSubscriptionsShareReads: however many postAdded subscriptions follow
// the same filter, each change costs one read of the database (a bound and
// a range: two statements), not one per subscription; every subscription
// still gets every post.
func TestSubscriptionsShareReads(t *testing.T) {
	bdb := dbtest.New(t)
	var n atomic.Int64
	hub := NewHub()
	r := newResolver(Config{Store: db.NewStore(bdb.WithQueryHook(stmtCounter{&n})), Hub: hub,
		Logger: slog.New(slog.DiscardHandler)}.withDefaults())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const subscribers = 40
	source := "ShareTest"
	subs := make([]<-chan *db.Post, subscribers)
	for i := range subs {
		var err error
		if subs[i], err = r.postAdded(ctx, &source); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 4 {
		before := n.Load()
		id := int64(4_000_000 + round)
		if _, err := bdb.ExecContext(ctx, `INSERT INTO posts (id, source, username, body, created_at)
			VALUES (?, ?, 'tester', 'shared', now())`, id, source); err != nil {
			t.Fatal(err)
		}
		hub.Publish(KindPosts)
		var wg sync.WaitGroup
		errs := make(chan error, subscribers)
		for i, sub := range subs {
			wg.Go(func() {
				select {
				case p, ok := <-sub:
					if !ok || p.ID != id {
						errs <- fmt.Errorf("subscriber %d: got %v (open %t), want post %d", i, p, ok, id)
					}
				case <-time.After(60 * time.Second):
					errs <- fmt.Errorf("subscriber %d: no post %d after 60 s", i, id)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		// The first round may also see the subscriptions' first reads,
		// which ran at their own generations.
		if got := n.Load() - before; round > 0 && got > 6 {
			t.Errorf("round %d: %d subscriptions cost %d statements for one change, want one shared read (2, at most 6 if the subscriptions were woken at different generations)", round, subscribers, got)
		} else {
			t.Logf("round %d: %d statements", round, got)
		}
	}
}
