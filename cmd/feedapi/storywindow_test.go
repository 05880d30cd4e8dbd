package main

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db/dbtest"
)

// TestImportStoryWindow: however many items --story-window lets an import
// hold in memory (the default, fewer than its window holds, none), the
// import gives its items the same stories: the rewordings of one event
// share one, and the same words a month later start another. A window
// below 0 is refused, naming the flag.
func TestImportStoryWindow(t *testing.T) {
	t.Parallel()
	type item struct{ minutes, source, title, body string }
	events := []struct {
		at    string
		items []item
	}{
		{"2026-01-05T09:30:00Z", []item{
			{"0", "Bloomberg", "Bitcoin Tops $95,000 for First Time as ETF Demand Swells", "The largest cryptocurrency rose as much as 4% to $95,210 in Asian trading on Monday."},
			{"1", "@WatcherGuru", "", "JUST IN: #Bitcoin breaks $95,000 for the first time ever 🚀"},
			{"3", "CoinTelegraph", "BTC price breaks $95K to set new all-time high", "Bitcoin hit a fresh record above $95,000 as spot ETF inflows continued."},
			{"10", "Decrypt", "Bitcoin crosses $95,000 as bulls take control", "The price of BTC crossed $95,000 on Monday morning, a new all-time high."},
		}},
		{"2026-01-05T11:00:00Z", []item{
			{"0", "Reuters", "SEC delays decision on spot Solana ETFs to March", "The U.S. Securities and Exchange Commission on Monday postponed its decision on spot Solana exchange-traded funds."},
			{"4", "CoinDesk", "SEC Pushes Back Spot SOL ETF Decision Again", "The regulator extended its review of the Solana funds, with a final deadline in March."},
		}},
		{"2026-02-09T15:00:00Z", []item{
			{"0", "Bloomberg", "Bitcoin Tops $95,000 Again After Two-Week Slide", "Bitcoin climbed back above $95,000 on Monday, recovering from a slide that took it to $84,000."},
			{"2", "@WatcherGuru", "", "JUST IN: #Bitcoin breaks $95,000 again 🚀"},
			{"5", "CoinTelegraph", "BTC price reclaims $95K after two-week correction", "Bitcoin rose back above $95,000 after dropping to $84,000 late January."},
		}},
	}
	var lines strings.Builder
	event := map[int64]int{} // the event of each line's id
	id := int64(930_000_000)
	for e, ev := range events {
		start, err := time.Parse(time.RFC3339, ev.at)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range ev.items {
			minutes, err := time.ParseDuration(it.minutes + "m")
			if err != nil {
				t.Fatal(err)
			}
			pane := "news"
			if strings.HasPrefix(it.source, "@") {
				pane = "twitter"
			}
			line, err := json.Marshal(map[string]any{"id": id, "pane": pane, "source": it.source, "title": it.title,
				"body": it.body, "created_at": start.Add(minutes)})
			if err != nil {
				t.Fatal(err)
			}
			lines.Write(line)
			lines.WriteByte('\n')
			event[id] = e
			id++
		}
	}
	path := filepath.Join(t.TempDir(), "firehose.ndjson")
	if err := os.WriteFile(path, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// Three items a batch: every writer but the one with no window holds
	// one from its second batch on; a window of 2 outgrows it.
	for _, window := range []string{"", "2", "0"} {
		bdb, dbURL := dbtest.NewWithURL(t)
		args := []string{"--database-url", dbURL, "import", "firehose", path, "--batch", "3"}
		if window != "" {
			args = append(args, "--story-window", window)
		}
		if code, stdout, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("feedapi %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
		var rows []struct {
			ID    int64
			Story int64
		}
		if err := bdb.NewRaw("SELECT id, story_id AS story FROM firehose_messages WHERE id >= 930000000 ORDER BY id").
			Scan(context.Background(), &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(event) {
			t.Fatalf("--story-window %q: %d rows stored, want %d", window, len(rows), len(event))
		}
		// The story of each event: the one its first item started, which
		// every item of the event joined and no other event's did.
		storyOf := map[int]int64{}
		for _, r := range rows {
			e := event[r.ID]
			if _, seen := storyOf[e]; !seen {
				storyOf[e] = r.Story
			}
			if r.Story != storyOf[e] {
				t.Errorf("--story-window %q: item %d of event %d in story %d, want %d, its event's", window, r.ID, e, r.Story, storyOf[e])
			}
		}
		if stories := slices.Compact(slices.Sorted(maps.Values(storyOf))); len(stories) != len(events) {
			t.Errorf("--story-window %q: the %d events share stories %v", window, len(events), storyOf)
		}
	}
	_, dbURL := dbtest.NewWithURL(t)
	code, _, stderr := runCLI(t, "--database-url", dbURL, "import", "firehose", path, "--story-window=-1")
	if code != 1 || !strings.Contains(stderr, "--story-window") {
		t.Errorf("import --story-window=-1: exit %d, stderr %q; want 1 naming the flag", code, stderr)
	}
}
