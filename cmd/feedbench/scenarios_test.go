package main

import (
	"net/url"
	"regexp"
	"slices"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// unknown-keys sends a different well-formed key each time (a cache of
// refused keys must not absorb the flood), and only when named.
func TestUnknownKeysScenario(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("http://127.0.0.1:8080")
	d := newDiscovery(nil, base, "fapi_thelegitimatekey", scenarioOptions{})
	next, err := prepUnknownKeys(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	wellFormed := regexp.MustCompile(`^Bearer fapi_[a-z2-7]{32}$`)
	seen := map[string]bool{}
	for range 100 {
		var tg vegeta.Target
		next(&tg)
		auth := tg.Header.Get("Authorization")
		if !wellFormed.MatchString(auth) {
			t.Fatalf("Authorization %q is not a well-formed feedapi key", auth)
		}
		if seen[auth] {
			t.Fatalf("key %q sent twice", auth)
		}
		seen[auth] = true
		if tg.URL != "http://127.0.0.1:8080/v1/posts?limit=50" {
			t.Errorf("URL = %q", tg.URL)
		}
	}
	if got := d.header.Get("Authorization"); got != "Bearer fapi_thelegitimatekey" {
		t.Errorf("the shared header was changed: %q", got)
	}
	all, err := selectScenarios([]string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(all, func(s *scenario) bool { return s.name == "unknown-keys" }) {
		t.Error(`"all" runs unknown-keys`)
	}
	named, err := selectScenarios([]string{"unknown-keys"})
	if err != nil || len(named) != 1 {
		t.Errorf("--scenarios unknown-keys: %v, %v", named, err)
	}
}

// The search group holds the 32 search scenarios, runs only when
// named, and each deep scenario asks GraphQL for the filtered list's end.
func TestSearchScenarios(t *testing.T) {
	t.Parallel()
	group, err := selectScenarios([]string{"search"})
	if err != nil {
		t.Fatal(err)
	}
	if len(group) != 32 {
		t.Errorf("search selects %d scenarios, want 32 (2 lists × 4 kinds × alone/narrowed × first/deep)", len(group))
	}
	all, err := selectScenarios([]string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range group {
		if slices.Contains(all, s) {
			t.Errorf("all runs %s", s.name)
		}
	}
	for _, name := range []string{"posts-coins-rare-source-deep", "firehose-q-common-pane", "firehose-coins-common-deep"} {
		if _, err := selectScenarios([]string{name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The stories group holds the stories endpoints and collapse=story pages
// (first, narrowed and deep), runs only when named.
func TestStoryScenarios(t *testing.T) {
	t.Parallel()
	group, err := selectScenarios([]string{"stories"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range group {
		names = append(names, s.name)
	}
	want := []string{"stories-first", "stories-pane", "stories-coins", "stories-q", "stories-since", "stories-deep", "story-one", "story-one-page", "story-one-page-last",
		"firehose-collapse", "firehose-collapse-pane", "firehose-collapse-deep", "firehose-collapse-pane-deep",
		"posts-collapse", "posts-collapse-source", "posts-collapse-deep"}
	if !slices.Equal(names, want) {
		t.Errorf("stories selects %v, want %v", names, want)
	}
	all, err := selectScenarios([]string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range group {
		if slices.Contains(all, s) {
			t.Errorf("all runs %s", s.name)
		}
	}
}
