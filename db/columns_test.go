package db_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestListsReadOnlyWhatIsShown: the list statements read every column of
// the model (as the model names them, so a column added to it is read
// with no other change) but those the caller omits, in every plan shape,
// and omitted fields come back zero while the others are filled.
func TestListsReadOnlyWhatIsShown(t *testing.T) {
	t.Parallel()
	s := db.NewStore(dbtest.New(t))
	ctx := context.Background()
	columnsOf := func(model any) []string {
		var out []string
		for _, f := range s.DB().Table(reflect.TypeOf(model)).Fields {
			out = append(out, string(f.SQLName))
		}
		return out
	}
	since := time.Now().Add(-time.Hour)
	for _, tt := range []struct {
		name    string
		sql     string
		columns []string
		omit    []string
	}{
		{"posts", s.PostsSQL(db.PostFilter{Omit: []string{"raw"}}, db.Page{Limit: 5}), columnsOf(db.Post{}), []string{"raw"}},
		{"posts since, no body", s.PostsSQL(db.PostFilter{Since: since, Omit: []string{"raw", "body"}}, db.Page{Limit: 5}), columnsOf(db.Post{}), []string{"raw", "body"}},
		{"posts, all", s.PostsSQL(db.PostFilter{Source: "x"}, db.Page{Limit: 5}), columnsOf(db.Post{}), nil},
		{"firehose", s.FirehoseSQL(db.FirehoseFilter{Pane: db.PaneCrypto, Omit: []string{"summary_ai"}}, db.Page{Limit: 5}), columnsOf(db.FirehoseMessage{}), []string{"summary_ai"}},
		{"firehose by source since", s.FirehoseSQL(db.FirehoseFilter{Source: "coin", Since: since, Omit: []string{"summary_ai"}}, db.Page{Limit: 5}), columnsOf(db.FirehoseMessage{}), []string{"summary_ai"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.sql, ".*") && tt.omit != nil && !strings.Contains(tt.sql, "u.*") {
				t.Errorf("statement reads every column:\n%s", tt.sql)
			}
			for _, c := range tt.columns {
				omitted := false
				for _, o := range tt.omit {
					omitted = omitted || `"`+o+`"` == c
				}
				if got := strings.Contains(tt.sql, c); got == omitted {
					t.Errorf("column %s read: %v, want %v\n%s", c, got, !omitted, tt.sql)
				}
			}
		})
	}

	insertPosts(t, s, fxID, 3, "fx-cols", time.Now())
	rows, _, err := s.ListPosts(ctx, db.PostFilter{Source: "fx-cols", Omit: []string{"raw"}}, db.Page{Limit: 3})
	if err != nil || len(rows) != 3 {
		t.Fatalf("ListPosts = %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		if r.Raw != nil || r.Body == "" || r.Source != "fx-cols" || r.CreatedAt.IsZero() || r.ID == 0 {
			t.Errorf("row %+v: want raw unread, the rest read", r)
		}
	}
	rows, _, err = s.ListPosts(ctx, db.PostFilter{Source: "fx-cols"}, db.Page{Limit: 3})
	if err != nil || len(rows) != 3 || rows[0].Raw == nil {
		t.Fatalf("ListPosts without Omit = %+v, %v; want raw read", rows, err)
	}
}
