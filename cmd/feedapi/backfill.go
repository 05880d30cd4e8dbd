package main

import (
	"context"
	"fmt"
	"time"

	"github.com/feedapi/feedapi/db/importer"
)

// backfillCmd derives columns that rows written before their migration lack.
type backfillCmd struct {
	Coins   backfillCoinsCmd   `cmd:"" help:"Derive the coins of posts and firehose messages whose coins are NULL, and the coins side rows of those derived before the side tables."`
	FTS     backfillFTSCmd     `cmd:"" name:"fts" help:"Store the full-text document (fts) of posts and firehose messages whose fts is NULL."`
	Stories backfillStoriesCmd `cmd:"" help:"Give a story to posts and firehose messages stored before stories existed (story_id NULL), in time order."`
}

// backfillCoinsCmd runs importer.BackfillCoins.
type backfillCoinsCmd struct {
	Batch int `default:"5000" help:"Rows per read and update (each batch its own transaction)."`
}

// Run implements the command.
func (c backfillCoinsCmd) Run(ctx context.Context, g *globals) error {
	bdb, err := g.open(true)
	if err != nil {
		return err
	}
	defer bdb.Close()
	start := time.Now()
	stats, err := importer.BackfillCoins(ctx, bdb, c.Batch, g.stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "derived the coins of %d posts and %d firehose messages, added %d and %d side rows, in %s\n",
		stats.Posts, stats.Firehose, stats.PostSide, stats.FirehoseSide, time.Since(start).Round(time.Millisecond))
	return nil
}

// backfillFTSCmd runs importer.BackfillFTS.
type backfillFTSCmd struct {
	Batch int `default:"5000" help:"Rows per update (each batch its own transaction)."`
}

// Run implements the command.
func (c backfillFTSCmd) Run(ctx context.Context, g *globals) error {
	bdb, err := g.open(true)
	if err != nil {
		return err
	}
	defer bdb.Close()
	start := time.Now()
	stats, err := importer.BackfillFTS(ctx, bdb, c.Batch, g.stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "stored the full-text document of %d posts and %d firehose messages in %s\n",
		stats.Posts, stats.Firehose, time.Since(start).Round(time.Millisecond))
	return nil
}

// backfillStoriesCmd runs importer.BackfillStories.
type backfillStoriesCmd struct {
	Batch int `default:"1000" help:"Items per assignment and update (each batch its own transaction)."`
}

// Run implements the command.
func (c backfillStoriesCmd) Run(ctx context.Context, g *globals) error {
	bdb, err := g.open(true)
	if err != nil {
		return err
	}
	defer bdb.Close()
	start := time.Now()
	stats, err := importer.BackfillStories(ctx, bdb, c.Batch, g.stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "gave a story to %d posts and %d firehose messages in %s\n",
		stats.Posts, stats.Firehose, time.Since(start).Round(time.Millisecond))
	return nil
}
