// Package dbtest gives each test its own PostgreSQL database, cloned from a
// template that is migrated and seeded once per test binary.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }
//
// and in a test:
//
//	bdb := dbtest.New(t)
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/seed"
)

// DefaultServerURL is used when DATABASE_URL is not set. Its database part is ignored.
const DefaultServerURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// connectTimeout bounds a test database's connection attempts: the tests
// share a busy machine, where starting a backend can take far longer than
// the service's default allows, and a refused connection would fail a test
// for the machine's load rather than for the code.
const connectTimeout = 30 * time.Second

var (
	setupOnce   sync.Once
	setupErr    error
	serverURL   string
	template    string
	dbCounter   atomic.Int64
	runID       = newRunID()
	namePrefix  = "feedapi_t" + runID + "_"
	runNameRe   = regexp.MustCompile(`^feedapi_t([0-9a-f]{16})_`)
	adminConnMu sync.Mutex
	// owner is the session that holds this run's lock (runLock) while
	// the run lasts; nil until the first database is made.
	owner *pgx.Conn
)

// Ownership of test databases. A run (one test binary) names its
// databases feedapi_t<run id>_<n>, the run id 64 random bits, and before
// it creates any it takes a session-level advisory lock keyed by its run
// id, on a connection it keeps open until it ends. PostgreSQL frees the
// lock when that session ends, however the process ends (or its machine,
// once the server notices the connection is gone). So a run that finds
// another run's databases can tell, by trying to take that run's lock,
// whether their owner still runs, wherever it runs: only the databases
// of a run whose lock is free are abandoned, and it drops those holding
// the lock itself, so that two runs never drop them at once. Databases
// named otherwise (the pid naming of earlier versions among them) are
// never dropped.

// newRunID returns 16 hex digits of randomness.
func newRunID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail
	}
	return hex.EncodeToString(b[:])
}

// runLock is the advisory lock key of the run with id run: the id's bits,
// taken in the postgres database by every run.
func runLock(run string) int64 {
	n, err := strconv.ParseUint(run, 16, 64)
	if err != nil {
		panic(fmt.Sprintf("dbtest: run id %q: %v", run, err))
	}
	return int64(n)
}

// Main runs the tests, drops the template afterwards and ends the run's
// ownership of its databases.
func Main(m *testing.M) int {
	code := m.Run()
	if template != "" {
		if err := dropDatabase(context.Background(), template); err != nil {
			fmt.Fprintln(os.Stderr, "dbtest:", err)
		}
	}
	if owner != nil {
		owner.Close(context.Background())
	}
	return code
}

// URL returns the connection URL of the named database on the test server.
func URL(name string) string {
	cfg, err := pgx.ParseConfig(serverURLFromEnv())
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
}

// New returns a connection to a fresh database cloned from the seeded
// template. The database is dropped when the test ends.
func New(t testing.TB) *bun.DB {
	bdb, _ := NewWithURL(t)
	return bdb
}

// NewWithURL is New that also returns the database's URL, for code that opens
// its own connections (commands, servers).
func NewWithURL(t testing.TB) (*bun.DB, string) {
	t.Helper()
	ctx := context.Background()
	setupOnce.Do(func() { setupErr = setup(ctx) })
	if setupErr != nil {
		t.Fatalf("dbtest: %v", setupErr)
	}
	name := namePrefix + strconv.FormatInt(dbCounter.Add(1), 10)
	if err := adminExec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{template}.Sanitize()); err != nil {
		t.Fatalf("dbtest: clone template: %v", err)
	}
	url := URL(name)
	bdb, err := db.Open(url, db.Options{MaxOpenConns: 8, ConnectTimeout: connectTimeout})
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() {
		bdb.Close()
		if err := dropDatabase(context.Background(), name); err != nil {
			t.Errorf("dbtest: %v", err)
		}
	})
	return bdb, url
}

// NewEmpty returns the URL of a database name that does not exist yet, for
// tests of migration from nothing. It is dropped when the test ends.
func NewEmpty(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	setupOnce.Do(func() { setupErr = setup(ctx) })
	if setupErr != nil {
		t.Fatalf("dbtest: %v", setupErr)
	}
	name := namePrefix + strconv.FormatInt(dbCounter.Add(1), 10)
	t.Cleanup(func() {
		if err := dropDatabase(context.Background(), name); err != nil {
			t.Errorf("dbtest: %v", err)
		}
	})
	return URL(name)
}

func serverURLFromEnv() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return DefaultServerURL
}

// setup checks the server, takes this run's lock, removes the databases
// of abandoned runs, and builds this binary's template.
func setup(ctx context.Context) error {
	serverURL = serverURLFromEnv()
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := adminConn(pingCtx)
	if err != nil {
		return fmt.Errorf("PostgreSQL is not reachable at %s (set DATABASE_URL, or start it with "+
			"`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`): %w", serverURL, err)
	}
	if _, err := conn.Exec(pingCtx, "SELECT pg_advisory_lock($1)", runLock(runID)); err != nil {
		conn.Close(ctx)
		return fmt.Errorf("take the run's lock: %w", err)
	}
	owner = conn
	dropLeftovers(ctx)

	template = namePrefix + "template"
	url := URL(template)
	if err := db.Migrate(ctx, url, io.Discard); err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	bdb, err := db.Open(url, db.Options{NoStatementLimit: true, ConnectTimeout: connectTimeout})
	if err != nil {
		return err
	}
	defer bdb.Close()
	if _, err := seed.Run(ctx, bdb, seed.Options{}, io.Discard); err != nil {
		return fmt.Errorf("seed template: %w", err)
	}
	if _, err := bdb.ExecContext(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("analyze template: %w", err)
	}
	return nil
}

// dropLeftovers drops the databases of abandoned runs: those named by a
// run whose lock is free (see runLock).
func dropLeftovers(ctx context.Context) {
	conn, err := adminConn(ctx)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE 'feedapi_t%'")
	if err != nil {
		return
	}
	names, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	byRun := map[string][]string{}
	for _, name := range names {
		if m := runNameRe.FindStringSubmatch(name); m != nil && m[1] != runID {
			byRun[m[1]] = append(byRun[m[1]], name)
		}
	}
	for run, names := range byRun {
		var free bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", runLock(run)).Scan(&free); err != nil || !free {
			continue // its owner runs (or the server did not say)
		}
		for _, name := range names {
			_ = dropDatabase(ctx, name)
		}
		_, _ = conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", runLock(run))
	}
}

func adminConn(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(serverURLFromEnv())
	if err != nil {
		return nil, err
	}
	cfg.Database = "postgres"
	return pgx.ConnectConfig(ctx, cfg)
}

func adminExec(ctx context.Context, sql string) error {
	// CREATE DATABASE … TEMPLATE fails while another clone of the same template
	// is being made, so clones are serialised within the process.
	adminConnMu.Lock()
	defer adminConnMu.Unlock()
	conn, err := adminConn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func dropDatabase(ctx context.Context, name string) error {
	return adminExec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}
