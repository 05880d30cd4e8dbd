package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
)

// openReplica connects to the read replica at url, with the primary's pool
// options; no url means no replica (nil).
func openReplica(url string, opts db.Options) (*bun.DB, error) {
	if url == "" {
		return nil, nil
	}
	replica, err := db.Open(url, opts)
	if err != nil {
		return nil, fmt.Errorf("read replica: %w", err)
	}
	return replica, nil
}

// databasePings returns health's database checks: reads pings the database
// the API's queries read from (the replica when there is one, else the
// primary), primary pings the primary, which holds the API keys, and is nil
// without a replica (reads is then its check).
func databasePings(primaryDB, replicaDB *bun.DB) (reads, primary func(context.Context) error) {
	primary = func(ctx context.Context) error { return db.Ping(ctx, primaryDB) }
	if replicaDB == nil {
		return primary, nil
	}
	reads = func(ctx context.Context) error {
		if err := db.Ping(ctx, replicaDB); err != nil {
			return fmt.Errorf("read replica: %w", err)
		}
		return nil
	}
	return reads, primary
}

// pingAll pings the primary and the replica, if any, at once.
func pingAll(ctx context.Context, reads, primary func(context.Context) error) error {
	if primary == nil {
		return reads(ctx)
	}
	errc := make(chan error, 1)
	go func() { errc <- primary(ctx) }()
	err := reads(ctx)
	return errors.Join(err, <-errc)
}
