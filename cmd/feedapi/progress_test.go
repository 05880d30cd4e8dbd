package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

// runCommandOutput runs the binary with args and env and returns its
// stdout and stderr, failing the test unless it exits 0.
func runCommandOutput(t *testing.T, env map[string]string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = processEnv(env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("feedapi %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// TestImportLogsProgress: an import whose stderr is a log, not a terminal,
// logs "import progress" lines as it goes (here after every batch), with
// its counts and how much of the file it has read.
func TestImportLogsProgress(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewWithURL(t)
	var lines strings.Builder
	const n = 2500
	for i := range n {
		fmt.Fprintf(&lines, `{"id":%d,"source":"fx-progress","username":"u","body":"post %d","created_at":"2031-03-01T10:00:00Z"}`+"\n", 70_000_000+i, i)
	}
	path := filepath.Join(t.TempDir(), "posts.ndjson")
	if err := os.WriteFile(path, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := runCommandOutput(t, map[string]string{"DATABASE_URL": dbURL},
		"import", "posts", path, "--batch", "1000", "--progress-interval", "0")
	if !strings.Contains(stdout, fmt.Sprintf("posts: %d lines read, %d imported, 0 rejected", n, n)) {
		t.Errorf("summary: %q", stdout)
	}
	var recs []map[string]any
	for line := range strings.SplitSeq(stderr, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "import progress" {
			recs = append(recs, rec)
		}
	}
	if len(recs) < 3 {
		t.Fatalf("%d progress lines for 3 batches, want one per batch:\n%s", len(recs), stderr)
	}
	last := recs[len(recs)-1]
	if last["kind"] != "posts" || last["imported"] != float64(n) || last["lines_read"] != float64(n) ||
		last["percent"] != float64(100) || last["bytes_total"] != float64(lines.Len()) {
		t.Errorf("last progress line %v, want all %d lines imported, 100%% of %d bytes", last, n, lines.Len())
	}
	if _, err := time.ParseDuration(fmt.Sprint(last["elapsed"])); err != nil {
		t.Errorf("elapsed %v: want a duration as text", last["elapsed"])
	}
}

// TestBackfillSaysNothingWhenNothingIsToDo: backfilling a database whose
// rows are all derived prints its summary, and no line per batch.
func TestBackfillSaysNothingWhenNothingIsToDo(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewWithURL(t)
	for _, cmd := range []string{"coins", "fts", "stories"} {
		stdout, stderr := runCommandOutput(t, map[string]string{"DATABASE_URL": dbURL}, "backfill", cmd, "--batch", "100")
		if stderr != "" {
			t.Errorf("backfill %s with nothing to do wrote to stderr:\n%s", cmd, stderr)
		}
		if !strings.Contains(stdout, " 0 posts and 0 firehose messages") {
			t.Errorf("backfill %s: summary %q", cmd, stdout)
		}
	}
}

// TestImportStatusLine: on a terminal the progress is one line redrawn in
// place, with a bar when the input's size is known; a rejected line is
// written on a line of its own, the status line drawn again after it, and
// the status line is cleared at the end.
func TestImportStatusLine(t *testing.T) {
	t.Parallel()
	var term bytes.Buffer
	in := &countingReader{}
	in.n.Store(500)
	p := newImportProgress("posts", in, 1000, &term, nil, 0)
	clock := p.start
	p.now = func() time.Time { return clock }
	clock = clock.Add(2 * time.Second)
	p.report(importer.Result{Read: 3000, Imported: 2990, Rejected: 10})
	bar := "posts [" + strings.Repeat("#", 15) + strings.Repeat(".", 15) + "] 50%  3,000 lines: 2,990 imported, 10 rejected  1,500 lines/s"
	if got, want := term.String(), "\r\x1b[K"+bar; got != want {
		t.Errorf("status line %q, want %q", got, want)
	}
	term.Reset()
	// Reports closer together than the redraw pace are not drawn.
	p.report(importer.Result{Read: 3001, Imported: 2991, Rejected: 10})
	if term.Len() != 0 {
		t.Errorf("redrawn at once: %q", term.String())
	}
	fmt.Fprint(p, "line 7: body: must not be empty\n")
	if got := term.String(); !strings.HasPrefix(got, "\r\x1b[Kline 7: body: must not be empty\n\r\x1b[Kposts [") {
		t.Errorf("a reject on the terminal: %q", got)
	}
	term.Reset()
	p.finish()
	if got := term.String(); got != "\r\x1b[K" {
		t.Errorf("finish wrote %q, want the line cleared", got)
	}
	if got := grouped(1234567); got != "1,234,567" {
		t.Errorf("grouped(1234567) = %q", got)
	}
}
