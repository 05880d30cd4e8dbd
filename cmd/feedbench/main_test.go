package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	freeKey     = "free-key"
	internalKey = "internal-key"
	deepCursor  = "deep-cursor"
)

// fakeService mimics the few feedapi endpoints feedbench uses and tallies
// the attack's requests (those with vegeta's X-Vegeta-Attack header) by
// route and status, for comparison with the report.
// sinceArrival is one posts-since request: its since and when it arrived.
type sinceArrival struct{ since, arrived time.Time }

type fakeService struct {
	mu      sync.Mutex
	tally   map[string]map[string]int // route → status → count
	since   []sinceArrival            // posts-since requests
	cursors map[string]int            // cursors received on /v1/posts
	sources int                       // attack requests on /v1/sources so far
}

func newFakeService(t *testing.T) (*httptest.Server, *fakeService) {
	f := &fakeService{tally: map[string]map[string]int{}, cursors: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv, f
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, code, body := f.answer(r)
	if r.Header.Get("X-Vegeta-Attack") != "" {
		f.mu.Lock()
		if f.tally[route] == nil {
			f.tally[route] = map[string]int{}
		}
		f.tally[route][strconv.Itoa(code)]++
		f.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(body)
}

type obj = map[string]any

func data(v any) obj { return obj{"data": v, "meta": obj{"api_version": "v1"}} }

func apiError(code string) obj {
	return obj{"error": obj{"code": code, "message": code}, "meta": obj{"api_version": "v1"}}
}

// answer routes one request: the route name, the status and the JSON body.
func (f *fakeService) answer(r *http.Request) (string, int, any) {
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if key != freeKey && key != internalKey {
		return "unauthorized", 401, apiError("unauthorized")
	}
	attack := r.Header.Get("X-Vegeta-Attack") != ""
	q := r.URL.Query()
	switch path := r.URL.Path; {
	case path == "/v1/sources":
		f.mu.Lock()
		defer f.mu.Unlock()
		if attack {
			f.sources++
			if f.sources%3 == 0 { // every third attack request is rate limited
				return "sources", 429, apiError("rate_limited")
			}
		}
		return "sources", 200, data(obj{"curated_sources": []string{"Alpha", "Beta", "Gamma"}, "firehose_panes": []string{"crypto", "news"}})
	case path == "/v1/posts":
		if c := q.Get("cursor"); c != "" {
			f.mu.Lock()
			f.cursors[c]++
			f.mu.Unlock()
		}
		if s := q.Get("since"); s != "" {
			since, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return "posts", 400, apiError("bad_request")
			}
			f.mu.Lock()
			f.since = append(f.since, sinceArrival{since: since, arrived: time.Now()})
			f.mu.Unlock()
		}
		// 100 posts, ids 100..1; the sources' counts are Alpha 50, Beta 30, Gamma 20.
		var posts []obj
		for id := 100; id >= 1; id-- {
			src := "Alpha"
			switch {
			case id%10 < 3:
				src = "Beta"
			case id%10 < 5:
				src = "Gamma"
			}
			posts = append(posts, obj{"id": id, "source": src})
		}
		return "posts", 200, data(posts)
	case strings.HasPrefix(path, "/v1/posts/"):
		id, _ := strconv.Atoi(strings.TrimPrefix(path, "/v1/posts/"))
		if id%2 == 1 { // odd ids are missing
			return "post", 404, apiError("not_found")
		}
		return "post", 200, data(obj{"id": id})
	case path == "/v1/briefs":
		return "briefs", 200, data([]obj{{"id": 3}, {"id": 2}, {"id": 1}})
	case strings.HasPrefix(path, "/v1/briefs/"):
		return "brief", 200, data(obj{"id": 1})
	case path == "/v1/firehose":
		return "firehose", 200, data([]obj{{"source": "coindesk"}, {"source": "coindesk"}, {"source": "theblock"}})
	case path == "/graphql":
		if key != internalKey {
			return "graphql", 403, apiError("forbidden_tier")
		}
		var req struct{ Query string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.Header.Get("Content-Type") != "application/json" {
			return "graphql", 400, apiError("bad_request")
		}
		if strings.Contains(req.Query, "last: 100") {
			return "graphql", 200, obj{"data": obj{"posts": obj{"edges": []obj{{"cursor": deepCursor}, {"cursor": "oldest"}}}}}
		}
		return "graphql", 200, obj{"data": obj{"briefs": obj{"nodes": []obj{}}}}
	}
	return "unknown", 404, apiError("not_found") // no ETF flows on this deployment
}

// bench runs the command line with args (plus --url and --json) and
// decodes the JSON report.
func bench(t *testing.T, srv *httptest.Server, args ...string) (report, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"--url", srv.URL, "--json"}, args...)
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("run %q: exit %d\nstderr: %s", args, code, stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, stdout.String())
	}
	return rep, stderr.String()
}

func rowOf(t *testing.T, rep report, scenario string) row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Scenario == scenario {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", scenario, rep.Rows)
	return row{}
}

func sum(codes map[string]int) uint64 {
	var n uint64
	for _, v := range codes {
		n += uint64(v)
	}
	return n
}

func equalCodes(a, b map[string]int) bool {
	return formatCodes(a) == formatCodes(b)
}

func TestClosedLoopCountsRequestsAndStatusCodes(t *testing.T) {
	srv, f := newFakeService(t)
	rep, _ := bench(t, srv, "--key", internalKey, "--workers", "4", "--duration", "500ms", "--max-requests", "40",
		"--scenarios", "post-one,sources,graphql-dashboard")
	for scenario, route := range map[string]string{"post-one": "post", "sources": "sources", "graphql-dashboard": "graphql"} {
		r := rowOf(t, rep, scenario)
		if got, want := r.Requests, uint64(40); got != want {
			t.Errorf("%s: requests: got %d, want %d (--max-requests)", scenario, got, want)
		}
		if got, want := sum(r.Codes), r.Requests; got != want {
			t.Errorf("%s: codes %v add up to %d, want %d", scenario, r.Codes, got, want)
		}
		if !equalCodes(r.Codes, f.tally[route]) {
			t.Errorf("%s: codes: got %s, the server answered %s", scenario, formatCodes(r.Codes), formatCodes(f.tally[route]))
		}
		if got, want := r.Mode, "closed 4w"; got != want {
			t.Errorf("%s: mode: got %q, want %q", scenario, got, want)
		}
		if r.RPS <= 0 || r.P50 <= 0 || r.P50 > r.P95 || r.P95 > r.P99 || r.P99 > r.Max {
			t.Errorf("%s: implausible rate or latencies: %+v", scenario, r)
		}
	}
	if got, want := formatCodes(rowOf(t, rep, "post-one").Codes), "200:20 404:20"; got != want {
		t.Errorf("post-one: codes: got %q, want %q (odd ids are missing)", got, want)
	}
	if got, want := rowOf(t, rep, "sources").Codes["429"], 13; got != want {
		t.Errorf("sources: 429s: got %d, want %d", got, want)
	}
	if len(rep.Notes) < 2 || !strings.Contains(rep.Notes[0], "FEEDAPI_RATE_LIMIT=100000000") ||
		!strings.Contains(rep.Notes[len(rep.Notes)-1], "13 answers were 429") {
		t.Errorf("notes: got %q, want the FEEDAPI_RATE_LIMIT hint first and the 429 count last", rep.Notes)
	}
}

func TestMixOpenLoopBreaksDownPerScenario(t *testing.T) {
	srv, f := newFakeService(t)
	rep, _ := bench(t, srv, "--key", internalKey, "--rate", "300", "--duration", "200ms", "--mix",
		"--scenarios", "posts-first-50,post-one,brief-one,graphql-dashboard")
	total := rowOf(t, rep, mixTotal)
	var n uint64
	// How many requests the pacer sends in 200 ms depends on how busy the
	// machine is; that the mix takes the scenarios in turn does not: their
	// counts differ by at most one.
	fewest, most := uint64(1<<63), uint64(0)
	for scenario, route := range map[string]string{"posts-first-50": "posts", "post-one": "post", "brief-one": "brief", "graphql-dashboard": "graphql"} {
		r := rowOf(t, rep, scenario)
		n += r.Requests
		fewest, most = min(fewest, r.Requests), max(most, r.Requests)
		if !equalCodes(r.Codes, f.tally[route]) {
			t.Errorf("%s: codes: got %s, the server answered %s", scenario, formatCodes(r.Codes), formatCodes(f.tally[route]))
		}
		if r.Requests == 0 {
			t.Errorf("%s: no requests", scenario)
		}
		if got, want := r.Mode, "mix open 300/s"; got != want {
			t.Errorf("%s: mode: got %q, want %q", scenario, got, want)
		}
	}
	if most-fewest > 1 {
		t.Errorf("requests per scenario from %d to %d: a round-robin mix differs by at most one", fewest, most)
	}
	if got, want := total.Requests, n; got != want {
		t.Errorf("total requests: got %d, the scenarios add up to %d", got, want)
	}
	if got, want := len(rep.Rows), 5; got != want {
		t.Errorf("rows: got %d, want %d (4 scenarios and the total)", got, want)
	}
}

func TestFreeKeySkipsInternalAndMissingScenarios(t *testing.T) {
	srv, _ := newFakeService(t)
	rep, stderr := bench(t, srv, "--key", freeKey, "--max-requests", "5", "--duration", "200ms",
		"--scenarios", "posts-deep-page,graphql-dashboard,etf-list,etf-latest,sources")
	want := map[string]string{
		"posts-deep-page":   "internal-tier key",
		"graphql-dashboard": "internal-tier key",
		"etf-list":          "no ETF flows",
		"etf-latest":        "no ETF flows",
	}
	if got := len(rep.Skipped); got != len(want) {
		t.Fatalf("skipped: got %+v, want %d scenarios", rep.Skipped, len(want))
	}
	for _, s := range rep.Skipped {
		if !strings.Contains(s.Reason, want[s.Scenario]) {
			t.Errorf("skipped %s: got reason %q, want it to mention %q", s.Scenario, s.Reason, want[s.Scenario])
		}
		if !strings.Contains(stderr, "skipping "+s.Scenario) {
			t.Errorf("stderr does not say that %s is skipped:\n%s", s.Scenario, stderr)
		}
	}
	if got, want := rowOf(t, rep, "sources").Requests, uint64(5); got != want {
		t.Errorf("sources: requests: got %d, want %d", got, want)
	}
}

func TestDiscoveredParameters(t *testing.T) {
	srv, f := newFakeService(t)
	started := time.Now()
	rep, _ := bench(t, srv, "--key", internalKey, "--max-requests", "20", "--duration", "500ms", "--since-lag", "3s",
		"--scenarios", "posts-by-source,posts-deep-page,posts-since,firehose-source-rare")
	notes := strings.Join(rep.Notes, "\n")
	// Alpha 50, Beta 30, Gamma 20 on the newest page: Beta is the middle one.
	if !strings.Contains(notes, `posts-by-source: source="Beta"`) {
		t.Errorf("notes: got %q, want posts-by-source to pick Beta", notes)
	}
	if !strings.Contains(notes, `firehose-source-rare: source="theblock"`) {
		t.Errorf("notes: got %q, want firehose-source-rare to pick theblock", notes)
	}
	if got, want := f.cursors[deepCursor], 20; got != want {
		t.Errorf("posts-deep-page: requests with the cursor of the first of the 100 oldest: got %d, want %d", got, want)
	}
	if got, want := len(f.since), 20; got != want {
		t.Fatalf("posts-since: requests: got %d, want %d", got, want)
	}
	// since is 3s before the request was made, which lies between the test's
	// start and the request's arrival; since has milliseconds, hence the 1ms.
	// No bound on the trip itself: a busy machine may take any time for it.
	const lag = 3 * time.Second
	for _, r := range f.since {
		if earliest := started.Add(-lag - time.Millisecond); r.since.Before(earliest) {
			t.Errorf("posts-since: since %s lies before the test's start minus 3s (%s)", r.since, earliest)
		}
		if latest := r.arrived.Add(-lag); r.since.After(latest) {
			t.Errorf("posts-since: since %s lies less than 3s before its arrival (%s)", r.since, r.arrived)
		}
	}
}

func TestTextAndMarkdownReports(t *testing.T) {
	srv, _ := newFakeService(t)
	out := filepath.Join(t.TempDir(), "perf.md")
	var stdout, stderr bytes.Buffer
	args := []string{"--url", srv.URL, "--key", freeKey, "--max-requests", "6", "--duration", "200ms",
		"--scenarios", "sources", "--out", out}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	text := stdout.String()
	for _, want := range []string{"SCENARIO", "P99 MS", "sources", "closed 16w", "200:4 429:2", "FEEDAPI_RATE_LIMIT=100000000"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| scenario | mode | requests |", "|---|---|--:|", "| `sources` | closed 16w | 6 |", "200:4 429:2"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("Markdown report lacks %q:\n%s", want, md)
		}
	}
}

func TestRunRefusesBadCommandLines(t *testing.T) {
	srv, _ := newFakeService(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"not loopback", []string{"--url", "http://10.0.0.1:8080", "--key", freeKey}, 1, "not a loopback address"},
		{"rate and workers", []string{"--url", srv.URL, "--key", freeKey, "--rate", "5", "--workers", "5"}, 2, "can't be used together"},
		{"too long", []string{"--url", srv.URL, "--key", freeKey, "--duration", "16m"}, 2, "at most 15m"},
		{"no key", []string{"--url", srv.URL}, 2, "FEEDBENCH_KEY"},
		{"bad key", []string{"--url", srv.URL, "--key", "nope"}, 1, "rejected the key"},
		{"unknown scenario", []string{"--url", srv.URL, "--key", freeKey, "--scenarios", "posts,sources"}, 2, `unknown scenario "posts"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FEEDBENCH_KEY", "")
			var stdout, stderr bytes.Buffer
			if got := run(tc.args, &stdout, &stderr); got != tc.code {
				t.Errorf("exit: got %d, want %d", got, tc.code)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr: got %q, want it to contain %q", stderr.String(), tc.want)
			}
		})
	}
}

func TestListAndHelp(t *testing.T) {
	var stdout bytes.Buffer
	if code := run([]string{"--list"}, &stdout, io.Discard); code != 0 {
		t.Fatalf("--list: exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if got, want := len(lines), len(scenarios); got != want {
		t.Fatalf("--list: got %d lines, want %d:\n%s", got, want, stdout.String())
	}
	for i, s := range scenarios {
		if got := strings.Fields(lines[i]); len(got) < 2 || got[0] != s.name {
			t.Errorf("--list line %d: got %q, want scenario %s and its description", i, lines[i], s.name)
		}
	}

	var help bytes.Buffer
	if code := run([]string{"--help"}, &help, io.Discard); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, want := range append([]string{"FEEDAPI_RATE_LIMIT=100000000", "--workers", "--mix", "loopback"}, stableNames...) {
		if !strings.Contains(help.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// stableNames are the scenario names scripts and cmd/feedbench/README.md rely on.
var stableNames = []string{
	"posts-first-50", "posts-first-100", "posts-by-source", "posts-since", "posts-deep-page", "post-one",
	"briefs-list", "brief-one", "firehose-pane", "firehose-important", "firehose-source-common",
	"firehose-source-rare", "firehose-pane-important", "sources", "etf-list", "etf-latest", "graphql-dashboard",
}

func TestScenarioNamesAreStable(t *testing.T) {
	all, err := selectScenarios([]string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range all {
		got = append(got, s.name)
	}
	if fmt.Sprint(got) != fmt.Sprint(stableNames) {
		t.Errorf("scenarios: got %q, want %q", got, stableNames)
	}

	sel, err := selectScenarios([]string{"sources", "all", "sources"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(sel), len(stableNames); got != want || sel[0].name != "sources" {
		t.Errorf("sources,all,sources: got %d scenarios starting with %s, want %d starting with sources", got, sel[0].name, want)
	}
}
