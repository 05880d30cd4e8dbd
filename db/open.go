package db

import (
	"context"

	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// DefaultURL is the database used when DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/feedapi?sslmode=disable"

// Options tunes the connection pool and server-side limits.
// Zero values select the defaults noted on each field.
type Options struct {
	MaxOpenConns     int           // default 16
	ConnectTimeout   time.Duration // default 2s
	StatementTimeout time.Duration // default 5s; 0 after defaulting means none
	NoStatementLimit bool          // true for bulk jobs (seed, import, migrate)
}

func (o Options) withDefaults() Options {
	if o.MaxOpenConns <= 0 {
		o.MaxOpenConns = 16
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 2 * time.Second
	}
	if o.StatementTimeout <= 0 {
		o.StatementTimeout = 5 * time.Second
	}
	return o
}

// Open connects to PostgreSQL through pgx's database/sql driver (which verifies
// TLS when the URL asks for it) and wraps the pool in bun with the pg dialect.
// It does not ping: the caller decides whether an unreachable server is fatal.
func Open(url string, opts Options) (*bun.DB, error) {
	opts = opts.withDefaults()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > opts.ConnectTimeout {
		cfg.ConnectTimeout = opts.ConnectTimeout
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if !opts.NoStatementLimit {
		cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(opts.StatementTimeout.Milliseconds(), 10)
	}
	cfg.RuntimeParams["timezone"] = "UTC"
	// No JIT: every query of the service reads a page, and the planner's
	// estimate of a branch that its gate will skip (db/QUERIES.md) can pass
	// jit_above_cost, and compiling then takes far longer than the
	// statement runs.
	cfg.RuntimeParams["jit"] = "off"
	// No parallel workers: a statement of the service reads a page, and
	// when the planner overrates a per-row probe (an anti-join over the
	// firehose's partitions) it starts workers whose launch takes longer
	// than the whole page runs without them.
	cfg.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	sqldb := stdlib.OpenDB(*cfg)
	sqldb.SetMaxOpenConns(opts.MaxOpenConns)
	sqldb.SetMaxIdleConns(opts.MaxOpenConns)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	return bun.NewDB(sqldb, pgdialect.New()), nil
}

// Ping checks that the database answers within ctx.
func Ping(ctx context.Context, db bun.IDB) error {
	var one int
	if err := db.NewRaw("SELECT 1").Scan(ctx, &one); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}
