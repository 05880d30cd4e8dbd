package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db/seed"
)

// startLive publishes live demo data on bdb every interval until ctx ends
// or the returned stop is called; stop waits for the round in progress.
func startLive(ctx context.Context, bdb *bun.DB, interval time.Duration, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	live := seed.NewLive(bdb, seed.LiveOptions{Interval: interval, Logger: log})
	go func() {
		defer close(done)
		live.Run(ctx)
	}()
	log.Info("publishing live demo data", slog.Duration("interval", interval))
	return func() {
		cancel()
		<-done
	}
}
