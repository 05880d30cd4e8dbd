// Package seed generates feedapi's deterministic, realistic demo data and
// loads it in bulk.
//
// The same Options always produce byte-identical rows: every random choice
// comes from PCG streams seeded by Options.Seed, one stream per part of the
// data set, and every timestamp is derived from Options.Until, never from
// the clock. Posts and firehose messages are generated as streams and
// written with COPY, so millions of rows load in minutes in constant
// memory. Everything is written in one transaction (but for firehose
// messages beyond the first firehoseChunk, committed in chunks of that
// size): a failure leaves the tables as they were.
package seed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
)

// Options sizes the generated data set. Zero values take the defaults.
//
// Posts are spread over the twelve weeks before Until (longer when more
// briefs ask for it), firehose messages over the last four weeks (or
// FirehoseDays). Briefs
// cover the newest complete Monday-to-Sunday weeks before Until, ETF flows
// every US trading day from each fund launch whose figures were out by Until.
type Options struct {
	Posts    int // curated posts (default 3000)
	Firehose int // firehose messages (default 6000)
	// FirehoseDays is how many days before Until the firehose messages
	// cover (default 28).
	FirehoseDays int
	Briefs       int       // weekly briefs, newest weeks (default 12)
	EtfDays      int       // most recent trading days of ETF flows per asset (default: all since launch)
	Until        time.Time // end of the generated period, exclusive (default 2026-11-16T00:00:00Z)
	Seed         int64     // random seed (default 1)

	// Reset replaces existing feed data (posts, briefs, firehose messages
	// and ETF flows; API keys are never touched). Without it Run refuses to
	// write into a database that already holds any of them.
	Reset bool
}

// Stats counts what Run wrote.
type Stats struct {
	Posts, Firehose, Briefs, EtfFlows int
	EtfFunds, EtfFundFlows            int // funds, and the per-fund figures published by Until
}

// ErrNotEmpty is returned by Run when the database already holds feed data
// and Options.Reset is not set.
var ErrNotEmpty = errors.New("database already holds feed data")

// defaultUntil is the fixed end of the default data set (a Monday).
var defaultUntil = time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)

// Periods covered by the generated streams, before Until.
const (
	postsPeriod    = 84 * day // twelve weeks
	firehosePeriod = 28 * day
)

// feedTables are the tables Run fills, in the order they are checked.
var feedTables = []string{"posts", "briefs", "firehose_messages", "etf_flows", "etf_fund_flows", "etf_funds"}

// storyTables are emptied with the feed tables on a reset.
var storyTables = []string{"stories", "story_members", "story_bands"}

// nonEmptyQuery reports, per feed table, whether it has a row.
const nonEmptyQuery = `SELECT EXISTS (SELECT 1 FROM posts), EXISTS (SELECT 1 FROM briefs),
	EXISTS (SELECT 1 FROM firehose_messages), EXISTS (SELECT 1 FROM etf_flows),
	EXISTS (SELECT 1 FROM etf_fund_flows), EXISTS (SELECT 1 FROM etf_funds)`

// IsEmpty reports whether the feed tables (posts, briefs, firehose
// messages, ETF flows and funds) are all empty. API keys do not count.
func IsEmpty(ctx context.Context, idb bun.IDB) (bool, error) {
	has, err := nonEmpty(idb.QueryRowContext(ctx, nonEmptyQuery).Scan)
	if err != nil {
		return false, fmt.Errorf("check feed tables: %w", err)
	}
	return !slices.Contains(has, true), nil
}

// nonEmpty scans nonEmptyQuery's answer, one flag per feed table.
func nonEmpty(scan func(dest ...any) error) ([]bool, error) {
	has := make([]bool, len(feedTables))
	dest := make([]any, len(has))
	for i := range has {
		dest[i] = &has[i]
	}
	return has, scan(dest...)
}

// withDefaults validates the options and fills in the defaults.
func (o Options) withDefaults() (Options, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"posts", o.Posts}, {"firehose", o.Firehose}, {"briefs", o.Briefs}, {"etf days", o.EtfDays}, {"firehose days", o.FirehoseDays}} {
		if f.v < 0 {
			return o, fmt.Errorf("seed: %s must not be negative, got %d", f.name, f.v)
		}
	}
	if o.Posts == 0 {
		o.Posts = 3000
	}
	if o.Firehose == 0 {
		o.Firehose = 6000
	}
	if o.FirehoseDays == 0 {
		o.FirehoseDays = int(firehosePeriod / day)
	}
	if o.Briefs == 0 {
		o.Briefs = 12
	}
	if o.Until.IsZero() {
		o.Until = defaultUntil
	}
	o.Until = o.Until.UTC().Truncate(time.Millisecond)
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o, nil
}

// plan is everything decided before the first row is written.
type plan struct {
	opts          Options
	seed          uint64
	postsStart    time.Time
	firehoseStart time.Time
	weeks         *weekStats
	market        *market
	etf           []etfSeries
	funds         [][]fundDay // per entry of etf
	newsroom      *newsroom
}

func newPlan(opts Options) *plan {
	p := &plan{opts: opts, seed: uint64(opts.Seed)}
	until := opts.Until
	// Briefs cover the complete weeks before the Monday on or before Until;
	// posts start early enough to fill every one of them.
	weeksEnd := mondayOnOrBefore(until)
	p.weeks = newWeekStats(weeksEnd, opts.Briefs)
	p.postsStart = until.Add(-postsPeriod)
	if p.weeks.first.Before(p.postsStart) {
		p.postsStart = p.weeks.first
	}
	p.firehoseStart = until.Add(-time.Duration(opts.FirehoseDays) * day)
	textFrom := p.postsStart
	if p.firehoseStart.Before(textFrom) {
		textFrom = p.firehoseStart
	}
	p.market = newMarket(p.seed, textFrom.Add(-8*day), until)
	p.etf = genETF(p.seed, until, p.market)
	p.funds = genFunds(p.seed, p.etf)
	p.newsroom = newNewsroom(p.market, p.etf)
	return p
}

// Run generates the data set described by opts and writes it into the
// database in one transaction, reporting progress to progress (which may be
// nil). The database must be empty unless opts.Reset is set (see
// ErrNotEmpty). The tables are analyzed afterwards.
func Run(ctx context.Context, bdb *bun.DB, opts Options, progress io.Writer) (Stats, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Stats{}, err
	}
	if progress == nil {
		progress = io.Discard
	}
	conn, err := bdb.DB.Conn(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("seed: connect: %w", err)
	}
	defer conn.Close()

	var stats Stats
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("seed: driver connection is %T, want pgx's stdlib.Conn", dc)
		}
		return load(ctx, sc.Conn(), newPlan(opts), progress, &stats)
	})
	if err != nil {
		return Stats{}, err
	}
	return stats, nil
}

// load writes the plan's data set on one connection.
func load(ctx context.Context, pc *pgx.Conn, p *plan, progress io.Writer, stats *Stats) (err error) {
	tx, err := pc.Begin(ctx)
	if err != nil {
		return fmt.Errorf("seed: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()

	// Block other writers (a second `feedapi demo` starting at the same
	// time) while readers carry on; the loser then sees the rows.
	if _, err := tx.Exec(ctx, "LOCK TABLE "+strings.Join(feedTables, ", ")+" IN EXCLUSIVE MODE"); err != nil {
		return fmt.Errorf("seed: lock tables: %w", err)
	}
	has, err := nonEmpty(tx.QueryRow(ctx, nonEmptyQuery).Scan)
	if err != nil {
		return fmt.Errorf("seed: check feed tables: %w", err)
	}
	var full []string
	for i, h := range has {
		if h {
			full = append(full, feedTables[i])
		}
	}
	if len(full) > 0 {
		if !p.opts.Reset {
			return fmt.Errorf("seed: %w (%s not empty)", ErrNotEmpty, strings.Join(full, ", "))
		}
		if _, err := tx.Exec(ctx, "TRUNCATE "+strings.Join(append(slices.Clone(feedTables), storyTables...), ", ")); err != nil {
			return fmt.Errorf("seed: truncate: %w", err)
		}
		fmt.Fprintf(progress, "reset: emptied %s\n", strings.Join(feedTables, ", "))
	}
	assetType, err := tx.Conn().LoadType(ctx, "etf_asset")
	if err != nil {
		return fmt.Errorf("seed: load etf_asset type: %w", err)
	}
	tx.Conn().TypeMap().RegisterType(assetType)

	o := p.opts
	// The firehose's monthly partitions, so that no row of the period
	// lands in the default partition (on a database migrated that far).
	var partitioned bool
	if err := tx.QueryRow(ctx, "SELECT to_regprocedure('firehose_partitions_ensure(timestamptz, timestamptz)') IS NOT NULL").Scan(&partitioned); err != nil {
		return fmt.Errorf("seed: firehose partitions: %w", err)
	}
	if partitioned {
		if _, err := tx.Exec(ctx, "SELECT firehose_partitions_ensure($1, $2)", p.firehoseStart, o.Until); err != nil {
			return fmt.Errorf("seed: firehose partitions: %w", err)
		}
	}
	pg := newPostGen(ctx, p.seed, p.newsroom, p.postsStart, o.Until, o.Posts, p.weeks, newProgress(progress, "posts", o.Posts))
	pg.stories = newStoryTracker(db.KindPost, 1, o.Until)
	pg.receive(newArrivals(p.seed, streamPosts, o.Until))
	n, err := writePosts(ctx, tx, pg, true)
	if err != nil {
		return err
	}
	stats.Posts = int(n)

	fg := newFirehoseGen(ctx, p.seed, p.newsroom, p.firehoseStart, o.Until, o.Firehose, newProgress(progress, "firehose", o.Firehose))
	fg.stories = newStoryTracker(db.KindFirehose, pg.stories.x.Next(), o.Until)
	fg.receive(newArrivals(p.seed, streamFirehose, o.Until))
	for {
		// A transaction gives each row it inserts a distinct stream
		// position out of at most 2^24 (see the stream positions
		// migration): a larger data set commits every firehoseChunk rows.
		chunk := &limitRows{src: fg, left: firehoseChunk}
		n, err = writeFirehose(ctx, tx, chunk, true)
		if err != nil {
			return err
		}
		stats.Firehose += int(n)
		if chunk.left > 0 {
			break
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("seed: commit: %w", err)
		}
		if tx, err = pc.Begin(ctx); err != nil {
			return fmt.Errorf("seed: begin: %w", err)
		}
	}
	start := time.Now()
	if err := writeStoryIndex(ctx, tx, fg.stories.x.Next(), pg.stories, fg.stories); err != nil {
		return err
	}
	fmt.Fprintf(progress, "stories: %d in %s\n", fg.stories.x.Next()-1, time.Since(start).Round(100*time.Millisecond))

	briefs := buildBriefs(p.seed, p.weeks, p.market, p.etf, o.Until)
	n, err = tx.CopyFrom(ctx, pgx.Identifier{"briefs"}, briefColumns, pgx.CopyFromRows(briefRows(briefs)))
	if err != nil {
		return fmt.Errorf("seed: copy briefs: %w", err)
	}
	stats.Briefs = int(n)
	fmt.Fprintf(progress, "briefs: %d\n", n)

	n, err = tx.CopyFrom(ctx, pgx.Identifier{"etf_flows"}, etfColumns, pgx.CopyFromRows(etfRows(p.etf, o.EtfDays)))
	if err != nil {
		return fmt.Errorf("seed: copy etf flows: %w", err)
	}
	stats.EtfFlows = int(n)
	fmt.Fprintf(progress, "etf_flows: %d\n", n)

	n, err = tx.CopyFrom(ctx, pgx.Identifier{"etf_funds"}, fundColumns, pgx.CopyFromRows(fundRows()))
	if err != nil {
		return fmt.Errorf("seed: copy etf funds: %w", err)
	}
	stats.EtfFunds = int(n)
	n, err = tx.CopyFrom(ctx, pgx.Identifier{"etf_fund_flows"}, fundFlowColumns, pgx.CopyFromRows(fundFlowRows(p.etf, p.funds, o.EtfDays)))
	if err != nil {
		return fmt.Errorf("seed: copy etf fund flows: %w", err)
	}
	stats.EtfFundFlows = int(n)
	fmt.Fprintf(progress, "etf_funds: %d, etf_fund_flows: %d\n", stats.EtfFunds, n)

	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("seed: commit: %w", err)
	}
	start = time.Now()
	if _, err := pc.Exec(ctx, "ANALYZE "+strings.Join(append(slices.Clone(feedTables), storyTables...), ", ")); err != nil {
		return fmt.Errorf("seed: analyze: %w", err)
	}
	fmt.Fprintf(progress, "analyze: done in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// firehoseChunk is the most firehose messages the seed writes in one
// transaction.
const firehoseChunk = 10_000_000

// limitRows passes on at most left rows of src.
type limitRows struct {
	src  pgx.CopyFromSource
	left int
}

func (l *limitRows) Next() bool {
	if l.left == 0 || !l.src.Next() {
		return false
	}
	l.left--
	return true
}

func (l *limitRows) Values() ([]any, error) { return l.src.Values() }
func (l *limitRows) Err() error             { return l.src.Err() }

// writePosts writes generated posts: the one write path of the seed and of
// the live publisher (Live), so that whatever is derived on write applies
// to both. With received set the rows carry received_at after the columns
// of postColumns (the seed's); without it the database's clock gives it.
func writePosts(ctx context.Context, tx pgx.Tx, rows pgx.CopyFromSource, received bool) (int64, error) {
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"posts"}, withReceived(postColumns, received), rows)
	if err != nil {
		return n, fmt.Errorf("seed: copy posts: %w", err)
	}
	return n, nil
}

// writeFirehose writes generated firehose messages: the one write path of
// the seed and of the live publisher (received: as writePosts).
func writeFirehose(ctx context.Context, tx pgx.Tx, rows pgx.CopyFromSource, received bool) (int64, error) {
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"firehose_messages"}, withReceived(firehoseColumns, received), rows)
	if err != nil {
		return n, fmt.Errorf("seed: copy firehose messages: %w", err)
	}
	return n, nil
}

func withReceived(columns []string, received bool) []string {
	if !received {
		return columns
	}
	return append(slices.Clone(columns), "received_at")
}

// progress prints "label: done/total" lines about every tenth of a large
// stream, and once at the end.
type progress struct {
	w            io.Writer
	label        string
	total, every int
	start        time.Time
}

func newProgress(w io.Writer, label string, total int) *progress {
	return &progress{w: w, label: label, total: total, every: max(total/10, 50_000), start: time.Now()}
}

func (p *progress) tick(done int) {
	if done%p.every == 0 || done == p.total {
		fmt.Fprintf(p.w, "%s: %d/%d (%s)\n", p.label, done, p.total, time.Since(p.start).Round(100*time.Millisecond))
	}
}
