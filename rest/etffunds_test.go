package rest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// units parses a plain decimal as served (money, coins) into an integer of
// 10^-scale units, exactly.
func units(t testing.TB, raw json.RawMessage, scale int) int64 {
	t.Helper()
	s := string(raw)
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if len(frac) > scale {
		t.Fatalf("%s has more than %d decimals", s, scale)
	}
	frac += strings.Repeat("0", scale-len(frac))
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		t.Fatalf("%s is not a plain decimal: %v", s, err)
	}
	if neg {
		n = -n
	}
	return n
}

// walk reads every page of a paginated list from path (which carries its
// query string), checking the pagination of each page, and returns the
// items in order.
func (a *api) walkPages(t testing.TB, path string, limit int) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	next := path
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			t.Fatalf("%s: no end after %d pages", path, pages)
		}
		r := a.get(t, next, a.free)
		r.wantStatus(t, http.StatusOK)
		if r.env.Pagination == nil {
			t.Fatalf("%s: pagination is null", next)
		}
		items := r.items(t)
		if len(items) > limit {
			t.Fatalf("%s: %d items, more than the limit %d", next, len(items), limit)
		}
		out = append(out, items...)
		p := r.env.Pagination
		if !p.HasMore {
			if p.NextCursor != nil {
				t.Errorf("%s: last page has next_cursor %q", next, *p.NextCursor)
			}
			return out
		}
		if p.NextCursor == nil || len(items) != limit {
			t.Fatalf("%s: has_more with next_cursor %v after %d items", next, p.NextCursor, len(items))
		}
		sep := "&"
		if !strings.Contains(path, "?") {
			sep = "?"
		}
		next = path + sep + "cursor=" + url.QueryEscape(*p.NextCursor)
	}
}

// sqlStrings runs a query returning one text column.
func (a *api) sqlStrings(t testing.TB, query string, args ...any) []string {
	t.Helper()
	var out []string
	if err := a.bdb.NewRaw(query, args...).Scan(context.Background(), &out); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

func uidsOf(t testing.TB, items []map[string]json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = str(t, it["uid"])
	}
	return out
}

// TestEtfFundsSumToAssetTotals reads the seeded flows and every fund's
// figures through the API and checks that a day's published fund figures
// sum exactly to the asset's net inflow where funds_complete says so, and
// only there: on the days a figure is still out (a missing fund), the fund
// has no record at all, not a zero. Figures published late are kept.
func TestEtfFundsSumToAssetTotals(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	flows := a.walkPages(t, "/v1/etf-flows?paginate=true&limit=500", 500)
	figures := a.walkPages(t, "/v1/etf-flows/funds?limit=500", 500)
	var funds []struct {
		Ticker, Asset string
		Launch        string `json:"launch_date"`
	}
	if err := json.Unmarshal(a.get(t, "/v1/etf-funds", a.free).env.Data, &funds); err != nil {
		t.Fatal(err)
	}
	if len(flows) < 1000 || len(figures) < 10_000 || len(funds) < 20 {
		t.Fatalf("%d flows, %d fund figures, %d funds: want the seeded data", len(flows), len(figures), len(funds))
	}

	type day struct{ asset, date string }
	type published struct {
		net     int64
		tickers []string
		updated []string
	}
	byDay := map[day]*published{}
	for _, f := range figures {
		d := day{str(t, f["asset"]), str(t, f["flow_date"])}
		p := byDay[d]
		if p == nil {
			p = &published{}
			byDay[d] = p
		}
		p.net += units(t, f["net_inflow"], 2)
		p.tickers = append(p.tickers, str(t, f["ticker"]))
		p.updated = append(p.updated, str(t, f["updated_at"]))
	}
	var complete, incomplete, late int
	for _, fl := range flows {
		d := day{str(t, fl["asset"]), str(t, fl["flow_date"])}
		var launched []string
		for _, f := range funds {
			if f.Asset == d.asset && f.Launch <= d.date {
				launched = append(launched, f.Ticker)
			}
		}
		p := byDay[d]
		if p == nil {
			p = &published{}
		}
		delete(byDay, d)
		sums := len(p.tickers) > 0 && p.net == units(t, fl["net_inflow"], 2)
		var flag bool
		if err := json.Unmarshal(fl["funds_complete"], &flag); err != nil {
			t.Fatalf("%s %s: funds_complete %s", d.asset, d.date, fl["funds_complete"])
		}
		if flag != sums {
			t.Errorf("%s %s: funds_complete %v, but the funds sum to %d cents against %s", d.asset, d.date, flag, p.net, fl["net_inflow"])
		}
		switch {
		case flag:
			complete++
			if len(p.tickers) != len(launched) {
				t.Errorf("%s %s: complete with %d of %d funds", d.asset, d.date, len(p.tickers), len(launched))
			}
			for _, u := range p.updated {
				if u > str(t, fl["updated_at"]) {
					late++
				}
			}
		default:
			incomplete++
			missing := slices.DeleteFunc(slices.Clone(launched), func(s string) bool { return slices.Contains(p.tickers, s) })
			if len(missing) == 0 {
				t.Errorf("%s %s: incomplete, yet every fund has a figure", d.asset, d.date)
			}
			for _, m := range missing {
				r := a.get(t, "/v1/etf-flows/funds?fund="+m+"&from="+d.date+"&to="+d.date, a.free)
				r.wantStatus(t, http.StatusOK)
				if n := len(r.items(t)); n != 0 {
					t.Errorf("%s %s: the missing fund %s has %d records", d.asset, d.date, m, n)
				}
			}
			t.Logf("%s %s: incomplete, %v not published yet", d.asset, d.date, missing)
		}
	}
	for d := range byDay {
		t.Errorf("fund figures of %s %s, a day without the asset's record", d.asset, d.date)
	}
	if complete < 1000 || incomplete < 2 || late < 1 {
		t.Errorf("%d complete days (%d figures published late), %d incomplete: want the seed's late and missing figures", complete, late, incomplete)
	}
}

// TestEtfCursorWalks walks /v1/etf-flows/funds and /v1/etf-flows page by
// page with their cursors and compares what they show with plain SQL over
// the same filters: the same rows in the same order, none skipped or
// repeated, at small and large pages.
func TestEtfCursorWalks(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	const fundSQL = `SELECT 'etffund_' || ff.ticker || '_' || ff.flow_date FROM etf_fund_flows ff
		JOIN etf_funds f ON f.ticker = ff.ticker WHERE %s
		ORDER BY ff.flow_date DESC, array_position(ARRAY['BTC','ETH','SOL','HYPE'], f.asset::text), ff.ticker COLLATE "C"`
	const flowSQL = `SELECT 'etf_' || asset || '_' || flow_date FROM etf_flows WHERE %s
		ORDER BY flow_date DESC, array_position(ARRAY['BTC','ETH','SOL','HYPE'], asset::text)`
	tests := []struct {
		path  string
		limit int
		sql   string
	}{
		{"/v1/etf-flows/funds?limit=500", 500, fmt.Sprintf(fundSQL, "true")},
		{"/v1/etf-flows/funds?asset=hype,SOL&from=2026-09-01&limit=7", 7, fmt.Sprintf(fundSQL, "f.asset IN ('SOL', 'HYPE') AND ff.flow_date >= '2026-09-01'")},
		{"/v1/etf-flows/funds?fund=ibit,%20GBTC,bsol,BTC&limit=97", 97, fmt.Sprintf(fundSQL, "ff.ticker IN ('IBIT', 'GBTC', 'BSOL', 'BTC')")},
		{"/v1/etf-flows/funds?fund=ETHA,BSOL&asset=sol&to=2026-06-30&limit=1", 1, fmt.Sprintf(fundSQL, "ff.ticker = 'BSOL' AND ff.flow_date <= '2026-06-30'")},
		{"/v1/etf-flows?paginate=true&limit=500", 500, fmt.Sprintf(flowSQL, "true")},
		{"/v1/etf-flows?paginate=1&asset=eth,btc&from=2025-12-01&to=2026-02-27&limit=3", 3, fmt.Sprintf(flowSQL, "asset IN ('BTC', 'ETH') AND flow_date BETWEEN '2025-12-01' AND '2026-02-27'")},
		{"/v1/etf-flows?paginate=TRUE&asset=hype&limit=11", 11, fmt.Sprintf(flowSQL, "asset = 'HYPE'")},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			got := uidsOf(t, a.walkPages(t, tt.path, tt.limit))
			want := a.sqlStrings(t, tt.sql)
			if len(want) == 0 {
				t.Fatal("the SQL selects nothing")
			}
			if !slices.Equal(got, want) {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Errorf("walk gave %d rows, SQL %d; first difference at %d: got %v, want %v",
					len(got), len(want), i, got[i:min(i+3, len(got))], want[i:min(i+3, len(want))])
			}
		})
	}

	t.Run("without paginate the answer is as before: the first rows, pagination null", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/etf-flows?limit=9&asset=sol,eth", a.free)
		r.wantStatus(t, http.StatusOK)
		if string(r.env.members["pagination"]) != "null" {
			t.Errorf("pagination = %s, want null", r.env.members["pagination"])
		}
		want := a.sqlStrings(t, fmt.Sprintf(flowSQL, "asset IN ('ETH', 'SOL')")+" LIMIT 9")
		if got := uidsOf(t, r.items(t)); !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	t.Run("a cursor keeps its place while figures arrive", func(t *testing.T) {
		t.Parallel()
		b := newAPI(t) // it writes: a database of its own
		r := b.get(t, "/v1/etf-flows/funds?fund=IBIT&limit=2", b.free)
		r.wantStatus(t, http.StatusOK)
		first := uidsOf(t, r.items(t))
		if _, err := b.bdb.ExecContext(context.Background(), `INSERT INTO etf_fund_flows (ticker, flow_date, net_inflow, updated_at)
			VALUES ('IBIT', '2031-01-06', 1, now())`); err != nil {
			t.Fatal(err)
		}
		next := b.get(t, "/v1/etf-flows/funds?fund=IBIT&limit=2&cursor="+url.QueryEscape(*r.env.Pagination.NextCursor), b.free)
		next.wantStatus(t, http.StatusOK)
		want := b.sqlStrings(t, fmt.Sprintf(fundSQL, "ff.ticker = 'IBIT' AND ff.flow_date < '2031-01-01'")+" OFFSET 2 LIMIT 2")
		if got := uidsOf(t, next.items(t)); !slices.Equal(got, want) {
			t.Errorf("after %v: got %v, want %v", first, got, want)
		}
	})

	bad := []struct{ path, param string }{
		{"/v1/etf-flows/funds?fund=NOPE", "fund"},
		{"/v1/etf-flows/funds?fund=IBIT,", "fund"},
		{"/v1/etf-flows/funds?fund=IB.IT", "fund"},
		{"/v1/etf-flows/funds?limit=501", "limit"},
		{"/v1/etf-flows/funds?from=2026-02-01&to=2026-01-01", "from"},
		{"/v1/etf-flows/funds?cursor=AQAAAAAALSl2SwM4EhK23dg", "cursor"},
		{"/v1/etf-flows?paginate=maybe", "paginate"},
		{"/v1/etf-flows?paginate=false&cursor=AQAAAAAALSl2SwM4EhK23dg", "paginate"},
		{"/v1/etf-flows?paginate=true&cursor=x", "cursor"},
		{"/v1/etf-funds?asset=DOGE", "asset"},
	}
	for _, tt := range bad {
		t.Run("400 "+tt.path, func(t *testing.T) {
			t.Parallel()
			r := a.get(t, tt.path, a.free)
			r.wantStatus(t, http.StatusBadRequest)
			if r.env.Error == nil || !strings.HasPrefix(r.env.Error.Message, tt.param+" ") && !strings.Contains(r.env.Error.Message, tt.param) {
				t.Errorf("message %v, want it to name %s", r.env.Error, tt.param)
			}
		})
	}
	t.Run("a cursor of the other list is refused", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/v1/etf-flows?paginate=true&limit=1", a.free)
		r.wantStatus(t, http.StatusOK)
		other := a.get(t, "/v1/etf-flows/funds?cursor="+url.QueryEscape(*r.env.Pagination.NextCursor), a.free)
		other.wantStatus(t, http.StatusBadRequest)
	})
}

// TestEtfSummaryTopFunds computes each summary entry's top funds and
// holdings in Go from the raw rows and compares them with the summary.
func TestEtfSummaryTopFunds(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ctx := context.Background()
	var flows []struct {
		Asset    string
		FlowDate time.Time
	}
	if err := a.bdb.NewRaw("SELECT asset::text, flow_date FROM etf_flows").Scan(ctx, &flows); err != nil {
		t.Fatal(err)
	}
	var figures []struct {
		Ticker, Asset       string
		FlowDate            time.Time
		Net                 string
		NetAssets, Holdings *string
	}
	if err := a.bdb.NewRaw(`SELECT ff.ticker, f.asset::text, ff.flow_date, ff.net_inflow::text AS net,
		ff.net_assets::text, ff.holdings::text FROM etf_fund_flows ff JOIN etf_funds f USING (ticker)`).Scan(ctx, &figures); err != nil {
		t.Fatal(err)
	}
	type top struct {
		ticker               string
		net, days            int64
		netAssets, holdings  *int64
		netAssetsDay, hldDay time.Time
	}
	// entry computes the top funds and holdings of the assets over their
	// latest 30 trading days (the days any of them has a figure).
	entry := func(assets []string) ([]top, *int64) {
		var days []time.Time
		for _, f := range flows {
			if slices.Contains(assets, f.Asset) && !slices.ContainsFunc(days, f.FlowDate.Equal) {
				days = append(days, f.FlowDate)
			}
		}
		slices.SortFunc(days, func(x, y time.Time) int { return y.Compare(x) })
		latest, from := days[0], days[min(29, len(days)-1)]
		byFund := map[string]*top{}
		for _, f := range figures {
			if !slices.Contains(assets, f.Asset) || f.FlowDate.After(latest) {
				continue
			}
			tp := byFund[f.Ticker]
			if tp == nil {
				tp = &top{ticker: f.Ticker}
				byFund[f.Ticker] = tp
			}
			if !f.FlowDate.Before(from) {
				tp.net += units(t, json.RawMessage(f.Net), 2)
				tp.days++
			}
			if f.NetAssets != nil && !f.FlowDate.Before(tp.netAssetsDay) {
				v := units(t, json.RawMessage(*f.NetAssets), 2)
				tp.netAssets, tp.netAssetsDay = &v, f.FlowDate
			}
			if f.Holdings != nil && !f.FlowDate.Before(tp.hldDay) {
				v := units(t, json.RawMessage(*f.Holdings), 8)
				tp.holdings, tp.hldDay = &v, f.FlowDate
			}
		}
		var out []top
		var holdings *int64
		for _, tp := range byFund {
			if tp.holdings != nil {
				holdings = new(int64)
			}
			if tp.days > 0 {
				out = append(out, *tp)
			}
		}
		for _, tp := range byFund {
			if holdings != nil && tp.holdings != nil {
				*holdings += *tp.holdings
			}
		}
		slices.SortFunc(out, func(x, y top) int {
			return cmp.Or(cmp.Compare(y.net, x.net), strings.Compare(x.ticker, y.ticker))
		})
		return out[:min(5, len(out))], holdings
	}

	type served struct {
		Asset    *string
		Holdings json.RawMessage
		TopFunds []struct {
			Fund struct {
				Ticker, Asset string
			}
			NetInflow json.RawMessage `json:"net_inflow"`
			Days      int64
			NetAssets json.RawMessage `json:"net_assets"`
			Holdings  json.RawMessage
		} `json:"top_funds"`
	}
	check := func(t *testing.T, what string, got served, assets []string) {
		want, holdings := entry(assets)
		if len(got.TopFunds) != len(want) {
			t.Fatalf("%s: %d top funds, want %d", what, len(got.TopFunds), len(want))
		}
		for i, w := range want {
			g := got.TopFunds[i]
			if g.Fund.Ticker != w.ticker || units(t, g.NetInflow, 2) != w.net || g.Days != w.days {
				t.Errorf("%s top fund %d: %s %s over %d days, want %s %d cents over %d days",
					what, i, g.Fund.Ticker, g.NetInflow, g.Days, w.ticker, w.net, w.days)
			}
			if (w.holdings == nil) != (string(g.Holdings) == "null") || w.holdings != nil && units(t, g.Holdings, 8) != *w.holdings {
				t.Errorf("%s top fund %s: holdings %s, want %v", what, w.ticker, g.Holdings, w.holdings)
			}
			if w.netAssets == nil || units(t, g.NetAssets, 2) != *w.netAssets {
				t.Errorf("%s top fund %s: net assets %s, want %v", what, w.ticker, g.NetAssets, w.netAssets)
			}
		}
		if got.Asset == nil {
			if string(got.Holdings) != "" {
				t.Errorf("total: holdings %s, want none", got.Holdings)
			}
			return
		}
		if holdings == nil || units(t, got.Holdings, 8) != *holdings {
			t.Errorf("%s: holdings %s, want %v", what, got.Holdings, holdings)
		}
	}
	for _, q := range []struct {
		query  string
		assets []string
	}{
		{"", []string{"BTC", "ETH", "SOL", "HYPE"}},
		{"?asset=sol,hype", []string{"SOL", "HYPE"}},
		{"?asset=btc", []string{"BTC"}},
	} {
		t.Run("summary"+q.query, func(t *testing.T) {
			t.Parallel()
			r := a.get(t, "/v1/etf-flows/summary"+q.query, a.free)
			r.wantStatus(t, http.StatusOK)
			var got struct {
				Total  served
				Assets []served
			}
			if err := json.Unmarshal(r.env.Data, &got); err != nil {
				t.Fatal(err)
			}
			check(t, "total", got.Total, q.assets)
			if len(got.Assets) != len(q.assets) {
				t.Fatalf("%d assets, want %d", len(got.Assets), len(q.assets))
			}
			for i, as := range q.assets {
				check(t, as, got.Assets[i], []string{as})
			}
		})
	}
}

// TestEtfFundsList compares /v1/etf-funds with the table, in asset order.
func TestEtfFundsList(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	for _, tc := range []struct{ query, where string }{
		{"", "true"},
		{"?asset=SOL,btc", "asset IN ('BTC', 'SOL')"},
	} {
		r := a.get(t, "/v1/etf-funds"+tc.query, a.free)
		r.wantStatus(t, http.StatusOK)
		if r.env.Meta.Units == nil || *r.env.Meta.Units != "usd" || string(r.env.members["pagination"]) != "null" {
			t.Errorf("meta.units %v, pagination %s; want usd and null", r.env.Meta.Units, r.env.members["pagination"])
		}
		want := a.sqlStrings(t, `SELECT concat_ws('|', ticker, asset, issuer, name, fee, launch_date, exchange) FROM etf_funds
			WHERE `+tc.where+` ORDER BY array_position(ARRAY['BTC','ETH','SOL','HYPE'], asset::text), ticker COLLATE "C"`)
		var got []string
		for _, it := range r.items(t) {
			wantFields(t, "fund", it, "ticker", "asset", "issuer", "name", "fee", "launch_date", "exchange")
			got = append(got, strings.Join([]string{str(t, it["ticker"]), str(t, it["asset"]), str(t, it["issuer"]), str(t, it["name"]),
				string(it["fee"]), str(t, it["launch_date"]), str(t, it["exchange"])}, "|"))
		}
		if !slices.Equal(got, want) {
			t.Errorf("etf-funds%s:\n got %v\nwant %v", tc.query, got, want)
		}
	}
}
