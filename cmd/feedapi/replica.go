package main

import (
	"context"
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

// pingDatabases returns health's database check: the primary, which holds
// the API keys, and the replica, when there is one, which answers the
// queries. Both must answer; they are pinged at once, so the check takes
// as long as the slower one.
func pingDatabases(primary, replica *bun.DB) func(context.Context) error {
	if replica == nil {
		return func(ctx context.Context) error { return db.Ping(ctx, primary) }
	}
	return func(ctx context.Context) error {
		errc := make(chan error, 1)
		go func() { errc <- db.Ping(ctx, replica) }()
		err := db.Ping(ctx, primary)
		if rerr := <-errc; err == nil && rerr != nil {
			err = fmt.Errorf("read replica: %w", rerr)
		}
		return err
	}
}
