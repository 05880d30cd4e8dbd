package db_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestListsScanAsBunDoes: the list and stream statements scan their rows
// into the models directly (db/rowscan.go); every field of every row,
// NULLs, empty and missing coins, raw JSON and times included, equals what
// bun's generic scan of the same statement gives.
func TestListsScanAsBunDoes(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	// Rows whose optional columns are NULL or empty, beside the seeded ones.
	for _, stmt := range []string{
		`INSERT INTO posts (id, source, username, body, url, original_source_url, raw, created_at, coins)
		 VALUES (900000001, 'X', 'x', 'no links, no coins', NULL, NULL, '{"a": [1, "two"]}', now(), '{}'),
		        (900000002, 'X', 'x', 'coins not derived', 'https://x.test/1', NULL, '{}', now(), NULL)`,
		`INSERT INTO firehose_messages (id, pane, source, source_name, name, username, title, body, summary_ai, important, url, original_source_url, created_at, coins)
		 VALUES (900000001, 'crypto', 'x', NULL, NULL, NULL, NULL, NULL, NULL, true, NULL, NULL, now(), '{}'),
		        (900000002, 'news', 'x', 'X', 'n', 'u', 't', 'b', 's', false, 'https://x.test/2', 'https://x.test/3', now(), NULL)`,
	} {
		if _, err := bdb.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		got  func() (any, error)
		sql  string
		want any
	}{
		{"posts, every column", func() (any, error) {
			rows, _, err := s.ListPosts(ctx, db.PostFilter{}, db.Page{Limit: 200})
			return rows, err
		}, s.PostsSQL(db.PostFilter{}, db.Page{Limit: 200}), &[]db.Post{}},
		{"posts without raw and body", func() (any, error) {
			rows, _, err := s.ListPosts(ctx, db.PostFilter{Omit: []string{"raw", "body"}}, db.Page{Limit: 50})
			return rows, err
		}, s.PostsSQL(db.PostFilter{Omit: []string{"raw", "body"}}, db.Page{Limit: 50}), &[]db.Post{}},
		{"firehose, every column", func() (any, error) {
			rows, _, err := s.ListFirehose(ctx, db.FirehoseFilter{}, db.Page{Limit: 200})
			return rows, err
		}, s.FirehoseSQL(db.FirehoseFilter{}, db.Page{Limit: 200}), &[]db.FirehoseMessage{}},
		{"firehose of a pane without summaries", func() (any, error) {
			rows, _, err := s.ListFirehose(ctx, db.FirehoseFilter{Pane: db.PaneNews, Omit: []string{"summary_ai"}}, db.Page{Limit: 50})
			return rows, err
		}, s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneNews, Omit: []string{"summary_ai"}}, db.Page{Limit: 50}), &[]db.FirehoseMessage{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if err := bdb.NewRaw(tt.sql).Scan(ctx, tt.want); err != nil {
				t.Fatal(err)
			}
			// The statements read one row more than the page, to tell
			// whether more follow.
			want := reflect.ValueOf(tt.want).Elem()
			want = want.Slice(0, min(want.Len(), reflect.ValueOf(got).Len()))
			if reflect.ValueOf(got).Len() < 2 {
				t.Fatalf("only %d rows: the test needs a page of several", reflect.ValueOf(got).Len())
			}
			g := reflect.ValueOf(got)
			if g.Len() != want.Len() {
				t.Fatalf("%d rows, bun scans %d", g.Len(), want.Len())
			}
			for i := range g.Len() {
				if !reflect.DeepEqual(g.Index(i).Interface(), want.Index(i).Interface()) {
					t.Errorf("row %d:\n direct %+v\n bun    %+v", i, g.Index(i).Interface(), want.Index(i).Interface())
				}
			}
		})
	}
}

// TestScanTargetsCoverTheModels: every column of the models that the
// list statements read has a destination in the direct scan, so a column
// added to a model fails here rather than scanning as zero.
func TestScanTargetsCoverTheModels(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	for _, model := range []any{db.Post{}, db.FirehoseMessage{}, db.Brief{}} {
		for _, f := range s.DB().Table(reflect.TypeOf(model)).Fields {
			if !db.HasScanTarget(model, f.Name) {
				t.Errorf("%T: column %q has no scan target (db/rowscan.go)", model, f.Name)
			}
		}
	}
}
