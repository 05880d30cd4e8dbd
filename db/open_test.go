package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// TestOpenAppliesStatementTimeout checks that the server-side statement
// timeout (FEEDAPI_DB_STATEMENT_TIMEOUT) reaches every connection of the
// pool, and that a statement over it is cancelled by PostgreSQL itself.
func TestOpenAppliesStatementTimeout(t *testing.T) {
	t.Parallel()
	_, url := dbtest.NewWithURL(t)
	ctx := context.Background()
	for _, tc := range []struct {
		opts db.Options
		want string
	}{
		{db.Options{}, "5s"},
		{db.Options{StatementTimeout: 250 * time.Millisecond}, "250ms"},
		{db.Options{StatementTimeout: time.Second, NoStatementLimit: true}, "0"},
	} {
		bdb, err := db.Open(url, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		// Two connections held at once, so that both are asked.
		c1, err := bdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := bdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range [](func() (string, error)){
			func() (s string, err error) { return s, c1.QueryRowContext(ctx, "SHOW statement_timeout").Scan(&s) },
			func() (s string, err error) { return s, c2.QueryRowContext(ctx, "SHOW statement_timeout").Scan(&s) },
		} {
			got, err := c()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("options %+v, connection %d: statement_timeout = %q, want %q", tc.opts, i, got, tc.want)
			}
		}
		if tc.want == "250ms" {
			_, err := c1.ExecContext(ctx, "SELECT pg_sleep(2)")
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
				t.Errorf("pg_sleep(2) with a 250ms timeout: %v, want query_canceled (57014)", err)
			}
		}
		c1.Close()
		c2.Close()
		bdb.Close()
	}
}

// TestOpenTurnsJITOff checks that no connection of the pool compiles
// statements: the source search's gated branches are priced above
// jit_above_cost, and compiling took a hundred times the statement's run.
func TestOpenTurnsJITOff(t *testing.T) {
	t.Parallel()
	_, url := dbtest.NewWithURL(t)
	for _, opts := range []db.Options{{}, {NoStatementLimit: true}} {
		bdb, err := db.Open(url, opts)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := bdb.QueryRowContext(context.Background(), "SHOW jit").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != "off" {
			t.Errorf("options %+v: jit = %q, want off", opts, got)
		}
		bdb.Close()
	}
}
