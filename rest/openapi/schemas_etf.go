package openapi

import (
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/feedapi/feedapi/rest/contract"
)

// etfSchemas adds the schemas of the ETF flows, their summary, the funds
// and their figures to s.
func etfSchemas(s openapi3.Schemas) {
	assets := contract.Anys(contract.AssetValues)
	s["EtfFlow"] = object("One day of US spot-ETF flows of one asset, in raw US dollars.", props{
		"uid":            patterned(`^etf_(BTC|ETH|SOL|HYPE)_\d{4}-\d{2}-\d{2}$`, "Stable identifier, `etf_<ASSET>_<YYYY-MM-DD>`."),
		"asset":          enum("The asset.", assets...),
		"flow_date":      date("Day of the flow."),
		"net_inflow":     money("Net inflow of the day; negative for an outflow."),
		"cum_net_inflow": money("Cumulative net inflow since launch, up to and including this day."),
		"net_assets":     money("Total net assets at the end of the day."),
		"value_traded":   money("Value traded during the day."),
		"updated_at":     dateTime("Last update of this record."),
		"funds_complete": boolean("Whether the figures the asset's funds published for this day (`/v1/etf-flows/funds`) sum exactly to `net_inflow`: false while a fund's figure is not yet published, when the published figures disagree with the total, and when no fund has a figure for the day. The record is kept as published, never adjusted. Always sent; not listed as required so that answers of v1 before it stay valid."),
	}, "uid", "asset", "flow_date", "net_inflow", "cum_net_inflow", "net_assets", "value_traded", "updated_at")
	flows := envelope(arrayOf(ref("EtfFlow"), ""), false, "EtfMeta")
	flows.Value.Properties["pagination"] = anyOf("Null unless asked for: with `paginate=true` or a `cursor`, `/v1/etf-flows` answers with the pagination object of the paginated lists. Always null on `/v1/etf-flows/latest`.",
		ref("Pagination"), null())
	s["EtfFlowsResponse"] = flows
	summarySchemas(s)
	fundSchemas(s)
}

// summarySchemas adds the schemas of GET /v1/etf-flows/summary to s.
func summarySchemas(s openapi3.Schemas) {
	topFunds := arrayOf(ref("EtfTopFund"),
		"The 5 funds with the largest net inflows over `last_30d` (ties by ticker), largest first; for the total, among the funds of every selected asset. Funds without a figure in those days are left out. Always sent; not listed as required so that answers of v1 before it stay valid.")
	figures := func(description string, extra props, required ...string) *openapi3.SchemaRef {
		p := props{
			"latest_flow_date": date("The entry's latest trading day (the total's is `as_of`)."),
			"net_inflow":       money("Net flow of `latest_flow_date`; negative for an outflow."),
			"last_7d":          refWith("EtfPeriod", "The latest 7 trading days with a figure."),
			"last_30d":         refWith("EtfPeriod", "The latest 30 trading days with a figure."),
			"month_to_date":    refWith("EtfPeriod", "The days of `as_of`'s month, up to `as_of`."),
			"year_to_date":     refWith("EtfPeriod", "The days of `as_of`'s year, up to `as_of`."),
			"cum_net_inflow":   money("Cumulative net inflow since launch as of the latest day (the total: the sum of each asset's latest)."),
			"net_assets":       money("Total net assets as of the latest day (the total: the sum of each asset's latest)."),
			"streak":           ref("EtfStreak"),
			"top_funds":        topFunds,
		}
		for k, v := range extra {
			p[k] = v
		}
		req := []string{"latest_flow_date", "net_inflow", "last_7d", "last_30d", "month_to_date", "year_to_date", "cum_net_inflow", "net_assets", "streak"}
		return object(description, p, append(req, required...)...)
	}
	s["EtfPeriod"] = object("The net flows of a period, summed over its days that have a figure.", props{
		"net_inflow": val(&openapi3.Schema{Type: types("number", "null"), Format: "double",
			Description: "Sum of the period's net flows in raw US dollars, plain decimal notation with at most two decimals, exact to the cent; null when no day of the period has a figure (missing days are never zeros)."}),
		"days": integer(0, "Number of trading days with a figure in the period (fewer than 7 or 30 for an asset that started within the window)."),
		"from": val(&openapi3.Schema{Type: types("string", "null"), Format: "date", Description: "The earliest of those days; null when there is none."}),
	}, "net_inflow", "days", "from")
	s["EtfStreak"] = object("The run of consecutive trading days, back from the latest, whose net flows share the sign of the latest one.", props{
		"direction": enum("`inflow`, `outflow`, or `none` for a run of days with a net flow of exactly zero.", "inflow", "outflow", "none"),
		"days":      integer(1, "Length of the run in trading days."),
		"since":     date("The first day of the run."),
	}, "direction", "days", "since")
	s["EtfSummaryTotal"] = figures("The selected assets together: the figure of a day is the sum of the figures of the assets that have one that day.", nil)
	s["EtfAssetSummary"] = figures("The summary of one asset's flows; its trading days are the days it has a figure.", props{
		"asset":    enum("The asset.", contract.Anys(contract.AssetValues)...),
		"holdings": coinAmount("Coins held by the asset's funds: the sum of each fund's latest published holdings on or before `latest_flow_date`; null when no fund published holdings. Always sent; not listed as required so that answers of v1 before it stay valid."),
	}, "asset")
	s["EtfSummary"] = object("The ETF flows summarised as of `as_of`.", props{
		"as_of":  date("The latest flow date of the selected assets; month and year to date end here."),
		"total":  ref("EtfSummaryTotal"),
		"assets": arrayOf(ref("EtfAssetSummary"), "One entry per selected asset that has flows, in the order BTC, ETH, SOL, HYPE."),
	}, "as_of", "total", "assets")
	s["EtfSummaryResponse"] = envelope(anyOf("The summary; null when the selected assets have no flows.", ref("EtfSummary"), null()), false, "EtfMeta")
}

// fundSchemas adds the schemas of the funds, their figures and the
// summaries' top funds to s.
func fundSchemas(s openapi3.Schemas) {
	assets := contract.Anys(contract.AssetValues)
	s["EtfFund"] = object("A US spot ETF.", props{
		"ticker":      patterned(contract.FundTickerPattern, "Exchange ticker, upper case."),
		"asset":       enum("The asset the fund holds.", assets...),
		"issuer":      str("The fund's issuer (sponsor)."),
		"name":        str("The fund's full name."),
		"fee":         val(&openapi3.Schema{Type: types("number"), Format: "double", Min: ptr(0.0), Description: "Yearly fee (expense ratio) in percent, plain decimal notation with at most two decimals: `0.25` is 0.25% a year."}),
		"launch_date": date("First trading day."),
		"exchange":    str("Listing exchange."),
	}, "ticker", "asset", "issuer", "name", "fee", "launch_date", "exchange")
	s["EtfFundFlow"] = object("One fund's figures of one trading day, in raw US dollars and coins. A fund without a figure for a day has no record for it.", props{
		"uid":          patterned(`^etffund_[A-Z0-9]{1,7}_\d{4}-\d{2}-\d{2}$`, "Stable identifier, `etffund_<TICKER>_<YYYY-MM-DD>`."),
		"ticker":       patterned(contract.FundTickerPattern, "The fund's ticker."),
		"asset":        enum("The fund's asset.", assets...),
		"flow_date":    date("Day of the flow."),
		"net_inflow":   money("Net inflow of the day; negative for an outflow."),
		"net_assets":   nullableMoney("Net assets at the end of the day; null where the issuer did not publish them."),
		"value_traded": nullableMoney("Value traded during the day; null where not published."),
		"holdings":     coinAmount("Coins held at the end of the day; null where the issuer did not publish them."),
		"updated_at":   dateTime("Last update of this record; later than the asset's record for a figure published late."),
	}, "uid", "ticker", "asset", "flow_date", "net_inflow", "net_assets", "value_traded", "holdings", "updated_at")
	s["EtfTopFund"] = object("One fund's flows over the summary entry's latest 30 trading days (`last_30d`).", props{
		"fund":       ref("EtfFund"),
		"net_inflow": money("Sum of the fund's net flows of those days."),
		"days":       integer(1, "Number of those days on which the fund has a figure."),
		"net_assets": nullableMoney("The fund's latest published net assets on or before the entry's `latest_flow_date`; null when none."),
		"holdings":   coinAmount("The fund's latest published holdings on or before the entry's `latest_flow_date`; null when none."),
	}, "fund", "net_inflow", "days", "net_assets", "holdings")
	s["EtfFundsResponse"] = envelope(arrayOf(ref("EtfFund"), ""), false, "EtfMeta")
	s["EtfFundFlowsPage"] = envelope(arrayOf(ref("EtfFundFlow"), ""), true, "EtfMeta")
}
