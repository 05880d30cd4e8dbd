package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db/dbtest"
)

// TestRetentionRun: retention run keeps everything by default, refuses a
// retention it cannot read naming the flag, and drops exactly the months
// wholly older than the retention, saying which.
func TestRetentionRun(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)
	ctx := context.Background()
	// Two messages a year old, in a month of their own, and the seed's.
	old := time.Now().UTC().AddDate(-1, 0, 0)
	month := old.Format("2006m01")
	_, err := bdb.ExecContext(ctx, `INSERT INTO firehose_messages (id, pane, source, created_at) VALUES
		(900000001, 'news', 'src', ?), (900000002, 'news', 'src', ?)`, old, old.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		t.Helper()
		if err := bdb.NewRaw("SELECT count(*) FROM firehose_messages").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()

	code, stdout, stderr := runCLI(t, "--database-url", dbURL, "retention", "run")
	if code != 0 || !strings.Contains(stdout, "every firehose message is kept") || count() != before {
		t.Errorf("retention run without a retention: exit %d, %q %q; %d of %d messages left", code, stdout, stderr, count(), before)
	}
	code, _, stderr = runCLI(t, "--database-url", dbURL, "retention", "run", "--firehose-retention", "3 months")
	if code != 1 || !strings.Contains(stderr, "--firehose-retention") {
		t.Errorf("retention run with a bad retention: exit %d, stderr %q; want 1 naming the flag", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "--database-url", dbURL, "retention", "run", "--firehose-retention", "6mo")
	if code != 0 || !strings.Contains(stdout, "dropped firehose_messages_"+month) || count() != before-2 {
		t.Errorf("retention run --firehose-retention 6mo: exit %d, %q %q; %d of %d messages left, want the 2 of %s gone",
			code, stdout, stderr, count(), before, month)
	}
}

// TestImportWithRetention: import reads the same retention, refusing one it
// cannot read naming the flag, and rejects a firehose line of a month the
// retention drops while it imports the rest.
func TestImportWithRetention(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)
	old := time.Now().UTC().AddDate(-1, 0, 0).Format(time.RFC3339)
	recent := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	path := filepath.Join(t.TempDir(), "firehose.ndjson")
	lines := `{"id":900000001,"pane":"news","source":"src","created_at":"` + old + `"}` + "\n" +
		`{"id":900000002,"pane":"news","source":"src","created_at":"` + recent + `"}` + "\n"
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "--database-url", dbURL, "import", "firehose", path, "--firehose-retention", "3 months")
	if code != 1 || !strings.Contains(stderr, "--firehose-retention") {
		t.Errorf("import with a bad retention: exit %d, stderr %q; want 1 naming the flag", code, stderr)
	}
	code, _, stderr = runCLI(t, "--database-url", dbURL, "import", "firehose", path, "--firehose-retention", "6mo")
	var ids []int64
	if err := bdb.NewRaw("SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM firehose_messages WHERE id >= 900000001").
		Scan(context.Background(), pgdialect.Array(&ids)); err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(stderr, "line 1: created_at: before ") || !slices.Equal(ids, []int64{900000002}) {
		t.Errorf("import --firehose-retention 6mo: exit %d, stderr %q, stored %v; want exit 1, line 1 rejected, 900000002 stored", code, stderr, ids)
	}
}
