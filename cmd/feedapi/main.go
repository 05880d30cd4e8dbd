// Command feedapi runs and operates the feedapi service: it serves the API,
// migrates and seeds the database, imports NDJSON data and manages API keys.
// It only parses configuration and wires the packages together.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"
	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
)

const description = `feedapi serves a read-only JSON API of curated crypto news, weekly Markdown
briefs, a raw news firehose split into panes, filter discovery and daily US
spot-ETF flows, under /v1 (REST) and /graphql (internal dashboards).

Every flag can also be set through the environment variable shown beside it.
Quick start: "feedapi demo" migrates, seeds demo data, prints two API keys
and serves on :8080. "feedapi help COMMAND" shows a command's flags.`

// cli is the command line: global flags, then one command.
type cli struct {
	globals

	Demo      demoCmd      `cmd:"" help:"Migrate, seed demo data if the database is empty, print a free and an internal key, and serve."`
	Serve     serveCmd     `cmd:"" help:"Serve the API (no migration, no seeding)."`
	Migrate   migrateCmd   `cmd:"" help:"Create the database if missing and apply pending migrations (idempotent)."`
	Seed      seedCmd      `cmd:"" help:"Load deterministic, realistic demo data (same flags, same rows)."`
	Import    importCmd    `cmd:"" help:"Upsert NDJSON data by id; bad lines are reported and skipped, the rest imported."`
	Keys      keysCmd      `cmd:"" help:"Create, list and revoke API keys."`
	Backfill  backfillCmd  `cmd:"" help:"Derive what rows written before a migration lack (coins), in batches."`
	Retention retentionCmd `cmd:"" help:"Keep the firehose's monthly partitions: create those ahead, drop those past the retention."`
	Help      helpCmd      `cmd:"" help:"Show this help, or a command's (feedapi help import)."`
	Version   versionCmd   `cmd:"" help:"Print the build version."`
}

// helpCmd prints the usage, as --help does: of the whole, or of the
// command it names.
type helpCmd struct {
	Command []string `arg:"" optional:"" help:"The command to explain, e.g. import or keys create."`
}

// Run implements the command: it parses "COMMAND… --help", whose help flag
// prints the usage and exits (run's exit hook records it); an error is
// then only a command that does not exist.
func (c helpCmd) Run(kctx *kong.Context, g *globals) error {
	*g.exited = -1
	_, err := kctx.Kong.Parse(append(slices.Clone(c.Command), "--help"))
	if *g.exited >= 0 {
		return nil
	}
	return err
}

// versionCmd prints what --version prints.
type versionCmd struct{}

// Run implements the command.
func (versionCmd) Run(g *globals) error {
	_, err := fmt.Fprintln(g.stdout, versionLine())
	return err
}

// globals are the flags every command takes.
type globals struct {
	DatabaseURL string           `name:"database-url" env:"DATABASE_URL" default:"${default_database_url}" help:"PostgreSQL connection URL."`
	LogLevel    string           `name:"log-level" env:"FEEDAPI_LOG_LEVEL" default:"info" enum:"debug,info,warn,error" help:"Log level: debug, info, warn or error."`
	Version     kong.VersionFlag `help:"Print the build version and exit."`

	stdout io.Writer
	stderr io.Writer
	logger *slog.Logger
	exited *int // the exit code kong asked for (after --help), -1 for none
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	var c cli
	exitCode := -1
	parser, err := kong.New(&c,
		kong.Name("feedapi"),
		kong.Description(description),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exitCode = code }),
		kong.UsageOnError(),
		cliVars(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		fmt.Fprintln(stderr, "feedapi:", err)
		return 2
	}
	kctx, err := parser.Parse(usageArgs(args))
	if exitCode >= 0 { // --help
		return exitCode
	}
	if err != nil {
		fmt.Fprintln(stderr, "feedapi:", err)
		return 2
	}
	c.stdout, c.stderr, c.exited = stdout, stderr, &exitCode
	c.logger = newLogger(stderr, c.LogLevel)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	kctx.BindTo(ctx, (*context.Context)(nil))
	if err := kctx.Run(&c.globals); err != nil {
		fmt.Fprintln(stderr, "feedapi:", operatorMessage(err))
		return 1
	}
	return 0
}

// cliVars are the values the flags' tags name: defaults declared where
// the rule they configure lives.
func cliVars() kong.Vars {
	return kong.Vars{
		"default_database_url": db.DefaultURL,
		"default_story_window": strconv.Itoa(db.DefaultMaxWindow),
		"version":              versionLine(),
	}
}

// usageArgs turns a bare "feedapi", which kong would refuse with a list of
// commands cut short, into "feedapi --help".
func usageArgs(args []string) []string {
	if len(args) == 0 {
		return []string{"--help"}
	}
	return args
}

// operatorMessage is err as an operator reads it: a domain error's code
// (not_found, bad_request), which is for the API's clients, is left out.
func operatorMessage(err error) string {
	msg := err.Error()
	d := apperr.As(err)
	if d == nil {
		return msg
	}
	inner := d.Error()
	prefix, ok := strings.CutSuffix(msg, inner)
	if !ok {
		return msg
	}
	text := d.Message
	if d.Err != nil {
		text += ": " + d.Err.Error()
	}
	return prefix + text
}

// newLogger returns the JSON logger of the commands at level. Durations
// are written as Go writes them ("5s", "1.5s"), not in nanoseconds.
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // validated by kong's enum
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: durationsAsText}))
}

// durationsAsText is the loggers' ReplaceAttr: a duration becomes its
// text.
func durationsAsText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

// open connects to the configured database for an operator command.
func (g *globals) open(bulk bool) (*bun.DB, error) {
	return db.Open(g.DatabaseURL, db.Options{NoStatementLimit: bulk})
}

// migrateCmd applies migrations.
type migrateCmd struct{}

// Run implements the command.
func (migrateCmd) Run(ctx context.Context, g *globals) error {
	return db.Migrate(ctx, g.DatabaseURL, g.stdout)
}
