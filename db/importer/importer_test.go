package importer_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// Valid lines of each kind, as ordered members, for line to edit. Ids and
// dates are far from the seeded demo data.
var (
	postBase = []string{
		`"id":10000001`, `"source":"CoinDesk"`, `"username":"coindesk"`, `"body":"BTC tops 100k"`,
		`"url":"https://t.me/coindesk/1"`, `"original_source_url":"https://www.coindesk.com/a"`,
		`"created_at":"2026-03-01T10:00:00Z"`,
	}
	briefBase = []string{
		`"id":10000001`, `"week_start":"2031-01-06"`, `"week_end":"2031-01-12"`, `"post_count":42`,
		`"content":"# Week\n\n- BTC up"`, `"created_at":"2031-01-13T08:00:00Z"`,
	}
	firehoseBase = []string{
		`"id":10000001`, `"pane":"news"`, `"source":"Reuters"`, `"created_at":"2026-03-01T10:00:00Z"`,
	}
	etfBase = []string{
		`"asset":"BTC"`, `"flow_date":"2031-01-06"`, `"net_inflow":"-1234.5"`, `"cum_net_inflow":12345678901.23`,
		`"net_assets":"98765432109.87"`, `"value_traded":1000`, `"updated_at":"2031-01-07T01:00:00Z"`,
	}
)

// line builds a JSON object from base: an edit `"name":value` replaces the
// member of that name or is appended, an edit `-name` removes it.
func line(base []string, edits ...string) string {
	members := append([]string(nil), base...)
	for _, edit := range edits {
		name, remove := strings.CutPrefix(edit, "-")
		if !remove {
			name, _, _ = strings.Cut(edit, ":")
			name = strings.Trim(name, `"`)
		}
		i := slices.IndexFunc(members, func(m string) bool { return strings.HasPrefix(m, `"`+name+`":`) })
		switch {
		case remove && i >= 0:
			members = slices.Delete(members, i, i+1)
		case i >= 0:
			members[i] = edit
		case !remove:
			members = append(members, edit)
		}
	}
	return "{" + strings.Join(members, ",") + "}"
}

// run imports the lines and returns the result and the rejects report.
func run(t *testing.T, bdb *bun.DB, kind importer.Kind, opts importer.Options, lines ...string) (importer.Result, string) {
	t.Helper()
	var rejects strings.Builder
	opts.Rejects = &rejects
	if opts.MaxTickerLen == 0 {
		opts.MaxTickerLen = 12 // the API's bound, as cmd/feedapi passes it
	}
	input := strings.Join(lines, "\n") + "\n"
	res, err := importer.Import(context.Background(), bdb, kind, strings.NewReader(input), opts)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return res, rejects.String()
}

// table is the table each kind is imported into.
func table(kind importer.Kind) string {
	return map[importer.Kind]string{
		importer.KindPosts:        "posts",
		importer.KindBriefs:       "briefs",
		importer.KindFirehose:     "firehose_messages",
		importer.KindEtfFlows:     "etf_flows",
		importer.KindEtfFunds:     "etf_funds",
		importer.KindEtfFundFlows: "etf_fund_flows",
	}[kind]
}

// stored returns the row of table matching where as PostgreSQL's jsonb text,
// or "" when there is none.
func stored(t *testing.T, bdb *bun.DB, table, where string, args ...any) string {
	t.Helper()
	var s string
	// stream_pos and inserted_pos are the database's own (db/stream.go),
	// not imported; fts is derived by a trigger from the texts
	// (TestFTSFollowsEveryWriter); story_id, received_at and an item's
	// updated_at are the story assigner's and the database's
	// (TestImportStories, TestImportUpdates).
	drop := " - 'stream_pos' - 'inserted_pos' - 'fts' - 'story_id' - 'received_at'"
	if table == "posts" || table == "firehose_messages" {
		drop += " - 'updated_at'"
	}
	err := bdb.NewRaw("SELECT (to_jsonb(t)"+drop+")::text FROM ? AS t WHERE "+where, append([]any{bun.Ident(table)}, args...)...).
		Scan(context.Background(), &s)
	if errors.Is(err, sql.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	return s
}

// jsonb normalises a JSON text the way stored prints rows.
func jsonb(t *testing.T, bdb *bun.DB, s string) string {
	t.Helper()
	var out string
	if err := bdb.NewRaw("SELECT ?::jsonb::text", s).Scan(context.Background(), &out); err != nil {
		t.Fatalf("jsonb %s: %v", s, err)
	}
	return out
}

// fingerprint is the md5 of the table's rows and the row versions, so that
// a rewrite of an identical row shows.
func fingerprint(t *testing.T, bdb *bun.DB, table string) (rows, versions string) {
	t.Helper()
	err := bdb.NewRaw("SELECT coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), ''), "+
		"coalesce(md5(string_agg(t.xmin::text || t.ctid::text, '|' ORDER BY t::text)), '') FROM ? AS t", bun.Ident(table)).
		Scan(context.Background(), &rows, &versions)
	if err != nil {
		t.Fatalf("fingerprint %s: %v", table, err)
	}
	return rows, versions
}

func count(t *testing.T, bdb *bun.DB, table string) int {
	t.Helper()
	n, err := bdb.NewSelect().Table(table).Count(context.Background())
	if err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return int(n)
}

func TestParseKind(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"posts", "briefs", "firehose", "etf-flows", "etf-funds", "etf-fund-flows"} {
		if k, err := importer.ParseKind(s); err != nil || string(k) != s {
			t.Errorf("ParseKind(%q) = %q, %v", s, k, err)
		}
	}
	for _, s := range []string{"", "post", "Posts", "etf_flows"} {
		if _, err := importer.ParseKind(s); err == nil {
			t.Errorf("ParseKind(%q): no error", s)
		}
	}
}

func TestImportGoodLines(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	tests := []struct {
		name  string
		kind  importer.Kind
		line  string
		where string
		want  string
	}{
		{
			name: "post with every field", kind: importer.KindPosts,
			line:  line(postBase, `"uid":"cp_1"`, `"raw":{"chat":{"id":-100},"text":"<b>BTC</b>","n":1.50}`),
			where: "id = 10000001",
			want: `{"id":10000001,"source":"CoinDesk","username":"coindesk","body":"BTC tops 100k",
				"url":"https://t.me/coindesk/1","original_source_url":"https://www.coindesk.com/a",
				"raw":{"chat":{"id":-100},"text":"<b>BTC</b>","n":1.50},"created_at":"2026-03-01T10:00:00+00:00","coins":["BTC"]}`,
		},
		{
			name: "post with only required fields", kind: importer.KindPosts,
			line:  line(postBase, `"id":10000002`, `-url`, `-original_source_url`),
			where: "id = 10000002",
			want: `{"id":10000002,"source":"CoinDesk","username":"coindesk","body":"BTC tops 100k",
				"url":null,"original_source_url":null,"raw":{},"created_at":"2026-03-01T10:00:00+00:00","coins":["BTC"]}`,
		},
		{
			name: "post with null and empty optional fields", kind: importer.KindPosts,
			line:  line(postBase, `"id":10000003`, `"url":null`, `"original_source_url":""`, `"raw":null`),
			where: "id = 10000003",
			want: `{"id":10000003,"source":"CoinDesk","username":"coindesk","body":"BTC tops 100k",
				"url":null,"original_source_url":null,"raw":{},"created_at":"2026-03-01T10:00:00+00:00","coins":["BTC"]}`,
		},
		{
			name: "post with unicode and a lone surrogate in raw", kind: importer.KindPosts,
			line:  line(postBase, `"id":10000004`, `"body":"Ether \u00e9t\u00e9 🚀"`, `"raw":{"s":"\ud800"}`),
			where: "id = 10000004",
			want: `{"id":10000004,"source":"CoinDesk","username":"coindesk","body":"Ether été 🚀",
				"url":"https://t.me/coindesk/1","original_source_url":"https://www.coindesk.com/a",
				"raw":{"s":"\ufffd"},"created_at":"2026-03-01T10:00:00+00:00","coins":["ETH"]}`,
		},
		{
			name: "post with the largest id every JSON client holds exactly", kind: importer.KindPosts,
			line:  line(postBase, `"id":9007199254740991`),
			where: "id = 9007199254740991",
			want: `{"id":9007199254740991,"source":"CoinDesk","username":"coindesk","body":"BTC tops 100k",
				"url":"https://t.me/coindesk/1","original_source_url":"https://www.coindesk.com/a",
				"raw":{},"created_at":"2026-03-01T10:00:00+00:00","coins":["BTC"]}`,
		},
		{
			name: "post with explicit coins, upper-cased, sorted, distinct: not derived", kind: importer.KindPosts,
			line:  line(postBase, `"id":10000005`, `"coins":["sol","ETH","1inch","SOL"]`),
			where: "id = 10000005",
			want: `{"id":10000005,"source":"CoinDesk","username":"coindesk","body":"BTC tops 100k",
				"url":"https://t.me/coindesk/1","original_source_url":"https://www.coindesk.com/a",
				"raw":{},"created_at":"2026-03-01T10:00:00+00:00","coins":["1INCH","ETH","SOL"]}`,
		},
		{
			name: "post with explicit empty coins", kind: importer.KindPosts,
			line:  line(postBase, `"id":10000006`, `"coins":[]`),
			where: "id = 10000006",
			want: `{"id":10000006,"source":"CoinDesk","username":"coindesk","body":"BTC tops 100k",
				"url":"https://t.me/coindesk/1","original_source_url":"https://www.coindesk.com/a",
				"raw":{},"created_at":"2026-03-01T10:00:00+00:00","coins":[]}`,
		},
		{
			name: "brief", kind: importer.KindBriefs,
			line:  line(briefBase, `"uid":"wb_10000001"`),
			where: "id = 10000001",
			want: `{"id":10000001,"week_start":"2031-01-06","week_end":"2031-01-12","post_count":42,
				"content":"# Week\n\n- BTC up","created_at":"2031-01-13T08:00:00+00:00"}`,
		},
		{
			name: "brief of one day with no posts", kind: importer.KindBriefs,
			line:  line(briefBase, `"id":10000002`, `"week_start":"2031-02-03"`, `"week_end":"2031-02-03"`, `"post_count":0`),
			where: "id = 10000002",
			want: `{"id":10000002,"week_start":"2031-02-03","week_end":"2031-02-03","post_count":0,
				"content":"# Week\n\n- BTC up","created_at":"2031-01-13T08:00:00+00:00"}`,
		},
		{
			name: "firehose message with every field", kind: importer.KindFirehose,
			line: line(firehoseBase, `"pane":"iansintel"`, `"source_name":"Reuters Wire"`, `"name":"Jane"`,
				`"username":"jane"`, `"title":"Title"`, `"body":"Body"`, `"summary_ai":"Summary"`, `"important":true`,
				`"url":"http://example.com/x?y=1"`, `"original_source_url":"HTTPS://reuters.com/a"`),
			where: "id = 10000001",
			want: `{"id":10000001,"pane":"iansintel","source":"Reuters","source_name":"Reuters Wire","name":"Jane",
				"username":"jane","title":"Title","body":"Body","summary_ai":"Summary","important":true,
				"url":"http://example.com/x?y=1","original_source_url":"HTTPS://reuters.com/a",
				"created_at":"2026-03-01T10:00:00+00:00","coins":[]}`,
		},
		{
			name: "firehose message: coins from title, body and summary", kind: importer.KindFirehose,
			line:  line(firehoseBase, `"id":10000003`, `"title":"Solana ETF filings"`, `"body":"$eth"`, `"summary_ai":"Ripple too"`),
			where: "id = 10000003",
			want: `{"id":10000003,"pane":"news","source":"Reuters","source_name":null,"name":null,"username":null,
				"title":"Solana ETF filings","body":"$eth","summary_ai":"Ripple too","important":false,"url":null,
				"original_source_url":null,"created_at":"2026-03-01T10:00:00+00:00","coins":["ETH","SOL","XRP"]}`,
		},
		{
			name: "firehose message with only required fields", kind: importer.KindFirehose,
			line:  line(firehoseBase, `"id":10000002`, `"title":""`, `"important":null`),
			where: "id = 10000002",
			want: `{"id":10000002,"pane":"news","source":"Reuters","source_name":null,"name":null,"username":null,
				"title":null,"body":null,"summary_ai":null,"important":false,"url":null,"original_source_url":null,
				"created_at":"2026-03-01T10:00:00+00:00","coins":[]}`,
		},
		{
			name: "etf flow", kind: importer.KindEtfFlows,
			line:  line(etfBase),
			where: "asset = 'BTC' AND flow_date = '2031-01-06'",
			want: `{"asset":"BTC","flow_date":"2031-01-06","net_inflow":-1234.50,"cum_net_inflow":12345678901.23,
				"net_assets":98765432109.87,"value_traded":1000.00,"updated_at":"2031-01-07T01:00:00+00:00"}`,
		},
		{
			name: "etf flow with a lower-case asset", kind: importer.KindEtfFlows,
			line:  line(etfBase, `"uid":"x"`, `"asset":"hype"`, `"net_inflow":0`, `"cum_net_inflow":"-0.01"`),
			where: "asset = 'HYPE' AND flow_date = '2031-01-06'",
			want: `{"asset":"HYPE","flow_date":"2031-01-06","net_inflow":0.00,"cum_net_inflow":-0.01,
				"net_assets":98765432109.87,"value_traded":1000.00,"updated_at":"2031-01-07T01:00:00+00:00"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, rejects := run(t, bdb, tt.kind, importer.Options{}, tt.line)
			if rejects != "" {
				t.Fatalf("rejects: %s", rejects)
			}
			if want := (importer.Result{Read: 1, Imported: 1}); res != want {
				t.Errorf("result: got %+v, want %+v", res, want)
			}
			if got, want := stored(t, bdb, table(tt.kind), tt.where), jsonb(t, bdb, tt.want); got != want {
				t.Errorf("stored:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestImportRejectsBadLines(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	posts, briefs, firehose, etf := importer.KindPosts, importer.KindBriefs, importer.KindFirehose, importer.KindEtfFlows
	tests := []struct {
		name string
		kind importer.Kind
		line string
		want string
	}{
		{"malformed json", posts, `{"id":10000001,`, "json: unexpected end of JSON input (at byte 15)"},
		{"trailing garbage", posts, `{"id":10000001} x`, "json: invalid character 'x' after top-level value (at byte 17)"},
		{"not an object", posts, `[1,2]`, "json: not a JSON object"},
		{"invalid UTF-8", posts, line(postBase, "\"body\":\"caf\xe9\""), "json: invalid UTF-8"},
		{"line too long", posts, line(postBase, `"body":"`+strings.Repeat("a", 1<<20)+`"`), "json: line longer than 1048576 bytes"},
		{"unknown field", posts, line(postBase, `"sauce":"x"`), "sauce: unknown field"},
		{"misspelt field reported before the missing one", posts, line(postBase, `-source`, `"sorce":"x"`), "sorce: unknown field"},
		{"duplicate field", posts, `{"id":10000001,"source":"a","id":10000002}`, "id: duplicate field"},
		{"missing id", posts, line(postBase, `-id`), "id: required"},
		{"null id", posts, line(postBase, `"id":null`), "id: required"},
		{"string id", posts, line(postBase, `"id":"10000001"`), "id: must be a positive integer"},
		{"fractional id", posts, line(postBase, `"id":1.5`), "id: must be a positive integer"},
		{"id with a fraction of zero", posts, line(postBase, `"id":10000001.0`), "id: must be a positive integer"},
		{"id with an exponent", posts, line(postBase, `"id":1e7`), "id: must be a positive integer"},
		{"zero id", posts, line(postBase, `"id":0`), "id: must be a positive integer"},
		{"negative id", posts, line(postBase, `"id":-10000001`), "id: must be a positive integer"},
		{"id beyond int64", posts, line(postBase, `"id":9223372036854775808`), "id: must be a positive integer"},
		{"id beyond 2^53-1", posts, line(postBase, `"id":9007199254740992`), "id: must be at most 9007199254740991 (2^53-1): a larger id loses digits in JavaScript and other JSON clients"},
		{"brief id beyond 2^53-1", briefs, line(briefBase, `"id":9223372036854775807`), "id: must be at most 9007199254740991 (2^53-1): a larger id loses digits in JavaScript and other JSON clients"},
		{"firehose id beyond 2^53-1", firehose, line(firehoseBase, `"id":9007199254740993`), "id: must be at most 9007199254740991 (2^53-1): a larger id loses digits in JavaScript and other JSON clients"},
		{"missing source", posts, line(postBase, `-source`), "source: required"},
		{"coins not an array", posts, line(postBase, `"coins":"BTC"`), `coins: must be an array of tickers, such as ["BTC", "ETH"]`},
		{"coin not a string", posts, line(postBase, `"coins":["BTC",7]`), "coins: item 1: must be a string"},
		{"coin not a ticker", firehose, line(firehoseBase, `"coins":["BTC","B-TC"]`), `coins: item 1: "B-TC" is not a ticker: want 1 to 12 letters or digits`},
		{"empty coin", posts, line(postBase, `"coins":[""]`), `coins: item 0: "" is not a ticker: want 1 to 12 letters or digits`},
		{"coin too long", posts, line(postBase, `"coins":["ABCDEFGHIJKLM"]`), `coins: item 0: "ABCDEFGHIJKLM" is not a ticker: want 1 to 12 letters or digits`},
		{"empty username", posts, line(postBase, `"username":""`), "username: must not be empty"},
		{"blank body", posts, line(postBase, `"body":"  \n"`), "body: must not be empty"},
		{"number as string", posts, line(postBase, `"source":7`), "source: must be a string"},
		{"NUL in text", posts, line(postBase, `"body":"a\u0000b"`), "body: must not contain NUL characters"},
		{"relative url", posts, line(postBase, `"url":"/coindesk/1"`), "url: must be an absolute http or https URL"},
		{"url of another scheme", posts, line(postBase, `"original_source_url":"ftp://example.com/a"`), "original_source_url: must be an absolute http or https URL"},
		{"url without host", posts, line(postBase, `"url":"https://:443/a"`), "url: must be an absolute http or https URL"},
		{"unparsable url", posts, line(postBase, `"url":"http://[::1"`), "url: must be an absolute http or https URL"},
		{"timestamp without zone", posts, line(postBase, `"created_at":"2026-03-01T10:00:00"`), "created_at: must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"},
		{"date as timestamp", posts, line(postBase, `"created_at":"2026-03-01"`), "created_at: must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"},
		{"timestamp out of range", posts, line(postBase, `"created_at":"2026-02-30T10:00:00Z"`), "created_at: must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"},
		{"timestamp with offset +24:00", posts, line(postBase, `"created_at":"2026-03-01T10:00:00+24:00"`), "created_at: must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"},
		{"timestamp with a comma fraction", posts, line(postBase, `"created_at":"2026-03-01T10:00:00,5Z"`), "created_at: must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"},
		{"timestamp as number", posts, line(postBase, `"created_at":1767225600`), "created_at: must be a string"},
		{"timestamp in year 0", posts, line(postBase, `"created_at":"0001-01-01T00:30:00+01:00"`), "created_at: must be between years 0001 and 9999 in UTC"},
		{"raw not an object", posts, line(postBase, `"raw":[1]`), "raw: must be a JSON object"},
		{"raw as a string", posts, line(postBase, `"raw":"{}"`), "raw: must be a JSON object"},
		{"NUL in raw", posts, line(postBase, `"raw":{"a":["x\u0000"]}`), "raw: must not contain NUL characters"},
		{"NUL in a raw key", posts, line(postBase, `"raw":{"a\u0000":1}`), "raw: must not contain NUL characters"},
		{"raw number beyond numeric", posts, line(postBase, `"raw":{"n":1e200000}`), "raw: number 1e200000 is out of range"},
		{"raw nested 9000 levels deep", posts, line(postBase, `"raw":{"a":`+strings.Repeat("[", 8999)+strings.Repeat("]", 8999)+`}`),
			"raw: nested 9000 levels deep, more than the 64 allowed"},
		{"raw that writes out too long", posts, line(postBase, `"raw":{"n":[`+strings.Repeat("1e100000,", 30)+`1]}`),
			"raw: is 3000100 bytes long as served (with a space after each : and , and numbers written out in full), more than the 2097152 allowed"},
		{"impossible date", briefs, line(briefBase, `"week_start":"2031-02-29"`), "week_start: must be a calendar date YYYY-MM-DD"},
		{"date with a time", briefs, line(briefBase, `"week_end":"2031-01-12T00:00:00Z"`), "week_end: must be a calendar date YYYY-MM-DD"},
		{"short date", briefs, line(briefBase, `"week_start":"2031-1-6"`), "week_start: must be a calendar date YYYY-MM-DD"},
		{"week ends before it starts", briefs, line(briefBase, `"week_end":"2031-01-05"`), "week_end: must not be before week_start"},
		{"negative post_count", briefs, line(briefBase, `"post_count":-1`), "post_count: must be a non-negative integer"},
		{"fractional post_count", briefs, line(briefBase, `"post_count":4.5`), "post_count: must be a non-negative integer"},
		{"post_count beyond integer", briefs, line(briefBase, `"post_count":2147483648`), "post_count: must be a non-negative integer"},
		{"missing content", briefs, line(briefBase, `-content`), "content: required"},
		{"unknown pane", firehose, line(firehoseBase, `"pane":"sports"`), "pane: must be one of blogs, crypto, iansintel, news, twitter, wire"},
		{"pane in another case", firehose, line(firehoseBase, `"pane":"News"`), "pane: must be one of blogs, crypto, iansintel, news, twitter, wire"},
		{"boolean as string", firehose, line(firehoseBase, `"important":"true"`), "important: must be true or false"},
		{"boolean as number", firehose, line(firehoseBase, `"important":1`), "important: must be true or false"},
		{"NUL in optional text", firehose, line(firehoseBase, `"summary_ai":"\u0000"`), "summary_ai: must not contain NUL characters"},
		{"unknown asset", etf, line(etfBase, `"asset":"DOGE"`), "asset: must be one of BTC, ETH, SOL, HYPE"},
		{"missing flow_date", etf, line(etfBase, `-flow_date`), "flow_date: required"},
		{"three decimals", etf, line(etfBase, `"net_inflow":1.234`), "net_inflow: must be a decimal amount with at most two decimals and no exponent"},
		{"three decimals in a string", etf, line(etfBase, `"net_assets":"1.234"`), "net_assets: must be a decimal amount with at most two decimals and no exponent"},
		{"exponent", etf, line(etfBase, `"cum_net_inflow":1e9`), "cum_net_inflow: must be a decimal amount with at most two decimals and no exponent"},
		{"exponent in a string", etf, line(etfBase, `"value_traded":"1E9"`), "value_traded: must be a decimal amount with at most two decimals and no exponent"},
		{"money as text", etf, line(etfBase, `"value_traded":"lots"`), "value_traded: must be a decimal amount with at most two decimals and no exponent"},
		{"money as boolean", etf, line(etfBase, `"value_traded":true`), "value_traded: must be a decimal amount with at most two decimals and no exponent"},
		{"money beyond range", etf, line(etfBase, `"net_assets":1000000000000000`), "net_assets: is too large: at most 14 digits before the point (±99999999999999.99)"},
		{"money of twenty digits", etf, line(etfBase, `"net_assets":99999999999999999999.99`), "net_assets: is too large: at most 14 digits before the point (±99999999999999.99)"},
		{"money too large and with three decimals", etf, line(etfBase, `"net_assets":"99999999999999999999.999"`), "net_assets: must be a decimal amount with at most two decimals and no exponent"},
		{"missing updated_at", etf, line(etfBase, `-updated_at`), "updated_at: required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := count(t, bdb, table(tt.kind))
			res, rejects := run(t, bdb, tt.kind, importer.Options{}, tt.line)
			if got, want := rejects, "line 1: "+tt.want+"\n"; got != want {
				t.Errorf("rejects: got %q, want %q", got, want)
			}
			if want := (importer.Result{Read: 1, Rejected: 1}); res != want {
				t.Errorf("result: got %+v, want %+v", res, want)
			}
			if got := count(t, bdb, table(tt.kind)); got != before {
				t.Errorf("rows: got %d, want %d", got, before)
			}
		})
	}
}

func TestImportMixedFileWritesOnlyGoodLines(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	res, rejects := run(t, bdb, importer.KindPosts, importer.Options{BatchSize: 2},
		line(postBase, `"id":10000001`),
		line(postBase, `"id":10000002`, `"url":"nope"`),
		"",
		line(postBase, `"id":10000003`),
		"   ",
		`{"id":10000004`,
		line(postBase, `"id":10000005`, `"created_at":"yesterday"`),
		line(postBase, `"id":10000006`),
	)
	wantRejects := "line 2: url: must be an absolute http or https URL\n" +
		"line 6: json: unexpected end of JSON input (at byte 14)\n" +
		"line 7: created_at: must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z\n"
	if rejects != wantRejects {
		t.Errorf("rejects:\n got %q\nwant %q", rejects, wantRejects)
	}
	if want := (importer.Result{Read: 6, Imported: 3, Rejected: 3}); res != want {
		t.Errorf("result: got %+v, want %+v", res, want)
	}
	var ids []int64
	if err := bdb.NewSelect().Table("posts").Column("id").Where("id > 10000000").Order("id").
		Scan(context.Background(), &ids); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(ids), "[10000001 10000003 10000006]"; got != want {
		t.Errorf("ids: got %s, want %s", got, want)
	}
	if err := res.Err(); !errors.Is(err, importer.ErrRejected) {
		t.Errorf("Result.Err: got %v, want ErrRejected", err)
	}
}

func TestImportTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	files := map[importer.Kind][]string{
		importer.KindPosts: {
			line(postBase, `"raw":{"b":[1,2.50,"x"],"a":{"z":null}}`),
			line(postBase, `"id":10000002`, `"created_at":"2026-03-01T12:00:00.123456+05:30"`),
		},
		importer.KindBriefs: {line(briefBase)},
		importer.KindFirehose: {
			line(firehoseBase, `"important":true`, `"summary_ai":"s"`),
			line(firehoseBase, `"id":10000002`, `"title":"t"`),
		},
		importer.KindEtfFlows: {line(etfBase), line(etfBase, `"asset":"eth"`)},
	}
	for kind, lines := range files {
		t.Run(string(kind), func(t *testing.T) {
			run(t, bdb, kind, importer.Options{}, lines...)
			rows, versions := fingerprint(t, bdb, table(kind))
			res, rejects := run(t, bdb, kind, importer.Options{}, lines...)
			if rejects != "" || res.Imported != len(lines) {
				t.Fatalf("second import: %+v, %s", res, rejects)
			}
			gotRows, gotVersions := fingerprint(t, bdb, table(kind))
			if gotRows != rows {
				t.Errorf("rows changed")
			}
			if gotVersions != versions {
				t.Errorf("identical rows were rewritten")
			}
		})
	}
}

func TestImportUpdatesExistingRows(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	tests := []struct {
		kind          importer.Kind
		first, second string
		query         string
		want          string
	}{
		{importer.KindPosts, line(postBase), line(postBase, `"body":"edited"`, `"url":null`),
			"SELECT body || coalesce(url, '-') FROM posts WHERE id = 10000001", "edited-"},
		{importer.KindBriefs, line(briefBase), line(briefBase, `"week_end":"2031-01-13"`, `"post_count":43`),
			"SELECT week_end::text || ' ' || post_count FROM briefs WHERE id = 10000001", "2031-01-13 43"},
		{importer.KindFirehose, line(firehoseBase), line(firehoseBase, `"pane":"wire"`, `"important":true`),
			"SELECT pane || ' ' || important FROM firehose_messages WHERE id = 10000001", "wire true"},
		{importer.KindEtfFlows, line(etfBase), line(etfBase, `"net_inflow":"-1234.56"`),
			"SELECT net_inflow::text FROM etf_flows WHERE asset = 'BTC' AND flow_date = '2031-01-06'", "-1234.56"},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			run(t, bdb, tt.kind, importer.Options{}, tt.first)
			before := count(t, bdb, table(tt.kind))
			run(t, bdb, tt.kind, importer.Options{}, tt.second)
			var got string
			if err := bdb.NewRaw(tt.query).Scan(context.Background(), &got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("after update: got %q, want %q", got, tt.want)
			}
			if got := count(t, bdb, table(tt.kind)); got != before {
				t.Errorf("rows: got %d, want %d", got, before)
			}
		})
	}
}

func TestImportBriefWeekConflicts(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	run(t, bdb, importer.KindBriefs, importer.Options{}, line(briefBase))
	res, rejects := run(t, bdb, importer.KindBriefs, importer.Options{},
		line(briefBase, `"id":10000002`, `"content":"taken in the database"`),
		line(briefBase, `"id":10000003`, `"week_start":"2031-01-13"`, `"week_end":"2031-01-19"`),
		line(briefBase, `"id":10000004`, `"week_start":"2031-01-13"`, `"week_end":"2031-01-19"`),
		line(briefBase, `"id":10000001`, `"content":"same brief, same week"`),
	)
	wantRejects := "line 1: week_start: 2031-01-06 already belongs to brief 10000001\n" +
		"line 3: week_start: 2031-01-13 already belongs to brief 10000003\n"
	if rejects != wantRejects {
		t.Errorf("rejects:\n got %q\nwant %q", rejects, wantRejects)
	}
	if want := (importer.Result{Read: 4, Imported: 2, Rejected: 2}); res != want {
		t.Errorf("result: got %+v, want %+v", res, want)
	}
	if got := stored(t, bdb, "briefs", "id IN (10000002, 10000004)"); got != "" {
		t.Errorf("rejected brief written: %s", got)
	}
	if got := stored(t, bdb, "briefs", "id = 10000001 AND content = 'same brief, same week'"); got == "" {
		t.Errorf("brief 10000001 not updated")
	}
}

// TestImportBriefWeeksDoNotOverlap: a brief whose week shares a day with
// another brief's week is refused with its line, in the database or in the
// same batch, whether it is new or moved by a re-import; a brief keeps its
// own week through an upsert and may take days another row has just left.
func TestImportBriefWeeksDoNotOverlap(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	run(t, bdb, importer.KindBriefs, importer.Options{}, line(briefBase)) // 10000001: 2031-01-06..2031-01-12
	weekOf := func(id int) string {
		t.Helper()
		var w string
		if err := bdb.NewRaw("SELECT week_start::text || '..' || week_end::text FROM briefs WHERE id = ?", id).
			Scan(context.Background(), &w); err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
		return w
	}
	steps := []struct {
		name        string
		lines       []string
		wantRejects string
		want        importer.Result
		weeks       map[int]string // brief id → its week afterwards ("" for none)
	}{
		{
			name: "new briefs",
			lines: []string{
				line(briefBase, `"id":10000002`, `"week_start":"2031-01-10"`, `"week_end":"2031-01-16"`),
				line(briefBase, `"id":10000003`, `"week_start":"2031-01-13"`, `"week_end":"2031-01-19"`),
				line(briefBase, `"id":10000004`, `"week_start":"2031-01-19"`, `"week_end":"2031-01-25"`),
				line(briefBase, `"id":10000001`, `"content":"same brief, same week"`),
			},
			wantRejects: "line 1: week_start: the week 2031-01-10..2031-01-16 overlaps brief 10000001 (2031-01-06..2031-01-12)\n" +
				"line 3: week_start: the week 2031-01-19..2031-01-25 overlaps brief 10000003 (2031-01-13..2031-01-19)\n",
			want:  importer.Result{Read: 4, Imported: 2, Rejected: 2},
			weeks: map[int]string{10000001: "2031-01-06..2031-01-12", 10000002: "", 10000003: "2031-01-13..2031-01-19", 10000004: ""},
		},
		{
			name: "a re-import moves a brief onto another's week",
			lines: []string{
				line(briefBase, `"id":10000003`, `"week_start":"2031-01-05"`, `"week_end":"2031-01-11"`),
			},
			wantRejects: "line 1: week_start: the week 2031-01-05..2031-01-11 overlaps brief 10000001 (2031-01-06..2031-01-12)\n",
			want:        importer.Result{Read: 1, Rejected: 1},
			weeks:       map[int]string{10000001: "2031-01-06..2031-01-12", 10000003: "2031-01-13..2031-01-19"},
		},
		{
			name: "a brief takes the days another has just left",
			lines: []string{
				line(briefBase, `"id":10000001`, `"week_start":"2031-02-03"`, `"week_end":"2031-02-09"`),
				line(briefBase, `"id":10000003`, `"week_start":"2031-01-06"`, `"week_end":"2031-01-12"`),
			},
			want:  importer.Result{Read: 2, Imported: 2},
			weeks: map[int]string{10000001: "2031-02-03..2031-02-09", 10000003: "2031-01-06..2031-01-12"},
		},
	}
	for _, st := range steps {
		res, rejects := run(t, bdb, importer.KindBriefs, importer.Options{}, st.lines...)
		if rejects != st.wantRejects {
			t.Errorf("%s: rejects:\n got %q\nwant %q", st.name, rejects, st.wantRejects)
		}
		if res != st.want {
			t.Errorf("%s: result: got %+v, want %+v", st.name, res, st.want)
		}
		for id, want := range st.weeks {
			if got := weekOf(id); got != want {
				t.Errorf("%s: brief %d: week %q, want %q", st.name, id, got, want)
			}
		}
	}

	// The database refuses an overlap that bypasses the importer.
	_, err := bdb.ExecContext(context.Background(), `INSERT INTO briefs (id, week_start, week_end, post_count, content, created_at)
		VALUES (10000009, '2031-02-09', '2031-02-15', 0, '', now())`)
	if err == nil || !strings.Contains(err.Error(), "briefs_weeks_do_not_overlap") {
		t.Errorf("overlapping insert: got %v, want a violation of briefs_weeks_do_not_overlap", err)
	}
}

func TestImportReadsAStream(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	// A byte at a time, as from a pipe, with a byte order mark, CRLF line
	// endings and no newline after the last line.
	input := "\uFEFF" + line(postBase) + "\r\n\r\n" + line(postBase, `"id":10000002`)
	var rejects strings.Builder
	res, err := importer.Import(context.Background(), bdb, importer.KindPosts,
		iotest.OneByteReader(strings.NewReader(input)), importer.Options{Rejects: &rejects})
	if err != nil {
		t.Fatal(err)
	}
	if want := (importer.Result{Read: 2, Imported: 2}); res != want || rejects.Len() > 0 {
		t.Errorf("result: got %+v %q, want %+v", res, rejects.String(), want)
	}
	if got := ownPosts(t, bdb); got != 2 {
		t.Errorf("imported rows: got %d, want 2", got)
	}
}

// ownPosts counts the posts with the tests' ids, above the demo data's.
func ownPosts(t *testing.T, bdb *bun.DB) int {
	t.Helper()
	n, err := bdb.NewSelect().Table("posts").Where("id > 10000000").Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func TestImportReadErrorStops(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	r := iotest.TimeoutReader(strings.NewReader(line(postBase) + "\n" + line(postBase, `"id":10000002`) + "\n"))
	_, err := importer.Import(context.Background(), bdb, importer.KindPosts, iotest.DataErrReader(r), importer.Options{})
	if !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("error: got %v, want a timeout", err)
	}
}

func TestImportStoresTimestampsInUTC(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	tests := []struct{ in, want string }{
		{"2026-03-01T10:00:00Z", "2026-03-01 10:00:00"},
		{"2026-03-01t10:00:00z", "2026-03-01 10:00:00"},
		{"2026-03-01T10:00:00+02:00", "2026-03-01 08:00:00"},
		{"2026-03-01T01:00:00-05:30", "2026-03-01 06:30:00"},
		{"2026-03-01T00:30:00+01:00", "2026-02-28 23:30:00"},
		{"2026-03-01T10:00:00-00:00", "2026-03-01 10:00:00"},
		{"2026-03-01T10:00:00.123Z", "2026-03-01 10:00:00.123"},
		{"2026-03-01T10:00:00.123456+00:00", "2026-03-01 10:00:00.123456"},
	}
	for i, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			id := 10000001 + i
			_, rejects := run(t, bdb, importer.KindFirehose, importer.Options{},
				line(firehoseBase, fmt.Sprintf(`"id":%d`, id), `"created_at":"`+tt.in+`"`))
			if rejects != "" {
				t.Fatal(rejects)
			}
			var got string
			err := bdb.NewRaw("SELECT (created_at AT TIME ZONE 'UTC')::text FROM firehose_messages WHERE id = ?", id).
				Scan(context.Background(), &got)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("created_at: got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestImportMoneyIsExact(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	tests := []struct{ in, want string }{
		{`"12345678901.23"`, "12345678901.23"},
		{`12345678901.23`, "12345678901.23"},
		{`90071992547409.93`, "90071992547409.93"}, // 2^53+1 cents: not a float64
		{`"-99999999999999.99"`, "-99999999999999.99"},
		{`0.1`, "0.10"},
		{`"-0"`, "0.00"},
		{`7`, "7.00"},
	}
	for i, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			day := fmt.Sprintf("2031-03-%02d", i+1)
			_, rejects := run(t, bdb, importer.KindEtfFlows, importer.Options{},
				line(etfBase, `"flow_date":"`+day+`"`, `"net_inflow":`+tt.in))
			if rejects != "" {
				t.Fatal(rejects)
			}
			var got string
			err := bdb.NewRaw("SELECT net_inflow::text FROM etf_flows WHERE asset = 'BTC' AND flow_date = ?", day).
				Scan(context.Background(), &got)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("net_inflow: got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestImportBatches(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	var lines []string
	for id := 10000001; id <= 10000005; id++ {
		lines = append(lines, line(postBase, fmt.Sprintf(`"id":%d`, id)))
	}
	var progress []importer.Result
	res, rejects := run(t, bdb, importer.KindPosts, importer.Options{BatchSize: 2, Progress: func(r importer.Result) { progress = append(progress, r) }}, lines...)
	if want := (importer.Result{Read: 5, Imported: 5}); res != want || rejects != "" {
		t.Errorf("result: got %+v %q, want %+v", res, rejects, want)
	}
	if got := ownPosts(t, bdb); got != 5 {
		t.Errorf("rows: got %d, want 5", got)
	}
	// One report per batch of two written, while the next batch is read,
	// the last with every line.
	if got, want := fmt.Sprint(progress), "[{4 2 0} {5 4 0} {5 5 0}]"; got != want {
		t.Errorf("progress: got %s, want %s", got, want)
	}
}

func TestImportDuplicatesInOneBatch(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	res, rejects := run(t, bdb, importer.KindPosts, importer.Options{},
		line(postBase, `"body":"first"`),
		line(postBase, `"id":10000002`),
		line(postBase, `"body":"second"`),
		line(postBase, `"body":"last"`),
	)
	if want := (importer.Result{Read: 4, Imported: 4}); res != want || rejects != "" {
		t.Errorf("result: got %+v %q, want %+v", res, rejects, want)
	}
	if got := stored(t, bdb, "posts", "id = 10000001 AND body = 'last'"); got == "" {
		t.Errorf("the last line did not win")
	}
	res, rejects = run(t, bdb, importer.KindEtfFlows, importer.Options{},
		line(etfBase, `"asset":"sol"`, `"net_inflow":1`),
		line(etfBase, `"asset":"SOL"`, `"net_inflow":2`),
	)
	if want := (importer.Result{Read: 2, Imported: 2}); res != want || rejects != "" {
		t.Errorf("etf result: got %+v %q, want %+v", res, rejects, want)
	}
	if got := stored(t, bdb, "etf_flows", "asset = 'SOL' AND flow_date = '2031-01-06' AND net_inflow = 2"); got == "" {
		t.Errorf("etf: the last line did not win")
	}
}

func TestImportRollsBackAFailedBatch(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx := context.Background()
	// A trigger stands in for a database failure on the fourth line.
	for _, q := range []string{
		`CREATE FUNCTION fail_import() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.id = 10000004 THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$`,
		`CREATE TRIGGER fail_import BEFORE INSERT ON posts FOR EACH ROW EXECUTE FUNCTION fail_import()`,
	} {
		if _, err := bdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var lines []string
	for id := 10000001; id <= 10000005; id++ {
		lines = append(lines, line(postBase, fmt.Sprintf(`"id":%d`, id)))
	}
	res, err := importer.Import(ctx, bdb, importer.KindPosts, strings.NewReader(strings.Join(lines, "\n")),
		importer.Options{BatchSize: 2})
	if err == nil || !strings.Contains(err.Error(), "injected failure") || !strings.Contains(err.Error(), "lines 3 to 4") {
		t.Errorf("error: got %v, want the injected failure in lines 3 to 4", err)
	}
	// Line 5 was read and validated while lines 3 and 4 were written (the
	// import reads on while a batch is written), but not written.
	if want := (importer.Result{Read: 5, Imported: 2}); res != want {
		t.Errorf("result: got %+v, want %+v", res, want)
	}
	var ids []int64
	if err := bdb.NewSelect().Table("posts").Column("id").Where("id > 10000000").Order("id").Scan(ctx, &ids); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(ids), "[10000001 10000002]"; got != want {
		t.Errorf("ids: got %s, want %s", got, want)
	}
}

// TestImportCommitsBatchesInOrder: batches are written two at a time, but
// an import that fails in the middle leaves exactly the lines before the
// failed batch written, wherever the failure falls, for posts and the
// firehose alike; and a key in two neighbouring batches ends with its later
// line.
func TestImportCommitsBatchesInOrder(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE fail_at (id bigint)`,
		`CREATE FUNCTION fail_import() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF EXISTS (SELECT FROM fail_at WHERE id = NEW.id) THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$`,
		`CREATE TRIGGER fail_import BEFORE INSERT ON posts FOR EACH ROW EXECUTE FUNCTION fail_import()`,
		`CREATE TRIGGER fail_import BEFORE INSERT ON firehose_messages FOR EACH ROW EXECUTE FUNCTION fail_import()`,
	} {
		if _, err := bdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		kind  importer.Kind
		base  []string
		first int64 // the first id; 40 lines, batches of 3
		fail  int64 // the id whose insert fails (0: none)
	}{
		{importer.KindPosts, postBase, 20000001, 20000020},
		{importer.KindPosts, postBase, 20000101, 20000103},
		{importer.KindPosts, postBase, 20000201, 20000240},
		{importer.KindFirehose, firehoseBase, 20000301, 20000317},
		{importer.KindFirehose, firehoseBase, 20000401, 0},
	} {
		t.Run(fmt.Sprintf("%s fails at %d", tt.kind, tt.fail), func(t *testing.T) {
			for _, q := range []string{"DELETE FROM fail_at", fmt.Sprintf("INSERT INTO fail_at VALUES (%d)", tt.fail)} {
				if _, err := bdb.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			var lines []string
			for id := tt.first; id < tt.first+40; id++ {
				lines = append(lines, line(tt.base, fmt.Sprintf(`"id":%d`, id)))
			}
			_, err := importer.Import(ctx, bdb, tt.kind, strings.NewReader(strings.Join(lines, "\n")), importer.Options{BatchSize: 3})
			want := tt.first + 40 // ids below it are written
			if tt.fail != 0 {
				if err == nil || !strings.Contains(err.Error(), "injected failure") {
					t.Fatalf("error: got %v, want the injected failure", err)
				}
				want = tt.first + (tt.fail-tt.first)/3*3 // the failed batch's first id
			} else if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			if err := bdb.NewSelect().Table(table(tt.kind)).Column("id").Where("id >= ? AND id < ?", tt.first, tt.first+40).
				Order("id").Scan(ctx, &ids); err != nil {
				t.Fatal(err)
			}
			if len(ids) != int(want-tt.first) || (len(ids) > 0 && (ids[0] != tt.first || ids[len(ids)-1] != want-1)) {
				t.Errorf("written: %d ids %v, want the %d ids from %d to %d", len(ids), ids, want-tt.first, tt.first, want-1)
			}
		})
	}
	// The triggers register each new source group and ticker in a table
	// that every batch writes: two batches' statements taking those rows in
	// opposite orders while the later one's commit waits for the earlier
	// one would wait for each other until the statement timeout. The first
	// batch's first row waits a moment, so that the second batch would
	// reach the shared rows first if it were let run.
	for _, q := range []string{
		`CREATE FUNCTION slow_first() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.id IN (20000500, 20001500, 20002500) THEN PERFORM pg_sleep(1); END IF; RETURN NEW; END $$`,
		`CREATE TRIGGER slow_first BEFORE INSERT ON firehose_messages FOR EACH ROW EXECUTE FUNCTION slow_first()`,
		`CREATE TRIGGER slow_first BEFORE INSERT ON posts FOR EACH ROW EXECUTE FUNCTION slow_first()`,
	} {
		if _, err := bdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name  string
		kind  importer.Kind
		first int64
		// shared edits the line of the k-th of five new shared rows.
		shared func(k int) []string
	}{
		{"new sources", importer.KindFirehose, 20000500, func(k int) []string {
			return []string{fmt.Sprintf(`"source":"new-source-%d"`, k)}
		}},
		{"new tickers given", importer.KindPosts, 20001500, func(k int) []string {
			return []string{fmt.Sprintf(`"coins":["NEWCOIN%d"]`, k)}
		}},
		{"new tickers on the firehose", importer.KindFirehose, 20002500, func(k int) []string {
			return []string{fmt.Sprintf(`"coins":["FHCOIN%d"]`, k)}
		}},
	} {
		t.Run(tt.name+" in every batch, in turn forwards and backwards", func(t *testing.T) {
			base := postBase
			if tt.kind == importer.KindFirehose {
				base = firehoseBase
			}
			var lines []string
			for i := range 30 {
				for j := range 5 {
					k := j
					if i%2 == 1 {
						k = 4 - j
					}
					edits := append([]string{fmt.Sprintf(`"id":%d`, tt.first+int64(5*i+j))}, tt.shared(k)...)
					lines = append(lines, line(base, edits...))
				}
			}
			res, rejects := run(t, bdb, tt.kind, importer.Options{BatchSize: 5}, lines...)
			if want := (importer.Result{Read: 150, Imported: 150}); res != want || rejects != "" {
				t.Errorf("result: got %+v %q, want %+v", res, rejects, want)
			}
		})
	}
	t.Run("a key in neighbouring batches", func(t *testing.T) {
		var lines []string
		for i := range 12 {
			// Every batch of 3 repeats id 20000901, each time with a new body.
			lines = append(lines, line(postBase, `"id":20000901`, fmt.Sprintf(`"body":"version %d"`, i)),
				line(postBase, fmt.Sprintf(`"id":%d`, 20000910+2*i)), line(postBase, fmt.Sprintf(`"id":%d`, 20000911+2*i)))
		}
		res, rejects := run(t, bdb, importer.KindPosts, importer.Options{BatchSize: 3}, lines...)
		if want := (importer.Result{Read: 36, Imported: 36}); res != want || rejects != "" {
			t.Errorf("result: got %+v %q, want %+v", res, rejects, want)
		}
		if got := stored(t, bdb, "posts", "id = 20000901 AND body = 'version 11'"); got == "" {
			t.Errorf("the last line of id 20000901 did not win")
		}
	})
}

func TestImportRunsTwoStatementsAtOnce(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	ctx := context.Background()
	// The first row of the first batch waits until another backend of this
	// database runs or has run an insert into posts in its transaction
	// (the second batch's statement, or the story writes that follow it in
	// the same transaction),
	// for at most 4 seconds (the statement timeout is 5), and says in its
	// body whether it saw one.
	for _, q := range []string{
		`CREATE FUNCTION wait_for_second() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.id = 20003000 THEN
				NEW.body := 'alone';
				FOR i IN 1..40 LOOP
					PERFORM pg_stat_clear_snapshot();
					IF EXISTS (SELECT FROM pg_stat_activity WHERE datname = current_database()
						AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')
						AND (query LIKE 'INSERT INTO "posts"%' OR query LIKE 'INSERT INTO stor%' OR query LIKE 'WITH members AS (%')) THEN
						NEW.body := 'overlapped';
						EXIT;
					END IF;
					PERFORM pg_sleep(0.1);
				END LOOP;
			END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER wait_for_second BEFORE INSERT ON posts FOR EACH ROW EXECUTE FUNCTION wait_for_second()`,
	} {
		if _, err := bdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// Two batches of three without a key or a story in common (other
	// figures: other stories): neither can wait for the other, so both
	// statements may run at once.
	var lines []string
	for id := 20003000; id < 20003006; id++ {
		lines = append(lines, line(postBase, fmt.Sprintf(`"id":%d`, id), `"coins":[]`, fmt.Sprintf(`"body":"BTC tops %dk"`, id-20002900)))
	}
	res, rejects := run(t, bdb, importer.KindPosts, importer.Options{BatchSize: 3}, lines...)
	if want := (importer.Result{Read: 6, Imported: 6}); res != want || rejects != "" {
		t.Errorf("result: got %+v %q, want %+v", res, rejects, want)
	}
	if got := stored(t, bdb, "posts", "id = 20003000 AND body = 'overlapped'"); got == "" {
		t.Errorf("the second batch's statement did not run while the first's did")
	}
}

// TestSharedRowTriggers lists the triggers on the items' tables. A batch's
// statement runs beside the one before it unless they could wait for each
// other (shared.go); a trigger that writes rows of another table must be
// in that reasoning, so a change here means looking at shared.go again.
func TestSharedRowTriggers(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	var got []string
	err := bdb.NewRaw(`SELECT c.relname || ' ' || p.proname || '(' || encode(g.tgargs, 'escape') || ')'
		FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_proc p ON p.oid = g.tgfoid
		WHERE c.relname IN ('posts', 'firehose_messages') AND NOT g.tgisinternal
		GROUP BY 1 ORDER BY 1`).Scan(context.Background(), &got)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`firehose_messages coin_side_delete(firehose_coins\000)`,
		`firehose_messages coin_side_insert(firehose_coins\000)`,
		`firehose_messages coin_side_truncate(firehose_coins\000)`,
		`firehose_messages coin_side_update(firehose_coins\000)`,
		`firehose_messages coin_tickers_add()`,
		`firehose_messages feedapi_item_updated(firehose_messages\000)`,
		`firehose_messages feedapi_notify_change(firehose\000)`,
		`firehose_messages feedapi_stream_pos(firehose_messages\000)`,
		`firehose_messages firehose_fts_fill()`,
		`firehose_messages firehose_id_blocks_add()`,
		`firehose_messages firehose_id_blocks_truncate()`,
		`firehose_messages firehose_message_ids_delete()`,
		`firehose_messages firehose_message_ids_insert()`,
		`firehose_messages firehose_message_ids_truncate()`,
		`firehose_messages firehose_message_ids_update()`,
		`firehose_messages firehose_source_groups_add()`,
		`firehose_messages firehose_source_groups_truncate()`,
		`posts coin_side_delete(post_coins\000)`,
		`posts coin_side_insert(post_coins\000)`,
		`posts coin_side_truncate(post_coins\000)`,
		`posts coin_side_update(post_coins\000)`,
		`posts coin_tickers_add()`,
		`posts feedapi_item_updated()`,
		`posts feedapi_notify_change(posts\000)`,
		`posts feedapi_stream_pos()`,
		`posts posts_fts_fill()`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("triggers on posts and firehose_messages changed: review the shared keys of db/importer/shared.go, then this list\ngot  %q\nwant %q", got, want)
	}
}

// With a firehose retention, a message of a month the retention drops is
// rejected (written, it would bring the month back until the next run),
// one at the start of the oldest kept month is imported, and posts, which
// have no retention, are imported whatever their age.
func TestImportRejectsMessagesTheRetentionDrops(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	// A cutoff on 2024-01-15: every message since 2024-01-01 is kept.
	cutoff := time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)
	opts := importer.Options{FirehoseRetention: db.Retention{Span: time.Since(cutoff)}}
	res, rejects := run(t, bdb, importer.KindFirehose, opts,
		line(firehoseBase, `"id":10000001`, `"created_at":"2023-12-31T23:59:59.999Z"`),
		line(firehoseBase, `"id":10000002`, `"created_at":"2024-01-01T00:00:00Z"`),
		line(firehoseBase, `"id":10000003`, `"created_at":"2024-01-14T12:00:00Z"`))
	if want := (importer.Result{Read: 3, Imported: 2, Rejected: 1}); res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	wantRejects := "line 1: created_at: before 2024-01-01T00:00:00Z, the start of the oldest month the firehose retention keeps\n"
	if rejects != wantRejects {
		t.Errorf("rejects:\n got %q\nwant %q", rejects, wantRejects)
	}
	var ids []int64
	var december bool
	err := bdb.NewRaw(`SELECT array_agg(id ORDER BY id), to_regclass('firehose_messages_2023m12') IS NOT NULL
		FROM firehose_messages WHERE id BETWEEN 10000001 AND 10000003`).Scan(context.Background(), pgdialect.Array(&ids), &december)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []int64{10000002, 10000003}) || december {
		t.Errorf("stored %v, December 2023's partition exists: %v; want 10000002 and 10000003, no December", ids, december)
	}

	res, rejects = run(t, bdb, importer.KindPosts, opts, line(postBase, `"created_at":"2020-05-01T00:00:00Z"`))
	if res.Imported != 1 || rejects != "" {
		t.Errorf("an old post with a firehose retention: %+v %q, want it imported", res, rejects)
	}
}
