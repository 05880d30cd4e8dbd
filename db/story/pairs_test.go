package story_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db/coins"
	"github.com/feedapi/feedapi/db/story"
)

var update = flag.Bool("update", false, "rewrite testdata/pairs.jsonl from testdata/events.txt")

// item is one item of the labelled set.
type item struct {
	Event  string    `json:"event"`
	Source string    `json:"source"`
	At     time.Time `json:"at"`
	Title  string    `json:"title,omitempty"`
	Body   string    `json:"body"`
}

// pair is one labelled pair: Same tells whether a and b are one story.
type pair struct {
	Same bool   `json:"same"`
	Kind string `json:"kind"`
	A    item   `json:"a"`
	B    item   `json:"b"`
}

// readEvents parses testdata/events.txt (its format is described at its
// top) into events, each a list of items.
func readEvents(t testing.TB) [][]item {
	t.Helper()
	data, err := os.ReadFile("testdata/events.txt")
	if err != nil {
		t.Fatal(err)
	}
	var events [][]item
	var id string
	var start time.Time
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "= "):
			f := strings.Fields(line)
			if len(f) != 3 {
				t.Fatalf("events.txt:%d: want \"= ID TIME\"", n)
			}
			id = f[1]
			if start, err = time.Parse(time.RFC3339, f[2]); err != nil {
				t.Fatalf("events.txt:%d: %v", n, err)
			}
			events = append(events, nil)
		case strings.HasPrefix(line, "+"):
			parts := strings.SplitN(line, " | ", 3)
			head := strings.SplitN(parts[0], " ", 2)
			if len(parts) != 3 || len(head) != 2 || len(events) == 0 {
				t.Fatalf("events.txt:%d: want \"+MINUTES SOURCE | TITLE | BODY\"", n)
			}
			minutes, err := strconv.Atoi(head[0][1:])
			if err != nil {
				t.Fatalf("events.txt:%d: %v", n, err)
			}
			events[len(events)-1] = append(events[len(events)-1], item{
				Event: id, Source: head[1], At: start.Add(time.Duration(minutes) * time.Minute),
				Title: strings.TrimSpace(parts[1]), Body: strings.TrimSpace(parts[2]),
			})
		}
	}
	return events
}

// readItems returns the items of all the labelled events, in time order,
// as a feed brings them.
func readItems(t testing.TB) []item {
	t.Helper()
	var all []item
	for _, ev := range readEvents(t) {
		all = append(all, ev...)
	}
	slices.SortStableFunc(all, func(a, b item) int { return a.At.Compare(b.At) })
	return all
}

// makePairs derives the labelled pairs from the events: every two items of
// one event (same), and for every two events about a common coin, or with
// a common source, the items at the same place in each (different): the
// same outlet's wording of two events is the hardest trap.
func makePairs(events [][]item) []pair {
	var pairs []pair
	for _, ev := range events {
		for i := range ev {
			for j := i + 1; j < len(ev); j++ {
				pairs = append(pairs, pair{Same: true, Kind: sameKind(ev[i], ev[j]), A: ev[i], B: ev[j]})
			}
		}
	}
	coinsOf := func(ev []item) []string {
		var all []string
		for _, it := range ev {
			all = append(all, coins.Extract(it.Title, it.Body)...)
		}
		slices.Sort(all)
		return slices.Compact(all)
	}
	for x := range events {
		for y := x + 1; y < len(events); y++ {
			a, b := events[x], events[y]
			common := ""
			for _, c := range coinsOf(a) {
				if slices.Contains(coinsOf(b), c) {
					common = c
					break
				}
			}
			if common == "" {
				continue
			}
			for i := range min(len(a), len(b)) {
				pairs = append(pairs, pair{Same: false, Kind: differentKind(a[i], b[i]), A: a[i], B: b[i]})
			}
		}
	}
	return pairs
}

func sameKind(a, b item) string {
	switch {
	case strings.HasPrefix(a.Body, "RT @") || strings.HasPrefix(b.Body, "RT @"):
		return "retweet"
	case strings.HasPrefix(a.Source, "@") != strings.HasPrefix(b.Source, "@"):
		return "tweet_and_article"
	case strings.HasPrefix(a.Source, "@"):
		return "tweets"
	}
	return "reworded_articles"
}

func differentKind(a, b item) string {
	d := b.At.Sub(a.At)
	switch {
	case d > story.Window || d < -story.Window:
		return "same_coin_outside_window"
	case a.Source == b.Source:
		return "same_coin_same_source"
	}
	return "same_coin"
}

func TestPairsFile(t *testing.T) {
	pairs := makePairs(readEvents(t))
	var buf bytes.Buffer
	for _, p := range pairs {
		line, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if *update {
		if err := os.WriteFile("testdata/pairs.jsonl", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile("testdata/pairs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, buf.Bytes()) {
		t.Errorf("testdata/pairs.jsonl is stale: go test ./db/story -run TestPairsFile -update")
	}
}

func readPairs(t *testing.T) []pair {
	t.Helper()
	data, err := os.ReadFile("testdata/pairs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var pairs []pair
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var p pair
		if err := json.Unmarshal(line, &p); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, p)
	}
	return pairs
}

// score counts the pairs the detector gets right: tp (same, found same),
// fp (different, found same), fn (same, found different).
type score struct{ tp, fp, fn, tn int }

func (s score) precision() float64 { return float64(s.tp) / float64(s.tp+s.fp) }
func (s score) recall() float64    { return float64(s.tp) / float64(s.tp+s.fn) }

func (s *score) add(want, got bool) {
	switch {
	case want && got:
		s.tp++
	case want:
		s.fn++
	case got:
		s.fp++
	default:
		s.tn++
	}
}

// TestLabelledPairs measures the detector on the labelled set two ways:
// each pair alone (the second item assigned with only the first in the
// index), and the clustering of every item of the set in time order
// through one index, as the importer assigns them (a pair is found same
// when both items end in one story).
func TestLabelledPairs(t *testing.T) {
	pairs := readPairs(t)
	if len(pairs) < 300 {
		t.Fatalf("labelled set: %d pairs, want at least 300", len(pairs))
	}
	var alone score
	byKind := map[string]*score{}
	for _, p := range pairs {
		a, b := p.A, p.B
		if b.At.Before(a.At) {
			a, b = b, a
		}
		x := story.NewIndex()
		got := x.Add(story.Of(a.Title, a.Body), a.At) == x.Add(story.Of(b.Title, b.Body), b.At)
		alone.add(p.Same, got)
		if byKind[p.Kind] == nil {
			byKind[p.Kind] = &score{}
		}
		byKind[p.Kind].add(p.Same, got)
		if testing.Verbose() && p.Same != got {
			t.Logf("wrong (%s, want same=%v): %q / %q", p.Kind, p.Same, a.Title+" "+a.Body, b.Title+" "+b.Body)
		}
	}

	all := readItems(t)
	x := story.NewIndex()
	storyOf := map[string]int64{}
	key := func(it item) string { return it.Source + "|" + it.At.String() + "|" + it.Title + "|" + it.Body }
	for _, it := range all {
		storyOf[key(it)] = x.Add(story.Of(it.Title, it.Body), it.At)
	}
	var clustered score
	for _, p := range pairs {
		clustered.add(p.Same, storyOf[key(p.A)] == storyOf[key(p.B)])
	}

	for kind, s := range byKind {
		t.Logf("%-26s tp %3d fp %3d fn %3d tn %3d", kind, s.tp, s.fp, s.fn, s.tn)
	}
	for _, c := range []struct {
		name string
		s    score
	}{{"pairs alone", alone}, {"clustering", clustered}} {
		t.Logf("%s: %d pairs, precision %.3f, recall %.3f", c.name, len(pairs), c.s.precision(), c.s.recall())
		if got := c.s.precision(); got < 0.95 {
			t.Errorf("%s: precision %.3f, want at least 0.95", c.name, got)
		}
		if got := c.s.recall(); got < 0.85 {
			t.Errorf("%s: recall %.3f, want at least 0.85", c.name, got)
		}
	}
}

func ExampleSame() {
	a := story.Of("SEC approves spot Solana ETFs from six issuers", "")
	b := story.Of("", "JUST IN: 🇺🇸 SEC approves spot $SOL ETFs.")
	c := story.Of("SEC delays decision on spot Solana ETFs to March", "")
	fmt.Println(story.Same(a, b), story.Same(a, c))
	// Output: true false
}

// TestSameWithoutShortcuts: every pair of items of the labelled set gets
// the same verdict from Same whether its features come from Of (with the
// hashed sets and the summaries that reject a candidate early), from Slim,
// or are built from the exported fields alone (hashed on demand, without
// the summaries): the shortcuts never change a decision.
func TestSameWithoutShortcuts(t *testing.T) {
	var all []story.Features
	for _, ev := range readEvents(t) {
		for _, it := range ev {
			all = append(all, story.Of(it.Title, it.Body))
		}
	}
	plain := func(f story.Features) story.Features {
		return story.Features{Head: f.Head, Words: f.Words, Coins: f.Coins, Figures: f.Figures, Stance: f.Stance}
	}
	same := 0
	for i, a := range all {
		for _, b := range all[i+1:] {
			want := story.Same(plain(a), plain(b))
			if story.Same(a, b) != want || story.Same(a.Slim(), b.Slim()) != want {
				t.Fatalf("Same(%q, %q): %v without shortcuts, not with them", a.Head, b.Head, want)
			}
			if want {
				same++
			}
		}
	}
	if same == 0 {
		t.Fatal("no pair of the set is the same story: the test checks nothing")
	}
	t.Logf("%d items, %d pairs the same story", len(all), same)
}
