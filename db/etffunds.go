package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// ListEtfFunds returns the funds of assets (all when empty), ordered by
// asset in the order BTC, ETH, SOL, HYPE, then ticker.
func (s *Store) ListEtfFunds(ctx context.Context, assets []Asset) ([]EtfFund, error) {
	rows := []EtfFund{}
	q := s.db.NewSelect().Model(&rows).OrderExpr("asset, ticker")
	if len(assets) > 0 {
		q = q.Where("asset IN (?)", bun.List(assets))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list etf funds: %w", err)
	}
	return rows, nil
}

// EtfFundsByTicker returns the funds with these tickers, in the order of
// ListEtfFunds; tickers without a fund are absent.
func (s *Store) EtfFundsByTicker(ctx context.Context, tickers []string) ([]EtfFund, error) {
	rows := []EtfFund{}
	if len(tickers) == 0 {
		return rows, nil
	}
	err := s.db.NewSelect().Model(&rows).Where("ticker IN (?)", bun.List(tickers)).
		OrderExpr("asset, ticker").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("etf funds by ticker: %w", err)
	}
	return rows, nil
}

// ListEtfFlowsPage returns one keyset page of the ETF flows of f, ordered
// as ListEtfFlows; keys are EtfFlowKey positions. more reports whether
// rows follow the page in its direction.
func (s *Store) ListEtfFlowsPage(ctx context.Context, f EtfFilter, p Page) (rows []EtfFlow, more bool, err error) {
	if p.Limit < 1 {
		return nil, false, fmt.Errorf("list etf flows: limit %d: must be positive", p.Limit)
	}
	rows = []EtfFlow{}
	q := s.db.NewSelect().Model(&rows).ColumnExpr("etf_flow.*").ColumnExpr(fundsCompleteSQL("etf_flow"))
	if len(f.Assets) > 0 {
		q = q.Where("asset IN (?)", bun.List(f.assets()))
	}
	q = dateRange(q, "flow_date", f.From, f.To)
	q, err = etfKeyset(q, p, DecodeEtfFlowKey, "flow_date", "asset", "")
	if err != nil {
		return nil, false, err
	}
	if err := q.Scan(ctx); err != nil {
		return nil, false, fmt.Errorf("list etf flows: %w", err)
	}
	rows, more = trimPage(rows, p)
	return rows, more, nil
}

// EtfFundFilter narrows the per-fund figures. Zero fields do not filter.
type EtfFundFilter struct {
	Assets   []Asset   // funds of any of these assets
	Tickers  []string  // any of these funds
	From, To time.Time // flow_date bounds, inclusive
}

// ListEtfFundFlows returns one keyset page of the per-fund figures of f,
// ordered by flow_date descending, then asset in the order BTC, ETH, SOL,
// HYPE, then ticker; keys are EtfFundFlowKey positions. Each row carries
// its fund's asset. more reports whether rows follow the page in its
// direction.
func (s *Store) ListEtfFundFlows(ctx context.Context, f EtfFundFilter, p Page) (rows []EtfFundFlow, more bool, err error) {
	if p.Limit < 1 {
		return nil, false, fmt.Errorf("list etf fund flows: limit %d: must be positive", p.Limit)
	}
	rows = []EtfFundFlow{}
	q := s.db.NewSelect().TableExpr("etf_fund_flows AS ff").ColumnExpr("ff.*")
	if len(f.Assets) > 0 {
		q = q.Where("ff.asset IN (?)", bun.List(EtfFilter{Assets: f.Assets}.assets()))
	}
	if len(f.Tickers) > 0 {
		q = q.Where("ff.ticker IN (?)", bun.List(f.Tickers))
	}
	q = dateRange(q, "ff.flow_date", f.From, f.To)
	q, err = etfKeyset(q, p, DecodeEtfFundFlowKey, "ff.flow_date", "ff.asset", "ff.ticker")
	if err != nil {
		return nil, false, err
	}
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, false, fmt.Errorf("list etf fund flows: %w", err)
	}
	rows, more = trimPage(rows, p)
	return rows, more, nil
}

// ErrBadPosition is returned for a keyset position that no row of the
// list can have (a cursor of another list that passed its check).
var ErrBadPosition = errors.New("keyset position of another list")

// dateRange bounds col by from and to (inclusive) where they are set.
func dateRange(q *bun.SelectQuery, col string, from, to time.Time) *bun.SelectQuery {
	if !from.IsZero() {
		q = q.Where("? >= ?", bun.Safe(col), clampTime(from).Format(time.DateOnly))
	}
	if !to.IsZero() {
		q = q.Where("? <= ?", bun.Safe(col), clampTime(to).Format(time.DateOnly))
	}
	return q
}

// etfKeyset adds the page's bound, order and limit+1 probe to an ETF list
// over the columns day, asset and (per-fund figures) ticker. A forward page
// reads on from After in list order; a backward page reads back from Before
// in the reverse order (trimPage restores list order).
func etfKeyset(q *bun.SelectQuery, p Page, decode func(int64) (EtfPosition, bool), day, asset, ticker string) (*bun.SelectQuery, error) {
	// Forward: earlier days, or the same day and a later asset (ticker).
	bound, dayCmp, restCmp, dayDir, restDir := p.After, "<", ">", "DESC", "ASC"
	if p.Backward {
		bound, dayCmp, restCmp, dayDir, restDir = p.Before, ">", "<", "ASC", "DESC"
	}
	// The bound on the day alone (<= or >=) is what the index on the day
	// can start from; the exact position is checked on the rows it reads.
	dayBound := dayCmp + "="
	if bound > 0 {
		pos, ok := decode(bound)
		if !ok {
			return nil, ErrBadPosition
		}
		d := pos.Day.Format(time.DateOnly)
		q = q.Where("? "+dayBound+" ?", bun.Safe(day), d)
		if ticker == "" {
			q = q.Where("(? "+dayCmp+" ? OR (? = ? AND ? "+restCmp+" ?::etf_asset))",
				bun.Safe(day), d, bun.Safe(day), d, bun.Safe(asset), pos.Asset)
		} else {
			q = q.Where("(? "+dayCmp+" ? OR (? = ? AND (?, ?) "+restCmp+" (?::etf_asset, ?)))",
				bun.Safe(day), d, bun.Safe(day), d, bun.Safe(asset), bun.Safe(ticker), pos.Asset, pos.Ticker)
		}
	}
	q = q.OrderExpr(day + " " + dayDir).OrderExpr(asset + " " + restDir)
	if ticker != "" {
		q = q.OrderExpr(ticker + " " + restDir)
	}
	return q.Limit(int64(p.Limit) + 1), nil
}

// trimPage drops the probe row and puts a backward page into list order.
func trimPage[T any](rows []T, p Page) ([]T, bool) {
	more := len(rows) > p.Limit
	if more {
		rows = rows[:p.Limit]
	}
	if p.Backward {
		slices.Reverse(rows)
	}
	return rows, more
}

// EtfFundPeriod is one fund's figures over a period.
type EtfFundPeriod struct {
	Fund      EtfFund
	NetInflow Money // the fund's net flows of the period, summed
	Days      int   // the days of the period on which it has a figure
	// NetAssets and Holdings are the fund's latest published ones on or
	// before the period's last day, and the day they are of; nil when it
	// published none.
	NetAssets     *Money
	NetAssetsDate *time.Time
	Holdings      *CoinAmount
	HoldingsDate  *time.Time
}

// TopFundsQuery asks for at most Limit funds of Assets, ranked by their
// net flows over the days From..To (inclusive).
type TopFundsQuery struct {
	Assets   []Asset
	From, To time.Time
	Limit    int
}

// topEtfFundsSQL answers several TopFundsQuery at once (i numbers them):
// it sums each query's window of its assets' figures (one range of
// etf_fund_flows_asset_idx per asset), ranks the funds, and reads each
// ranked fund's latest published net assets and holdings backwards along
// an index.
const topEtfFundsSQL = `
WITH q AS (
	SELECT * FROM unnest(?::int[], ?::text[], ?::date[], ?::date[], ?::int[]) AS q(i, assets, lo, hi, n)
), sums AS (
	SELECT q.i, ff.ticker, sum(ff.net_inflow) AS net_inflow, count(*) AS days
	FROM q JOIN etf_fund_flows ff
		ON ff.asset = ANY(string_to_array(q.assets, ',')::etf_asset[]) AND ff.flow_date BETWEEN q.lo AND q.hi
	GROUP BY q.i, ff.ticker
), ranked AS (
	SELECT s.*, row_number() OVER (PARTITION BY s.i ORDER BY s.net_inflow DESC, s.ticker) AS rank FROM sums s
)
SELECT r.i, f.ticker, f.asset, f.issuer, f.name, f.fee, f.launch_date, f.exchange,
	r.net_inflow, r.days, na.net_assets, na.flow_date AS net_assets_date,
	h.holdings, h.flow_date AS holdings_date
FROM ranked r
JOIN q ON q.i = r.i
JOIN etf_funds f ON f.ticker = r.ticker
LEFT JOIN LATERAL (
	SELECT net_assets, flow_date FROM etf_fund_flows
	WHERE ticker = r.ticker AND flow_date <= q.hi AND net_assets IS NOT NULL
	ORDER BY flow_date DESC LIMIT 1
) na ON true
LEFT JOIN LATERAL (
	SELECT holdings, flow_date FROM etf_fund_flows
	WHERE ticker = r.ticker AND flow_date <= q.hi AND holdings IS NOT NULL
	ORDER BY flow_date DESC LIMIT 1
) h ON true
WHERE r.rank <= q.n
ORDER BY r.i, r.rank`

// TopEtfFunds answers each query: the funds of its assets that have a
// figure in its window, ordered by their net flows over it, largest inflow
// first (ties by ticker), each with its latest published net assets and
// holdings on or before the window's last day. One statement answers all.
func (s *Store) TopEtfFunds(ctx context.Context, qs []TopFundsQuery) ([][]EtfFundPeriod, error) {
	n := len(qs)
	idx, assets, lo, hi, limits := make([]int, n), make([]string, n), make([]string, n), make([]string, n), make([]int, n)
	for i, q := range qs {
		if q.Limit < 1 {
			return nil, fmt.Errorf("top etf funds: limit %d: must be positive", q.Limit)
		}
		names := make([]string, 0, len(q.Assets))
		for _, a := range (EtfFilter{Assets: q.Assets}).assets() {
			names = append(names, string(a))
		}
		idx[i], assets[i], limits[i] = i, strings.Join(names, ","), q.Limit
		lo[i], hi[i] = q.From.Format(time.DateOnly), q.To.Format(time.DateOnly)
	}
	var rows []struct {
		I int `bun:"i"`
		EtfFund
		NetInflow     Money       `bun:"net_inflow"`
		Days          int         `bun:"days"`
		NetAssets     *Money      `bun:"net_assets"`
		NetAssetsDate *time.Time  `bun:"net_assets_date"`
		Holdings      *CoinAmount `bun:"holdings"`
		HoldingsDate  *time.Time  `bun:"holdings_date"`
	}
	err := s.db.NewRaw(topEtfFundsSQL, pgdialect.Array(idx), pgdialect.Array(assets), pgdialect.Array(lo),
		pgdialect.Array(hi), pgdialect.Array(limits)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("top etf funds: %w", err)
	}
	out := make([][]EtfFundPeriod, n)
	for i := range out {
		out[i] = []EtfFundPeriod{}
	}
	for _, r := range rows {
		out[r.I] = append(out[r.I], EtfFundPeriod{Fund: r.EtfFund, NetInflow: r.NetInflow, Days: r.Days,
			NetAssets: r.NetAssets, NetAssetsDate: r.NetAssetsDate, Holdings: r.Holdings, HoldingsDate: r.HoldingsDate})
	}
	return out, nil
}

// EtfDay names an asset's day.
type EtfDay struct {
	Asset Asset
	Day   time.Time
}

// etfHoldingsSQL sums, for each (asset, day), each of the asset's funds'
// latest published holdings on or before the day: one backward probe of
// etf_fund_flows_holdings_idx per fund.
const etfHoldingsSQL = `
SELECT q.i, sum(h.holdings) AS holdings
FROM unnest(?::int[], ?::etf_asset[], ?::date[]) AS q(i, asset, day)
JOIN etf_funds f ON f.asset = q.asset
CROSS JOIN LATERAL (
	SELECT holdings FROM etf_fund_flows
	WHERE ticker = f.ticker AND flow_date <= q.day AND holdings IS NOT NULL
	ORDER BY flow_date DESC LIMIT 1
) h
GROUP BY q.i`

// EtfHoldings returns, for each of days, the coins held by the asset's
// funds: the sum of each fund's latest published holdings on or before the
// day; nil when none of its funds published holdings. One statement
// answers all.
func (s *Store) EtfHoldings(ctx context.Context, days []EtfDay) ([]*CoinAmount, error) {
	idx, assets, dates := make([]int, len(days)), make([]string, len(days)), make([]string, len(days))
	for i, d := range days {
		idx[i], assets[i], dates[i] = i, string(d.Asset), d.Day.Format(time.DateOnly)
	}
	var rows []struct {
		I        int         `bun:"i"`
		Holdings *CoinAmount `bun:"holdings"`
	}
	err := s.db.NewRaw(etfHoldingsSQL, pgdialect.Array(idx), pgdialect.Array(assets), pgdialect.Array(dates)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("etf holdings: %w", err)
	}
	out := make([]*CoinAmount, len(days))
	for _, r := range rows {
		out[r.I] = r.Holdings
	}
	return out, nil
}

// FillEtfFunds reads the funds' figures of every entry of sum in two
// statements: each entry's top funds (at most top) over its Last30Days and
// each asset's holdings (see TopEtfFunds and EtfHoldings).
func (s *Store) FillEtfFunds(ctx context.Context, sum *EtfSummary, top int) error {
	entries := []*EtfSummaryEntry{&sum.Total}
	for i := range sum.Assets {
		entries = append(entries, &sum.Assets[i])
	}
	var qs []TopFundsQuery
	var days []EtfDay
	for _, e := range entries {
		e.Funds = &EtfEntryFunds{Top: []EtfFundPeriod{}, TopLimit: top}
		if e.Last30Days.From != nil {
			qs = append(qs, TopFundsQuery{Assets: e.Covers, From: *e.Last30Days.From, To: e.LatestFlowDate, Limit: top})
		}
		if e.Asset != nil {
			days = append(days, EtfDay{Asset: *e.Asset, Day: e.LatestFlowDate})
		}
	}
	tops, err := s.TopEtfFunds(ctx, qs)
	if err != nil {
		return err
	}
	holdings, err := s.EtfHoldings(ctx, days)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Last30Days.From != nil {
			e.Funds.Top, tops = tops[0], tops[1:]
		}
		if e.Asset != nil {
			e.Funds.Holdings, holdings = holdings[0], holdings[1:]
		}
	}
	return nil
}
