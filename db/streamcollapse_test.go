package db_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestStreamCollapseKeepsFirstStored: ids are not commit order. Under
// collapse=story a stream that sent an item of a story never sends an item
// of the same story committed later with a smaller id; an update of the
// item it sent is sent; and a read from the start (a resume) gives the
// same items as the live reads. Lists keep the smallest id.
func TestStreamCollapseKeepsFirstStored(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	ctx := context.Background()
	const source = "CollapseOrder"
	story := fxID + 7
	at := fxMonday.AddDate(0, 0, 30)
	insert := func(id int64) {
		t.Helper()
		p := db.Post{ID: id, Source: source, Username: "u", Body: "ETF approved",
			Raw: json.RawMessage(`{}`), CreatedAt: at, StoryID: &story}
		if _, err := s.DB().NewInsert().Model(&p).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	f := db.PostFilter{Source: source, SearchFilter: db.SearchFilter{CollapseStory: true}}
	// read reads the stream after pos up to the current bound, as a live
	// stream does, and returns the ids and the last position.
	read := func(after int64) ([]int64, int64) {
		t.Helper()
		bound, _, err := s.StreamBound(ctx, "posts")
		if err != nil {
			t.Fatal(err)
		}
		rows, _, err := s.StreamPosts(ctx, f, db.StreamRange{After: after, Bound: bound, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range rows {
			ids = append(ids, r.ID)
			after = r.StreamPos
		}
		return ids, after
	}
	// Every row inserted from now on lies after the current bound.
	start, _, err := s.StreamBound(ctx, "posts")
	if err != nil {
		t.Fatal(err)
	}

	later, earlier := fxID+20, fxID+10
	insert(later)
	got, pos := read(start)
	if !slices.Equal(got, []int64{later}) {
		t.Fatalf("live read after the first item: %v, want [%d]", got, later)
	}
	insert(earlier) // same story, smaller id, committed after
	if got, pos = read(pos); len(got) != 0 {
		t.Errorf("live read after an item of the same story with a smaller id: %v, want nothing (the story was sent)", got)
	}
	if got, _ := read(start); !slices.Equal(got, []int64{later}) {
		t.Errorf("resume from the start: %v, want [%d] as the live stream sent", got, later)
	}
	page, _, err := s.ListPosts(ctx, f, db.Page{Limit: 10})
	if err != nil || len(page) != 1 || page[0].ID != earlier {
		t.Errorf("list page: %v, %v; want [%d] (the smallest id)", page, err, earlier)
	}

	// An update of the item sent comes at a new position, after the
	// other item: it is still the story's first stored, and it is sent.
	if _, err := s.DB().NewUpdate().Model((*db.Post)(nil)).Set("body = ?", "ETF approved, updated").
		Where("id = ?", later).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if got, pos = read(pos); !slices.Equal(got, []int64{later}) {
		t.Errorf("live read after an update of the item sent: %v, want [%d]", got, later)
	}
	// An update of the item never sent is not sent.
	if _, err := s.DB().NewUpdate().Model((*db.Post)(nil)).Set("body = ?", "ETF approved, also updated").
		Where("id = ?", earlier).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ = read(pos); len(got) != 0 {
		t.Errorf("live read after an update of the item not sent: %v, want nothing", got)
	}
	if got, _ := read(start); !slices.Equal(got, []int64{later}) {
		t.Errorf("resume from the start after the updates: %v, want [%d] (its update) alone", got, later)
	}
}
