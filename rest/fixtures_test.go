package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
)

// Fixture ids and dates lie far above and after anything the demo seed
// writes, so that exact expectations hold whether the template is seeded or
// not; filters (a fixture source, a date range) isolate them.
const (
	fxPostID     int64 = 9_000_000_000_000
	fxFirehoseID int64 = 9_000_000_000_000
	fxBriefID    int64 = 9_000_000_000
)

// fxTime is the creation time of the first fixture row.
var fxTime = time.Date(2031, 1, 6, 9, 30, 15, 123_456_789, time.UTC)

func ptr[T any](v T) *T { return &v }

// addPosts inserts n posts with ids from+1..from+n and the given source,
// one minute apart from fxTime (so higher ids are newer).
func (a *api) addPosts(from int64, n int, source string) []db.Post {
	a.t.Helper()
	rows := make([]db.Post, n)
	for i := range rows {
		id := from + int64(i) + 1
		rows[i] = db.Post{
			ID: id, Source: source, Username: "user" + strconv.Itoa(i%3),
			Body:              fmt.Sprintf("body of post %d: \"quoted\" <b>&</b> ünïcødé", id),
			URL:               ptr(fmt.Sprintf("https://t.me/c/%d", id)),
			OriginalSourceURL: ptr(fmt.Sprintf("https://example.com/article/%d", id)),
			Raw:               json.RawMessage(fmt.Sprintf(`{"n": %d, "nested": {"ok": true}}`, id)),
			CreatedAt:         fxTime.Add(time.Duration(i) * time.Minute),
		}
	}
	if _, err := a.bdb.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		a.t.Fatalf("insert posts: %v", err)
	}
	return rows
}

// addBriefs inserts n briefs for consecutive weeks from the Monday of
// fxTime, with ids from+1..from+n.
func (a *api) addBriefs(from int64, n int) []db.Brief {
	a.t.Helper()
	monday := time.Date(2031, 1, 6, 0, 0, 0, 0, time.UTC)
	rows := make([]db.Brief, n)
	for i := range rows {
		start := monday.AddDate(0, 0, 7*i)
		rows[i] = db.Brief{
			ID: from + int64(i) + 1, WeekStart: start, WeekEnd: start.AddDate(0, 0, 6), PostCount: 10 + i,
			Content: fmt.Sprintf("# Week %d\n\n- a *Markdown* list", i), CreatedAt: start.AddDate(0, 0, 7).Add(6 * time.Hour),
		}
	}
	if _, err := a.bdb.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		a.t.Fatalf("insert briefs: %v", err)
	}
	return rows
}

// addFirehose inserts n messages with ids from+1..from+n, cycling through
// panes and important flags; every source contains source.
func (a *api) addFirehose(from int64, n int, source string, panes []db.Pane, important []bool) []db.FirehoseMessage {
	a.t.Helper()
	rows := make([]db.FirehoseMessage, n)
	for i := range rows {
		id := from + int64(i) + 1
		rows[i] = db.FirehoseMessage{
			ID: id, Pane: panes[i%len(panes)], Source: fmt.Sprintf("%s-%d", source, i%2), Important: important[i%len(important)],
			Title: ptr(fmt.Sprintf("title %d", id)), SummaryAI: ptr(fmt.Sprintf("summary %d", id)),
			CreatedAt: fxTime.Add(time.Duration(i) * time.Minute),
		}
		if i%2 == 0 {
			rows[i].Body = ptr("body")
			rows[i].URL = ptr(fmt.Sprintf("https://example.com/%d", id))
		}
	}
	if _, err := a.bdb.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		a.t.Fatalf("insert firehose: %v", err)
	}
	return rows
}

// addEtfFlows inserts days of flows for the assets, from 2031-01-06 on.
// Amounts include negatives, cents and values beyond float64's exact range
// of cents.
func (a *api) addEtfFlows(days int, assets ...db.Asset) []db.EtfFlow {
	a.t.Helper()
	var rows []db.EtfFlow
	for d := range days {
		for i, asset := range assets {
			rows = append(rows, db.EtfFlow{
				Asset: asset, FlowDate: time.Date(2031, 1, 6+d, 0, 0, 0, 0, time.UTC),
				NetInflow:    db.Money(-123456789 + int64(d*1000+i)),
				CumNetInflow: db.Money(4_503_599_627_370_497 + int64(d)),
				NetAssets:    db.Money(150_000_000_000 + int64(i)),
				ValueTraded:  db.Money(100 * int64(d+1)),
				UpdatedAt:    fxTime.Add(time.Duration(d) * 24 * time.Hour),
			})
		}
	}
	if _, err := a.bdb.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		a.t.Fatalf("insert etf flows: %v", err)
	}
	return rows
}

// count returns the number of rows of a table.
func (a *api) count(t testing.TB, table string) int {
	t.Helper()
	n, err := a.bdb.NewSelect().Table(table).Count(context.Background())
	if err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return int(n)
}
