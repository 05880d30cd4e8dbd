package main

import (
	"context"
	"fmt"
	"time"

	"github.com/feedapi/feedapi/db"
)

// retentionFlag is how long firehose messages are kept, shared by serve
// (which applies it every hour), retention run, and import (which refuses
// messages of the months it drops).
type retentionFlag struct {
	Retention string `name:"firehose-retention" env:"FEEDAPI_FIREHOSE_RETENTION" default:"0" help:"How long firehose messages are kept: 0 keeps everything; else a count of years, months, weeks or days (2y, 18mo, 12w, 90d). Whole months are dropped once every message in them is older (serve checks every hour; feedapi retention run does it now); import rejects firehose lines of those months."`
}

// parse reads the flag.
func (f retentionFlag) parse() (db.Retention, error) {
	r, err := db.ParseRetention(f.Retention)
	if err != nil {
		return db.Retention{}, fmt.Errorf("--firehose-retention: %w", err)
	}
	return r, nil
}

// retentionCmd applies the firehose retention.
type retentionCmd struct {
	Run retentionRunCmd `cmd:"" help:"Create the firehose's months ahead and drop the months wholly older than --firehose-retention, now."`
}

// retentionRunCmd runs one round of the partitions' upkeep.
type retentionRunCmd struct {
	retentionFlag
}

// Run implements the command.
func (c retentionRunCmd) Run(ctx context.Context, g *globals) error {
	r, err := c.parse()
	if err != nil {
		return err
	}
	bdb, err := g.open(true)
	if err != nil {
		return err
	}
	defer bdb.Close()
	now := time.Now()
	n, err := db.EnsureFirehosePartitions(ctx, bdb, now)
	if err != nil {
		return err
	}
	if n > 0 {
		fmt.Fprintf(g.stderr, "created %d firehose partitions\n", n)
	}
	if r.IsZero() {
		fmt.Fprintln(g.stdout, "retention 0: every firehose message is kept")
		return nil
	}
	cutoff := r.Cutoff(now)
	dropped, err := db.DropFirehoseBefore(ctx, bdb, cutoff, g.stderr)
	for _, d := range dropped {
		fmt.Fprintf(g.stdout, "dropped %s (%d side rows) in %s\n", d.Name, d.Rows, d.Took.Round(time.Millisecond))
	}
	if err != nil {
		return err
	}
	if len(dropped) == 0 {
		fmt.Fprintf(g.stdout, "retention %s: no month ends before %s\n", r, cutoff.Format(time.RFC3339))
	}
	return nil
}
