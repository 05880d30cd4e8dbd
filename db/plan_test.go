package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// explain returns the plan of query with sequential scans discouraged, so
// that it shows whether an index can serve the query at all (the small test
// tables would otherwise be scanned).
func explain(t *testing.T, bdb *bun.DB, query string) string {
	t.Helper()
	var plan []string
	err := bdb.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			return err
		}
		return tx.NewRaw("EXPLAIN "+query).Scan(ctx, &plan)
	})
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	return strings.Join(plan, "\n")
}

func TestQueriesCanUseTheirIndexes(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	s := db.NewStore(bdb)
	tests := []struct {
		name, query, index string
	}{
		{"firehose source substring with escaped wildcards", s.FirehoseSQL(db.FirehoseFilter{Source: "co%in_desk"}), "firehose_source_trgm_idx"},
		{"curated sources as a loose index scan", db.CuratedSourcesSQL, "posts_source_id_idx"},
		{"posts of one source", s.PostsSQL("x", db.Page{Limit: 50}), "posts_source_id_idx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if plan := explain(t, bdb, tt.query); !strings.Contains(plan, tt.index) {
				t.Errorf("plan does not use %s:\n%s", tt.index, plan)
			}
		})
	}
}
