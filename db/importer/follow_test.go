package importer_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

// syncBuffer is a strings.Builder safe to read while Import writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds, failing after a generous deadline:
// the machine may be loaded, and nothing here is a timing assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func postExists(t *testing.T, bdb *bun.DB, id int64) bool {
	t.Helper()
	var n int
	if err := bdb.QueryRowContext(context.Background(), "SELECT count(*) FROM posts WHERE id = ?", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// follower runs a follow import of posts fed through a pipe.
type follower struct {
	w       *io.PipeWriter
	rejects *syncBuffer
	done    chan struct{}
	res     importer.Result
	err     error
}

func startFollow(ctx context.Context, bdb *bun.DB) *follower {
	r, w := io.Pipe()
	f := &follower{w: w, rejects: &syncBuffer{}, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.res, f.err = importer.Import(ctx, bdb, importer.KindPosts, r,
			importer.Options{Follow: true, Rejects: f.rejects})
	}()
	return f
}

func (f *follower) write(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(f.w, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (f *follower) wait(t *testing.T) {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the follow import did not return")
	}
}

func TestFollowCommitsEachLineBeforeTheNext(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	f := startFollow(context.Background(), bdb)
	const first = 10_000_100
	for i := range int64(5) {
		id := first + i
		if i == 2 {
			// A bad line mid-stream: reported with its number, nothing of
			// it written, the stream goes on.
			f.write(t, line(postBase, fmt.Sprintf(`"id":%d`, id), `"created_at":"yesterday"`))
			waitFor(t, "the report of line 3", func() bool { return strings.Contains(f.rejects.String(), "line 3: ") })
			if postExists(t, bdb, id) {
				t.Fatalf("the bad line's post %d was written", id)
			}
			continue
		}
		if postExists(t, bdb, id) {
			t.Fatalf("post %d exists before its line was written", id)
		}
		f.write(t, line(postBase, fmt.Sprintf(`"id":%d`, id)))
		// The pipe stays open: the line must be committed without EOF and
		// without the next line.
		waitFor(t, fmt.Sprintf("post %d", id), func() bool { return postExists(t, bdb, id) })
	}
	if got, want := f.rejects.String(), "line 3: created_at: "; !strings.HasPrefix(got, want) || strings.Count(got, "\n") != 1 {
		t.Errorf("rejects = %q, want one line starting %q", got, want)
	}
	f.w.Close()
	f.wait(t)
	if f.err != nil {
		t.Fatal(f.err)
	}
	if want := (importer.Result{Read: 5, Imported: 4, Rejected: 1}); f.res != want {
		t.Errorf("result = %+v, want %+v", f.res, want)
	}
}

func TestFollowEOFFlushesEverything(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	f := startFollow(context.Background(), bdb)
	const first, n = 10_000_200, 250
	var b strings.Builder
	for i := range int64(n) {
		b.WriteString(line(postBase, fmt.Sprintf(`"id":%d`, first+i)) + "\n")
	}
	b.WriteString(line(postBase, fmt.Sprintf(`"id":%d`, first+n))) // no final newline
	if _, err := io.WriteString(f.w, b.String()); err != nil {
		t.Fatal(err)
	}
	f.w.Close()
	f.wait(t)
	if f.err != nil {
		t.Fatal(f.err)
	}
	var count int
	if err := bdb.QueryRow("SELECT count(*) FROM posts WHERE id BETWEEN ? AND ?", first, first+n).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != n+1 || f.res.Imported != n+1 {
		t.Errorf("%d rows, result %+v; want %d imported", count, f.res, n+1)
	}
}

func TestFollowCancelCommitsWhatWasRead(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	f := startFollow(ctx, bdb)
	const id = 10_000_300
	f.write(t, line(postBase, fmt.Sprintf(`"id":%d`, id)))
	waitFor(t, "the line", func() bool { return postExists(t, bdb, id) })
	// SIGTERM while the input stays open and quiet: Import returns
	// without waiting for more input or its end.
	cancel()
	f.wait(t)
	if f.err != nil {
		t.Fatal(f.err)
	}
	if want := (importer.Result{Read: 1, Imported: 1}); f.res != want {
		t.Errorf("result = %+v, want %+v", f.res, want)
	}
	f.w.Close()
}
