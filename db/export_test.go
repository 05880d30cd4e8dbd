package db

import (
	"context"
	"io"
	"io/fs"
	"testing/fstest"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Hooks for the external tests that check query plans.

// MigrateBefore applies the migrations whose names sort before first: a
// database of the layout before that migration.
func MigrateBefore(ctx context.Context, url, first string) error {
	files := fstest.MapFS{}
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() < first {
			b, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
			if err != nil {
				return err
			}
			files["migrations/"+e.Name()] = &fstest.MapFile{Data: b}
		}
	}
	return migrateFS(ctx, url, files, false, io.Discard)
}

// FirehoseSQL returns the statement that ListFirehose runs for f and p.
// It reads the months of the first window the page reads (see
// firehosewindow.go), as ListFirehose does.
func (s *Store) FirehoseSQL(f FirehoseFilter, p Page) string {
	if w, err := s.firehoseWindows(context.Background(), p, f.SinceID, f.Since); err == nil {
		f.window = w.first()
	}
	fromOldest, _ := s.sinceFromOldest(context.Background(), f.Since)
	f.collapse()
	q := s.firehosePageSQL(f, p, fromOldest)
	return s.db.NewRaw(q.String(), q.args...).String()
}

// StreamStartSQL returns the statements that StreamStart runs for kind and
// since: the read of the recent rows, then the one through the indexes in
// position order.
func (s *Store) StreamStartSQL(kind string, since time.Time) (recent, indexed string) {
	table, _ := streamTable(kind)
	since = clampTime(since)
	return s.db.NewRaw(streamStartRecentSQL(table), since, streamStartRows).String(),
		s.db.NewRaw(streamStartSQL(table), since, since).String()
}

// WithStreamStartRows returns a Store whose StreamStart reads at most n
// recent rows before it reads the indexes in position order.
func (s *Store) WithStreamStartRows(n int) *Store {
	c := *s
	c.streamStartRows = n
	return &c
}

// PostsSQL returns the statement that ListPosts runs for f and p.
func (s *Store) PostsSQL(f PostFilter, p Page) string {
	q := s.newSQL(postType, f.Omit)
	f.collapse()
	postsSQL(q, f, p)
	q = s.boundBytes(q, postType, f.Omit, nil, p.order(), p.MaxBytes)
	return s.db.NewRaw(q.String(), q.args...).String()
}

// CuratedSourcesSQL is the statement of CuratedSources.
const CuratedSourcesSQL = curatedSourcesSQL

// SinceWindow is sinceWindow, for tests that straddle it.
const SinceWindow = sinceWindow

// WeekPostsSQL returns the statement that ListPostsOfWeeks runs for one
// page of the ISO week starting at monday, without a keyset bound.
func (s *Store) WeekPostsSQL(monday time.Time, limit int) string {
	return s.db.NewRaw(s.weekSQL(weekPostsSQL), pgdialect.Array([]int{0}), pgdialect.Array([]time.Time{monday}),
		pgdialect.Array([]int64{0}), bun.Safe("<>"), bun.Safe("DESC"), limit+1, bun.Safe("DESC")).String()
}

// EtfFlowsSQL returns the statement that ListEtfFlows runs for f and limit.
func (s *Store) EtfFlowsSQL(f EtfFilter, limit int) string {
	var rows []EtfFlow
	return s.etfFlowsQuery(&rows, f, limit).String()
}

// LatestEtfFlowsSQL returns the statement that LatestEtfFlows runs for f.
func (s *Store) LatestEtfFlowsSQL(f EtfFilter) string {
	return s.db.NewRaw(latestEtfFlowsSQL, pgdialect.Array(f.assets())).String()
}

// BriefsSQL returns the statement that ListBriefs runs for f and p.
func (s *Store) BriefsSQL(f BriefFilter, p Page) string {
	q := s.briefsSQL(f, p)
	return s.db.NewRaw(q.String(), q.args...).String()
}

// WithSinceBoundWindow returns a Store whose since queries use n instead of
// sinceBoundWindow, so that tests reach both sides of it.
func (s *Store) WithSinceBoundWindow(n int) *Store {
	c := *s
	c.sinceBound = n
	return &c
}

// WithSourceSearchLimits returns a Store whose firehose source search reads
// groups one by one up to groups matching groups, and walks at most walk
// rows otherwise (0: the constants), so that tests reach every plan.
func (s *Store) WithSourceSearchLimits(groups, walk int) *Store {
	c := *s
	c.sourceGroups, c.sourceWalk = groups, walk
	return &c
}

// HasScanTarget reports whether the direct row scan of model (a Post, a
// FirehoseMessage or a Brief) has a destination for column col.
func HasScanTarget(model any, col string) bool {
	switch model.(type) {
	case Post:
		return new(Post).scanTarget(col) != nil
	case FirehoseMessage:
		return new(FirehoseMessage).scanTarget(col) != nil
	case Brief:
		return new(Brief).scanTarget(col) != nil
	}
	return false
}

// The statements of StoryAssigner.Assign, for the benchmark that shows
// their plans.
const (
	LookupProbeSQL  = lookupProbeSQL
	LookupWindowSQL = lookupWindowSQL
)

// WindowHeld is how many indexed items a's copy of the window holds; -1
// when it has none (its batches probe the database).
func WindowHeld(a *StoryAssigner) int {
	if a.window == nil {
		return -1
	}
	return len(a.window.members)
}
