package main

import (
	"context"
	"strings"
	"testing"
	"time"

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
