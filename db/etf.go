package db

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// EtfFilter narrows the ETF flows. Zero fields do not filter.
type EtfFilter struct {
	Assets   []Asset   // any of these assets (all when empty)
	From, To time.Time // flow_date bounds, inclusive
}

// assets returns the filter's assets deduplicated in enum order.
func (f EtfFilter) assets() []Asset {
	if len(f.Assets) == 0 {
		return Assets
	}
	var out []Asset
	for _, a := range Assets {
		if slices.Contains(f.Assets, a) {
			out = append(out, a)
		}
	}
	return out
}

// ListEtfFlows returns at most limit flow records ordered by flow_date
// descending, then asset in the order BTC, ETH, SOL, HYPE.
func (s *Store) ListEtfFlows(ctx context.Context, f EtfFilter, limit int) ([]EtfFlow, error) {
	if limit < 1 {
		return nil, fmt.Errorf("list etf flows: limit %d: must be positive", limit)
	}
	rows := []EtfFlow{}
	q := s.etfFlowsQuery(&rows, f, limit)
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list etf flows: %w", err)
	}
	return rows, nil
}

// etfFlowsQuery selects into dst the flows of ListEtfFlows, read in the
// order of etf_flows_date_asset_idx (flow_date DESC, asset).
func (s *Store) etfFlowsQuery(dst *[]EtfFlow, f EtfFilter, limit int) *bun.SelectQuery {
	q := s.db.NewSelect().Model(dst).ColumnExpr("etf_flow.*").ColumnExpr(fundsCompleteSQL("etf_flow"))
	if len(f.Assets) > 0 {
		q = q.Where("asset IN (?)", bun.List(f.assets()))
	}
	if !f.From.IsZero() {
		q = q.Where("flow_date >= ?", clampTime(f.From).Format(time.DateOnly))
	}
	if !f.To.IsZero() {
		q = q.Where("flow_date <= ?", clampTime(f.To).Format(time.DateOnly))
	}
	return q.OrderExpr("flow_date DESC, asset ASC").Limit(int64(limit))
}

// latestEtfFlowsSQL probes the primary key (asset, flow_date) backwards
// once per asset; the argument is the assets in enum order.
var latestEtfFlowsSQL = `
	SELECT e.*, ` + fundsCompleteSQL("e") + `
	FROM unnest(?::etf_asset[]) WITH ORDINALITY AS a(asset, ord)
	CROSS JOIN LATERAL (
		SELECT * FROM etf_flows f WHERE f.asset = a.asset ORDER BY f.flow_date DESC LIMIT 1
	) e
	ORDER BY a.ord`

// fundsCompleteSQL is the funds_complete column of the flow records of
// alias: whether the figures the asset's funds published for the day sum
// exactly to its net inflow (false when none did): one range of
// etf_fund_flows_asset_idx per record.
func fundsCompleteSQL(alias string) string {
	return `(SELECT count(*) > 0 AND sum(ff.net_inflow) = ` + alias + `.net_inflow FROM etf_fund_flows ff
		WHERE ff.asset = ` + alias + `.asset AND ff.flow_date = ` + alias + `.flow_date) AS funds_complete`
}

// LatestEtfFlows returns the newest record of each asset (of f.Assets, or
// all), in asset order; assets without records are absent. From and To are
// ignored. Each asset costs one backward probe of the primary key.
func (s *Store) LatestEtfFlows(ctx context.Context, f EtfFilter) ([]EtfFlow, error) {
	rows := []EtfFlow{}
	err := s.db.NewRaw(latestEtfFlowsSQL, pgdialect.Array(f.assets())).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("latest etf flows: %w", err)
	}
	return rows, nil
}
