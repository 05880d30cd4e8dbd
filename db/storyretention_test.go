package db_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/importer"
)

// TestRetentionPrunesStories: once retention drops a month, a story whose
// items were all in it is gone (not found, not listed), and a story that
// kept some items shows only them: size, first item time, headline and
// sources recomputed; the dropped items' story members and bands are gone.
func TestRetentionPrunesStories(t *testing.T) {
	t.Parallel()
	bdb := emptyFirehose(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	msg := func(id, at, source, title string) string {
		return `{"id":` + id + `,"pane":"news","source":"` + source + `","created_at":"` + at + `","title":"` + title + `"}`
	}
	input := strings.Join([]string{
		// A story wholly in August.
		msg("30000001", "2030-08-10T14:00:00Z", "Reuters", "SEC approves spot Solana ETFs from six issuers"),
		msg("30000002", "2030-08-10T14:02:00Z", "CoinDesk", "SEC Greenlights First Spot SOL ETFs, Trading Could Start Tuesday"),
		// A story across the end of August.
		msg("30000003", "2030-08-31T23:00:00Z", "Reuters", "SEC approves spot Solana ETFs from six issuers"),
		msg("30000004", "2030-09-01T01:00:00Z", "The Block", "Spot Solana ETFs win SEC approval"),
	}, "\n") + "\n"
	var rejects strings.Builder
	res, err := importer.Import(ctx, bdb, importer.KindFirehose, strings.NewReader(input), importer.Options{Rejects: &rejects})
	if err != nil || res.Rejected != 0 {
		t.Fatalf("import: %v %s", err, rejects.String())
	}
	storyOf := func(id int64) int64 {
		t.Helper()
		var sid int64
		if err := bdb.NewRaw("SELECT story_id FROM firehose_messages WHERE id = ?", id).Scan(ctx, &sid); err != nil {
			t.Fatal(err)
		}
		return sid
	}
	august, across := storyOf(30000001), storyOf(30000003)
	if storyOf(30000002) != august || storyOf(30000004) != across || august == across {
		t.Fatalf("stories %d %d %d %d: want two stories of two items", august, storyOf(30000002), across, storyOf(30000004))
	}
	if _, err := db.EnsureFirehosePartitions(ctx, bdb, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DropFirehoseBefore(ctx, bdb, time.Date(2030, 9, 1, 0, 0, 0, 0, time.UTC), io.Discard); err != nil {
		t.Fatal(err)
	}

	got, err := s.StoriesByID(ctx, []int64{august, across})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != across {
		t.Fatalf("stories after retention: %+v, want only %d (%d lost every item)", got, across, august)
	}
	st := got[0]
	sep1 := time.Date(2030, 9, 1, 1, 0, 0, 0, time.UTC)
	if st.Size != 1 || !st.FirstSeenAt.Equal(sep1) || !st.LastSeenAt.Equal(sep1) ||
		st.Headline != "Spot Solana ETFs win SEC approval" || !slices.Equal(st.Sources, []string{"The Block"}) {
		t.Errorf("story left with one item: %+v, want size 1, first and last seen %s, its headline and source", st, sep1)
	}
	items, err := s.StoryItems(ctx, []int64{across}, db.StoryItemsRead{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items[across]) != 1 || items[across][0].Firehose == nil || items[across][0].Firehose.ID != 30000004 {
		t.Errorf("items of the story: %+v, want message 30000004", items[across])
	}
	list, _, err := s.ListStories(ctx, db.StoryFilter{Query: "Solana", Since: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}, nil, 50)
	if err != nil {
		t.Fatal(err)
	}
	var listed []int64
	for _, l := range list {
		listed = append(listed, l.ID)
	}
	if !slices.Equal(listed, []int64{across}) {
		t.Errorf("stories listed for q=Solana: %v, want [%d]", listed, across)
	}
	var members, bands int
	if err := bdb.NewRaw(`SELECT (SELECT count(*) FROM story_members WHERE kind = 'f' AND item_id BETWEEN 30000001 AND 30000003),
		(SELECT count(*) FROM story_bands WHERE kind = 'f' AND item_id BETWEEN 30000001 AND 30000003)`).Scan(ctx, &members, &bands); err != nil {
		t.Fatal(err)
	}
	if members != 0 || bands != 0 {
		t.Errorf("dropped messages still indexed for stories: %d members, %d bands", members, bands)
	}
}
