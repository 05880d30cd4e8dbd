package db_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestStoryTextBytes: a story's texts are measured, in the database, over
// its first items in their order and only for the texts shown, in UTF-8
// bytes as served; StoryItems then leaves the texts not shown unread.
func TestStoryTextBytes(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	ctx := context.Background()
	story, empty := fxID+900, fxID+901
	at := fxMonday.AddDate(0, 0, 40)
	// Oldest first: a post (body 2000 bytes of "é", raw {"k":"vvvv"}),
	// a message (body 300, summary 50), a post (body 4000).
	posts := []db.Post{
		{ID: fxID + 910, Source: "StoryBytes", Username: "u", Body: strings.Repeat("é", 1000),
			Raw: json.RawMessage(`{"k": "vvvv"}`), CreatedAt: at, StoryID: &story},
		{ID: fxID + 911, Source: "StoryBytes", Username: "u", Body: strings.Repeat("b", 4000),
			Raw: json.RawMessage(`{}`), CreatedAt: at.Add(2 * time.Minute), StoryID: &story},
	}
	if _, err := s.DB().NewInsert().Model(&posts).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	body, summary := strings.Repeat("m", 300), strings.Repeat("s", 50)
	m := db.FirehoseMessage{ID: fxID + 912, Pane: db.PaneNews, Source: "StoryBytes", Body: &body, SummaryAI: &summary,
		CreatedAt: at.Add(time.Minute), StoryID: &story}
	if _, err := s.DB().NewInsert().Model(&m).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	raw := int64(len(`{"k": "vvvv"}`))
	for _, c := range []struct {
		name string
		read db.StoryItemsRead
		want int64
	}{
		{"bodies of all items", db.StoryItemsRead{PostOmit: []string{"raw"}, FirehoseOmit: []string{"summary_ai"}}, 2000 + 300 + 4000},
		{"bodies of the first two", db.StoryItemsRead{Limit: 2, PostOmit: []string{"raw"}, FirehoseOmit: []string{"summary_ai"}}, 2000 + 300},
		{"every text of the first", db.StoryItemsRead{Limit: 1}, 2000 + raw},
		{"every text of all", db.StoryItemsRead{}, 2000 + raw + 4000 + 2 + 300 + 50},
		{"no text", db.StoryItemsRead{PostOmit: []string{"raw", "body"}, FirehoseOmit: []string{"summary_ai", "body"}}, 0},
	} {
		got, err := s.StoryTextBytes(ctx, []int64{story, empty}, c.read)
		if err != nil {
			t.Fatal(err)
		}
		if got[story] != c.want || got[empty] != 0 {
			t.Errorf("%s: %v, want %d for story %d and none for the empty one", c.name, got, c.want, story)
		}
	}
	items, err := s.StoryItems(ctx, []int64{story}, db.StoryItemsRead{PostOmit: []string{"raw", "body"}, FirehoseOmit: []string{"summary_ai"}})
	if err != nil {
		t.Fatal(err)
	}
	got := items[story]
	if len(got) != 3 || got[0].Post == nil || got[1].Firehose == nil || got[2].Post == nil {
		t.Fatalf("items %+v, want post, message, post", got)
	}
	if got[0].Post.Body != "" || len(got[0].Post.Raw) != 0 || got[1].Firehose.SummaryAI != nil || got[1].Firehose.Body == nil || *got[1].Firehose.Body != body {
		t.Errorf("items read texts not shown or missed the message's body: %+v %+v", got[0].Post, got[1].Firehose)
	}
}

// TestStoryItemsAfter: a story's items read one at a time, each after the
// one before, come in the order of the whole story, items of one instant
// included (posts before messages, then by id), and a page's texts are
// measured from the same position.
func TestStoryItemsAfter(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	ctx := context.Background()
	story := fxID + 920
	at := fxMonday.AddDate(0, 0, 41)
	body := func(n int) *string { b := strings.Repeat("x", n); return &b }
	// In story order: a message before the instant, at the instant two
	// posts and two messages (ids not in that order), a post after it.
	posts := []db.Post{
		{ID: fxID + 935, Source: "After", Username: "u", Body: "p1", Raw: json.RawMessage(`{}`), CreatedAt: at, StoryID: &story},
		{ID: fxID + 936, Source: "After", Username: "u", Body: "p2", Raw: json.RawMessage(`{}`), CreatedAt: at, StoryID: &story},
		{ID: fxID + 921, Source: "After", Username: "u", Body: "p3", Raw: json.RawMessage(`{}`), CreatedAt: at.Add(time.Second), StoryID: &story},
	}
	msgs := []db.FirehoseMessage{
		{ID: fxID + 940, Pane: db.PaneNews, Source: "After", Body: body(1), CreatedAt: at.Add(-time.Second), StoryID: &story},
		{ID: fxID + 922, Pane: db.PaneNews, Source: "After", Body: body(10), CreatedAt: at, StoryID: &story},
		{ID: fxID + 941, Pane: db.PaneNews, Source: "After", Body: body(100), CreatedAt: at, StoryID: &story},
	}
	if _, err := s.DB().NewInsert().Model(&posts).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().NewInsert().Model(&msgs).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	want := []int64{msgs[0].ID, posts[0].ID, posts[1].ID, msgs[1].ID, msgs[2].ID, posts[2].ID}
	var got []int64
	var after *db.StoryItemKey
	for range len(want) + 1 {
		rd := db.StoryItemsRead{Limit: 1, After: after, PostOmit: []string{"raw", "body"}, FirehoseOmit: []string{"summary_ai"}}
		items, err := s.StoryItems(ctx, []int64{story}, rd)
		if err != nil {
			t.Fatal(err)
		}
		if len(items[story]) == 0 {
			break
		}
		it := items[story][0]
		k := it.Key()
		got = append(got, k.ID)
		// The page of two from here: its message bodies' bytes.
		rd.Limit = 2
		sizes, err := s.StoryTextBytes(ctx, []int64{story}, rd)
		if err != nil {
			t.Fatal(err)
		}
		two, err := s.StoryItems(ctx, []int64{story}, rd)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, it := range two[story] {
			if it.Firehose != nil {
				sum += int64(len(*it.Firehose.Body))
			}
		}
		if sizes[story] != sum {
			t.Errorf("after %+v: measured %d bytes, the page of two holds %d", after, sizes[story], sum)
		}
		after = &k
	}
	if !slices.Equal(got, want) {
		t.Errorf("one at a time: %v, want %v", got, want)
	}
}
