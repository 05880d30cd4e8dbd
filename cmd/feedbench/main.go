// Command feedbench load-tests a running feedapi service on this machine.
//
// It runs named scenarios (one request pattern each: the first page of posts,
// a deep keyset page, a firehose substring search, the GraphQL dashboard
// query, …) with the vegeta library, open loop at a fixed rate or closed loop
// with a fixed number of workers, bounded in time and in requests, and prints
// per scenario the requests, requests/s, p50/p95/p99/max latency, answers by
// status code and, given the server's pid, its peak resident memory. It only
// loads loopback addresses. Run "feedbench --help" for the flags and the
// scenarios.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kong"
)

// maxDuration bounds --duration: a soak, not an unattended siege.
const maxDuration = 15 * time.Minute

// defaultWorkers is the closed loop's pool when neither --rate nor --workers is given.
const defaultWorkers = 16

const description = `feedbench load-tests a RUNNING feedapi service on this machine and prints,
per scenario: requests, requests/s, p50/p95/p99/max latency, answers by status
code (e.g. "200:3000 429:12"; timeout, neterr and gqlerr for failures without
a usable status) and, with --pid, the server's peak RSS (VmRSS sampled during
the attack; VmHWM, the peak of the process's whole life, is in --json).

Modes:
  open loop    --rate N: N requests per second whatever the latency (vegeta's
               constant pacer); up to --max-workers requests in flight.
  closed loop  --workers N (default 16 when --rate is not given): N workers,
               each sending its next request when the previous one is answered.
  --mix        all selected scenarios interleaved round-robin in one attack (a
               soak run), with a row per scenario and a total row.
Each attack lasts --duration (at most 15m) or --max-requests, whichever comes
first. Keep-alive connections, no redirects, a --timeout per request.

Rate limits: the server allows 120 requests/min per key by default, so a load
test would mostly measure 429s. Start the server for benchmarking with
  FEEDAPI_RATE_LIMIT=100000000 feedapi serve
429 answers are counted separately and reported.

Only loopback targets: --url must be, or resolve only to, 127.0.0.0/8 or ::1.

The key (--key or FEEDBENCH_KEY) must be valid; posts-deep-page and
graphql-dashboard need an internal-tier key and are skipped without one. The
ETF scenarios are skipped where the deployment offers no ETF flows.

Before attacking, feedbench asks the service for what the scenarios need: the
curated sources and the newest 100 posts (posts-by-source takes the middle
source by count there; post-one their ids), the newest 100 briefs, the
rarest source on the newest 100 firehose messages (firehose-source-rare), the
newest ETF flow date, and, through GraphQL posts(last: 100), a cursor beside
the oldest posts (posts-deep-page). The chosen values are printed as notes.

The search scenarios (coins and q, common and rare, alone
and with source or pane, first and deep page) run with --scenarios search,
not with all; the rare ticker is --rare-coin or the rarest on the newest 100
items of the list. The ETF funds' scenarios (etf-funds, etf-fund-flows,
etf-fund-flows-fund, etf-flows-paged, etf-summary) run with
--scenarios etf-funds. The firehose's own (firehose-first, firehose-deep-page,
firehose-since, firehose-since-oldest, firehose-since-id; the deep page needs
an internal key) run with --scenarios firehose.

Scenarios (--scenarios a,b,c, all or search; --list prints them):
`

// cli is the command line.
type cli struct {
	URL       string   `default:"http://127.0.0.1:8080" env:"FEEDBENCH_URL" help:"Root URL of the running service; loopback only."`
	Key       string   `env:"FEEDBENCH_KEY" help:"API key sent as a bearer token; an internal-tier key also enables the GraphQL scenarios."`
	Scenarios []string `default:"all" sep:"," help:"Scenarios to run, comma-separated, or all."`
	List      bool     `help:"Print the scenarios and exit."`

	Rate        int           `xor:"mode" help:"Open loop: requests per second."`
	Workers     int           `xor:"mode" help:"Closed loop: concurrent workers (default 16 when --rate is not given)."`
	MaxWorkers  int           `name:"max-workers" default:"1024" help:"Open loop: the most requests in flight."`
	Duration    time.Duration `default:"10s" help:"Length of each attack (at most 15m)."`
	MaxRequests uint64        `name:"max-requests" help:"Stop each attack after this many requests (0: no cap)."`
	Timeout     time.Duration `default:"10s" help:"Per-request timeout."`
	Mix         bool          `help:"Run the selected scenarios interleaved in one attack (soak), with a per-scenario breakdown."`

	PID         int           `name:"pid" help:"Server process id: sample its VmRSS from /proc/<pid>/status during each attack."`
	RSSInterval time.Duration `name:"rss-interval" default:"100ms" help:"How often to sample the server's VmRSS."`

	JSON bool   `help:"Print the report as JSON instead of a table."`
	Out  string `type:"path" help:"Also write the report as a Markdown table to this file."`

	Source       string        `help:"posts-by-source: the curated source label (default: a mid-volume one, discovered)."`
	CommonSource string        `name:"common-source" default:"coin" help:"firehose-source-common: a substring matching many sources."`
	RareSource   string        `name:"rare-source" help:"firehose-source-rare: a substring matching few rows (default: the rarest source on the newest 100 messages)."`
	SinceLag     time.Duration `name:"since-lag" default:"5s" help:"posts-since: how long before each request its since lies."`
	EtfDays      int           `name:"etf-days" default:"30" help:"etf-list: days from the newest flow date back to from."`

	CommonCoin         string `name:"common-coin" default:"BTC" help:"search scenarios *-coins-common: a ticker many items mention."`
	RareCoin           string `name:"rare-coin" help:"search scenarios *-coins-rare: a ticker few items mention (default: the rarest on the newest 100 items of the list)."`
	CommonWord         string `name:"common-word" default:"bitcoin" help:"search scenarios *-q-common: a word many items hold."`
	RarePhrasePosts    string `name:"rare-phrase-posts" default:"\"curve governance\"" help:"search scenario posts-q-rare*: a q few posts match (72 of the reference data set's 1M)."`
	RarePhraseFirehose string `name:"rare-phrase-firehose" default:"\"curve governance\"" help:"search scenario firehose-q-rare*: a q few messages match (1,125 of the reference data set's 5M)."`
	SearchPane         string `name:"search-pane" default:"crypto" help:"search scenarios firehose-*-pane: the pane."`

	Streams        int           `help:"Stream scenario instead of the request scenarios: open this many SSE streams of /v1/posts/stream (needs --database-url), insert posts and measure commit-to-client latency, memory per idle stream and goroutines."`
	Subscriptions  int           `help:"Stream scenario: also this many GraphQL postAdded subscriptions (internal key)."`
	StreamItems    int           `name:"stream-items" default:"200" help:"Stream scenario: posts the writer inserts."`
	StreamInterval time.Duration `name:"stream-interval" default:"20ms" help:"Stream scenario: time between two of the writer's inserts (its schedule: a late insert does not delay the next)."`
	StreamRate     float64       `name:"stream-rate" help:"Stream scenario: the writer's inserts per second; overrides --stream-interval (the live demo posts every few seconds: 0.3; saturating: 50)."`
	DatabaseURL    string        `name:"database-url" env:"DATABASE_URL" help:"Stream scenario: the service's database, where the writer inserts."`
	StreamClient   string        `name:"stream-client" enum:"http,raw" default:"http" help:"Stream scenario: the SSE client, net/http with a line scanner per stream (http) or a leaner one over a TCP connection of its own that only dechunks and finds the data lines (raw, http:// only); both stamp each item as it arrives."`
	AdminURL       string        `name:"admin-url" help:"Stream and refusal scenarios: the service's admin listener (http://127.0.0.1:9090), for its goroutine count."`

	RefusedInits   int `name:"refused-inits" help:"Refusal scenario instead of the request scenarios: open this many websockets to /graphql, each sending a connection_init with a made-up key, and report the close codes and the server's descriptors (--pid) and goroutines (--admin-url) before and after; run it beside a feedbench of a real client's scenario."`
	RefusalsAtOnce int `name:"refusals-at-once" default:"8" help:"Refusal scenario: websockets open at a time."`

	selected []*scenario // resolved from Scenarios by validate
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code: 0 done,
// 1 failed, 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	var c cli
	exitCode := -1
	parser, err := kong.New(&c,
		kong.Name("feedbench"),
		kong.Description(description+scenarioList()),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exitCode = code }),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoAppDescFormat: true}),
	)
	if err != nil {
		fmt.Fprintln(stderr, "feedbench:", err)
		return 2
	}
	_, err = parser.Parse(args)
	if exitCode >= 0 { // --help
		return exitCode
	}
	if err == nil {
		err = c.validate()
	}
	if err != nil {
		fmt.Fprintln(stderr, "feedbench:", err)
		return 2
	}
	if c.List {
		fmt.Fprint(stdout, scenarioList())
		return 0
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := c.bench(ctx, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "feedbench:", err)
		return 1
	}
	return 0
}

// validate checks the flags that kong cannot.
func (c *cli) validate() error {
	switch {
	case c.Duration <= 0 || c.Duration > maxDuration:
		return fmt.Errorf("--duration must be above 0 and at most %s", maxDuration)
	case c.Rate < 0:
		return errors.New("--rate must not be negative")
	case c.Workers < 0:
		return errors.New("--workers must not be negative")
	case c.MaxWorkers < 1:
		return errors.New("--max-workers must be at least 1")
	case c.Timeout <= 0:
		return errors.New("--timeout must be above 0")
	case c.RSSInterval < 10*time.Millisecond:
		return errors.New("--rss-interval must be at least 10ms")
	case c.SinceLag < 0:
		return errors.New("--since-lag must not be negative")
	case c.EtfDays < 0:
		return errors.New("--etf-days must not be negative")
	case c.PID < 0:
		return errors.New("--pid must be positive")
	case c.CommonSource == "":
		return errors.New("--common-source must not be empty")
	}
	var err error
	if c.selected, err = selectScenarios(c.Scenarios); err != nil {
		return err
	}
	if c.Key == "" && !c.List {
		return errors.New("an API key is needed: --key or FEEDBENCH_KEY")
	}
	if c.Rate == 0 && c.Workers == 0 {
		c.Workers = defaultWorkers
	}
	return nil
}

// load returns the attack settings of the flags.
func (c *cli) load() load {
	return load{rate: c.Rate, workers: c.Workers, maxWorkers: c.MaxWorkers,
		duration: c.Duration, maxRequests: c.MaxRequests, timeout: c.Timeout, mix: c.Mix}
}

// bench checks the target, prepares the scenarios, runs the attacks and
// writes the report.
func (c *cli) bench(ctx context.Context, stdout, stderr io.Writer) error {
	base, err := checkURL(ctx, c.URL, systemLookup)
	if err != nil {
		return err
	}
	if c.PID > 0 {
		if _, err := readStatus(statusPath(c.PID)); err != nil {
			return fmt.Errorf("--pid: %w", err)
		}
	}
	if c.RefusedInits > 0 {
		rb := &refusalBench{base: base, adminURL: c.AdminURL, pid: c.PID, n: c.RefusedInits, parallel: c.RefusalsAtOnce, stdout: stdout}
		return rb.run(ctx)
	}
	if c.Streams > 0 || c.Subscriptions > 0 {
		if c.DatabaseURL == "" {
			return errors.New("the stream scenario needs --database-url")
		}
		interval := c.StreamInterval
		if c.StreamRate < 0 {
			return errors.New("--stream-rate must not be negative")
		}
		if c.StreamRate > 0 {
			interval = time.Duration(float64(time.Second) / c.StreamRate)
		}
		sb := &streamBench{base: base, key: c.Key, dbURL: c.DatabaseURL, adminURL: c.AdminURL, pid: c.PID,
			streams: c.Streams, subs: c.Subscriptions, items: max(c.StreamItems, 1), interval: interval, stdout: stdout,
			rawClient: c.StreamClient == "raw"}
		return sb.run(ctx)
	}
	l := c.load()
	client := newClient(l.timeout, max(l.workers, l.maxWorkers))

	d := newDiscovery(client, base, c.Key, scenarioOptions{source: c.Source, commonSource: c.CommonSource,
		rareSource: c.RareSource, sinceLag: c.SinceLag, etfDays: c.EtfDays,
		commonCoin: c.CommonCoin, rareCoin: c.RareCoin, commonWord: c.CommonWord,
		rarePhrasePosts: c.RarePhrasePosts, rarePhraseFirehose: c.RarePhraseFirehose, searchPane: c.SearchPane})
	if err := d.preflight(ctx); err != nil {
		return err
	}
	rep := &report{URL: base.String(), Started: time.Now().UTC(), Mode: l.mode(), Duration: l.duration.String(),
		MaxRequests: l.maxRequests, Rows: []row{}, Skipped: []skipped{}}
	var plans []prepared
	for _, s := range c.selected {
		next, err := s.prepare(ctx, d)
		var skip *skipError
		if errors.As(err, &skip) {
			fmt.Fprintf(stderr, "feedbench: skipping %s: %s\n", s.name, skip.reason)
			rep.Skipped = append(rep.Skipped, skipped{Scenario: s.name, Reason: skip.reason})
			continue
		}
		if err != nil {
			return fmt.Errorf("prepare %s: %w", s.name, err)
		}
		plans = append(plans, prepared{scenario: s, next: next})
	}
	rep.Notes = append([]string{rateLimitHint}, d.notes...)
	if len(plans) == 0 {
		return errors.New("every selected scenario was skipped")
	}

	groups := [][]prepared{plans}
	if !c.Mix {
		groups = groups[:0]
		for i := range plans {
			groups = append(groups, plans[i:i+1])
		}
	}
	for _, g := range groups {
		if ctx.Err() != nil {
			break
		}
		rows, note, err := measure(ctx, client, l, g, c.PID, c.RSSInterval, stderr)
		if err != nil {
			return err
		}
		rep.Rows = append(rep.Rows, rows...)
		if note != "" {
			rep.Notes = append(rep.Notes, note)
		}
	}
	rep.Interrupted = ctx.Err() != nil
	rep.finish()
	return c.write(rep, stdout)
}

// write prints the report (table or JSON) and writes the Markdown file.
func (c *cli) write(rep *report, stdout io.Writer) error {
	var err error
	if c.JSON {
		err = rep.writeJSON(stdout)
	} else {
		err = rep.writeText(stdout)
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if c.Out != "" {
		f, err := os.Create(c.Out)
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := rep.writeMarkdown(f); err != nil {
			f.Close()
			return fmt.Errorf("--out: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if rep.Interrupted {
		return errors.New("interrupted; the report covers what ran")
	}
	return nil
}

// scenarioList is the --list output and the end of --help: name and doc of
// every scenario.
func scenarioList() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, s := range scenarios {
		fmt.Fprintf(tw, "  %s\t%s\n", s.name, s.doc)
	}
	tw.Flush()
	return b.String()
}
