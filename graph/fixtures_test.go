package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/feedapi/feedapi/db"
)

// Fixture ids and dates lie far above and after anything the demo seed
// writes, so tests see exact results whether the template is seeded or not.
const (
	fxPostID     int64 = 9_000_000_000_000
	fxFirehoseID int64 = 9_000_000_000_000
	fxBriefID    int64 = 9_000_000_000
)

// fxMonday is the first week of the fixtures (a Monday).
var fxMonday = time.Date(2031, 1, 6, 0, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// addPosts inserts n posts with ids from+1..from+n, one hour apart from at,
// all with the given source.
func (e *env) addPosts(from int64, n int, source string, at time.Time) []db.Post {
	e.t.Helper()
	rows := make([]db.Post, n)
	for i := range rows {
		id := from + int64(i) + 1
		rows[i] = db.Post{
			ID: id, Source: source, Username: fmt.Sprintf("user%d", i%3), Body: fmt.Sprintf("body %d", id),
			URL: ptr(fmt.Sprintf("https://t.me/c/%d", id)), Raw: json.RawMessage(fmt.Sprintf(`{"n": %d}`, id)),
			CreatedAt: at.Add(time.Duration(i) * time.Hour),
		}
	}
	if _, err := e.bdb.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		e.t.Fatalf("insert posts: %v", err)
	}
	return rows
}

// addBriefs inserts n briefs for consecutive weeks from monday, with ids
// from+1..from+n, each with posts posts in its week (ids derived from the
// brief's).
func (e *env) addBriefs(from int64, n int, monday time.Time, posts int) []db.Brief {
	e.t.Helper()
	rows := make([]db.Brief, n)
	for i := range rows {
		start := monday.AddDate(0, 0, 7*i)
		rows[i] = db.Brief{
			ID: from + int64(i) + 1, WeekStart: start, WeekEnd: start.AddDate(0, 0, 6), PostCount: posts,
			Content: fmt.Sprintf("# Week %d", i), CreatedAt: start.AddDate(0, 0, 7),
		}
		if posts > 0 {
			// Spread over the whole week, the last one just before Sunday's end.
			e.addPosts(fxPostID+int64(i+1)*1000, posts-1, fmt.Sprintf("fx-week-%d", i), start)
			e.addPosts(fxPostID+int64(i+1)*1000+500, 1, fmt.Sprintf("fx-week-%d", i), start.AddDate(0, 0, 7).Add(-time.Millisecond))
		}
	}
	if _, err := e.bdb.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		e.t.Fatalf("insert briefs: %v", err)
	}
	return rows
}

// addFirehose inserts messages with ids from+1.. for the given panes,
// sources and important flags (cycled).
func (e *env) addFirehose(from int64, n int, panes []db.Pane, sources []string, important []bool, at time.Time) []db.FirehoseMessage {
	e.t.Helper()
	rows := make([]db.FirehoseMessage, n)
	for i := range rows {
		id := from + int64(i) + 1
		rows[i] = db.FirehoseMessage{
			ID: id, Pane: panes[i%len(panes)], Source: sources[i%len(sources)], Important: important[i%len(important)],
			Title: ptr(fmt.Sprintf("title %d", id)), CreatedAt: at.Add(time.Duration(i) * time.Minute),
		}
	}
	if _, err := e.bdb.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		e.t.Fatalf("insert firehose: %v", err)
	}
	return rows
}

func ids[T any](rows []T, id func(T) int64) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}
