package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/feedapi/feedapi/db/importer"
	"github.com/feedapi/feedapi/db/seed"
	"github.com/feedapi/feedapi/graph/limits"
	"golang.org/x/term"
)

// seedCmd loads demo data.
type seedCmd struct {
	Posts        int       `default:"3000" help:"Curated posts to generate (at least 1)."`
	Firehose     int       `default:"6000" help:"Firehose messages to generate (at least 1)."`
	FirehoseDays int       `name:"firehose-days" default:"28" help:"Days before --until that the firehose messages cover (at least 1)."`
	Briefs       int       `default:"12" help:"Weekly briefs, the most recent complete weeks (at least 1)."`
	EtfDays      int       `name:"etf-days" default:"0" help:"Trading days of ETF flows per asset, newest first (0: all since each launch)."`
	Until        time.Time `default:"2026-11-16T00:00:00Z" format:"2006-01-02T15:04:05Z07:00" help:"End of the generated period (RFC 3339)."`
	Seed         int64     `default:"1" help:"Random seed; the same flags always give the same rows."`
	Reset        bool      `help:"Delete existing posts, briefs, firehose messages and ETF flows first (keys are kept)."`
}

// Run implements the command.
func (c seedCmd) Run(ctx context.Context, g *globals) error {
	// The seed library reads zero as "default"; on the command line a zero
	// is more likely a mistake than a wish for the default.
	for flag, n := range map[string]int{"--posts": c.Posts, "--firehose": c.Firehose, "--briefs": c.Briefs, "--firehose-days": c.FirehoseDays} {
		if n < 1 {
			return fmt.Errorf("%s must be at least 1", flag)
		}
	}
	if c.EtfDays < 0 {
		return fmt.Errorf("--etf-days must be 0 (all) or more")
	}
	bdb, err := g.open(true)
	if err != nil {
		return err
	}
	defer bdb.Close()
	start := time.Now()
	stats, err := seed.Run(ctx, bdb, c.options(), g.stderr)
	if errors.Is(err, seed.ErrNotEmpty) {
		return fmt.Errorf("%w; run feedapi seed --reset to replace it (keys are kept)", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "seeded %d posts, %d firehose messages, %d briefs, %d ETF flows, %d ETF funds with %d daily figures in %s\n",
		stats.Posts, stats.Firehose, stats.Briefs, stats.EtfFlows, stats.EtfFunds, stats.EtfFundFlows, time.Since(start).Round(time.Millisecond))
	return nil
}

func (c seedCmd) options() seed.Options {
	return seed.Options{Posts: c.Posts, Firehose: c.Firehose, FirehoseDays: c.FirehoseDays, Briefs: c.Briefs, EtfDays: c.EtfDays,
		Until: c.Until, Seed: c.Seed, Reset: c.Reset}
}

// importCmd upserts NDJSON files.
type importCmd struct {
	Kind        string        `arg:"" enum:"posts,briefs,firehose,etf-flows,etf-funds,etf-fund-flows" help:"What the file holds: posts, briefs, firehose, etf-flows, etf-funds or etf-fund-flows (a fund's figures after the fund)."`
	File        string        `arg:"" optional:"" default:"-" help:"NDJSON file to read; - (the default) reads standard input."`
	Batch       int           `default:"1000" help:"Rows per insert statement and transaction."`
	Follow      bool          `help:"Read lines as they arrive (a pipe from a scraper) and commit each one, or the few that arrived together, within milliseconds; stop at the end of the input or on SIGTERM, after committing what was read."`
	Progress    time.Duration `name:"progress-interval" default:"10s" help:"When stderr is not a terminal, how often an \"import progress\" line is logged (0: after every batch); on a terminal a status line shows the progress instead."`
	StoryWindow int           `name:"story-window" env:"FEEDAPI_STORY_WINDOW" default:"${default_story_window}" help:"How many indexed items of the stories' 48-hour window the import keeps in memory (about 1 KB each) to find each item's story; when the window holds more, or with 0, each batch probes the database's story index instead, which is slower."`
	retentionFlag
}

// Run implements the command.
func (c importCmd) Run(ctx context.Context, g *globals) error {
	kind, err := importer.ParseKind(c.Kind)
	if err != nil {
		return err
	}
	if c.Progress < 0 {
		return fmt.Errorf("--progress-interval must be 0 (every batch) or more")
	}
	if c.StoryWindow < 0 {
		return fmt.Errorf("--story-window must be 0 (probe the database for every batch) or more")
	}
	retention, err := c.parse()
	if err != nil {
		return err
	}
	in := &countingReader{r: os.Stdin}
	var total int64
	if c.File != "-" {
		f, err := os.Open(c.File)
		if err != nil {
			return err
		}
		defer f.Close()
		in.r = f
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			total = fi.Size()
		}
	}
	bdb, err := g.open(true)
	if err != nil {
		return err
	}
	defer bdb.Close()
	var tty io.Writer
	if f, ok := g.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = f
	}
	progress := newImportProgress(c.Kind, in, total, tty, g.logger, c.Progress)
	opts := importer.Options{BatchSize: c.Batch, Rejects: g.stderr, Follow: c.Follow, Progress: progress.report,
		MaxTickerLen: limits.TickerMaxLen, FirehoseRetention: retention, StoryWindow: storyWindow(c.StoryWindow)}
	if tty != nil {
		opts.Rejects = progress
	}
	res, err := importer.Import(ctx, bdb, kind, in, opts)
	progress.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "%s: %d lines read, %d imported, %d rejected\n", c.Kind, res.Read, res.Imported, res.Rejected)
	return res.Err()
}

// storyWindow maps --story-window, where 0 holds no window, to
// importer.Options.StoryWindow, where 0 is the default and none is below 0.
func storyWindow(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}
