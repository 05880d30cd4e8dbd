package db

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockKey is the pg_advisory_lock key that serialises migrations
// across replicas starting together ("feedapi" in ASCII).
const migrationLockKey = 0x66656564617069

// Migrate creates the database named in url if it does not exist, then applies
// every pending migration. It is idempotent and safe to run from several
// processes at once: all of its work happens on one connection holding an
// advisory lock, and a migration is marked applied only after it succeeded.
func Migrate(ctx context.Context, url string, log io.Writer) error {
	return migrateFS(ctx, url, migrationFiles, true, log)
}

// migrateFS is Migrate with the migrations of fsys, and the firehose's
// partitions ahead when partitions is set.
func migrateFS(ctx context.Context, url string, fsys fs.FS, partitions bool, log io.Writer) error {
	if err := createDatabase(ctx, url); err != nil {
		return err
	}
	bdb, err := Open(url, Options{MaxOpenConns: 1, NoStatementLimit: true})
	if err != nil {
		return err
	}
	defer bdb.Close()

	// One connection, so the session lock covers every statement below.
	if _, err := bdb.ExecContext(ctx, "SELECT pg_advisory_lock(?)", migrationLockKey); err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	defer bdb.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", migrationLockKey) //nolint:errcheck // closing the connection releases it anyway

	migrations := migrate.NewMigrations()
	if err := migrations.Discover(fsys); err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	migrator := migrate.NewMigrator(bdb, migrations, migrate.WithMarkAppliedOnSuccess(true))
	if err := migrator.Init(ctx); err != nil {
		return fmt.Errorf("init migrations: %w", err)
	}
	group, err := migrator.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// The firehose's months ahead, at every run: an operator who runs
	// migrate on deploy never depends on the service alone for them.
	if partitions {
		if _, err := EnsureFirehosePartitions(ctx, bdb, time.Now()); err != nil {
			return err
		}
	}
	if group.IsZero() {
		fmt.Fprintln(log, "database is up to date")
	} else {
		fmt.Fprintf(log, "applied %s\n", group.Migrations)
	}
	return nil
}

// createDatabase connects to the server's maintenance database and creates the
// target database when it is missing. A concurrent creator is not an error.
func createDatabase(ctx context.Context, url string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse database url: %w", err)
	}
	name := cfg.Database
	if name == "" || name == "postgres" {
		return nil
	}
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))

	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("look up database %q: %w", name, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	// Another replica created it first: duplicate_database, or a unique
	// violation on pg_database when both inserted at the same moment.
	if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}
