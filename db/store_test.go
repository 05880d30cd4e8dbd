package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// Fixture ids and dates lie beyond anything the demo seed writes.
const fxID int64 = 9_000_000_000_000

var fxMonday = time.Date(2031, 1, 6, 0, 0, 0, 0, time.UTC)

func insertPosts(t *testing.T, s *db.Store, from int64, n int, source string, at time.Time) []int64 {
	t.Helper()
	rows := make([]db.Post, n)
	ids := make([]int64, n)
	for i := range rows {
		ids[i] = from + int64(i) + 1
		rows[i] = db.Post{ID: ids[i], Source: source, Username: "u", Body: "b", Raw: json.RawMessage(`{}`),
			CreatedAt: at.Add(time.Duration(i) * time.Hour)}
	}
	if _, err := s.DB().NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestListPostsPages(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	ctx := context.Background()
	ids := insertPosts(t, s, fxID, 7, "fx-store", fxMonday) // ascending
	f := db.PostFilter{Source: "fx-store"}
	got := func(rows []db.Post) []int64 {
		out := make([]int64, len(rows))
		for i, r := range rows {
			out[i] = r.ID
		}
		return out
	}
	tests := []struct {
		name     string
		page     db.Page
		want     []int64
		wantMore bool
	}{
		{"newest first", db.Page{Limit: 3}, []int64{ids[6], ids[5], ids[4]}, true},
		{"after a key", db.Page{Limit: 3, After: ids[4]}, []int64{ids[3], ids[2], ids[1]}, true},
		{"last forward page", db.Page{Limit: 3, After: ids[1]}, []int64{ids[0]}, false},
		{"exact fit has no more", db.Page{Limit: 7}, []int64{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}, false},
		{"backward from the end", db.Page{Limit: 2, Backward: true}, []int64{ids[1], ids[0]}, true},
		{"backward before a key", db.Page{Limit: 2, Backward: true, Before: ids[1]}, []int64{ids[3], ids[2]}, true},
		{"backward to the newest", db.Page{Limit: 5, Backward: true, Before: ids[3]}, []int64{ids[6], ids[5], ids[4]}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rows, more, err := s.ListPosts(ctx, f, tt.page)
			if err != nil {
				t.Fatal(err)
			}
			if g := got(rows); !slices.Equal(g, tt.want) || more != tt.wantMore {
				t.Errorf("ids, more = %v, %v; want %v, %v", g, more, tt.want, tt.wantMore)
			}
		})
	}
	t.Run("a page needs a positive limit", func(t *testing.T) {
		if _, _, err := s.ListPosts(ctx, f, db.Page{}); err == nil {
			t.Error("no error for limit 0")
		}
	})
}

func TestGetNotFound(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	ctx := context.Background()
	if _, err := s.GetPost(ctx, fxID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("GetPost error = %v, want ErrNotFound", err)
	}
	if _, err := s.GetBrief(ctx, fxID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("GetBrief error = %v, want ErrNotFound", err)
	}
	insertPosts(t, s, fxID, 1, "fx", fxMonday)
	if p, err := s.GetPost(ctx, fxID+1); err != nil || p.UID() != fmt.Sprintf("cp_%d", fxID+1) {
		t.Errorf("GetPost = %v, %v", p, err)
	}
}

func TestContainsPattern(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"abc", "%abc%"},
		{"50%", `%50\%%`},
		{"a_b", `%a\_b%`},
		{`c:\x`, `%c:\\x%`},
	}
	for _, tt := range tests {
		if got := db.ContainsPattern(tt.in); got != tt.want {
			t.Errorf("ContainsPattern(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPostsOfWeeksAndBriefsCovering(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	ctx := context.Background()
	week1 := insertPosts(t, s, fxID, 5, "fx-w1", fxMonday)                      // Monday 00:00 .. 04:00
	week2 := insertPosts(t, s, fxID+100, 3, "fx-w2", fxMonday.AddDate(0, 0, 7)) // next Monday
	briefs := []db.Brief{
		{ID: 9_000_000_001, WeekStart: fxMonday, WeekEnd: fxMonday.AddDate(0, 0, 6), Content: "1", CreatedAt: fxMonday},
		{ID: 9_000_000_002, WeekStart: fxMonday.AddDate(0, 0, 7), WeekEnd: fxMonday.AddDate(0, 0, 13), Content: "2", CreatedAt: fxMonday},
	}
	if _, err := s.DB().NewInsert().Model(&briefs).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	w := func(b db.Brief, p db.Page) db.WeekPage {
		from, to := b.Week()
		return db.WeekPage{From: from, To: to, Page: p}
	}
	pages, err := s.ListPostsOfWeeks(ctx, []db.WeekPage{
		w(briefs[0], db.Page{Limit: 2}),
		w(briefs[1], db.Page{Limit: 2}),
		w(briefs[0], db.Page{Limit: 2, Backward: true}),
		w(briefs[0], db.Page{Limit: 10, After: week1[2]}),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		ids  []int64
		more bool
	}{
		{[]int64{week1[4], week1[3]}, true},
		{[]int64{week2[2], week2[1]}, true},
		{[]int64{week1[1], week1[0]}, true},
		{[]int64{week1[1], week1[0]}, false},
	}
	for i, p := range pages {
		var got []int64
		for _, post := range p.Posts {
			got = append(got, post.ID)
		}
		if !slices.Equal(got, want[i].ids) || p.More != want[i].more {
			t.Errorf("page %d: ids, more = %v, %v; want %v, %v", i, got, p.More, want[i].ids, want[i].more)
		}
	}

	covering, err := s.BriefsCovering(ctx, []time.Time{fxMonday.AddDate(0, 0, 6).Add(23 * time.Hour), fxMonday.AddDate(0, 0, 30)})
	if err != nil {
		t.Fatal(err)
	}
	if len(covering) != 1 || covering[0].ID != briefs[0].ID {
		t.Errorf("BriefsCovering = %+v, want only brief %d (Sunday belongs to its week)", covering, briefs[0].ID)
	}
}

func TestCuratedSourcesAreDistinctAndSorted(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	insertPosts(t, s, fxID, 3, "fx-b", fxMonday)
	insertPosts(t, s, fxID+10, 2, "fx-a", fxMonday)
	insertPosts(t, s, fxID+20, 1, "Fx-C", fxMonday)
	got, err := s.CuratedSources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("sources %v are not sorted and distinct", got)
	}
	for _, want := range []string{"Fx-C", "fx-a", "fx-b"} {
		if !slices.Contains(got, want) {
			t.Errorf("sources %v lack %q", got, want)
		}
	}
}

func TestEtfQueries(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	ctx := context.Background()
	day := time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC)
	var rows []db.EtfFlow
	for d := range 3 {
		for _, a := range []db.Asset{db.AssetHYPE, db.AssetSOL, db.AssetETH, db.AssetBTC} {
			if a == db.AssetSOL && d == 2 {
				continue // SOL's newest day is a day older
			}
			rows = append(rows, db.EtfFlow{Asset: a, FlowDate: day.AddDate(0, 0, d), NetInflow: -7, UpdatedAt: day})
		}
	}
	if _, err := s.DB().NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	uids := func(rows []db.EtfFlow) []string {
		out := []string{}
		for _, r := range rows {
			out = append(out, r.UID())
		}
		return out
	}
	list, err := s.ListEtfFlows(ctx, db.EtfFilter{From: day.AddDate(0, 0, 1)}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := uids(list), []string{"etf_BTC_2031-03-03", "etf_ETH_2031-03-03", "etf_HYPE_2031-03-03", "etf_BTC_2031-03-02", "etf_ETH_2031-03-02"}; !slices.Equal(got, want) {
		t.Errorf("list = %v, want %v", got, want)
	}
	latest, err := s.LatestEtfFlows(ctx, db.EtfFilter{Assets: []db.Asset{db.AssetSOL, db.AssetBTC}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := uids(latest), []string{"etf_BTC_2031-03-03", "etf_SOL_2031-03-02"}; !slices.Equal(got, want) {
		t.Errorf("latest = %v, want %v", got, want)
	}
	if latest[0].NetInflow.String() != "-0.07" {
		t.Errorf("net inflow = %s, want -0.07", latest[0].NetInflow)
	}
}
