package rest

// oaETFSummarySchemas adds the schemas of GET /v1/etf-flows/summary to s.
func oaETFSummarySchemas(s map[string]*oaSchema) {
	period := func(what string) *oaSchema {
		return &oaSchema{Ref: "#/components/schemas/EtfPeriod", Description: what}
	}
	figures := func(asset *oaSchema, required ...string) *oaSchema {
		p := oaProps{
			"latest_flow_date": {Type: "string", Format: "date", Description: "The entry's latest trading day (the total's is `as_of`)."},
			"net_inflow":       oaMoney("Net flow of `latest_flow_date`; negative for an outflow."),
			"last_7d":          period("The latest 7 trading days with a figure."),
			"last_30d":         period("The latest 30 trading days with a figure."),
			"month_to_date":    period("The days of `as_of`'s month, up to `as_of`."),
			"year_to_date":     period("The days of `as_of`'s year, up to `as_of`."),
			"cum_net_inflow":   oaMoney("Cumulative net inflow since launch as of the latest day (the total: the sum of each asset's latest)."),
			"net_assets":       oaMoney("Total net assets as of the latest day (the total: the sum of each asset's latest)."),
			"streak":           oaRef("EtfStreak"),
		}
		req := []string{"latest_flow_date", "net_inflow", "last_7d", "last_30d", "month_to_date", "year_to_date", "cum_net_inflow", "net_assets", "streak"}
		if asset != nil {
			p["asset"] = asset
		}
		return oaObject("", p, append(req, required...)...)
	}
	s["EtfPeriod"] = oaObject("The net flows of a period, summed over its days that have a figure.", oaProps{
		"net_inflow": {Type: []string{"number", "null"}, Format: "double",
			Description: "Sum of the period's net flows in raw US dollars, plain decimal notation with at most two decimals, exact to the cent; null when no day of the period has a figure (missing days are never zeros)."},
		"days": {Type: "integer", Minimum: oaPtr[int64](0), Description: "Number of trading days with a figure in the period (fewer than 7 or 30 for an asset that started within the window)."},
		"from": {Type: []string{"string", "null"}, Format: "date", Description: "The earliest of those days; null when there is none."},
	}, "net_inflow", "days", "from")
	s["EtfStreak"] = oaObject("The run of consecutive trading days, back from the latest, whose net flows share the sign of the latest one.", oaProps{
		"direction": {Type: "string", Enum: []any{"inflow", "outflow", "none"}, Description: "`inflow`, `outflow`, or `none` for a run of days with a net flow of exactly zero."},
		"days":      {Type: "integer", Minimum: oaPtr[int64](1), Description: "Length of the run in trading days."},
		"since":     {Type: "string", Format: "date", Description: "The first day of the run."},
	}, "direction", "days", "since")
	total := figures(nil)
	total.Description = "The selected assets together: the figure of a day is the sum of the figures of the assets that have one that day."
	s["EtfSummaryTotal"] = total
	asset := figures(&oaSchema{Type: "string", Enum: oaAssets, Description: "The asset."}, "asset")
	asset.Description = "The summary of one asset's flows; its trading days are the days it has a figure."
	s["EtfAssetSummary"] = asset
	s["EtfSummary"] = oaObject("The ETF flows summarised as of `as_of`.", oaProps{
		"as_of":  {Type: "string", Format: "date", Description: "The latest flow date of the selected assets; month and year to date end here."},
		"total":  oaRef("EtfSummaryTotal"),
		"assets": {Type: "array", Items: oaRef("EtfAssetSummary"), Description: "One entry per selected asset that has flows, in the order BTC, ETH, SOL, HYPE."},
	}, "as_of", "total", "assets")
	s["EtfSummaryResponse"] = oaEnvelope(&oaSchema{AnyOf: []*oaSchema{oaRef("EtfSummary"), {Type: "null"}}, Description: "The summary; null when the selected assets have no flows."}, false, "EtfMeta")
}
