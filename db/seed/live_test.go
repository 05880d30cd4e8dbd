package seed_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/seed"
)

// fakeClock advances by step on every reading.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func TestLivePublishesRealisticItemsThatSincePollingSees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := dbtest.New(t) // the demo data set
	store := db.NewStore(bdb)
	var seededMsg int64
	if err := bdb.QueryRowContext(ctx, `SELECT max((raw->>'message_id')::bigint) FROM posts WHERE source = 'TreeNews'`).Scan(&seededMsg); err != nil {
		t.Fatal(err)
	}
	var maxPost, maxFh int64
	if err := bdb.QueryRowContext(ctx, `SELECT (SELECT max(id) FROM posts), (SELECT max(id) FROM firehose_messages)`).Scan(&maxPost, &maxFh); err != nil {
		t.Fatal(err)
	}

	clock := &fakeClock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC), step: 3 * time.Second}
	live := seed.NewLive(bdb, seed.LiveOptions{Interval: 3 * time.Second, Seed: 7, Now: clock.Now})
	known := map[string]bool{}
	for _, s := range []string{"TreeNews", "WatcherGuru", "DBNews", "WuBlockchain", "Cointelegraph", "CoinDesk", "TheBlock",
		"Lookonchain", "WhaleAlert", "Unfolded", "Glassnode", "BitcoinMagazine"} {
		known[s] = true
	}

	var lastPost, lastFh time.Time
	lastPostID, lastFhID := maxPost, maxFh
	posts, messages := 0, 0
	prevRound := time.Time{}
	for round := 0; round < 25; round++ {
		r, err := live.Publish(ctx)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(r.FirehoseIDs) == 0 {
			t.Errorf("round %d wrote no firehose message", round)
		}
		// Polling with since = the previous round's clock sees exactly
		// this round's items, newest first.
		if !prevRound.IsZero() {
			got, _, err := store.ListPosts(ctx, db.PostFilter{Since: prevRound.Add(time.Millisecond)}, db.Page{Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []int64
			for _, p := range got {
				gotIDs = append(gotIDs, p.ID)
			}
			want := slices.Clone(r.PostIDs)
			slices.Reverse(want)
			if !slices.Equal(gotIDs, want) && !(len(gotIDs) == 0 && len(want) == 0) {
				t.Errorf("round %d: posts since the last round = %v, want %v", round, gotIDs, want)
			}
			fh, _, err := store.ListFirehose(ctx, db.FirehoseFilter{Since: prevRound.Add(time.Millisecond)}, db.Page{Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			if len(fh) != len(r.FirehoseIDs) {
				t.Errorf("round %d: %d firehose messages since the last round, want %d", round, len(fh), len(r.FirehoseIDs))
			}
		}
		prevRound = r.At

		for _, id := range r.PostIDs {
			p, err := store.GetPost(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			posts++
			if id != lastPostID+1 || !p.CreatedAt.After(lastPost) || p.CreatedAt.After(r.At) {
				t.Errorf("post %d at %s follows %d at %s (round at %s): want the next id, a later time, not after the round",
					id, p.CreatedAt, lastPostID, lastPost, r.At)
			}
			lastPostID, lastPost = id, p.CreatedAt
			if !known[p.Source] || p.Body == "" || p.URL == nil || !strings.HasPrefix(*p.URL, "https://t.me/"+p.Username+"/") {
				t.Errorf("post %d does not read like the seed's: %+v", id, p)
			}
			var raw struct {
				MessageID int64 `json:"message_id"`
				Date      int64 `json:"date"`
				Text      string
			}
			if err := json.Unmarshal(p.Raw, &raw); err != nil || raw.Text != p.Body || raw.Date != p.CreatedAt.Unix() ||
				!strings.HasSuffix(*p.URL, "/"+strconv.FormatInt(raw.MessageID, 10)) {
				t.Errorf("post %d: raw %s does not match the post (%v)", id, p.Raw, err)
			}
			if p.Source == "TreeNews" && raw.MessageID <= seededMsg {
				t.Errorf("post %d reuses TreeNews message id %d (seeded up to %d)", id, raw.MessageID, seededMsg)
			}
		}
		for _, id := range r.FirehoseIDs {
			var m db.FirehoseMessage
			if err := bdb.NewSelect().Model(&m).Where("id = ?", id).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			messages++
			if id != lastFhID+1 || !m.CreatedAt.After(lastFh) || !m.Pane.Valid() || m.Source == "" || m.SourceName == nil {
				t.Errorf("firehose message %d at %s after %d at %s: %+v", id, m.CreatedAt, lastFhID, lastFh, m)
			}
			// Live writes are received when the database commits them,
			// whatever the clock of the publisher (a fake one here).
			var dbClock bool
			if err := bdb.QueryRowContext(ctx, `SELECT received_at > now() - interval '10 minutes' AND received_at <= clock_timestamp()
				FROM firehose_messages WHERE id = ?`, id).Scan(&dbClock); err != nil {
				t.Fatal(err)
			}
			if !dbClock {
				t.Errorf("firehose message %d: received_at is not the database's clock at its write", id)
			}
			if m.Source == "cftc" || m.Source == "federalreserve" {
				t.Errorf("firehose message %d is of the rare source %s", id, m.Source)
			}
			lastFhID, lastFh = id, m.CreatedAt
		}
	}
	if posts < 10 || messages < 25 {
		t.Errorf("25 rounds wrote %d posts and %d firehose messages; want a post most rounds and a message every round", posts, messages)
	}
}

func TestLiveRunPublishesUntilCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	bdb := dbtest.New(t)
	count := func() int {
		var n int
		if err := bdb.QueryRowContext(context.Background(), `SELECT count(*) FROM firehose_messages`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	live := seed.NewLive(bdb, seed.LiveOptions{Interval: 10 * time.Millisecond})
	done := make(chan struct{})
	go func() { live.Run(ctx); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for count() < before+3 { // at least three rounds
		if time.Now().After(deadline) {
			t.Fatal("no live rounds within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	after := count()
	time.Sleep(50 * time.Millisecond) // five intervals: nothing more may come
	if n := count(); n != after {
		t.Errorf("%d messages written after Run returned", n-after)
	}
}

// A demo's first request comes seconds after start: items received moments
// ago must be there without waiting out the first interval.
func TestLiveRunPublishesAtOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bdb := dbtest.New(t)
	recent := func() int {
		var n int
		if err := bdb.QueryRowContext(context.Background(),
			`SELECT count(*) FROM firehose_messages WHERE received_at > now() - interval '1 hour'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := recent(); n != 0 {
		t.Fatalf("%d messages received in the last hour before Run", n)
	}
	live := seed.NewLive(bdb, seed.LiveOptions{Interval: time.Hour})
	done := make(chan struct{})
	go func() { live.Run(ctx); close(done) }()
	deadline := time.Now().Add(time.Minute) // far below the hour of the interval
	for recent() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no live round within a minute of Run, with an interval of an hour")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
}
