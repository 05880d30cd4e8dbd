package seed_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/seed"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// small is a data set small enough to load in a fraction of a second.
var small = seed.Options{Posts: 400, Firehose: 900, Briefs: 4}

// newDB returns a migrated, empty database.
func newDB(t *testing.T) *bun.DB {
	t.Helper()
	ctx := context.Background()
	url := dbtest.NewEmpty(t)
	if err := db.Migrate(ctx, url, io.Discard); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	bdb, err := db.Open(url, db.Options{NoStatementLimit: true})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { bdb.Close() })
	return bdb
}

// seeded returns a database seeded with opts.
func seeded(t *testing.T, opts seed.Options) (*bun.DB, seed.Stats) {
	t.Helper()
	bdb := newDB(t)
	stats, err := seed.Run(context.Background(), bdb, opts, io.Discard)
	if err != nil {
		t.Fatalf("seed.Run(%+v): %v", opts, err)
	}
	return bdb, stats
}

// digestQueries hash each feed table's rows in a stable order.
var digestQueries = []struct{ table, query string }{
	// stream_pos is the database's own (db/stream.go): it depends on
	// transaction ids, not on the seed. received_at is the seed's.
	{"posts", `SELECT coalesce(md5(string_agg((to_jsonb(t) - 'stream_pos')::text, ',' ORDER BY id)), '') FROM posts t`},
	{"briefs", `SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY id)), '') FROM briefs t`},
	{"firehose_messages", `SELECT coalesce(md5(string_agg((to_jsonb(t) - 'stream_pos')::text, ',' ORDER BY id)), '') FROM firehose_messages t`},
	{"stories", `SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY id)), '') FROM stories t`},
	{"etf_flows", `SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY asset, flow_date)), '') FROM etf_flows t`},
	// The funds are the same for every seed: they are digested with their figures.
	{"etf_fund_flows", `SELECT coalesce(md5(string_agg(t::text || f::text, ',' ORDER BY ticker, flow_date)), '')
		FROM etf_fund_flows t JOIN etf_funds f USING (ticker)`},
}

// digests returns the md5 of every feed table, by table name.
func digests(t *testing.T, bdb *bun.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, q := range digestQueries {
		var sum string
		if err := bdb.NewRaw(q.query).Scan(context.Background(), &sum); err != nil {
			t.Fatalf("digest %s: %v", q.table, err)
		}
		out[q.table] = sum
	}
	return out
}

// count runs a count(*)-style query.
func count(t *testing.T, bdb *bun.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := bdb.NewRaw(query, args...).Scan(context.Background(), &n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestRunIsDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	first, _ := seeded(t, small)
	again, _ := seeded(t, small)
	want := digests(t, first)
	same := func(step string, want, got map[string]string, equal bool) {
		t.Helper()
		for _, q := range digestQueries {
			if got[q.table] == "" {
				t.Errorf("%s: %s is empty", step, q.table)
			}
			if (got[q.table] == want[q.table]) != equal {
				t.Errorf("%s: %s digests %s and %s, want equal=%v", step, q.table, want[q.table], got[q.table], equal)
			}
		}
	}
	same("same options, two databases", want, digests(t, again), true)

	// Reset with another seed replaces every table with different rows ...
	other := seed.Options{Posts: 150, Firehose: 250, Briefs: 3, EtfDays: 20, Seed: 2, Reset: true}
	stats, err := seed.Run(ctx, again, other, io.Discard)
	if err != nil {
		t.Fatalf("Run with Reset: %v", err)
	}
	if want := (seed.Stats{Posts: 150, Firehose: 250, Briefs: 3, EtfFlows: 80, EtfFunds: 27, EtfFundFlows: stats.EtfFundFlows}); stats != want {
		t.Errorf("stats after Reset: got %+v, want %+v", stats, want)
	}
	same("another seed", want, digests(t, again), false)

	// ... and resetting back gives exactly what seeding an empty database gave.
	back := small
	back.Reset = true
	if _, err := seed.Run(ctx, again, back, io.Discard); err != nil {
		t.Fatalf("Run with Reset: %v", err)
	}
	same("reset to the first options", want, digests(t, again), true)
}

func TestRunDefaults(t *testing.T) {
	t.Parallel()
	bdb, got := seeded(t, seed.Options{})
	if want := (seed.Stats{Posts: 3000, Firehose: 6000, Briefs: 12, EtfFlows: got.EtfFlows, EtfFunds: 27, EtfFundFlows: got.EtfFundFlows}); got != want {
		t.Errorf("stats: got %+v, want %+v", got, want)
	}
	tables := []struct {
		table string
		want  int
	}{{"posts", 3000}, {"firehose_messages", 6000}, {"briefs", 12}, {"etf_flows", got.EtfFlows},
		{"etf_funds", 27}, {"etf_fund_flows", got.EtfFundFlows}}
	for _, tt := range tables {
		if n := count(t, bdb, "SELECT count(*) FROM "+tt.table); n != tt.want {
			t.Errorf("%s: %d rows, want %d", tt.table, n, tt.want)
		}
	}
	// Every trading day since each launch up to Friday 2026-11-13.
	if got, want := count(t, bdb, "SELECT count(*) FROM etf_flows WHERE flow_date = '2026-11-13'"), 4; got != want {
		t.Errorf("flows on the last trading day: got %d, want %d", got, want)
	}
	if got, want := count(t, bdb, "SELECT count(*) FROM etf_flows WHERE asset = 'BTC'"), 714; got != want {
		t.Errorf("BTC trading days: got %d, want %d", got, want)
	}
	if got, want := count(t, bdb, "SELECT count(*) FROM briefs WHERE week_end = '2026-11-15' AND created_at <= '2026-11-16T00:00:00Z'"), 1; got != want {
		t.Errorf("brief of the week ending 2026-11-15: got %d, want %d", got, want)
	}
}

// until is the end of the data set of TestSeededData: a Wednesday
// afternoon. untilSQL is the same instant as an SQL literal.
var until = time.Date(2026, 7, 15, 13, 45, 0, 0, time.UTC)

const untilSQL = "'2026-07-15T13:45:00Z'::timestamptz"

// check is a query that counts violations of a property.
type check struct{ name, query string }

func runChecks(t *testing.T, bdb *bun.DB, checks []check) {
	t.Helper()
	for _, c := range checks {
		if got := count(t, bdb, c.query); got != 0 {
			t.Errorf("%s: %d", c.name, got)
		}
	}
}

func TestSeededData(t *testing.T) {
	t.Parallel()
	opts := seed.Options{Posts: 2000, Firehose: 3000, Briefs: 14, Until: until}
	bdb, stats := seeded(t, opts)
	if want := (seed.Stats{Posts: 2000, Firehose: 3000, Briefs: 14, EtfFlows: stats.EtfFlows, EtfFunds: 27, EtfFundFlows: stats.EtfFundFlows}); stats != want {
		t.Errorf("stats: got %+v, want %+v", stats, want)
	}
	opts.EtfDays = 7
	tail, _ := seeded(t, opts)

	t.Run("briefs", func(t *testing.T) {
		t.Parallel()
		runChecks(t, bdb, []check{
			{"post_count differs from the week's posts", `SELECT count(*) FROM briefs b
				WHERE post_count <> (SELECT count(*) FROM posts p
					WHERE p.created_at >= b.week_start::timestamptz AND p.created_at < (b.week_end + 1)::timestamptz)`},
			{"week does not start on Monday", `SELECT count(*) FROM briefs WHERE extract(isodow FROM week_start) <> 1`},
			{"week is not Monday to Sunday", `SELECT count(*) FROM briefs WHERE week_end <> week_start + 6`},
			{"published before its week ended", `SELECT count(*) FROM briefs WHERE created_at < (week_end + 1)::timestamptz`},
			{"published after the end of the data", `SELECT count(*) FROM briefs WHERE created_at > ` + untilSQL},
			{"ids not increasing with the week", `SELECT count(*) FROM (SELECT week_start < lag(week_start) OVER (ORDER BY id) AS bad FROM briefs) x WHERE bad`},
			{"weeks not consecutive", `SELECT count(*) FROM (SELECT week_start - lag(week_start) OVER (ORDER BY id) AS gap FROM briefs) x WHERE gap <> 7`},
			{"week without posts", `SELECT count(*) FROM briefs WHERE post_count = 0`},
			{"newest week is not the last complete one", `SELECT count(*) FROM briefs WHERE id = 14 AND week_end <> (` + untilSQL + `)::date - 3`},
			{"not Markdown with the expected sections", `SELECT count(*) FROM briefs WHERE (content NOT LIKE '# Weekly brief: %'
				OR content NOT LIKE '%## Top stories%' OR content NOT LIKE '%## Markets%' OR content NOT LIKE '%](https://t.me/%')`},
		})
	})

	t.Run("posts", func(t *testing.T) {
		t.Parallel()
		runChecks(t, bdb, []check{
			{"raw is not a Telegram message object", `SELECT count(*) FROM posts WHERE (jsonb_typeof(raw) <> 'object'
				OR raw->'message_id' IS NULL OR raw->>'text' <> body OR (raw->'chat'->>'username') <> username)`},
			{"permalink is not the message's", `SELECT count(*) FROM posts WHERE url <> 'https://t.me/' || username || '/' || (raw->>'message_id')`},
			{"created_at not at millisecond precision", `SELECT count(*) FROM posts WHERE date_trunc('milliseconds', created_at) <> created_at`},
			{"created_at at or after Until", `SELECT count(*) FROM posts WHERE created_at >= ` + untilSQL},
			{"ids not increasing with created_at", `SELECT count(*) FROM (SELECT created_at < lag(created_at) OVER (ORDER BY id) AS bad FROM posts) x WHERE bad`},
			{"message ids not increasing per channel", `SELECT count(*) FROM (SELECT (raw->>'message_id')::bigint <= lag((raw->>'message_id')::bigint)
				OVER (PARTITION BY source ORDER BY id) AS bad FROM posts) x WHERE bad`},
			{"ids not 1..N", `SELECT count(*) FROM posts WHERE (id < 1 OR id > 2000)`},
			{"empty body", `SELECT count(*) FROM posts WHERE body = ''`},
			{"original source is not a URL", `SELECT count(*) FROM posts WHERE original_source_url NOT LIKE 'https://%'`},
		})
		if got, want := count(t, bdb, "SELECT count(DISTINCT source) FROM posts"), 12; got != want {
			t.Errorf("sources: got %d, want %d", got, want)
		}
		// Volumes are skewed: the largest channel posts far more than the smallest.
		if got := count(t, bdb, `SELECT max(n) / greatest(min(n), 1) FROM (SELECT count(*) AS n FROM posts GROUP BY source) x`); got < 5 {
			t.Errorf("largest/smallest source volume: %d, want at least 5", got)
		}
		if got := count(t, bdb, `SELECT count(*) FROM posts WHERE original_source_url IS NULL`); got == 0 || got > 1000 {
			t.Errorf("posts without an original source: %d, want some but a minority", got)
		}
		if got := count(t, bdb, `SELECT max(length(body)) - min(length(body)) FROM posts`); got < 300 {
			t.Errorf("body lengths vary by only %d characters", got)
		}
		checkEntities(t, bdb)
	})

	t.Run("firehose", func(t *testing.T) {
		t.Parallel()
		if got, want := count(t, bdb, "SELECT count(DISTINCT pane) FROM firehose_messages"), 6; got != want {
			t.Errorf("panes: got %d, want %d", got, want)
		}
		ranges := []struct {
			name     string
			query    string
			min, max int
		}{
			{"important", "SELECT count(*) FROM firehose_messages WHERE important", 150, 600},
			{"with summary_ai", "SELECT count(*) FROM firehose_messages WHERE summary_ai IS NOT NULL", 900, 2700},
			{"rare CFTC source", "SELECT count(*) FROM firehose_messages WHERE source ILIKE '%cftc%'", 7, 7},
			{"rare Federal Reserve source", "SELECT count(*) FROM firehose_messages WHERE source ILIKE '%federalreserve%'", 5, 5},
			{"sources", "SELECT count(DISTINCT source) FROM firehose_messages", 30, 60},
		}
		for _, c := range ranges {
			if got := count(t, bdb, c.query); got < c.min || got > c.max {
				t.Errorf("%s: %d, want %d to %d", c.name, got, c.min, c.max)
			}
		}
		runChecks(t, bdb, []check{
			{"tweets with a title", "SELECT count(*) FROM firehose_messages WHERE pane = 'twitter' AND title IS NOT NULL"},
			{"tweets without a handle", "SELECT count(*) FROM firehose_messages WHERE pane = 'twitter' AND (username IS NULL OR source NOT LIKE 'tw:%')"},
			{"ids not increasing with created_at", `SELECT count(*) FROM (SELECT created_at < lag(created_at) OVER (ORDER BY id) AS bad FROM firehose_messages) x WHERE bad`},
			{"ids not 1..N", `SELECT count(*) FROM firehose_messages WHERE (id < 1 OR id > 3000)`},
			{"outside the last four weeks", `SELECT count(*) FROM firehose_messages WHERE created_at < ` + untilSQL + ` - interval '28 days' OR created_at >= ` + untilSQL},
			{"panes without important items", `SELECT 6 - count(DISTINCT pane) FROM firehose_messages WHERE important`},
			{"panes with only important items", `SELECT 6 - count(DISTINCT pane) FROM firehose_messages WHERE NOT important`},
			{"empty source or source_name", `SELECT count(*) FROM firehose_messages WHERE (source = '' OR source_name IS NULL)`},
		})
	})

	t.Run("arrival delays", func(t *testing.T) {
		t.Parallel()
		runChecks(t, bdb, []check{
			{"post received before it was created or after the data", `SELECT count(*) FROM posts
				WHERE received_at IS NULL OR received_at < created_at OR received_at >= ` + untilSQL},
			{"message received before it was created or after the data", `SELECT count(*) FROM firehose_messages
				WHERE received_at IS NULL OR received_at < created_at OR received_at >= ` + untilSQL},
		})
		// The median delay per pane, and per source: a bot picks fast
		// sources by them (/v1/sources).
		median := func(where string) time.Duration {
			var ms float64
			if err := bdb.NewRaw(`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM received_at - created_at) * 1000)
				FROM firehose_messages WHERE `+where).Scan(context.Background(), &ms); err != nil {
				t.Fatal(err)
			}
			return time.Duration(ms * float64(time.Millisecond))
		}
		wire, twitter, news, blogs := median("pane = 'wire'"), median("pane = 'twitter'"), median("pane = 'news'"), median("pane = 'blogs'")
		if !(wire < 5*time.Second && twitter < 15*time.Second && news > 15*time.Second && news < 5*time.Minute &&
			blogs > 2*time.Minute && wire < twitter && twitter < news && news < blogs) {
			t.Errorf("median delays: wire %s, twitter %s, news %s, blogs %s; want seconds for the wire and tweets, tens of seconds to minutes for news sites, minutes for blogs",
				wire, twitter, news, blogs)
		}
		if fast, slow := median("source = 'reuters'"), median("source = 'bloomberg'"); fast == slow {
			t.Errorf("reuters and bloomberg have the same median delay %s: want each source its own", fast)
		}
		var postMedian float64
		if err := bdb.NewRaw(`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM received_at - created_at))
			FROM posts`).Scan(context.Background(), &postMedian); err != nil {
			t.Fatal(err)
		}
		if postMedian <= 0 || postMedian > 10 {
			t.Errorf("posts: median delay %.1f s, want seconds (Telegram channels)", postMedian)
		}
	})

	t.Run("etf flows", func(t *testing.T) {
		t.Parallel()
		runChecks(t, bdb, []check{
			{"cum_net_inflow is not the running sum", `SELECT count(*) FROM (SELECT cum_net_inflow,
				sum(net_inflow) OVER (PARTITION BY asset ORDER BY flow_date) AS running FROM etf_flows) x WHERE cum_net_inflow <> running`},
			{"flow on a weekend", `SELECT count(*) FROM etf_flows WHERE extract(isodow FROM flow_date) > 5`},
			{"flow on an NYSE holiday", `SELECT count(*) FROM etf_flows WHERE flow_date IN ('2024-01-15', '2024-03-29', '2024-07-04',
				'2024-11-28', '2024-12-25', '2025-01-01', '2025-01-09', '2025-04-18', '2025-06-19', '2025-07-04', '2025-12-25', '2026-04-03', '2026-07-03')`},
			{"updated_at not the evening after", `SELECT count(*) FROM etf_flows
				WHERE (updated_at < flow_date + interval '1 day' OR updated_at > flow_date + interval '1 day 4 hours')`},
			{"published after the end of the data", `SELECT count(*) FROM etf_flows WHERE updated_at > ` + untilSQL},
			{"missing the last published day", `SELECT 4 - count(*) FROM etf_flows WHERE flow_date = (` + untilSQL + `)::date - 1`},
			{"no outflow days", `SELECT (count(*) = 0)::int FROM etf_flows WHERE net_inflow < 0`},
			{"no inflow days", `SELECT (count(*) = 0)::int FROM etf_flows WHERE net_inflow > 0`},
			{"BTC net assets outside $20B-$200B", `SELECT count(*) FROM etf_flows WHERE asset = 'BTC' AND net_assets NOT BETWEEN 20e9 AND 200e9`},
			{"non-positive net assets or value traded", `SELECT count(*) FROM etf_flows WHERE (net_assets <= 0 OR value_traded <= 0)`},
		})
		launches := map[string]string{"BTC": "2024-01-11", "ETH": "2024-07-23", "SOL": "2025-10-28"}
		for asset, want := range launches {
			var got time.Time
			if err := bdb.NewRaw("SELECT min(flow_date) FROM etf_flows WHERE asset = ?", asset).Scan(context.Background(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Format(time.DateOnly) != want {
				t.Errorf("%s first flow: got %s, want %s", asset, got.Format(time.DateOnly), want)
			}
		}
	})

	t.Run("etf funds", func(t *testing.T) {
		t.Parallel()
		// Per asset and day: the funds launched by then, those with a
		// figure, and what the figures sum to.
		const days = `SELECT e.asset, e.flow_date, e.net_inflow, e.net_assets, e.value_traded, e.updated_at,
				(SELECT count(*) FROM etf_funds f WHERE f.asset = e.asset AND f.launch_date <= e.flow_date) AS launched,
				count(ff.ticker) AS published, sum(ff.net_inflow) AS net, sum(ff.net_assets) AS assets,
				sum(ff.value_traded) AS traded, count(*) FILTER (WHERE ff.updated_at > e.updated_at) AS late
			FROM etf_flows e
			LEFT JOIN etf_funds f ON f.asset = e.asset
			LEFT JOIN etf_fund_flows ff ON ff.ticker = f.ticker AND ff.flow_date = e.flow_date
			GROUP BY e.asset, e.flow_date`
		runChecks(t, bdb, []check{
			{"complete day whose fund flows do not sum to the asset's", `SELECT count(*) FROM (` + days + `) d
				WHERE published = launched AND (net <> net_inflow OR assets <> net_assets OR traded <> value_traded)`},
			{"day with a fund missing whose flows still sum to the asset's", `SELECT count(*) FROM (` + days + `) d
				WHERE published < launched AND net = net_inflow`},
			{"fewer than two days with a missing fund (BTC's and SOL's latest)", `SELECT (count(*) < 2)::int FROM (` + days + `) d
				WHERE published < launched`},
			{"a missing fund on a day before the asset's latest", `SELECT count(*) FROM (` + days + `) d
				WHERE published < launched AND flow_date < (SELECT max(flow_date) FROM etf_flows l WHERE l.asset = d.asset)`},
			{"no late publication kept", `SELECT (sum(late) = 0)::int FROM (` + days + `) d`},
			{"figure whose asset is not its fund's", `SELECT count(*) FROM etf_fund_flows ff JOIN etf_funds f USING (ticker) WHERE ff.asset <> f.asset`},
			{"figure before its fund's launch", `SELECT count(*) FROM etf_fund_flows ff JOIN etf_funds f USING (ticker) WHERE ff.flow_date < f.launch_date`},
			{"figure on a day without the asset's", `SELECT count(*) FROM etf_fund_flows ff JOIN etf_funds f USING (ticker)
				WHERE NOT EXISTS (SELECT 1 FROM etf_flows e WHERE e.asset = f.asset AND e.flow_date = ff.flow_date)`},
			{"published after the end of the data", `SELECT count(*) FROM etf_fund_flows WHERE updated_at > ` + untilSQL},
			{"negative net assets or value traded", `SELECT count(*) FROM etf_fund_flows WHERE net_assets < 0 OR value_traded < 0`},
			{"no fund without published holdings", `SELECT (count(*) = 0)::int FROM etf_fund_flows WHERE holdings IS NULL`},
			{"holdings that are not the net assets at one price per asset and day", `SELECT count(*) FROM (
				SELECT f.asset, ff.flow_date, max(ff.net_assets / ff.holdings) / min(ff.net_assets / ff.holdings) AS spread
				FROM etf_fund_flows ff JOIN etf_funds f USING (ticker) WHERE ff.holdings > 1 GROUP BY 1, 2) x WHERE spread > 1.0001`},
			{"IBIT not the largest BTC fund", `SELECT (ticker <> 'IBIT')::int FROM etf_fund_flows
				WHERE flow_date = (SELECT max(flow_date) FROM etf_fund_flows) AND ticker IN (SELECT ticker FROM etf_funds WHERE asset = 'BTC')
				ORDER BY net_assets DESC LIMIT 1`},
			{"GBTC without net outflows since launch", `SELECT (sum(net_inflow) >= 0)::int FROM etf_fund_flows WHERE ticker = 'GBTC'`},
		})
		var launches []struct {
			Ticker string
			Launch time.Time
		}
		if err := bdb.NewRaw("SELECT ticker, min(flow_date) AS launch FROM etf_fund_flows WHERE ticker IN ('IBIT', 'BTC', 'ETHA', 'BSOL', 'FSOL') GROUP BY ticker ORDER BY ticker").
			Scan(context.Background(), &launches); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"BSOL": "2025-10-28", "BTC": "2024-07-31", "ETHA": "2024-07-23", "FSOL": "2025-11-18", "IBIT": "2024-01-11"}
		for _, l := range launches {
			if got := l.Launch.Format(time.DateOnly); got != want[l.Ticker] {
				t.Errorf("%s first figure: got %s, want %s", l.Ticker, got, want[l.Ticker])
			}
			delete(want, l.Ticker)
		}
		if len(want) > 0 {
			t.Errorf("funds without figures: %v", want)
		}
		if got, wantRows := count(t, tail, "SELECT count(DISTINCT flow_date) FROM etf_fund_flows WHERE ticker = 'IBIT'"), 7; got != wantRows {
			t.Errorf("tail of 7 days: IBIT has figures on %d days", got)
		}
	})

	t.Run("etf tail keeps cumulative figures", func(t *testing.T) {
		t.Parallel()
		var tailRows, fullRows []db.EtfFlow
		if err := tail.NewSelect().Model(&tailRows).Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := bdb.NewSelect().Model(&fullRows).Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		byUID := map[string]db.EtfFlow{}
		for _, f := range fullRows {
			byUID[f.UID()] = f
		}
		if len(tailRows) != 28 {
			t.Fatalf("tail: %d rows, want 28", len(tailRows))
		}
		for _, f := range tailRows {
			want, ok := byUID[f.UID()]
			if !ok {
				t.Errorf("%s: not in the full data set", f.UID())
				continue
			}
			if f.CumNetInflow != want.CumNetInflow || f.NetInflow != want.NetInflow || f.NetAssets != want.NetAssets {
				t.Errorf("%s: got net %s cum %s, full data set has net %s cum %s", f.UID(), f.NetInflow, f.CumNetInflow, want.NetInflow, want.CumNetInflow)
			}
		}
	})
}

// checkEntities checks that the Telegram entities of the raw payloads point,
// in UTF-16 code units, at what they claim to mark.
func checkEntities(t *testing.T, bdb *bun.DB) {
	t.Helper()
	var raws []json.RawMessage
	if err := bdb.NewRaw("SELECT raw FROM posts ORDER BY id").Scan(context.Background(), &raws); err != nil {
		t.Fatal(err)
	}
	prefixes := map[string]string{"url": "https://", "cashtag": "$", "hashtag": "#", "bold": ""}
	seen := map[string]int{}
	for _, raw := range raws {
		var msg struct {
			MessageID int64  `json:"message_id"`
			Text      string `json:"text"`
			Entities  []struct {
				Type           string
				Offset, Length int
			}
		}
		if err := json.Unmarshal(raw, &msg); err != nil {
			t.Fatalf("raw payload: %v", err)
		}
		units := utf16.Encode([]rune(msg.Text))
		for _, e := range msg.Entities {
			seen[e.Type]++
			if e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length > len(units) {
				t.Errorf("message %d: %s entity [%d,+%d) outside the text", msg.MessageID, e.Type, e.Offset, e.Length)
				continue
			}
			marked := string(utf16.Decode(units[e.Offset : e.Offset+e.Length]))
			prefix, known := prefixes[e.Type]
			if !known || !strings.HasPrefix(marked, prefix) || strings.ContainsAny(marked, " \n") && e.Type != "bold" {
				t.Errorf("message %d: %s entity marks %q", msg.MessageID, e.Type, marked)
			}
		}
	}
	for typ := range prefixes {
		if seen[typ] == 0 {
			t.Errorf("no %s entities in %d posts", typ, len(raws))
		}
	}
}

func TestRunOnlyIntoEmptyDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := newDB(t)
	key := &db.APIKey{KeyHash: []byte("hash"), Prefix: "fa_test", Tier: db.TierFree, Name: "kept"}
	if _, err := bdb.NewInsert().Model(key).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if empty, err := seed.IsEmpty(ctx, bdb); err != nil || !empty {
		t.Fatalf("IsEmpty with only an API key: got %v, %v; want true", empty, err)
	}
	if _, err := seed.Run(ctx, bdb, small, io.Discard); err != nil {
		t.Fatalf("Run with only an API key: %v", err)
	}
	before := digests(t, bdb)
	if empty, err := seed.IsEmpty(ctx, bdb); err != nil || empty {
		t.Fatalf("IsEmpty after seeding: got %v, %v; want false", empty, err)
	}

	_, err := seed.Run(ctx, bdb, seed.Options{Posts: 5, Firehose: 5, Briefs: 1}, io.Discard)
	if !errors.Is(err, seed.ErrNotEmpty) {
		t.Fatalf("second Run: got %v, want ErrNotEmpty", err)
	}
	if !strings.Contains(err.Error(), "posts") {
		t.Errorf("error %q does not name the non-empty tables", err)
	}
	after := digests(t, bdb)
	for _, q := range digestQueries {
		if after[q.table] != before[q.table] {
			t.Errorf("refused Run changed %s", q.table)
		}
	}

	if _, err := seed.Run(ctx, bdb, seed.Options{Posts: 5, Firehose: 5, Briefs: 1, Reset: true}, io.Discard); err != nil {
		t.Fatalf("Run with Reset: %v", err)
	}
	if got, want := count(t, bdb, "SELECT count(*) FROM posts"), 5; got != want {
		t.Errorf("posts after Reset: got %d, want %d", got, want)
	}
	if got := count(t, bdb, "SELECT count(*) FROM api_keys WHERE name = 'kept'"); got != 1 {
		t.Errorf("API keys after Reset: %d, want 1", got)
	}
}

// cancelOnWrite cancels a context when progress is first reported.
type cancelOnWrite struct{ cancel context.CancelFunc }

func (c cancelOnWrite) Write(p []byte) (int, error) {
	c.cancel()
	return len(p), nil
}

func TestRunFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	bdb := newDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The first progress line comes once the posts are copied; the
	// firehose copy then fails on the canceled context.
	_, err := seed.Run(ctx, bdb, seed.Options{Posts: 100, Firehose: 20000, Briefs: 1}, cancelOnWrite{cancel})
	if err == nil {
		t.Fatal("Run with a canceled context succeeded")
	}
	empty, err := seed.IsEmpty(context.Background(), bdb)
	if err != nil || !empty {
		t.Errorf("after a failed Run: IsEmpty = %v, %v; want true", empty, err)
	}
}

func TestRunRejectsNegativeSizes(t *testing.T) {
	t.Parallel()
	for _, opts := range []seed.Options{{Posts: -1}, {Firehose: -5}, {Briefs: -1}, {EtfDays: -2}} {
		// No database is touched: validation comes first.
		if _, err := seed.Run(context.Background(), nil, opts, io.Discard); err == nil {
			t.Errorf("Run(%+v) succeeded, want an error", opts)
		}
	}
}

// TestSeededStories: the demo data repeats events across sources, as real
// feeds do, and the stories table agrees with the items.
func TestSeededStories(t *testing.T) {
	t.Parallel()
	bdb, _ := seeded(t, small)
	runChecks(t, bdb, []check{
		{"posts without a story", "SELECT count(*) FROM posts WHERE story_id IS NULL"},
		{"messages without a story", "SELECT count(*) FROM firehose_messages WHERE story_id IS NULL"},
		{"stories whose size is not their items'", `SELECT count(*) FROM stories s WHERE size <>
			(SELECT count(*) FROM posts WHERE story_id = s.id) + (SELECT count(*) FROM firehose_messages WHERE story_id = s.id)`},
		{"stories whose times are not their items'", `SELECT count(*) FROM stories s WHERE (first_seen_at, last_seen_at) <>
			(SELECT min(created_at), max(created_at) FROM (SELECT created_at FROM posts WHERE story_id = s.id
				UNION ALL SELECT created_at FROM firehose_messages WHERE story_id = s.id) i)`},
		{"items of a story more than two days apart", `SELECT count(*) FROM stories WHERE last_seen_at - first_seen_at > interval '2 days'`},
	})
	shared := count(t, bdb, `SELECT (100 * count(*) FILTER (WHERE s.size > 1) / count(*))::int
		FROM firehose_messages m JOIN stories s ON s.id = m.story_id`)
	if shared < 10 || shared > 60 {
		t.Errorf("firehose messages in a story of several: %d%%, want 10%% to 60%%", shared)
	}
	if n := count(t, bdb, `SELECT count(*) FROM stories WHERE cardinality(sources) > 1`); n < 10 {
		t.Errorf("stories told by several sources: %d, want at least 10", n)
	}
	if n := count(t, bdb, `SELECT count(*) FROM story_members`); n == 0 {
		t.Errorf("story_members: empty, want the items of the last window")
	}
}
