package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// A write by any SQL writer ends the cached first pages through
// PostgreSQL's change signal: with a TTL of an hour, only the signal
// (serve.go's invalidateOnChange) can make the new post show.
func TestPollCacheEndsOnChangeSignal(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)
	key, _ := newKey(t, bdb, db.TierFree)
	p := startServer(t, map[string]string{
		"DATABASE_URL":           dbURL,
		"FEEDAPI_RATE_LIMIT":     "100000",
		"FEEDAPI_POLL_CACHE_TTL": "1h",
	})
	const path = "/v1/posts?limit=1"
	newestID := func() int64 {
		t.Helper()
		r := p.get(t, path, key)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		var posts []struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(r.env.Data, &posts); err != nil || len(posts) != 1 {
			t.Fatalf("GET %s: data %s (%v)", path, r.env.Data, err)
		}
		return posts[0].ID
	}
	before := newestID()
	if again := newestID(); again != before {
		t.Fatalf("newest post moved from %d to %d with no write", before, again)
	}

	post := &db.Post{ID: before + 1, Source: "WuBlockchain", Username: "wublockchain",
		Body: "Written by SQL while the first page is cached", Raw: json.RawMessage(`{}`),
		CreatedAt: time.Now().UTC()}
	if _, err := bdb.NewInsert().Model(post).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for newestID() != post.ID {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the write the first page still shows post %d, not %d", before, post.ID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
