package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db/dbtest"
)

// cli runs the command line in the test process and returns its exit
// code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestUsage: a bare feedapi, feedapi help and feedapi help COMMAND print
// the usage (the whole list of commands, or the command's flags), and
// feedapi version the version, as their flags do.
func TestUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"help"}, {"--help"}} {
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 || stderr != "" {
			t.Errorf("feedapi %q: exit %d, stderr %q; want 0 and nothing", args, code, stderr)
		}
		for _, want := range []string{"Usage: feedapi <command>", "demo", "serve", "import", "keys create", "backfill coins", "help", "version"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("feedapi %q: usage lacks %q:\n%s", args, want, stdout)
			}
		}
		if strings.Contains(stdout+stderr, "expected one of") {
			t.Errorf("feedapi %q: %s%s", args, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"help", "import"}, {"--log-level", "warn", "help", "import"}, {"import", "--help"}} {
		code, stdout, _ := runCLI(t, args...)
		if code != 0 || !strings.Contains(stdout, "Usage: feedapi import <kind> [<file>] [flags]") || !strings.Contains(stdout, "--follow") {
			t.Errorf("feedapi %q: exit %d:\n%s", args, code, stdout)
		}
	}
	if code, _, stderr := runCLI(t, "help", "nosuch"); code == 0 || !strings.Contains(stderr, "nosuch") {
		t.Errorf("feedapi help nosuch: exit %d, stderr %q; want a failure naming it", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "version")
	if code != 0 || strings.TrimSpace(stdout) != versionLine() || stderr != "" {
		t.Errorf("feedapi version: exit %d, %q %q; want %q", code, stdout, stderr, versionLine())
	}
}

// TestOperatorMessages: a command's error says what went wrong in words,
// without the API's error codes, and names the flag that would help.
func TestOperatorMessages(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewWithURL(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"keys", "revoke", "999999"}, "feedapi: key 999999 not found\n"},
		// The template is seeded.
		{[]string{"seed"}, "feedapi: seed: database already holds feed data (posts, briefs, firehose_messages, etf_flows, etf_fund_flows, etf_funds not empty); run feedapi seed --reset to replace it (keys are kept)\n"},
	} {
		code, _, stderr := runCLI(t, append([]string{"--database-url", dbURL}, tc.args...)...)
		if code != 1 || stderr != tc.want {
			t.Errorf("feedapi %q: exit %d, stderr %q; want 1 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestLogDurationsAsText: durations in the logs read as Go writes them.
func TestLogDurationsAsText(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	newLogger(&buf, "info").Info("demo", slog.Duration("interval", 5*time.Second),
		slog.Group("g", slog.Duration("grace", 1500*time.Millisecond)))
	var rec struct {
		Interval any `json:"interval"`
		G        struct {
			Grace any `json:"grace"`
		} `json:"g"`
	}
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Interval != "5s" || rec.G.Grace != "1.5s" {
		t.Errorf("logged %s; want interval \"5s\" and grace \"1.5s\"", buf.String())
	}
}
