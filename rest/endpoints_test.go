package rest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db"
)

var (
	timestampRe = regexp.MustCompile(`^"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"$`)
	dateRe      = regexp.MustCompile(`^"\d{4}-\d{2}-\d{2}"$`)
	moneyRe     = regexp.MustCompile(`^-?\d+(\.\d{1,2})?$`)
)

// wantFields fails unless obj has exactly the named members.
func wantFields(t testing.TB, what string, obj map[string]json.RawMessage, names ...string) {
	t.Helper()
	got := keysOf(obj)
	slices.Sort(got)
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s fields = %v, want %v", what, got, want)
	}
}

func str(t testing.TB, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s is not a string: %v", raw, err)
	}
	return s
}

func num(t testing.TB, raw json.RawMessage) int64 {
	t.Helper()
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		t.Fatalf("%s is not an integer: %v", raw, err)
	}
	return n
}

var postFields = []string{"uid", "id", "source", "username", "body", "url", "original_source_url", "created_at", "coins"}

func TestPosts(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	rows := a.addPosts(fxPostID, 3, "fx-posts")

	t.Run("fields and formats, newest first", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/posts?source=fx-posts", a.free)
		r.wantStatus(t, http.StatusOK)
		items := r.items(t)
		if len(items) != 3 {
			t.Fatalf("got %d posts, want 3", len(items))
		}
		for i, it := range items {
			row := rows[len(rows)-1-i]
			wantFields(t, "post", it, postFields...)
			if got, want := num(t, it["id"]), row.ID; got != want {
				t.Errorf("item %d: id %d, want %d (newest first)", i, got, want)
			}
			if got, want := str(t, it["uid"]), "cp_"+strconv.FormatInt(row.ID, 10); got != want {
				t.Errorf("uid %q, want %q", got, want)
			}
			if !timestampRe.Match(it["created_at"]) {
				t.Errorf("created_at %s, want YYYY-MM-DDTHH:MM:SS.sssZ", it["created_at"])
			}
			if got, want := str(t, it["created_at"]), row.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"); got != want {
				t.Errorf("created_at %q, want %q", got, want)
			}
			if got := str(t, it["body"]); got != row.Body {
				t.Errorf("body %q, want %q", got, row.Body)
			}
			if got := str(t, it["original_source_url"]); got != *row.OriginalSourceURL {
				t.Errorf("original_source_url %q, want %q", got, *row.OriginalSourceURL)
			}
		}
		if p := r.env.Pagination; p == nil || p.HasMore || p.NextCursor != nil {
			t.Errorf("pagination = %+v, want has_more false and next_cursor null", p)
		}
		if r.env.Meta.Tier == nil || *r.env.Meta.Tier != "free" {
			t.Errorf("meta.tier = %v, want free", r.env.Meta.Tier)
		}
		if r.env.Meta.Units != nil {
			t.Errorf("meta.units = %q, want absent", *r.env.Meta.Units)
		}
	})

	t.Run("include_body=false omits body", func(t *testing.T) {
		t.Parallel()
		for _, v := range []string{"false", "0", "FALSE"} {
			r := a.get(t, "/v1/posts?source=fx-posts&include_body="+v, a.free)
			r.wantStatus(t, http.StatusOK)
			for _, it := range r.items(t) {
				wantFields(t, "post without body", it, "uid", "id", "source", "username", "url", "original_source_url", "created_at", "coins")
			}
		}
	})

	t.Run("include_raw=true adds raw as an object", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/posts?source=fx-posts&include_raw=true", a.free)
		r.wantStatus(t, http.StatusOK)
		for i, it := range r.items(t) {
			wantFields(t, "post with raw", it, append(slices.Clone(postFields), "raw")...)
			var raw map[string]any
			if err := json.Unmarshal(it["raw"], &raw); err != nil {
				t.Fatalf("raw is not an object: %s", it["raw"])
			}
			if got, want := raw["n"], float64(rows[len(rows)-1-i].ID); got != want {
				t.Errorf("raw.n = %v, want %v", got, want)
			}
		}
	})

	t.Run("source is an exact match; unknown source gives an empty page", func(t *testing.T) {
		t.Parallel()
		for _, src := range []string{"fx-post", "FX-POSTS", "no-such-source"} {
			r := a.get(t, "/v1/posts?source="+src, a.free)
			r.wantStatus(t, http.StatusOK)
			if n := len(r.items(t)); n != 0 {
				t.Errorf("source=%s: %d posts, want 0", src, n)
			}
		}
	})

	t.Run("since is inclusive", func(t *testing.T) {
		t.Parallel()
		// The second fixture post is created at fxTime+1m (…:31:15.123Z).
		for _, tc := range []struct {
			since string
			want  int
		}{
			{"2031-01-06T09:31:15.123Z", 2},
			{"2031-01-06T09:31:15.124Z", 1},
			{"2031-01-06T10:31:15.123%2B01:00", 2},
			{"2031-01-06", 3},
			{"2031-01-07", 0},
		} {
			r := a.get(t, "/v1/posts?source=fx-posts&since="+tc.since, a.free)
			r.wantStatus(t, http.StatusOK)
			if got := len(r.items(t)); got != tc.want {
				t.Errorf("since=%s: %d posts, want %d", tc.since, got, tc.want)
			}
		}
	})
}

func TestPost(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	row := a.addPosts(fxPostID, 1, "fx-post")[0]
	path := "/v1/posts/" + strconv.FormatInt(row.ID, 10)

	t.Run("one post, all fields", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, path, a.pro)
		r.wantStatus(t, http.StatusOK)
		obj := r.object(t)
		wantFields(t, "post", obj, postFields...)
		if got := num(t, obj["id"]); got != row.ID {
			t.Errorf("id %d, want %d", got, row.ID)
		}
		if r.env.Pagination != nil {
			t.Errorf("pagination = %+v, want null", r.env.Pagination)
		}
		if string(r.env.members["pagination"]) != "null" {
			t.Errorf("pagination = %s, want null", r.env.members["pagination"])
		}
	})

	t.Run("include_raw", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, path+"?include_raw=1", a.pro)
		r.wantStatus(t, http.StatusOK)
		wantFields(t, "post with raw", r.object(t), append(slices.Clone(postFields), "raw")...)
	})

	t.Run("a missing post is 404", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/posts/"+strconv.FormatInt(row.ID+1, 10), a.pro)
		r.wantStatus(t, http.StatusNotFound)
		if r.env.Error.Code != "not_found" {
			t.Errorf("code %q, want not_found", r.env.Error.Code)
		}
	})
}

var briefFields = []string{"uid", "id", "week_start", "week_end", "post_count", "created_at"}

func TestBriefs(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	rows := a.addBriefs(fxBriefID, 2)

	t.Run("list form, newest first", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/briefs?limit=2", a.free)
		r.wantStatus(t, http.StatusOK)
		items := r.items(t)
		if len(items) != 2 {
			t.Fatalf("got %d briefs, want 2", len(items))
		}
		for i, it := range items {
			row := rows[len(rows)-1-i]
			wantFields(t, "brief", it, briefFields...)
			if got := num(t, it["id"]); got != row.ID {
				t.Errorf("id %d, want %d", got, row.ID)
			}
			if got, want := str(t, it["uid"]), "wb_"+strconv.FormatInt(row.ID, 10); got != want {
				t.Errorf("uid %q, want %q", got, want)
			}
			for _, f := range []string{"week_start", "week_end"} {
				if !dateRe.Match(it[f]) {
					t.Errorf("%s = %s, want YYYY-MM-DD", f, it[f])
				}
			}
			if got, want := str(t, it["week_start"]), row.WeekStart.Format("2006-01-02"); got != want {
				t.Errorf("week_start %q, want %q", got, want)
			}
			if got := num(t, it["post_count"]); got != int64(row.PostCount) {
				t.Errorf("post_count %d, want %d", got, row.PostCount)
			}
			if !timestampRe.Match(it["created_at"]) {
				t.Errorf("created_at %s", it["created_at"])
			}
		}
		if p := r.env.Pagination; p == nil {
			t.Errorf("pagination null, want an object")
		}
	})

	t.Run("one brief in full form with Markdown content", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/briefs/"+strconv.FormatInt(rows[0].ID, 10), a.free)
		r.wantStatus(t, http.StatusOK)
		obj := r.object(t)
		wantFields(t, "brief", obj, append(slices.Clone(briefFields), "content")...)
		if got := str(t, obj["content"]); got != rows[0].Content {
			t.Errorf("content %q, want %q", got, rows[0].Content)
		}
	})

	t.Run("a missing brief is 404", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/briefs/"+strconv.FormatInt(fxBriefID+1000, 10), a.free)
		r.wantStatus(t, http.StatusNotFound)
		if r.env.Error.Code != "not_found" {
			t.Errorf("code %q, want not_found", r.env.Error.Code)
		}
	})
}

var firehoseFields = []string{"uid", "id", "pane", "source", "source_name", "name", "username", "title", "body",
	"important", "url", "original_source_url", "created_at", "coins"}

func TestFirehose(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	rows := a.addFirehose(fxFirehoseID, 12, "fxWire_50%", []db.Pane{db.PaneNews, db.PaneIansintel, db.PaneTwitter}, []bool{true, false, false})

	t.Run("fields, nulls kept, newest first", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/firehose?source=fxwire_50%25", a.free)
		r.wantStatus(t, http.StatusOK)
		items := r.items(t)
		if len(items) != len(rows) {
			t.Fatalf("got %d messages, want %d", len(items), len(rows))
		}
		for i, it := range items {
			row := rows[len(rows)-1-i]
			wantFields(t, "message", it, firehoseFields...)
			if got := num(t, it["id"]); got != row.ID {
				t.Errorf("id %d, want %d", got, row.ID)
			}
			if got, want := str(t, it["uid"]), "tm_"+strconv.FormatInt(row.ID, 10); got != want {
				t.Errorf("uid %q, want %q", got, want)
			}
			if got := str(t, it["pane"]); got != string(row.Pane) {
				t.Errorf("pane %q, want %q", got, row.Pane)
			}
			if got, want := string(it["important"]), strconv.FormatBool(row.Important); got != want {
				t.Errorf("important %s, want %s", got, want)
			}
			if string(it["name"]) != "null" {
				t.Errorf("name = %s, want null", it["name"])
			}
			if row.Body == nil && string(it["body"]) != "null" {
				t.Errorf("body = %s, want null", it["body"])
			}
			if !timestampRe.Match(it["created_at"]) {
				t.Errorf("created_at %s", it["created_at"])
			}
		}
	})

	t.Run("include_summary adds summary_ai", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/firehose?source=fxwire&include_summary=true&limit=1", a.free)
		r.wantStatus(t, http.StatusOK)
		it := r.items(t)[0]
		wantFields(t, "message with summary", it, append(slices.Clone(firehoseFields), "summary_ai")...)
		if got, want := str(t, it["summary_ai"]), *rows[len(rows)-1].SummaryAI; got != want {
			t.Errorf("summary_ai %q, want %q", got, want)
		}
	})

	t.Run("filters", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			query string
			want  func(m db.FirehoseMessage) bool
		}{
			{"pane=iansintel", func(m db.FirehoseMessage) bool { return m.Pane == db.PaneIansintel }},
			{"important=true", func(m db.FirehoseMessage) bool { return m.Important }},
			{"important=false", func(db.FirehoseMessage) bool { return true }},
			{"pane=news&important=1", func(m db.FirehoseMessage) bool { return m.Pane == db.PaneNews && m.Important }},
			{"since=2031-01-06T09:35:00Z", func(m db.FirehoseMessage) bool { return m.CreatedAt.Minute() >= 35 }},
		} {
			r := a.get(t, "/v1/firehose?source=FXWIRE_50%25&"+tc.query, a.free)
			r.wantStatus(t, http.StatusOK)
			var want []int64
			for i := len(rows) - 1; i >= 0; i-- {
				if tc.want(rows[i]) {
					want = append(want, rows[i].ID)
				}
			}
			var got []int64
			for _, it := range r.items(t) {
				got = append(got, num(t, it["id"]))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: ids %v, want %v", tc.query, got, want)
			}
		}
	})

	t.Run("source wildcards are literal", func(t *testing.T) {
		t.Parallel()
		// Each would match the fixture sources ("fxWire_50%-0", …) if % and _
		// were wildcards.
		for _, src := range []string{"fx%25wire", "fxWire_5_%25", "Wire__0"} {
			r := a.get(t, "/v1/firehose?source="+src, a.free)
			r.wantStatus(t, http.StatusOK)
			if n := len(r.items(t)); n != 0 {
				t.Errorf("source=%s: %d messages, want 0", src, n)
			}
		}
	})
}

func TestSources(t *testing.T) {
	t.Parallel()
	base := newAPI(t)
	for _, tc := range []struct {
		name   string
		etf    bool
		fields []string
	}{
		{"with ETF flows", true, []string{"curated_sources", "firehose_panes", "coins", "etf_assets", "etf_funds"}},
		{"without ETF flows", false, []string{"curated_sources", "firehose_panes", "coins"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := base.variant(t, func(c *Config) { c.ETFEnabled = tc.etf })
			if tc.etf {
				a.addPosts(fxPostID, 2, "zz-fixture-source")
			} else {
				a.addPosts(fxPostID+10, 2, "zz-fixture-source")
			}
			r := a.get(t, "/v1/sources", a.free)
			r.wantStatus(t, http.StatusOK)
			obj := r.object(t)
			wantFields(t, "sources", obj, append(slices.Clone(tc.fields), "firehose_oldest")...)
			// The oldest firehose message kept, as every created_at is written.
			var oldest string
			if err := json.Unmarshal(obj["firehose_oldest"], &oldest); err != nil || !regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`).MatchString(oldest) {
				t.Errorf("firehose_oldest = %s, want a UTC time with milliseconds", obj["firehose_oldest"])
			}
			lists := map[string][]string{}
			for _, f := range tc.fields {
				var l []string
				if err := json.Unmarshal(obj[f], &l); err != nil {
					t.Fatalf("%s is not a list of strings: %s", f, obj[f])
				}
				if !slices.IsSorted(l) {
					t.Errorf("%s = %v, want sorted", f, l)
				}
				lists[f] = l
			}
			if want := []string{"blogs", "crypto", "iansintel", "news", "twitter", "wire"}; !slices.Equal(lists["firehose_panes"], want) {
				t.Errorf("firehose_panes = %v, want %v", lists["firehose_panes"], want)
			}
			if !slices.Contains(lists["curated_sources"], "zz-fixture-source") {
				t.Errorf("curated_sources = %v, want it to hold zz-fixture-source", lists["curated_sources"])
			}
			if tc.etf {
				if want := []string{"BTC", "ETH", "HYPE", "SOL"}; !slices.Equal(lists["etf_assets"], want) {
					t.Errorf("etf_assets = %v, want %v", lists["etf_assets"], want)
				}
			}
			if string(r.env.members["pagination"]) != "null" {
				t.Errorf("pagination = %s, want null", r.env.members["pagination"])
			}
		})
	}

	t.Run("every listed value works as a filter", func(t *testing.T) {
		t.Parallel()
		a := base.with(t)
		a.addPosts(fxPostID+20, 1, "zz fixture/source & co")
		var src struct {
			Curated []string `json:"curated_sources"`
			Panes   []string `json:"firehose_panes"`
			Assets  []string `json:"etf_assets"`
			Funds   []string `json:"etf_funds"`
		}
		if err := json.Unmarshal(a.get(t, "/v1/sources", a.free).env.Data, &src); err != nil {
			t.Fatal(err)
		}
		check := func(path string) {
			r := a.get(t, path, a.free)
			r.wantStatus(t, http.StatusOK)
		}
		for _, s := range src.Curated {
			r := a.get(t, "/v1/posts?limit=1&source="+url.QueryEscape(s), a.free)
			r.wantStatus(t, http.StatusOK)
			if len(r.items(t)) != 1 {
				t.Errorf("source=%q: no post", s)
			}
		}
		for _, p := range src.Panes {
			check("/v1/firehose?limit=1&pane=" + p)
		}
		for _, as := range src.Assets {
			check("/v1/etf-flows?limit=1&asset=" + as)
		}
		if len(src.Funds) < 20 || !slices.IsSorted(src.Funds) {
			t.Errorf("etf_funds = %v, want the seeded funds, sorted", src.Funds)
		}
		for _, f := range src.Funds {
			r := a.get(t, "/v1/etf-flows/funds?limit=1&fund="+f, a.free)
			r.wantStatus(t, http.StatusOK)
			if items := r.items(t); len(items) != 1 || str(t, items[0]["ticker"]) != f {
				t.Errorf("fund=%s: %d items, want its newest figure", f, len(items))
			}
		}
	})
}

func TestEtfFlows(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.addEtfFlows(3, db.AssetHYPE, db.AssetSOL, db.AssetBTC, db.AssetETH)
	const window = "&from=2031-01-06&to=2031-01-31"
	etfFields := []string{"uid", "asset", "flow_date", "net_inflow", "cum_net_inflow", "net_assets", "value_traded", "updated_at", "funds_complete"}

	t.Run("fields, money and order", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/etf-flows?limit=500"+window, a.free)
		r.wantStatus(t, http.StatusOK)
		if r.env.Meta.Units == nil || *r.env.Meta.Units != "usd" {
			t.Errorf("meta.units = %v, want usd", r.env.Meta.Units)
		}
		if string(r.env.members["pagination"]) != "null" {
			t.Errorf("pagination = %s, want null", r.env.members["pagination"])
		}
		items := r.items(t)
		if len(items) != 12 {
			t.Fatalf("got %d records, want 12", len(items))
		}
		var order []string
		for _, it := range items {
			wantFields(t, "flow", it, etfFields...)
			order = append(order, str(t, it["flow_date"])+" "+str(t, it["asset"]))
			if got, want := str(t, it["uid"]), "etf_"+str(t, it["asset"])+"_"+str(t, it["flow_date"]); got != want {
				t.Errorf("uid %q, want %q", got, want)
			}
			for _, f := range []string{"net_inflow", "cum_net_inflow", "net_assets", "value_traded"} {
				if !moneyRe.Match(it[f]) {
					t.Errorf("%s = %s, want a plain decimal number", f, it[f])
				}
			}
			if !timestampRe.Match(it["updated_at"]) {
				t.Errorf("updated_at %s", it["updated_at"])
			}
		}
		want := []string{
			"2031-01-08 BTC", "2031-01-08 ETH", "2031-01-08 SOL", "2031-01-08 HYPE",
			"2031-01-07 BTC", "2031-01-07 ETH", "2031-01-07 SOL", "2031-01-07 HYPE",
			"2031-01-06 BTC", "2031-01-06 ETH", "2031-01-06 SOL", "2031-01-06 HYPE",
		}
		if !slices.Equal(order, want) {
			t.Errorf("order %v, want %v", order, want)
		}
		first := items[0] // BTC 2031-01-08: d=2, i=2: -123456789+2002 cents
		for f, want := range map[string]string{
			"net_inflow":     "-1234547.87",
			"cum_net_inflow": "45035996273704.99",
			"net_assets":     "1500000000.02",
			"value_traded":   "3.00",
		} {
			if got := string(first[f]); got != want {
				t.Errorf("%s = %s, want %s (exact to the cent)", f, got, want)
			}
		}
	})

	t.Run("asset filter and limit", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"asset=sol,Btc", []string{"BTC", "SOL", "BTC", "SOL", "BTC", "SOL"}},
			{"asset=HYPE&limit=2", []string{"HYPE", "HYPE"}},
			{"asset=eth,ETH", []string{"ETH", "ETH", "ETH"}},
			{"limit=1", []string{"BTC"}},
		} {
			r := a.get(t, "/v1/etf-flows?"+tc.query+window, a.free)
			r.wantStatus(t, http.StatusOK)
			var got []string
			for _, it := range r.items(t) {
				got = append(got, str(t, it["asset"]))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: assets %v, want %v", tc.query, got, tc.want)
			}
		}
	})

	t.Run("from and to are inclusive", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/etf-flows?asset=BTC&from=2031-01-07&to=2031-01-07", a.free)
		r.wantStatus(t, http.StatusOK)
		items := r.items(t)
		if len(items) != 1 || str(t, items[0]["flow_date"]) != "2031-01-07" {
			t.Errorf("got %v, want the BTC record of 2031-01-07", items)
		}
	})

	t.Run("latest gives the newest record per asset", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/etf-flows/latest", a.free)
		r.wantStatus(t, http.StatusOK)
		if r.env.Meta.Units == nil || *r.env.Meta.Units != "usd" {
			t.Errorf("meta.units = %v, want usd", r.env.Meta.Units)
		}
		var got []string
		for _, it := range r.items(t) {
			wantFields(t, "flow", it, etfFields...)
			got = append(got, str(t, it["asset"])+" "+str(t, it["flow_date"]))
		}
		if want := []string{"BTC 2031-01-08", "ETH 2031-01-08", "SOL 2031-01-08", "HYPE 2031-01-08"}; !slices.Equal(got, want) {
			t.Errorf("latest = %v, want %v", got, want)
		}
		r = a.get(t, "/v1/etf-flows/latest?asset=hype,eth", a.free)
		r.wantStatus(t, http.StatusOK)
		got = nil
		for _, it := range r.items(t) {
			got = append(got, str(t, it["asset"]))
		}
		if want := []string{"ETH", "HYPE"}; !slices.Equal(got, want) {
			t.Errorf("latest?asset=hype,eth = %v, want %v", got, want)
		}
	})
}

func TestETFDisabled(t *testing.T) {
	t.Parallel()
	a := newAPI(t, func(c *Config) { c.ETFEnabled = false })
	for _, path := range []string{"/v1/etf-flows", "/v1/etf-flows/latest", "/v1/etf-flows/summary", "/v1/etf-flows?asset=BTC",
		"/v1/etf-funds", "/v1/etf-flows/funds", "/v1/etf-flows/funds?fund=IBIT", "/v1/etf-flows?paginate=true"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			r := a.get(t, path, a.free)
			r.wantStatus(t, http.StatusNotFound)
			if r.env.Error.Code != "not_found" {
				t.Errorf("code %q, want not_found", r.env.Error.Code)
			}
		})
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	base := newAPI(t)
	t.Run("ok without a key", func(t *testing.T) {
		t.Parallel()
		a := base
		r := a.get(t, "/v1/health", "")
		r.wantStatus(t, http.StatusOK)
		obj := r.object(t)
		wantFields(t, "health", obj, "status", "version", "api_version", "database", "database_primary", "database_replica", "rate_limits")
		for f, want := range map[string]string{"status": "ok", "version": "test-1", "api_version": "v1", "database": "ok",
			"database_primary": "ok", "database_replica": "none", "rate_limits": "local"} {
			if got := str(t, obj[f]); got != want {
				t.Errorf("%s = %q, want %q", f, got, want)
			}
		}
		if r.env.Meta.Tier != nil {
			t.Errorf("meta.tier = %q, want null", *r.env.Meta.Tier)
		}
		if got := r.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("Cache-Control = %q, want no-store", got)
		}
	})
	t.Run("503 and degraded while the database is unreachable", func(t *testing.T) {
		t.Parallel()
		a := base.variant(t, func(c *Config) {
			c.Graph.Ping = func(context.Context) error { return errors.New("connection refused") }
		})
		r := a.get(t, "/v1/health", "")
		r.wantStatus(t, http.StatusServiceUnavailable)
		obj := r.object(t)
		if got := str(t, obj["status"]); got != "degraded" {
			t.Errorf("status = %q, want degraded", got)
		}
		if got := str(t, obj["database"]); got != "unreachable" {
			t.Errorf("database = %q, want unreachable", got)
		}
	})
	// The readable API must not be taken out of a load balancer for a
	// primary outage while its read replica serves.
	for _, tt := range []struct {
		name                    string
		replica, primary        error
		wantCode                int
		wantStatus, wantDB      string
		wantPrimary, wantReplic string
	}{
		{"with a replica, both answer: 200 ok", nil, nil, http.StatusOK, "ok", "ok", "ok", "ok"},
		{"primary away, replica answers: 200 degraded", nil, errors.New("connection refused"), http.StatusOK, "degraded", "ok", "unreachable", "ok"},
		{"replica away, primary answers: 503 degraded", errors.New("connection refused"), nil, http.StatusServiceUnavailable, "degraded", "unreachable", "ok", "unreachable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := base.variant(t, func(c *Config) {
				c.Graph.Ping = func(context.Context) error { return tt.replica }
				c.Graph.PingPrimary = func(context.Context) error { return tt.primary }
			})
			r := a.get(t, "/v1/health", "")
			r.wantStatus(t, tt.wantCode)
			obj := r.object(t)
			for f, want := range map[string]string{"status": tt.wantStatus, "database": tt.wantDB,
				"database_primary": tt.wantPrimary, "database_replica": tt.wantReplic} {
				if got := str(t, obj[f]); got != want {
					t.Errorf("%s = %q, want %q", f, got, want)
				}
			}
		})
	}
}

// TestBriefsFrom: from keeps the briefs whose week starts on or after the
// day, every one of them across pages, newest first; a date that is not a
// day is a 400 naming from.
func TestBriefsFrom(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.addBriefs(fxBriefID, 3)
	var from string
	if err := a.bdb.QueryRowContext(context.Background(),
		`SELECT to_char(week_start, 'YYYY-MM-DD') FROM briefs ORDER BY week_start DESC OFFSET 1 LIMIT 1`).Scan(&from); err != nil {
		t.Fatal(err)
	}
	var want []int64
	rows, err := a.bdb.QueryContext(context.Background(), `SELECT id FROM briefs WHERE week_start >= ?::date ORDER BY id DESC`, from)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(want) < 2 {
		t.Fatalf("the fixtures hold %d briefs from %s, want at least 2", len(want), from)
	}
	if got := a.walk(t, "/v1/briefs?limit=1&from="+from, 1); !slices.Equal(got, want) {
		t.Errorf("from=%s walked %v, want %v", from, got, want)
	}
	r := a.get(t, "/v1/briefs?from=2026-02-30", a.free)
	r.wantStatus(t, http.StatusBadRequest)
	if msg := r.env.Error.Message; !strings.HasPrefix(msg, "from must be") {
		t.Errorf("message %q, want one naming from", msg)
	}
}
