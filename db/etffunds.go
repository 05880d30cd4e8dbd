package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	q := s.db.NewSelect().Model(&rows)
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
	q := s.db.NewSelect().TableExpr("etf_fund_flows AS ff").
		Join("JOIN etf_funds AS f ON f.ticker = ff.ticker").
		ColumnExpr("ff.*, f.asset")
	if len(f.Assets) > 0 {
		q = q.Where("f.asset IN (?)", bun.List(EtfFilter{Assets: f.Assets}.assets()))
	}
	if len(f.Tickers) > 0 {
		q = q.Where("ff.ticker IN (?)", bun.List(f.Tickers))
	}
	q = dateRange(q, "ff.flow_date", f.From, f.To)
	q, err = etfKeyset(q, p, DecodeEtfFundFlowKey, "ff.flow_date", "f.asset", "ff.ticker")
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

// EtfDay names an asset's trading day.
type EtfDay struct {
	Asset Asset
	Day   time.Time
}

// FundSum is what the funds of an asset published for one day.
type FundSum struct {
	Funds     int   // number of funds with a figure
	NetInflow Money // their net flows summed
}

// etfFundSumsSQL sums the fund figures of each (asset, day) of its two
// arrays, probing each fund's primary key.
const etfFundSumsSQL = `
SELECT k.asset, k.flow_date, count(*) AS funds, sum(ff.net_inflow) AS net_inflow
FROM unnest(?::etf_asset[], ?::date[]) AS k(asset, flow_date)
JOIN etf_funds f ON f.asset = k.asset
JOIN etf_fund_flows ff ON ff.ticker = f.ticker AND ff.flow_date = k.flow_date
GROUP BY k.asset, k.flow_date`

// EtfFundSums returns, for each of days on which at least one fund of the
// asset has a figure, the number of those funds and their net flows summed.
func (s *Store) EtfFundSums(ctx context.Context, days []EtfDay) (map[EtfDay]FundSum, error) {
	assets := make([]string, len(days))
	dates := make([]string, len(days))
	for i, d := range days {
		assets[i], dates[i] = string(d.Asset), d.Day.Format(time.DateOnly)
	}
	var rows []struct {
		Asset     Asset     `bun:"asset"`
		FlowDate  time.Time `bun:"flow_date"`
		Funds     int       `bun:"funds"`
		NetInflow Money     `bun:"net_inflow"`
	}
	err := s.db.NewRaw(etfFundSumsSQL, pgdialect.Array(assets), pgdialect.Array(dates)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("etf fund sums: %w", err)
	}
	out := make(map[EtfDay]FundSum, len(rows))
	for _, r := range rows {
		out[EtfDay{r.Asset, r.FlowDate.UTC()}] = FundSum{Funds: r.Funds, NetInflow: r.NetInflow}
	}
	return out, nil
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

// topEtfFundsSQL ranks the funds of the assets by their net flows over the
// days from..to, and reads each ranked fund's latest published net assets
// and holdings backwards along its primary key.
const topEtfFundsSQL = `
WITH ranked AS (
	SELECT ff.ticker, sum(ff.net_inflow) AS net_inflow, count(*) AS days
	FROM etf_funds f
	JOIN etf_fund_flows ff ON ff.ticker = f.ticker
	WHERE f.asset = ANY(?::etf_asset[]) AND ff.flow_date BETWEEN ? AND ?
	GROUP BY ff.ticker
	ORDER BY net_inflow DESC, ff.ticker
	LIMIT ?
)
SELECT f.ticker, f.asset, f.issuer, f.name, f.fee, f.launch_date, f.exchange,
	r.net_inflow, r.days, na.net_assets, na.flow_date AS net_assets_date,
	h.holdings, h.flow_date AS holdings_date
FROM ranked r
JOIN etf_funds f ON f.ticker = r.ticker
LEFT JOIN LATERAL (
	SELECT net_assets, flow_date FROM etf_fund_flows
	WHERE ticker = r.ticker AND flow_date <= ? AND net_assets IS NOT NULL
	ORDER BY flow_date DESC LIMIT 1
) na ON true
LEFT JOIN LATERAL (
	SELECT holdings, flow_date FROM etf_fund_flows
	WHERE ticker = r.ticker AND flow_date <= ? AND holdings IS NOT NULL
	ORDER BY flow_date DESC LIMIT 1
) h ON true
ORDER BY r.net_inflow DESC, r.ticker`

// TopEtfFunds returns at most limit funds of assets that have a figure
// between from and to (inclusive), ordered by their net flows over those
// days, largest inflow first (ties by ticker).
func (s *Store) TopEtfFunds(ctx context.Context, assets []Asset, from, to time.Time, limit int) ([]EtfFundPeriod, error) {
	if limit < 1 {
		return nil, fmt.Errorf("top etf funds: limit %d: must be positive", limit)
	}
	var rows []struct {
		EtfFund
		NetInflow     Money       `bun:"net_inflow"`
		Days          int         `bun:"days"`
		NetAssets     *Money      `bun:"net_assets"`
		NetAssetsDate *time.Time  `bun:"net_assets_date"`
		Holdings      *CoinAmount `bun:"holdings"`
		HoldingsDate  *time.Time  `bun:"holdings_date"`
	}
	f, t := from.Format(time.DateOnly), to.Format(time.DateOnly)
	err := s.db.NewRaw(topEtfFundsSQL, pgdialect.Array(EtfFilter{Assets: assets}.assets()), f, t, limit, t, t).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("top etf funds: %w", err)
	}
	out := make([]EtfFundPeriod, len(rows))
	for i, r := range rows {
		out[i] = EtfFundPeriod{Fund: r.EtfFund, NetInflow: r.NetInflow, Days: r.Days,
			NetAssets: r.NetAssets, NetAssetsDate: r.NetAssetsDate, Holdings: r.Holdings, HoldingsDate: r.HoldingsDate}
	}
	return out, nil
}

// etfHoldingsSQL sums each fund's latest published holdings on or before
// a day, one backward probe of the primary key per fund.
const etfHoldingsSQL = `
SELECT sum(h.holdings) AS holdings, count(h.holdings) AS funds
FROM etf_funds f
CROSS JOIN LATERAL (
	SELECT holdings FROM etf_fund_flows
	WHERE ticker = f.ticker AND flow_date <= ? AND holdings IS NOT NULL
	ORDER BY flow_date DESC LIMIT 1
) h
WHERE f.asset = ?`

// EtfHoldings returns the coins held by the funds of asset: the sum of each
// fund's latest published holdings on or before day, and the number of
// funds counted; nil when none of its funds published holdings.
func (s *Store) EtfHoldings(ctx context.Context, asset Asset, day time.Time) (*CoinAmount, int, error) {
	var row struct {
		Holdings *CoinAmount `bun:"holdings"`
		Funds    int         `bun:"funds"`
	}
	err := s.db.NewRaw(etfHoldingsSQL, day.Format(time.DateOnly), asset).Scan(ctx, &row)
	if err != nil {
		return nil, 0, fmt.Errorf("etf holdings of %s: %w", asset, err)
	}
	return row.Holdings, row.Funds, nil
}
