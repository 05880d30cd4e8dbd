package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// scenario is one named request pattern. The names are stable: scripts and
// the figures in cmd/feedbench/README.md refer to them.
type scenario struct {
	name string
	doc  string
	// prepare discovers what the scenario needs from the running service and
	// returns the function that fills in each request, or a *skipError when
	// the service cannot serve the scenario (no internal key, no ETF flows…).
	prepare func(ctx context.Context, d *discovery) (nextFunc, error)
	// graphql marks scenarios whose answers are GraphQL responses: a 200
	// carrying "errors" is counted as "gqlerr", not as a success.
	graphql bool
	// optIn scenarios run only when named, never with "all".
	optIn bool
	// group, if set, is a name that selects every scenario of the group
	// ("search": the coins and q filters).
	group string
}

// nextFunc fills in the next request of a scenario. Attack workers call it
// concurrently.
type nextFunc func(t *vegeta.Target)

// scenarios is the table of every scenario, in the order they run with
// --scenarios all, then the search group (searchScenarios).
var scenarios = append([]scenario{
	{name: "posts-first-50", doc: "GET /v1/posts?limit=50, the first page (the most common poll)",
		prepare: static("/v1/posts", "limit", "50")},
	{name: "posts-first-100", doc: "GET /v1/posts?limit=100, the largest first page",
		prepare: static("/v1/posts", "limit", "100")},
	{name: "posts-by-source", doc: "GET /v1/posts?source=LABEL, a mid-volume curated source (--source)",
		prepare: prepPostsBySource},
	{name: "posts-since", doc: "GET /v1/posts?since=T, T --since-lag before each request: the polling case",
		prepare: prepPostsSince},
	{name: "posts-deep-page", doc: "GET /v1/posts?cursor=C, C beside the oldest posts (needs an internal key)",
		prepare: prepPostsDeepPage},
	{name: "post-one", doc: "GET /v1/posts/ID, round-robin over the newest 100 posts",
		prepare: prepPostOne},
	{name: "briefs-list", doc: "GET /v1/briefs, the first page",
		prepare: static("/v1/briefs")},
	{name: "brief-one", doc: "GET /v1/briefs/ID, round-robin over the newest 100 briefs",
		prepare: prepBriefOne},
	{name: "firehose-pane", doc: "GET /v1/firehose?pane=crypto",
		prepare: static("/v1/firehose", "pane", "crypto")},
	{name: "firehose-important", doc: "GET /v1/firehose?important=true",
		prepare: static("/v1/firehose", "important", "true")},
	{name: "firehose-source-common", doc: "GET /v1/firehose?source=S, S matching many rows (--common-source)",
		prepare: prepFirehoseCommon},
	{name: "firehose-source-rare", doc: "GET /v1/firehose?source=S, S matching few rows: a deep scan (--rare-source)",
		prepare: prepFirehoseRare},
	{name: "firehose-pane-important", doc: "GET /v1/firehose?pane=news&important=true",
		prepare: static("/v1/firehose", "pane", "news", "important", "true")},
	{name: "sources", doc: "GET /v1/sources",
		prepare: static("/v1/sources")},
	{name: "firehose-first", doc: "GET /v1/firehose, the first page",
		prepare: static("/v1/firehose"), group: "firehose", optIn: true},
	{name: "firehose-deep-page", doc: "GET /v1/firehose?cursor=C, C beside the oldest messages (needs an internal key)",
		prepare: prepFirehoseDeepPage, group: "firehose", optIn: true},
	{name: "firehose-since", doc: "GET /v1/firehose?since=T, T --since-lag before each request: the polling case",
		prepare: prepFirehoseSince, group: "firehose", optIn: true},
	{name: "firehose-since-oldest", doc: "GET /v1/firehose?since=T, T a day before the oldest message kept (sources.firehose_oldest)",
		prepare: prepFirehoseSinceOldest, group: "firehose", optIn: true},
	{name: "firehose-since-id", doc: "GET /v1/firehose?since_id=ID, ID the 100th newest message's",
		prepare: prepFirehoseSinceID, group: "firehose", optIn: true},
	{name: "firehose-stream-catchup", doc: "GET /v1/firehose/stream with Last-Event-ID a recent position: the time to its next 100 messages (a reconnect)",
		prepare: prepCatchUp(recentStarts), group: "firehose", optIn: true},
	{name: "firehose-stream-catchup-oldest", doc: "GET /v1/firehose/stream with Last-Event-ID a position among the oldest messages: the time to its next 100",
		prepare: prepCatchUp(oldestStarts), group: "firehose", optIn: true},
	{name: "etf-list", doc: "GET /v1/etf-flows?asset=BTC,ETH&from=D1&to=D2, --etf-days up to the newest flow",
		prepare: prepEtfList},
	{name: "etf-latest", doc: "GET /v1/etf-flows/latest",
		prepare: prepEtfLatest},
	{name: "graphql-dashboard", doc: "POST /graphql: 5 briefs, 10 posts each with their brief (needs an internal key)",
		prepare: prepGraphQLDashboard, graphql: true},
	{name: "unknown-keys", doc: "GET /v1/posts?limit=50 with a new random well-formed key each time: a flood of refused keys (401); only when named, e.g. beside another feedbench measuring a real client",
		prepare: prepUnknownKeys, optIn: true},
}, append(append(searchScenarios(), etfFundScenarios()...), storyScenarios...)...)

// selectScenarios resolves --scenarios: "all" or a list of names, kept in
// the order given, without duplicates.
func selectScenarios(names []string) ([]*scenario, error) {
	var out []*scenario
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "all" || scenarioGroup(n) {
			for i := range scenarios {
				if !seen[scenarios[i].name] && (n == "all" && !scenarios[i].optIn || scenarios[i].group == n) {
					seen[scenarios[i].name] = true
					out = append(out, &scenarios[i])
				}
			}
			continue
		}
		i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown scenario %q (see --list)", n)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, &scenarios[i])
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no scenario selected")
	}
	return out, nil
}

// scenarioGroup reports whether n names a group of scenarios.
func scenarioGroup(n string) bool {
	return slices.ContainsFunc(scenarios, func(s scenario) bool { return s.group == n })
}

// scenarioOptions are the flags that parameterise scenarios.
type scenarioOptions struct {
	source       string        // posts-by-source label; empty: discover
	commonSource string        // firehose-source-common substring
	rareSource   string        // firehose-source-rare substring; empty: discover
	sinceLag     time.Duration // posts-since: how far before now
	etfDays      int           // etf-list: days from the newest flow date back to from

	// The search scenarios' values (searchScenarios).
	commonCoin, rareCoin                string // rareCoin empty: discover
	commonWord                          string
	rarePhrasePosts, rarePhraseFirehose string
	searchPane                          string
}

// skipError says why a scenario cannot run against this service.
type skipError struct{ reason string }

func (e *skipError) Error() string { return e.reason }

func skip(format string, args ...any) error { return &skipError{fmt.Sprintf(format, args...)} }

// static returns a scenario that sends one fixed GET; query holds key, value pairs.
func static(path string, query ...string) func(context.Context, *discovery) (nextFunc, error) {
	return func(_ context.Context, d *discovery) (nextFunc, error) {
		q := url.Values{}
		for i := 0; i+1 < len(query); i += 2 {
			q.Set(query[i], query[i+1])
		}
		return roundRobin(d.get(path, q)), nil
	}
}

// roundRobin returns a nextFunc cycling through targets.
func roundRobin(targets ...vegeta.Target) nextFunc {
	var n atomic.Uint64
	return func(t *vegeta.Target) {
		*t = targets[(n.Add(1)-1)%uint64(len(targets))]
	}
}

func prepPostsBySource(ctx context.Context, d *discovery) (nextFunc, error) {
	label := d.opts.source
	if label == "" {
		var err error
		if label, err = d.midVolumeSource(ctx); err != nil {
			return nil, err
		}
	}
	d.notef("posts-by-source: source=%q", label)
	return roundRobin(d.get("/v1/posts", url.Values{"source": {label}})), nil
}

func prepPostsSince(_ context.Context, d *discovery) (nextFunc, error) {
	lag := d.opts.sinceLag
	return func(t *vegeta.Target) {
		since := d.now().Add(-lag).UTC().Format("2006-01-02T15:04:05.000Z")
		*t = d.get("/v1/posts", url.Values{"since": {since}})
	}, nil
}

func prepPostsDeepPage(ctx context.Context, d *discovery) (nextFunc, error) {
	// The 100 oldest posts, newest first: the first edge's cursor asks REST
	// for the page just before the very end of the list.
	var out struct {
		Posts struct {
			Edges []struct{ Cursor string } `json:"edges"`
		} `json:"posts"`
	}
	if err := d.graphql(ctx, `{ posts(last: 100) { edges { cursor } } }`, &out); err != nil {
		return nil, err
	}
	if len(out.Posts.Edges) < 2 {
		return nil, skip("fewer than 2 posts: no deep page to fetch")
	}
	return roundRobin(d.get("/v1/posts", url.Values{"cursor": {out.Posts.Edges[0].Cursor}})), nil
}

func prepFirehoseSince(_ context.Context, d *discovery) (nextFunc, error) {
	lag := d.opts.sinceLag
	return func(t *vegeta.Target) {
		since := d.now().Add(-lag).UTC().Format("2006-01-02T15:04:05.000Z")
		*t = d.get("/v1/firehose", url.Values{"since": {since}})
	}, nil
}

func prepFirehoseSinceOldest(ctx context.Context, d *discovery) (nextFunc, error) {
	oldest, err := d.firehoseOldest(ctx)
	if err != nil {
		return nil, err
	}
	since := oldest.Add(-24 * time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	return roundRobin(d.get("/v1/firehose", url.Values{"since": {since}})), nil
}

func prepFirehoseSinceID(ctx context.Context, d *discovery) (nextFunc, error) {
	var msgs []struct {
		ID int64 `json:"id"`
	}
	if err := d.getJSON(ctx, "/v1/firehose", url.Values{"limit": {"100"}}, &msgs); err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, skip("no firehose messages")
	}
	return roundRobin(d.get("/v1/firehose", url.Values{"since_id": {strconv.FormatInt(msgs[len(msgs)-1].ID, 10)}})), nil
}

func prepFirehoseDeepPage(ctx context.Context, d *discovery) (nextFunc, error) {
	var out struct {
		Firehose struct {
			Edges []struct{ Cursor string } `json:"edges"`
		} `json:"firehose"`
	}
	if err := d.graphql(ctx, `{ firehose(last: 100) { edges { cursor } } }`, &out); err != nil {
		return nil, err
	}
	if len(out.Firehose.Edges) < 2 {
		return nil, skip("fewer than 2 firehose messages: no deep page to fetch")
	}
	return roundRobin(d.get("/v1/firehose", url.Values{"cursor": {out.Firehose.Edges[0].Cursor}})), nil
}

func prepPostOne(ctx context.Context, d *discovery) (nextFunc, error) {
	posts, err := d.newestPosts.get(func() ([]postItem, error) { return d.fetchNewestPosts(ctx) })
	if err != nil {
		return nil, err
	}
	if len(posts) == 0 {
		return nil, skip("no posts")
	}
	targets := make([]vegeta.Target, len(posts))
	for i, p := range posts {
		targets[i] = d.get("/v1/posts/"+strconv.FormatInt(p.ID, 10), nil)
	}
	return roundRobin(targets...), nil
}

func prepBriefOne(ctx context.Context, d *discovery) (nextFunc, error) {
	var briefs []struct {
		ID int64 `json:"id"`
	}
	if err := d.getJSON(ctx, "/v1/briefs", url.Values{"limit": {"100"}}, &briefs); err != nil {
		return nil, err
	}
	if len(briefs) == 0 {
		return nil, skip("no briefs")
	}
	targets := make([]vegeta.Target, len(briefs))
	for i, b := range briefs {
		targets[i] = d.get("/v1/briefs/"+strconv.FormatInt(b.ID, 10), nil)
	}
	return roundRobin(targets...), nil
}

func prepFirehoseCommon(_ context.Context, d *discovery) (nextFunc, error) {
	return roundRobin(d.get("/v1/firehose", url.Values{"source": {d.opts.commonSource}})), nil
}

func prepFirehoseRare(ctx context.Context, d *discovery) (nextFunc, error) {
	s := d.opts.rareSource
	if s == "" {
		var msgs []struct {
			Source string `json:"source"`
		}
		if err := d.getJSON(ctx, "/v1/firehose", url.Values{"limit": {"100"}}, &msgs); err != nil {
			return nil, err
		}
		counts := map[string]int{}
		for _, m := range msgs {
			counts[m.Source]++
		}
		ranked := rank(counts)
		if len(ranked) == 0 {
			return nil, skip("no firehose messages")
		}
		s = ranked[len(ranked)-1]
		d.notef("firehose-source-rare: source=%q", s)
	}
	return roundRobin(d.get("/v1/firehose", url.Values{"source": {s}})), nil
}

func prepEtfList(ctx context.Context, d *discovery) (nextFunc, error) {
	newest, err := d.newestFlowDate(ctx)
	if err != nil {
		return nil, err
	}
	from := newest.AddDate(0, 0, -d.opts.etfDays)
	return roundRobin(d.get("/v1/etf-flows", url.Values{
		"asset": {"BTC,ETH"}, "from": {from.Format(time.DateOnly)}, "to": {newest.Format(time.DateOnly)},
	})), nil
}

func prepEtfLatest(ctx context.Context, d *discovery) (nextFunc, error) {
	if _, err := d.newestFlowDate(ctx); err != nil {
		return nil, err
	}
	return roundRobin(d.get("/v1/etf-flows/latest", nil)), nil
}

// dashboardQuery is what an internal dashboard asks: recent briefs with their
// posts, and each post's brief (the dataloader path).
const dashboardQuery = `query Dashboard { briefs(first: 5) { nodes { id weekStart posts(first: 10) { nodes { id source createdAt brief { id } } } } } }`

func prepGraphQLDashboard(ctx context.Context, d *discovery) (nextFunc, error) {
	if err := d.graphql(ctx, dashboardQuery, nil); err != nil {
		return nil, err
	}
	body, err := json.Marshal(map[string]string{"query": dashboardQuery})
	if err != nil {
		return nil, fmt.Errorf("encode GraphQL request: %w", err)
	}
	return roundRobin(vegeta.Target{Method: http.MethodPost, URL: d.url("/graphql", nil), Body: body, Header: d.jsonHeader}), nil
}

// rank returns the keys of counts, most frequent first, ties by name.
func rank(counts map[string]int) []string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	return keys
}

// keyAlphabet and keyLen give feedapi's key format: "fapi_" and 160 random
// bits in lower-case base32.
const (
	keyAlphabet = "abcdefghijklmnopqrstuvwxyz234567"
	keyLen      = 32
)

// prepUnknownKeys sends each request with a key nobody issued, well formed
// so that the service cannot refuse it on its shape alone.
func prepUnknownKeys(_ context.Context, d *discovery) (nextFunc, error) {
	target := d.get("/v1/posts", url.Values{"limit": {"50"}})
	return func(t *vegeta.Target) {
		*t = target
		var raw [keyLen]byte
		_, _ = rand.Read(raw[:]) // never fails (crypto/rand)
		for i, b := range raw {
			raw[i] = keyAlphabet[b%32]
		}
		t.Header = http.Header{"Authorization": {"Bearer fapi_" + string(raw[:])}}
	}, nil
}

// searchKind is one of the search filters: coins or q, with a
// common or a rare value.
type searchKind struct {
	name string // in scenario names: coins-common, coins-rare, q-common, q-rare
	doc  string
}

var searchKinds = []searchKind{
	{"coins-common", "coins=--common-coin"},
	{"coins-rare", "coins=--rare-coin"},
	{"q-common", "q=--common-word"},
	{"q-rare", "q=--rare-phrase-LIST"},
}

// searchScenarios returns the search scenarios: for posts and the
// firehose, each searchKind alone and narrowed (posts by --source, the
// firehose by --search-pane), on the first page and on a deep page (the
// oldest 100 matches, through GraphQL's last: 100; needs an internal key).
// They run with --scenarios search (or by name), not with all.
func searchScenarios() []scenario {
	var out []scenario
	for _, list := range []string{"posts", "firehose"} {
		narrow := "source"
		if list == "firehose" {
			narrow = "pane"
		}
		for _, k := range searchKinds {
			for _, narrowed := range []bool{false, true} {
				for _, deep := range []bool{false, true} {
					name, doc := list+"-"+k.name, "GET /v1/"+list+"?"+k.doc
					if narrowed {
						name += "-" + narrow
						doc += "&" + narrow + "=--" + map[bool]string{true: "source", false: "search-pane"}[narrow == "source"]
					}
					if deep {
						name += "-deep"
						doc += ", the page before the oldest 100 matches (internal key)"
					}
					out = append(out, scenario{name: name, doc: doc, group: "search", optIn: true,
						prepare: prepSearch(list, k.name, narrowed, deep)})
				}
			}
		}
	}
	return out
}

// prepSearch returns the prepare function of one search scenario.
func prepSearch(list, kind string, narrowed, deep bool) func(context.Context, *discovery) (nextFunc, error) {
	return func(ctx context.Context, d *discovery) (nextFunc, error) {
		q := url.Values{}
		switch kind {
		case "coins-common":
			q.Set("coins", d.opts.commonCoin)
		case "coins-rare":
			c, err := d.rareCoin(ctx, list)
			if err != nil {
				return nil, err
			}
			q.Set("coins", c)
		case "q-common":
			q.Set("q", d.opts.commonWord)
		case "q-rare":
			if list == "posts" {
				q.Set("q", d.opts.rarePhrasePosts)
			} else {
				q.Set("q", d.opts.rarePhraseFirehose)
			}
		}
		if narrowed {
			if list == "posts" {
				label := d.opts.source
				if label == "" {
					var err error
					if label, err = d.midVolumeSource(ctx); err != nil {
						return nil, err
					}
				}
				q.Set("source", label)
			} else {
				q.Set("pane", d.opts.searchPane)
			}
		}
		if deep {
			cursor, err := d.deepCursor(ctx, list, q)
			if err != nil {
				return nil, err
			}
			q.Set("cursor", cursor)
		}
		d.notef("%s-%s: %s", list, kind, q.Encode())
		return roundRobin(d.get("/v1/"+list, q)), nil
	}
}

// rareCoin returns --rare-coin, or the ticker mentioned by the fewest of
// the newest 100 items of list (at least one), ties by name.
func (d *discovery) rareCoin(ctx context.Context, list string) (string, error) {
	if d.opts.rareCoin != "" {
		return d.opts.rareCoin, nil
	}
	if c, ok := d.rareCoins[list]; ok {
		return c, nil
	}
	var items []struct {
		Coins []string `json:"coins"`
	}
	if err := d.getJSON(ctx, "/v1/"+list, url.Values{"limit": {"100"}}, &items); err != nil {
		return "", err
	}
	counts := map[string]int{}
	for _, it := range items {
		for _, c := range it.Coins {
			counts[c]++
		}
	}
	ranked := rank(counts)
	if len(ranked) == 0 {
		return "", skip("no coins on the newest 100 items of /v1/%s", list)
	}
	c := ranked[len(ranked)-1]
	if d.rareCoins == nil {
		d.rareCoins = map[string]string{}
	}
	d.rareCoins[list] = c
	return c, nil
}

// deepCursor returns the cursor of the oldest of the last 100 items of
// list matching q's filters (through GraphQL, whose cursors are REST's):
// the REST page after it is a deep page of the filtered list.
func (d *discovery) deepCursor(ctx context.Context, list string, q url.Values) (string, error) {
	args := "last: 100"
	for _, k := range []string{"coins", "q", "source"} {
		if v := q.Get(k); v != "" {
			if k == "coins" {
				args += ", coins: [" + gqlString(v) + "]"
			} else {
				args += ", " + k + ": " + gqlString(v)
			}
		}
	}
	if v := q.Get("pane"); v != "" {
		args += ", pane: " + v // an enum value, as REST spells it
	}
	if v := q.Get("collapse"); v != "" {
		args += ", collapse: " + v // an enum value, as REST spells it
	}
	var out map[string]struct {
		Edges []struct{ Cursor string } `json:"edges"`
	}
	// A failure here (a timeout of the backward page on a slow filter)
	// skips this scenario rather than ending the whole run.
	if err := d.graphql(ctx, fmt.Sprintf("{ %s(%s) { edges { cursor } } }", list, args), &out); err != nil {
		var se *skipError
		if errors.As(err, &se) {
			return "", err
		}
		return "", skip("no deep cursor for %s: %v", q.Encode(), err)
	}
	edges := out[list].Edges
	if len(edges) < 2 {
		return "", skip("fewer than 2 matches of %s: no deep page to fetch", q.Encode())
	}
	return edges[0].Cursor, nil
}

// gqlString quotes s as a GraphQL string (JSON's syntax is a subset).
func gqlString(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

// etfFundScenarios read the ETF funds' endpoints and the summary with its
// top funds; group "etf-funds", only when named.
func etfFundScenarios() []scenario {
	withFlows := func(path string, kv ...string) func(context.Context, *discovery) (nextFunc, error) {
		return func(ctx context.Context, d *discovery) (nextFunc, error) {
			if _, err := d.newestFlowDate(ctx); err != nil {
				return nil, err
			}
			q := url.Values{}
			for i := 0; i+1 < len(kv); i += 2 {
				q.Set(kv[i], kv[i+1])
			}
			return roundRobin(d.get(path, q)), nil
		}
	}
	return []scenario{
		{name: "etf-funds", doc: "GET /v1/etf-funds", group: "etf-funds", optIn: true,
			prepare: withFlows("/v1/etf-funds")},
		{name: "etf-fund-flows", doc: "GET /v1/etf-flows/funds?limit=100", group: "etf-funds", optIn: true,
			prepare: withFlows("/v1/etf-flows/funds", "limit", "100")},
		{name: "etf-fund-flows-fund", doc: "GET /v1/etf-flows/funds?fund=IBIT,GBTC&limit=100", group: "etf-funds", optIn: true,
			prepare: withFlows("/v1/etf-flows/funds", "fund", "IBIT,GBTC", "limit", "100")},
		{name: "etf-flows-paged", doc: "GET /v1/etf-flows?paginate=true&limit=500 (with funds_complete)", group: "etf-funds", optIn: true,
			prepare: withFlows("/v1/etf-flows", "paginate", "true", "limit", "500")},
		{name: "etf-summary", doc: "GET /v1/etf-flows/summary (with top funds and holdings)", group: "etf-funds", optIn: true,
			prepare: withFlows("/v1/etf-flows/summary")},
	}
}
