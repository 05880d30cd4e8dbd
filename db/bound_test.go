package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestBoundedReads: a read given MaxBytes holds as many rows, in its
// order, as fit their long texts (measured as served) within it, reports
// more rows when it ended early, and refuses a first row alone over it;
// walking the pages by their last keys gives every row once.
func TestBoundedReads(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	ctx := context.Background()
	const source = "fx-bound"
	// Raw sizes in KiB, oldest first: large ones between small ones, and
	// one of 3 KiB that is over a budget of 2 KiB on its own.
	sizes := []int{1, 1, 0, 3, 1, 1, 2, 0, 1, 1, 1, 2}
	rows := make([]db.Post, len(sizes))
	for i, kib := range sizes {
		raw, err := json.Marshal(map[string]any{"text": strings.Repeat("x", kib<<10), "n": []int{1, 2, 3}})
		if err != nil {
			t.Fatal(err)
		}
		rows[i] = db.Post{ID: fxID + 100 + int64(i), Source: source, Username: "u", Body: strings.Repeat("é", 10*i),
			Raw: raw, CreatedAt: fxMonday.Add(time.Duration(i) * time.Minute)}
	}
	if _, err := s.DB().NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// What each row weighs as served: raw as PostgreSQL writes it out
	// (not as inserted) and body, read without a bound.
	all, _, err := s.ListPosts(ctx, db.PostFilter{Source: source}, db.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	weight := map[int64]int64{}
	for i := range all {
		weight[all[i].ID] = all[i].TextBytes()
		if len(all[i].Raw) <= len(rows[len(rows)-1-i].Raw) {
			t.Fatalf("raw of %d served in %d bytes, inserted in %d: want PostgreSQL's longer text form", all[i].ID, len(all[i].Raw), len(rows[len(rows)-1-i].Raw))
		}
	}

	// walk reads pages of at most limit rows within budget from the
	// newest (or, backward, the oldest) row and checks each.
	walk := func(t *testing.T, f db.PostFilter, limit int, budget int64, backward bool) []int64 {
		t.Helper()
		var seen []int64
		pages := 0
		defer func() {
			// 12 rows of 15 KiB in all: under 3400 bytes, at least 5 pages.
			if budget < 4000 && pages < 5 {
				t.Errorf("%d pages under %d bytes, want at least 5", pages, budget)
			}
		}()
		p := db.Page{Limit: limit, MaxBytes: budget, Backward: backward}
		for range len(rows) + 1 {
			page, more, err := s.ListPosts(ctx, f, p)
			if err != nil {
				t.Fatalf("page %+v: %v", p, err)
			}
			pages++
			if len(page) == 0 {
				t.Fatalf("page %+v is empty", p)
			}
			var sum int64
			ids := make([]int64, len(page))
			for i := range page {
				ids[i] = page[i].ID
				sum += page[i].TextBytes()
				if got, want := page[i].TextBytes(), weight[page[i].ID]; f.Omit == nil && got != want {
					t.Errorf("post %d read with %d bytes of text, unbounded with %d", page[i].ID, got, want)
				}
			}
			if sum > budget {
				t.Errorf("page %v holds %d bytes of text, over the budget of %d", ids, sum, budget)
			}
			if backward {
				slices.Reverse(ids) // in the order read
			}
			seen = append(seen, ids...)
			if !more {
				return seen
			}
			// The page ended where the next row would not have fitted, or
			// at its limit.
			if len(page) < limit && len(seen) < len(all) {
				next := all[len(seen)].ID
				if backward {
					next = all[len(all)-1-len(seen)].ID
				}
				if sum+weight[next] <= budget {
					t.Errorf("page %v (%d bytes) ended before post %d (%d bytes), which fits the budget of %d",
						ids, sum, next, weight[next], budget)
				}
			}
			if backward {
				p.Before = ids[len(ids)-1]
			} else {
				p.After = ids[len(ids)-1]
			}
		}
		t.Fatalf("no last page after %d pages", len(rows)+1)
		return nil
	}
	want := make([]int64, len(all))
	for i := range all {
		want[i] = all[i].ID
	}
	reversed := slices.Clone(want)
	slices.Reverse(reversed)

	t.Run("forward pages end early and go on from their last row", func(t *testing.T) {
		t.Parallel()
		if got := walk(t, db.PostFilter{Source: source}, 100, 3400, false); !slices.Equal(got, want) {
			t.Errorf("walked %v, want %v", got, want)
		}
	})
	t.Run("backward pages too", func(t *testing.T) {
		t.Parallel()
		if got := walk(t, db.PostFilter{Source: source}, 100, 3400, true); !slices.Equal(got, reversed) {
			t.Errorf("walked %v, want %v", got, reversed)
		}
	})
	t.Run("the limit still counts", func(t *testing.T) {
		t.Parallel()
		if got := walk(t, db.PostFilter{Source: source}, 2, 1<<20, false); !slices.Equal(got, want) {
			t.Errorf("walked %v, want %v", got, want)
		}
	})
	t.Run("behind the since gate", func(t *testing.T) {
		t.Parallel()
		f := db.PostFilter{Source: source, Since: fxMonday}
		if got := walk(t, f, 100, 3400, false); !slices.Equal(got, want) {
			t.Errorf("walked %v, want %v", got, want)
		}
	})
	t.Run("texts left out are not counted", func(t *testing.T) {
		t.Parallel()
		page, more, err := s.ListPosts(ctx, db.PostFilter{Source: source, Omit: []string{"raw"}}, db.Page{Limit: 100, MaxBytes: 2048})
		if err != nil || len(page) != len(all) || more {
			t.Errorf("without raw under 2 KiB: %d rows, more %v, %v; want all %d", len(page), more, err, len(all))
		}
	})
	t.Run("a first row alone over the budget is refused", func(t *testing.T) {
		t.Parallel()
		big := rows[3].ID // 3 KiB of raw
		_, _, err := s.ListPosts(ctx, db.PostFilter{Source: source}, db.Page{Limit: 100, MaxBytes: 2048, After: big + 1})
		var tl *db.TooLargeError
		if !errors.As(err, &tl) {
			t.Fatalf("err = %v, want a *db.TooLargeError", err)
		}
		if tl.ID != big || tl.Bytes != weight[big] || tl.Max != 2048 {
			t.Errorf("TooLargeError %+v, want post %d of %d bytes over 2048", *tl, big, weight[big])
		}
	})

	t.Run("firehose, briefs and streams are bounded the same way", func(t *testing.T) {
		t.Parallel()
		msgs := make([]db.FirehoseMessage, 6)
		for i := range msgs {
			body := strings.Repeat("b", 700)
			msgs[i] = db.FirehoseMessage{ID: fxID + 200 + int64(i), Pane: db.PaneNews, Source: source, Body: &body,
				CreatedAt: fxMonday.Add(time.Duration(i) * time.Minute)}
			if i%2 == 0 {
				sum := strings.Repeat("s", 300)
				msgs[i].SummaryAI = &sum
			}
		}
		if _, err := s.DB().NewInsert().Model(&msgs).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// Newest first: 700, 1000, 700, 1000, …: 2000 bytes hold two.
		page, more, err := s.ListFirehose(ctx, db.FirehoseFilter{Source: source}, db.Page{Limit: 100, MaxBytes: 2000})
		if err != nil || len(page) != 2 || !more || page[0].ID != msgs[5].ID {
			t.Errorf("firehose under 2000 bytes: %d rows (first %v), more %v, %v; want 2 from %d and more", len(page), firstID(page), more, err, msgs[5].ID)
		}
		page, more, err = s.ListFirehose(ctx, db.FirehoseFilter{Source: source, Omit: []string{"summary_ai"}}, db.Page{Limit: 100, MaxBytes: 2000})
		if err != nil || len(page) != 2 || !more || page[1].SummaryAI != nil {
			t.Errorf("firehose without summaries under 2000 bytes: %d rows, more %v, %v; want 2 and more", len(page), more, err)
		}

		briefs := make([]db.Brief, 3)
		for i := range briefs {
			start := fxMonday.AddDate(0, 0, 7*(i+10))
			briefs[i] = db.Brief{ID: fxID + 300 + int64(i), WeekStart: start, WeekEnd: start.AddDate(0, 0, 6),
				Content: strings.Repeat("c", 1000), CreatedAt: start}
		}
		if _, err := s.DB().NewInsert().Model(&briefs).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		top := db.Page{Limit: 100, MaxBytes: 1500, Before: fxID + 299, Backward: true}
		bp, more, err := s.ListBriefs(ctx, db.BriefFilter{}, top)
		if err != nil || len(bp) != 1 || !more || bp[0].ID != briefs[0].ID || len(bp[0].Content) != 1000 {
			t.Errorf("briefs under 1500 bytes: %d rows, more %v, %v; want the oldest of the three, whole, and more", len(bp), more, err)
		}
		bp, more, err = s.ListBriefs(ctx, db.BriefFilter{Omit: []string{"content"}}, top)
		if err != nil || len(bp) != 3 || more || bp[0].Content != "" {
			t.Errorf("briefs without content under 1500 bytes: %d rows, more %v, %v; want all three, without content", len(bp), more, err)
		}

		bound, _, err := s.StreamBound(ctx, "posts")
		if err != nil {
			t.Fatal(err)
		}
		var streamed []int64
		after := int64(0)
		for range len(rows) + 1 {
			got, more, err := s.StreamPosts(ctx, db.PostFilter{Source: source}, db.StreamRange{After: after, Bound: bound, Limit: 100, MaxBytes: 3400})
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for i := range got {
				streamed = append(streamed, got[i].ID)
				sum += got[i].TextBytes()
				after = got[i].StreamPos
			}
			if sum > 3400 {
				t.Errorf("stream read of %d bytes, over 3400", sum)
			}
			if !more {
				break
			}
		}
		if !slices.Equal(streamed, reversed) {
			t.Errorf("streamed %v, want %v", streamed, reversed)
		}
	})
}

func firstID(ms []db.FirehoseMessage) int64 {
	if len(ms) == 0 {
		return 0
	}
	return ms[0].ID
}

// BenchmarkBoundedPage compares a page of 50 seeded posts read with and
// without a byte budget: with body only (a running total in a window) and
// with raw too (measured row by row).
//
//	go test ./db -run '^$' -bench BoundedPage -benchtime 2s -count 4
func BenchmarkBoundedPage(b *testing.B) {
	s := db.NewStore(dbtest.New(b))
	ctx := context.Background()
	for _, bc := range []struct {
		name   string
		omit   []string
		budget int64
	}{
		{"body/unbounded", []string{"raw"}, 0},
		{"body/bounded", []string{"raw"}, 4 << 20},
		{"raw/unbounded", nil, 0},
		{"raw/bounded", nil, 4 << 20},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := db.Page{Limit: 50, MaxBytes: bc.budget}
			f := db.PostFilter{Omit: bc.omit}
			for b.Loop() {
				if _, _, err := s.ListPosts(ctx, f, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
