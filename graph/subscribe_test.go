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
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/live"
)

// stmtCounter counts the SQL statements of a store.
type stmtCounter struct{ n *atomic.Int64 }

func (h stmtCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }
func (h stmtCounter) AfterQuery(context.Context, *bun.QueryEvent)                        { h.n.Add(1) }

// subscriber is the context of an internal key's subscriptions.
func subscriber(ctx context.Context, keyID int64) context.Context {
	return keys.WithPrincipal(ctx, keys.Principal{KeyID: keyID, Tier: db.TierInternal})
}

// newSubscriptionResolver is a resolver whose subscriptions follow lv,
// over bdb with its statements counted in n.
func newSubscriptionResolver(bdb *bun.DB, n *atomic.Int64, lv *live.Live) *Resolver {
	return newResolver(Config{Store: db.NewStore(bdb.WithQueryHook(stmtCounter{n})), Live: lv,
		Logger: slog.New(slog.DiscardHandler)}.withDefaults())
}

// TestSubscriptionsShareReads: however many postAdded subscriptions follow
// the same filter, each change costs one read of the database (a bound and
// a range: two statements), not one per subscription; every subscription
// still gets every post.
func TestSubscriptionsShareReads(t *testing.T) {
	bdb := dbtest.New(t)
	var n atomic.Int64
	hub := live.NewHub()
	lv := live.New(live.Config{Hub: hub, Heartbeat: time.Hour, Limits: map[string]int{"internal": 1000}})
	r := newSubscriptionResolver(bdb, &n, lv)
	ctx, cancel := context.WithCancel(subscriber(context.Background(), 1))
	defer cancel()
	const subscribers = 40
	source := "ShareTest"
	subs := make([]<-chan *db.Post, subscribers)
	for i := range subs {
		f, err := postArgs{source: &source}.filter()
		if err != nil {
			t.Fatal(err)
		}
		if subs[i], err = r.postAdded(ctx, f); err != nil {
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
		hub.Publish(live.KindPosts)
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
		// The first round may also see reads of subscriptions that joined
		// at different generations.
		if got := n.Load() - before; round > 0 && got > 6 {
			t.Errorf("round %d: %d subscriptions cost %d statements for one change, want one shared read (2, at most 6 if the subscriptions were woken at different generations)", round, subscribers, got)
		} else {
			t.Logf("round %d: %d statements", round, got)
		}
	}
}

// TestIdleSubscriptionsReadOncePerGroup: idle subscriptions, with no
// change signal, read the database once per heartbeat interval per group
// of equal filters, not once per subscription: 200 subscriptions over 10
// filters make at most 10 reads (20 statements) per interval.
func TestIdleSubscriptionsReadOncePerGroup(t *testing.T) {
	bdb := dbtest.New(t)
	var n atomic.Int64
	const interval = 200 * time.Millisecond
	lv := live.New(live.Config{Heartbeat: interval, Limits: map[string]int{"internal": 1000}})
	r := newSubscriptionResolver(bdb, &n, lv)
	ctx, cancel := context.WithCancel(subscriber(context.Background(), 1))
	defer cancel()
	const groups, per = 10, 20
	for g := range groups {
		source := fmt.Sprint("Idle", g)
		for range per {
			f, err := postArgs{source: &source}.filter()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.postAdded(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := r.postFeed.Groups(); got != groups {
		t.Fatalf("%d groups for %d filters", got, groups)
	}
	// Count whole intervals after the subscriptions' first reads.
	time.Sleep(interval)
	const intervals = 10
	before, start := n.Load(), time.Now()
	time.Sleep(intervals * interval)
	spent := time.Since(start)
	got := n.Load() - before
	// Each safety read is a bound and a range; the window may hold one
	// more interval's reads than it lasted on a busy machine.
	limit := int64(2 * groups * (int(spent/interval) + 1))
	if got > limit {
		t.Errorf("%d statements in %v (%d intervals) for %d idle subscriptions in %d groups; want at most %d (one read per group per interval)",
			got, spent.Round(time.Millisecond), spent/interval, groups*per, groups, limit)
	}
	if got == 0 {
		t.Errorf("no safety read in %v", spent)
	}
	t.Logf("%d statements in %v for %d subscriptions in %d groups", got, spent.Round(time.Millisecond), groups*per, groups)
}

// TestSubscriptionLimitIsSharedWithStreams: a key's subscriptions take the
// same slots as its streams (Live.Acquire); one over the limit is refused
// with rate_limited before it starts, and a subscription that ends frees
// its slot.
func TestSubscriptionLimitIsSharedWithStreams(t *testing.T) {
	bdb := dbtest.New(t)
	var n atomic.Int64
	lv := live.New(live.Config{Limits: map[string]int{"internal": 2}})
	r := newSubscriptionResolver(bdb, &n, lv)
	// A stream of the key holds one slot.
	releaseStream, err := lv.Acquire(7, "internal")
	if err != nil {
		t.Fatal(err)
	}
	defer releaseStream()
	ctx := subscriber(context.Background(), 7)
	first, cancelFirst := context.WithCancel(ctx)
	defer cancelFirst()
	if _, err := r.postAdded(first, db.PostFilter{}); err != nil {
		t.Fatalf("the second live feed of the key: %v", err)
	}
	_, err = r.firehoseMessageAdded(ctx, db.FirehoseFilter{})
	if code := apperr.CodeOf(err); code != apperr.RateLimited {
		t.Fatalf("the third live feed of a key limited to 2: %v (code %q), want rate_limited", err, code)
	}
	cancelFirst()
	deadline := time.Now().Add(30 * time.Second)
	for lv.Opened(7) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d feeds open after the subscription ended, want 1", lv.Opened(7))
		}
		time.Sleep(10 * time.Millisecond)
	}
	again, cancelAgain := context.WithCancel(ctx)
	defer cancelAgain()
	if _, err := r.firehoseMessageAdded(again, db.FirehoseFilter{}); err != nil {
		t.Fatalf("a subscription once a slot is free: %v", err)
	}
}
