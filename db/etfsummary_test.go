package db_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

// flowRow is one stored ETF flow as the reference reads it.
type flowRow struct {
	asset          db.Asset
	day            time.Time
	net, cum, held db.Money
}

// allFlows reads every stored flow, money as the exact text PostgreSQL
// writes, parsed into cents.
func allFlows(t *testing.T, s *db.Store) []flowRow {
	t.Helper()
	rows, err := s.DB().QueryContext(context.Background(),
		`SELECT asset::text, flow_date::text, net_inflow::text, cum_net_inflow::text, net_assets::text FROM etf_flows`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []flowRow
	for rows.Next() {
		var asset, day, net, cum, held string
		if err := rows.Scan(&asset, &day, &net, &cum, &held); err != nil {
			t.Fatal(err)
		}
		r := flowRow{asset: db.Asset(asset)}
		if r.day, err = time.Parse(time.DateOnly, day); err != nil {
			t.Fatal(err)
		}
		for _, m := range []struct {
			dst *db.Money
			src string
		}{{&r.net, net}, {&r.cum, cum}, {&r.held, held}} {
			if *m.dst, err = db.ParseMoney(m.src); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// dayNet is one trading day of a series.
type dayNet struct {
	day time.Time
	net db.Money
}

// refEntry summarises a series (newest day first) walking it in Go.
func refEntry(series []dayNet, asOf time.Time) db.EtfSummaryEntry {
	period := func(in func(i int, d dayNet) bool) db.EtfPeriod {
		var p db.EtfPeriod
		var sum db.Money
		for i, d := range series {
			if in(i, d) {
				sum += d.net
				p.Days++
				from := d.day
				p.From = &from
			}
		}
		if p.Days > 0 {
			p.NetInflow = &sum
		}
		return p
	}
	monthStart := time.Date(asOf.Year(), asOf.Month(), 1, 0, 0, 0, 0, time.UTC)
	yearStart := time.Date(asOf.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
	sign := func(m db.Money) int {
		switch {
		case m > 0:
			return 1
		case m < 0:
			return -1
		}
		return 0
	}
	e := db.EtfSummaryEntry{
		LatestFlowDate: series[0].day,
		NetInflow:      series[0].net,
		Last7Days:      period(func(i int, _ dayNet) bool { return i < 7 }),
		Last30Days:     period(func(i int, _ dayNet) bool { return i < 30 }),
		MonthToDate:    period(func(_ int, d dayNet) bool { return !d.day.Before(monthStart) }),
		YearToDate:     period(func(_ int, d dayNet) bool { return !d.day.Before(yearStart) }),
	}
	e.Streak.Direction = map[int]db.StreakDirection{1: db.StreakInflow, -1: db.StreakOutflow, 0: db.StreakNone}[sign(series[0].net)]
	for _, d := range series {
		if sign(d.net) != sign(series[0].net) {
			break
		}
		e.Streak.Days++
		e.Streak.Since = d.day
	}
	return e
}

// refSummary computes the summary of the selected assets from the rows.
func refSummary(rows []flowRow, assets []db.Asset) *db.EtfSummary {
	if len(assets) == 0 {
		assets = db.Assets
	}
	byAsset := map[db.Asset][]flowRow{}
	totals := map[time.Time]db.Money{}
	var asOf time.Time
	for _, r := range rows {
		if !slices.Contains(assets, r.asset) {
			continue
		}
		byAsset[r.asset] = append(byAsset[r.asset], r)
		totals[r.day] += r.net
		if r.day.After(asOf) {
			asOf = r.day
		}
	}
	if len(totals) == 0 {
		return nil
	}
	out := &db.EtfSummary{AsOf: asOf, Assets: []db.EtfSummaryEntry{}}
	var total []dayNet
	for day, net := range totals {
		total = append(total, dayNet{day, net})
	}
	slices.SortFunc(total, func(a, b dayNet) int { return b.day.Compare(a.day) })
	out.Total = refEntry(total, asOf)
	for _, a := range db.Assets { // enum order
		rs := byAsset[a]
		if len(rs) == 0 {
			continue
		}
		slices.SortFunc(rs, func(x, y flowRow) int { return y.day.Compare(x.day) })
		series := make([]dayNet, len(rs))
		for i, r := range rs {
			series[i] = dayNet{r.day, r.net}
		}
		e := refEntry(series, asOf)
		e.Asset = &a
		e.CumNetInflow, e.NetAssets = rs[0].cum, rs[0].held
		out.Total.CumNetInflow += rs[0].cum
		out.Total.NetAssets += rs[0].held
		out.Assets = append(out.Assets, e)
	}
	return out
}

// describe writes a summary as lines of text, so that a difference shows
// as a readable diff (and dates compare by their day, whatever their
// location).
func describe(s *db.EtfSummary) string {
	if s == nil {
		return "<nil>"
	}
	day := func(t *time.Time) string {
		if t == nil {
			return "null"
		}
		return t.Format(time.DateOnly)
	}
	money := func(m *db.Money) string {
		if m == nil {
			return "null"
		}
		return m.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "as_of %s\n", s.AsOf.Format(time.DateOnly))
	entry := func(e db.EtfSummaryEntry) {
		name := "total"
		if e.Asset != nil {
			name = string(*e.Asset)
		}
		fmt.Fprintf(&b, "%s: latest %s net %s cum %s assets %s streak %s %d since %s\n", name,
			e.LatestFlowDate.Format(time.DateOnly), e.NetInflow, e.CumNetInflow, e.NetAssets,
			e.Streak.Direction, e.Streak.Days, e.Streak.Since.Format(time.DateOnly))
		for _, p := range []struct {
			name string
			p    db.EtfPeriod
		}{{"7d", e.Last7Days}, {"30d", e.Last30Days}, {"mtd", e.MonthToDate}, {"ytd", e.YearToDate}} {
			fmt.Fprintf(&b, "%s %s: %s over %d days from %s\n", name, p.name, money(p.p.NetInflow), p.p.Days, day(p.p.From))
		}
	}
	entry(s.Total)
	for _, e := range s.Assets {
		entry(e)
	}
	return b.String()
}

// usDay is a day for the fixtures below.
func usDay(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// extendFlows adds flows that make the summary cross a month and a year
// boundary: BTC, ETH and SOL from the day after the seed's data up to
// Tuesday 2027-01-05 (SOL without a figure on 2026-12-31, ETH with a zero
// flow on 2027-01-05), and HYPE replaced by an asset that starts on
// 2026-12-21, inside the 30-day window.
func extendFlows(t *testing.T, s *db.Store) {
	t.Helper()
	ctx := context.Background()
	bdb := s.DB()
	if _, err := bdb.ExecContext(ctx, `DELETE FROM etf_flows WHERE asset = 'HYPE'`); err != nil {
		t.Fatal(err)
	}
	var cum = map[db.Asset]db.Money{}
	for _, a := range []db.Asset{db.AssetBTC, db.AssetETH, db.AssetSOL} {
		var c string
		if err := bdb.QueryRowContext(ctx, `SELECT cum_net_inflow::text FROM etf_flows WHERE asset = ? ORDER BY flow_date DESC LIMIT 1`, a).Scan(&c); err != nil {
			t.Fatal(err)
		}
		m, err := db.ParseMoney(c)
		if err != nil {
			t.Fatal(err)
		}
		cum[a] = m
	}
	holidays := map[time.Time]bool{usDay(2026, 11, 26): true, usDay(2026, 12, 25): true, usDay(2027, 1, 1): true}
	var rows []db.EtfFlow
	n := 0
	for d := usDay(2026, 11, 16); !d.After(usDay(2027, 1, 5)); d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday || holidays[d] {
			continue
		}
		n++
		for i, a := range db.Assets {
			if a == db.AssetSOL && d.Equal(usDay(2026, 12, 31)) {
				continue // no figure that day: absent, not zero
			}
			if a == db.AssetHYPE && d.Before(usDay(2026, 12, 21)) {
				continue // launched mid-period
			}
			// Cents that do not add up in binary floating point, signs
			// that change now and then, and streaks across the boundary.
			net := db.Money((int64(n)*7919+int64(i)*104729)%2000001-1000000)*100 + db.Money((n*13+i*7)%100)
			if d.After(usDay(2026, 12, 28)) && a == db.AssetBTC {
				net = db.Money(123456789_01 + int64(n)) // an inflow streak over the new year
			}
			if a == db.AssetBTC && d.Equal(usDay(2026, 12, 28)) {
				net = -1 // the streak starts the day after
			}
			if a == db.AssetETH && d.Equal(usDay(2027, 1, 5)) {
				net = 0
			}
			cum[a] += net
			rows = append(rows, db.EtfFlow{Asset: a, FlowDate: d, NetInflow: net, CumNetInflow: cum[a],
				NetAssets: db.Money(50_000_000_000_00 + int64(i)*1_000_000_01), ValueTraded: 1_000_000_00,
				UpdatedAt: d.Add(25 * time.Hour)})
		}
	}
	if _, err := bdb.NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSummarizeEtfFlowsAgainstAWalkOfTheRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	seeded := db.NewStore(dbtest.New(t))
	extended := db.NewStore(dbtest.New(t))
	extendFlows(t, extended)

	selections := [][]db.Asset{
		nil,
		{db.AssetBTC},
		{db.AssetHYPE},
		{db.AssetHYPE, db.AssetETH},
		{db.AssetSOL, db.AssetETH, db.AssetBTC},
	}
	for _, store := range []struct {
		name string
		s    *db.Store
	}{{"seeded", seeded}, {"across a year boundary", extended}} {
		rows := allFlows(t, store.s)
		for _, sel := range selections {
			t.Run(fmt.Sprintf("%s/%v", store.name, sel), func(t *testing.T) {
				got, err := store.s.SummarizeEtfFlows(ctx, db.EtfFilter{Assets: sel})
				if err != nil {
					t.Fatal(err)
				}
				if g, w := describe(got), describe(refSummary(rows, sel)); g != w {
					t.Errorf("summary differs from the walk of the rows\ngot:\n%s\nwant:\n%s", g, w)
				}
			})
		}
	}

	// The fixtures really exercise what they are meant to.
	got, err := extended.SummarizeEtfFlows(ctx, db.EtfFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if want := usDay(2027, 1, 5); !got.AsOf.Equal(want) {
		t.Fatalf("as_of = %s, want %s", got.AsOf, want)
	}
	btc, eth, sol, hype := got.Assets[0], got.Assets[1], got.Assets[2], got.Assets[3]
	checks := []struct {
		what      string
		got, want any
	}{
		{"BTC year to date (2 days in 2027)", btc.YearToDate.Days, 2},
		{"BTC month to date", btc.MonthToDate.Days, 2},
		{"BTC 7 days reach into December", btc.Last7Days.From.Format(time.DateOnly), "2026-12-24"},
		{"BTC streak crosses the year", [2]any{btc.Streak.Direction, btc.Streak.Since.Format(time.DateOnly)}, [2]any{db.StreakInflow, "2026-12-29"}},
		{"ETH streak of a zero day", [2]any{eth.Streak.Direction, eth.Streak.Days}, [2]any{db.StreakNone, 1}},
		{"SOL skips its missing day", sol.Last7Days.From.Format(time.DateOnly), "2026-12-23"},
		{"HYPE started mid-period", [2]any{hype.Last30Days.Days, hype.Last30Days.From.Format(time.DateOnly)}, [2]any{10, "2026-12-21"}},
		{"total has a figure on SOL's missing day", got.Total.Last7Days.From.Format(time.DateOnly), "2026-12-24"},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}

	empty := db.NewStore(dbtest.New(t))
	if _, err := empty.DB().ExecContext(ctx, `DELETE FROM etf_flows WHERE asset = 'SOL'`); err != nil {
		t.Fatal(err)
	}
	if s, err := empty.SummarizeEtfFlows(ctx, db.EtfFilter{Assets: []db.Asset{db.AssetSOL}}); err != nil || s != nil {
		t.Errorf("summary of an asset without flows = %v, %v; want nil, nil", s, err)
	}
}
