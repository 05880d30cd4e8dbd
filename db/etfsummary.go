package db

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"
)

// StreakDirection is the sign of the net flows of an EtfStreak.
type StreakDirection string

// The streak directions.
const (
	StreakInflow  StreakDirection = "inflow"  // a net inflow on every day of the streak
	StreakOutflow StreakDirection = "outflow" // a net outflow on every day of the streak
	StreakNone    StreakDirection = "none"    // a net flow of exactly zero on every day of the streak
)

// EtfPeriod sums the figures of one period of an ETF summary.
type EtfPeriod struct {
	// NetInflow is the sum of the period's figures; nil when the period
	// holds none (a day without a figure is absent, never a zero).
	NetInflow *Money
	// Days is the number of days with a figure in the period.
	Days int
	// From is the earliest day with a figure in the period; nil when none.
	From *time.Time
}

// EtfStreak is the run of consecutive trading days, back from the latest,
// whose net flows have the sign of the latest one.
type EtfStreak struct {
	Direction StreakDirection
	Days      int       // length of the run in trading days, at least 1
	Since     time.Time // first day of the run
}

// EtfSummaryEntry summarises the flows of one asset, or of the selected
// assets together (Asset nil). See SummarizeEtfFlows for what each figure
// means.
type EtfSummaryEntry struct {
	Asset          *Asset
	LatestFlowDate time.Time // the entry's latest trading day
	NetInflow      Money     // net flow of LatestFlowDate
	Last7Days      EtfPeriod // the latest 7 trading days
	Last30Days     EtfPeriod // the latest 30 trading days
	MonthToDate    EtfPeriod // the days of AsOf's month up to AsOf
	YearToDate     EtfPeriod // the days of AsOf's year up to AsOf
	CumNetInflow   Money     // the latest cumulative net inflow (summed over the assets for the total)
	NetAssets      Money     // the latest net assets (summed over the assets for the total)
	Streak         EtfStreak
	// Covers lists the assets the entry sums: its own, or for the total
	// the selected ones, in asset order.
	Covers []Asset
	// Funds holds the entry's funds' figures once FillEtfFunds read them.
	Funds *EtfEntryFunds
}

// EtfEntryFunds are the funds' figures of a summary entry.
type EtfEntryFunds struct {
	Top      []EtfFundPeriod // the top funds over Last30Days, at most TopLimit
	TopLimit int
	Holdings *CoinAmount // the asset's funds' coins (nil for the total)
}

// EtfSummary is the ETF flows summarised as traders read them.
type EtfSummary struct {
	AsOf   time.Time         // the latest flow date of the selected assets
	Total  EtfSummaryEntry   // the selected assets together
	Assets []EtfSummaryEntry // one per selected asset with flows, in asset order
}

// etfSummarySQL computes every figure of an ETF summary in one statement,
// in numeric (never floating point). Its argument is the selected assets.
//
// A series is one asset's rows, or the total: per flow date, the sum of the
// figures of the selected assets that have one that day. A series' trading
// days are the days on which it has a figure, so "the latest 7 trading
// days" of an asset are its 7 latest figures, and those of the total the 7
// latest days on which any selected asset has one. Month and year to date
// are calendar periods ending at as_of, the latest flow date of the
// selection, the same for every series. The streak runs back from a
// series' latest day while the sign of its net flow stays the same.
//
// The selection is read once (etf_flows holds about 250 rows per asset and
// year), numbered per series newest first, and aggregated with FILTER.
const etfSummarySQL = `
WITH sel AS (
	SELECT asset, flow_date, net_inflow, cum_net_inflow, net_assets
	FROM etf_flows WHERE asset = ANY(?::etf_asset[])
), as_of AS (
	SELECT max(flow_date) AS d, date_trunc('month', max(flow_date))::date AS month_start,
		date_trunc('year', max(flow_date))::date AS year_start
	FROM sel
), series AS (
	SELECT asset, flow_date, net_inflow FROM sel
	UNION ALL
	SELECT NULL::etf_asset, flow_date, sum(net_inflow) FROM sel GROUP BY flow_date
), ranked AS (
	SELECT asset, flow_date, net_inflow,
		row_number() OVER w AS rn,
		sign(net_inflow) = first_value(sign(net_inflow)) OVER w AS same_sign
	FROM series
	WINDOW w AS (PARTITION BY asset ORDER BY flow_date DESC)
), streaked AS (
	SELECT *, bool_and(same_sign) OVER (PARTITION BY asset ORDER BY flow_date DESC
		ROWS UNBOUNDED PRECEDING) AS in_streak
	FROM ranked
), latest AS (
	SELECT DISTINCT ON (asset) asset, cum_net_inflow, net_assets
	FROM sel ORDER BY asset, flow_date DESC
)
SELECT s.asset,
	a.d AS as_of,
	max(s.flow_date) AS latest_flow_date,
	min(s.net_inflow) FILTER (WHERE s.rn = 1) AS net_inflow,
	sum(s.net_inflow) FILTER (WHERE s.rn <= 7) AS d7_sum,
	count(*) FILTER (WHERE s.rn <= 7) AS d7_days,
	min(s.flow_date) FILTER (WHERE s.rn <= 7) AS d7_from,
	sum(s.net_inflow) FILTER (WHERE s.rn <= 30) AS d30_sum,
	count(*) FILTER (WHERE s.rn <= 30) AS d30_days,
	min(s.flow_date) FILTER (WHERE s.rn <= 30) AS d30_from,
	sum(s.net_inflow) FILTER (WHERE s.flow_date >= a.month_start) AS mtd_sum,
	count(*) FILTER (WHERE s.flow_date >= a.month_start) AS mtd_days,
	min(s.flow_date) FILTER (WHERE s.flow_date >= a.month_start) AS mtd_from,
	sum(s.net_inflow) FILTER (WHERE s.flow_date >= a.year_start) AS ytd_sum,
	count(*) FILTER (WHERE s.flow_date >= a.year_start) AS ytd_days,
	min(s.flow_date) FILTER (WHERE s.flow_date >= a.year_start) AS ytd_from,
	CASE sign(min(s.net_inflow) FILTER (WHERE s.rn = 1)) WHEN 1 THEN 'inflow' WHEN -1 THEN 'outflow' ELSE 'none' END AS streak_direction,
	count(*) FILTER (WHERE s.in_streak) AS streak_days,
	min(s.flow_date) FILTER (WHERE s.in_streak) AS streak_since,
	CASE WHEN s.asset IS NULL THEN (SELECT sum(cum_net_inflow) FROM latest)
		ELSE min(l.cum_net_inflow) END AS cum_net_inflow,
	CASE WHEN s.asset IS NULL THEN (SELECT sum(net_assets) FROM latest)
		ELSE min(l.net_assets) END AS net_assets
FROM streaked s
CROSS JOIN as_of a
LEFT JOIN latest l ON l.asset = s.asset
GROUP BY s.asset, a.d, a.month_start, a.year_start
ORDER BY s.asset NULLS LAST`

// etfSummaryRow is one series of etfSummarySQL.
type etfSummaryRow struct {
	Asset           *Asset          `bun:"asset"`
	AsOf            time.Time       `bun:"as_of"`
	LatestFlowDate  time.Time       `bun:"latest_flow_date"`
	NetInflow       Money           `bun:"net_inflow"`
	D7Sum           *Money          `bun:"d7_sum"`
	D7Days          int             `bun:"d7_days"`
	D7From          *time.Time      `bun:"d7_from"`
	D30Sum          *Money          `bun:"d30_sum"`
	D30Days         int             `bun:"d30_days"`
	D30From         *time.Time      `bun:"d30_from"`
	MtdSum          *Money          `bun:"mtd_sum"`
	MtdDays         int             `bun:"mtd_days"`
	MtdFrom         *time.Time      `bun:"mtd_from"`
	YtdSum          *Money          `bun:"ytd_sum"`
	YtdDays         int             `bun:"ytd_days"`
	YtdFrom         *time.Time      `bun:"ytd_from"`
	StreakDirection StreakDirection `bun:"streak_direction"`
	StreakDays      int             `bun:"streak_days"`
	StreakSince     time.Time       `bun:"streak_since"`
	CumNetInflow    Money           `bun:"cum_net_inflow"`
	NetAssets       Money           `bun:"net_assets"`
}

func (r *etfSummaryRow) entry() EtfSummaryEntry {
	return EtfSummaryEntry{
		Asset:          r.Asset,
		LatestFlowDate: r.LatestFlowDate,
		NetInflow:      r.NetInflow,
		Last7Days:      EtfPeriod{NetInflow: r.D7Sum, Days: r.D7Days, From: r.D7From},
		Last30Days:     EtfPeriod{NetInflow: r.D30Sum, Days: r.D30Days, From: r.D30From},
		MonthToDate:    EtfPeriod{NetInflow: r.MtdSum, Days: r.MtdDays, From: r.MtdFrom},
		YearToDate:     EtfPeriod{NetInflow: r.YtdSum, Days: r.YtdDays, From: r.YtdFrom},
		CumNetInflow:   r.CumNetInflow,
		NetAssets:      r.NetAssets,
		Streak:         EtfStreak{Direction: r.StreakDirection, Days: r.StreakDays, Since: r.StreakSince},
	}
}

// SummarizeEtfFlows summarises the flows of f.Assets (all when empty) as of
// the latest flow date among them: per asset and for the assets together,
// the latest day's net flow, the sums of the latest 7 and 30 trading days,
// month and year to date, the latest cumulative net inflow and net assets,
// and the current streak. From and To are ignored. It returns nil when the
// selected assets have no flows.
//
// A day on which an asset has no figure is absent, never a zero: an asset's
// trading days are the days it has a figure, and the total's the days on
// which any selected asset has one (its figure for a day is the sum of the
// figures of that day). The total's cumulative net inflow and net assets
// are the sums of each asset's latest ones.
func (s *Store) SummarizeEtfFlows(ctx context.Context, f EtfFilter) (*EtfSummary, error) {
	var rows []etfSummaryRow
	if err := s.db.NewRaw(etfSummarySQL, pgdialect.Array(f.assets())).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("summarize etf flows: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	out := &EtfSummary{AsOf: rows[0].AsOf, Assets: make([]EtfSummaryEntry, 0, len(rows)-1)}
	for i := range rows {
		e := rows[i].entry()
		if rows[i].Asset == nil {
			e.Covers = f.assets()
			out.Total = e
		} else {
			e.Covers = []Asset{*rows[i].Asset}
			out.Assets = append(out.Assets, e)
		}
	}
	return out, nil
}
