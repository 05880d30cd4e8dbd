package dbtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// exists reports whether the database name exists.
func exists(t *testing.T, name string) bool {
	t.Helper()
	conn, err := adminConn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// create makes an empty database name, dropped when the test ends.
func create(t *testing.T, name string) {
	t.Helper()
	if err := adminExec(context.Background(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dropDatabase(context.Background(), name) })
}

// TestLeftoversOfOtherMachinesStay: a database named by the pid of a
// process this machine does not run may belong to a run on another
// machine sharing the server; nothing proves it abandoned, so it stays.
func TestLeftoversOfOtherMachinesStay(t *testing.T) {
	// Beyond the largest pid Linux gives (pid_max is at most 2^22).
	const name = "feedapi_t4194304_1"
	create(t, name)
	dropLeftovers(context.Background())
	if !exists(t, name) {
		t.Errorf("%s, perhaps a live run on another machine, was dropped", name)
	}
}

// TestOnlyAbandonedRunsAreDropped: the databases of a run whose lock is
// held (a live run, on this machine or another) stay; those of a run whose
// lock is free are dropped.
func TestOnlyAbandonedRunsAreDropped(t *testing.T) {
	ctx := context.Background()
	live, abandoned := newRunID(), newRunID()
	// The live run holds its lock from a session of its own, as a run on
	// another machine would.
	conn, err := adminConn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", runLock(live)); err != nil {
		t.Fatal(err)
	}
	var livePID int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&livePID); err != nil {
		t.Fatal(err)
	}
	liveDB, liveTemplate := "feedapi_t"+live+"_1", "feedapi_t"+live+"_template"
	abandonedDB, abandonedTemplate := "feedapi_t"+abandoned+"_7", "feedapi_t"+abandoned+"_template"
	for _, name := range []string{liveDB, liveTemplate, abandonedDB, abandonedTemplate} {
		create(t, name)
	}
	dropLeftovers(ctx)
	for _, name := range []string{liveDB, liveTemplate} {
		if !exists(t, name) {
			t.Errorf("%s of a live run was dropped", name)
		}
	}
	for _, name := range []string{abandonedDB, abandonedTemplate} {
		if exists(t, name) {
			t.Errorf("%s of an abandoned run is still there", name)
		}
	}

	// Once the live run ends, its databases are abandoned too. The server
	// frees the run's lock when the session's process exits, which is
	// after the client has closed its connection.
	conn.Close(ctx)
	waitLocksFreed(t, livePID)
	dropLeftovers(ctx)
	if exists(t, liveDB) {
		t.Errorf("%s is still there after its run ended", liveDB)
	}
}

// waitLocksFreed waits until the server process pid holds no advisory
// lock: it has exited, or released them.
func waitLocksFreed(t *testing.T, pid int) {
	t.Helper()
	ctx := context.Background()
	admin, err := adminConn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for deadline := time.Now().Add(time.Minute); ; {
		var held int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = $1", pid).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if held == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server process %d still holds %d advisory locks a minute after its client closed", pid, held)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
