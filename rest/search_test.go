package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// walkREST follows next_cursor from path to the last page and returns the
// ids and coins of every item, in the order served.
func walkREST(t *testing.T, a *api, path string) (ids []int64, coins [][]string) {
	t.Helper()
	next := path
	for range 1000 {
		r := a.get(t, next, a.free)
		r.wantStatus(t, http.StatusOK)
		for _, it := range r.items(t) {
			ids = append(ids, num(t, it["id"]))
			var c []string
			if err := json.Unmarshal(it["coins"], &c); err != nil || c == nil {
				t.Fatalf("%s: coins %s: want an array", path, it["coins"])
			}
			coins = append(coins, c)
		}
		p := r.env.Pagination
		if p == nil || !p.HasMore {
			return ids, coins
		}
		next = path + "&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	t.Fatalf("%s: more than 1000 pages", path)
	return nil, nil
}

func TestSearchFiltersWalkEveryPage(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := context.Background()
	var mid int64
	if err := a.bdb.NewRaw("SELECT id FROM firehose_messages ORDER BY id DESC OFFSET 300 LIMIT 1").Scan(ctx, &mid); err != nil {
		t.Fatal(err)
	}
	midS := strconvI(mid)
	const fhDoc = "coalesce(title, '') || ' ' || coalesce(body, '') || ' ' || coalesce(summary_ai, '')"
	tests := []struct {
		path, table, where string
	}{
		{"/v1/posts?limit=17&coins=btc,Eth", "posts", "coins && '{BTC,ETH}'"},
		{"/v1/posts?limit=9&coins=sol&q=etf", "posts", "'SOL' = ANY(coins) AND to_tsvector('english', body) @@ websearch_to_tsquery('english', 'etf')"},
		{"/v1/posts?limit=100&coins=NOSUCH", "posts", "false"},
		{"/v1/posts?limit=23&q=" + url.QueryEscape(`"spot bitcoin" or ether -solana`), "posts",
			`to_tsvector('english', body) @@ websearch_to_tsquery('english', '"spot bitcoin" or ether -solana')`},
		{"/v1/firehose?limit=13&pane=crypto&q=bitcoin", "firehose_messages",
			"pane = 'crypto' AND to_tsvector('english', " + fhDoc + ") @@ websearch_to_tsquery('english', 'bitcoin')"},
		{"/v1/firehose?limit=11&coins=ETH&source=coin", "firehose_messages", "'ETH' = ANY(coins) AND source ILIKE '%coin%'"},
		{"/v1/firehose?limit=50&since_id=" + midS, "firehose_messages", "id > " + midS},
		{"/v1/firehose?limit=7&since_id=" + midS + "&coins=btc&important=true", "firehose_messages", "id > " + midS + " AND 'BTC' = ANY(coins) AND important"},
		{"/v1/posts?limit=31&since_id=" + midS, "posts", "id > " + midS},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			got, coins := walkREST(t, a, tt.path)
			var want []int64
			var wantCoins [][]string
			var rows []struct {
				ID    int64    `bun:"id"`
				Coins []string `bun:"coins,array"`
			}
			if err := a.bdb.NewRaw("SELECT id, coalesce(coins, '{}') AS coins FROM "+tt.table+" WHERE "+tt.where+" ORDER BY id DESC").Scan(ctx, &rows); err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				want = append(want, r.ID)
				wantCoins = append(wantCoins, r.Coins)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %d ids, want %d (no skipped or repeated row)", len(got), len(want))
			}
			for i := range coins {
				if !slices.Equal(coins[i], wantCoins[i]) && !(len(coins[i]) == 0 && len(wantCoins[i]) == 0) {
					t.Errorf("id %d: coins %v, want %v", got[i], coins[i], wantCoins[i])
				}
			}
		})
	}
	if t.Failed() {
		return
	}
	// The cases are not vacuous: most of them have more than one page.
	ids, _ := walkREST(t, a, "/v1/posts?limit=17&coins=btc,Eth")
	if len(ids) < 34 {
		t.Errorf("coins=btc,Eth gives %d posts on the seeded data, want several pages", len(ids))
	}
}

func TestSearchParamsRefuseBadValues(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	tests := []struct{ path, param string }{
		{"/v1/posts?coins=", "coins"},
		{"/v1/posts?coins=B-TC", "coins"},
		{"/v1/firehose?coins=btc,,eth", "coins"},
		{"/v1/firehose?coins=ABCDEFGHIJKLM", "coins"},
		{"/v1/posts?coins=" + manyTickers(21), "coins"},
		{"/v1/posts?q=", "q"},
		{"/v1/firehose?q=%20%20", "q"},
		{"/v1/posts?q=" + strings.Repeat("a", 257), "q"},
		{"/v1/posts?since_id=-1", "since_id"},
		{"/v1/firehose?since_id=abc", "since_id"},
		{"/v1/posts?since_id=9007199254740992", "since_id"},
	}
	for _, tt := range tests {
		r := a.get(t, tt.path, a.free)
		if r.StatusCode != http.StatusBadRequest || r.env.Error == nil || !strings.HasPrefix(r.env.Error.Message, tt.param+" ") {
			t.Errorf("%s: got %d %s, want 400 naming %s", tt.path, r.StatusCode, r.raw, tt.param)
		}
	}
	// Accepted edges.
	for _, p := range []string{"/v1/posts?since_id=0", "/v1/posts?since_id=9007199254740991", "/v1/posts?q=the", "/v1/posts?coins=" + manyTickers(20) + ",a1"} {
		a.get(t, p, a.free).wantStatus(t, http.StatusOK)
	}
}

func TestSourcesListsCoinsThatWorkAsFilters(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	r := a.get(t, "/v1/sources", a.free)
	r.wantStatus(t, http.StatusOK)
	var coins []string
	if err := json.Unmarshal(r.object(t)["coins"], &coins); err != nil || len(coins) < 5 {
		t.Fatalf("coins %s: want a list of tickers", r.object(t)["coins"])
	}
	for _, c := range coins {
		ids, _ := walkREST(t, a, "/v1/firehose?limit=100&coins="+c)
		posts, _ := walkREST(t, a, "/v1/posts?limit=100&coins="+c)
		if len(ids)+len(posts) == 0 {
			t.Errorf("coin %s is listed but matches nothing", c)
		}
	}
}

func strconvI(n int64) string { b, _ := json.Marshal(n); return string(b) }

// manyTickers is n distinct tickers, comma-separated.
func manyTickers(n int) string {
	t := make([]string, n)
	for i := range t {
		t[i] = "A" + strconvI(int64(i+1))
	}
	return strings.Join(t, ",")
}
