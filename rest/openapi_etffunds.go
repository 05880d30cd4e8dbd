package rest

// oaPatternFunds is the fund parameter: comma-separated tickers of 1 to 7
// letters or digits, in any case, with optional spaces around each.
const oaPatternFunds = `^\s*[A-Za-z0-9]{1,7}\s*(,\s*[A-Za-z0-9]{1,7}\s*)*$`

// oaETFFundPaths documents the ETF funds and their daily figures.
func oaETFFundPaths(p map[string]*oaPathItem) {
	p["/v1/etf-funds"] = &oaPathItem{Get: &oaOperation{
		OperationID: "listEtfFunds", Summary: "List the US spot-ETF funds", Tags: []string{oaTagETF}, Security: oaKeyed(),
		Description: "Every fund of the selected assets (ticker, issuer, name, yearly fee, launch date, exchange), ordered by asset in the order BTC, ETH, SOL, HYPE, then ticker (`pagination` is null).",
		Parameters:  oaParams("Asset", "IfNoneMatch"),
		Responses:   oaKeyedResponses(oaSuccess("The funds.", "EtfFundsResponse", true)),
	}}
	p["/v1/etf-flows/funds"] = &oaPathItem{Get: &oaOperation{
		OperationID: "listEtfFundFlows", Summary: "List each fund's daily ETF figures", Tags: []string{oaTagETF}, Security: oaKeyed(),
		Description: "Each fund's daily figures, ordered by `flow_date` descending, then asset in the order BTC, ETH, SOL, HYPE, then ticker; paginated with a keyset cursor like the other paginated lists. A fund without a figure for a day has no record for it, never a zero: a figure not yet published is absent, and the day's asset record says so with `funds_complete: false`.",
		Parameters:  oaParams("Asset", "Fund", "From", "To", "EtfLimit", "Cursor", "IfNoneMatch"),
		Responses:   oaKeyedResponses(oaSuccess("A page of per-fund figures.", "EtfFundFlowsPage", true)),
	}}
}

// oaETFFundParameters adds the parameters of the per-fund endpoints and of
// the paginated walk of /v1/etf-flows to params.
func oaETFFundParameters(params map[string]*oaParameter) {
	params["Fund"] = &oaParameter{Name: "fund", In: "query",
		Description: "Only these funds: a comma-separated list of at most 50 tickers (`IBIT`, `ibit,fbtc`), case-insensitive, each a fund of `/v1/etf-funds` (also listed as `etf_funds` by `/v1/sources`). A ticker that is not a fund gives 400 naming `fund`; with `asset`, only the listed funds of those assets.",
		Schema:      &oaSchema{Type: "string", Pattern: oaPatternFunds, Examples: []any{"IBIT", "ibit,fbtc,gbtc"}}}
	params["Paginate"] = &oaParameter{Name: "paginate", In: "query",
		Description: "Whether the answer carries `pagination` (`{next_cursor, has_more}`) to walk the whole history page by page with `cursor`; without it (or false) `pagination` is null, as it always was. A `cursor` implies it (`paginate=false` with a cursor gives 400). A boolean: `true` or `false`; the server also takes `1` and `0`, case-insensitive, and anything else gives 400.",
		Schema:      &oaSchema{Type: "boolean", Default: false}}
}

// oaETFFundSchemas adds the schemas of the funds, their figures and the
// summaries' top funds to s, and the fields of the flows about them.
func oaETFFundSchemas(s map[string]*oaSchema) {
	coins := func(description string) *oaSchema {
		return &oaSchema{Type: []string{"number", "null"}, Format: "double", Minimum: oaPtr[int64](0),
			Description: description + " Coins in plain decimal notation (never exponent notation) with at most eight decimals, exact in the JSON text."}
	}
	nullableMoney := func(description string) *oaSchema {
		m := oaMoney(description)
		m.Type = []string{"number", "null"}
		return m
	}
	s["EtfFund"] = oaObject("A US spot ETF.", oaProps{
		"ticker":      {Type: "string", Pattern: `^[A-Z0-9]{1,7}$`, Description: "Exchange ticker, upper case."},
		"asset":       {Type: "string", Enum: oaAssets, Description: "The asset the fund holds."},
		"issuer":      {Type: "string", Description: "The fund's issuer (sponsor)."},
		"name":        {Type: "string", Description: "The fund's full name."},
		"fee":         {Type: "number", Format: "double", Minimum: oaPtr[int64](0), Description: "Yearly fee (expense ratio) in percent, plain decimal notation with at most two decimals: `0.25` is 0.25% a year."},
		"launch_date": {Type: "string", Format: "date", Description: "First trading day."},
		"exchange":    {Type: "string", Description: "Listing exchange."},
	}, "ticker", "asset", "issuer", "name", "fee", "launch_date", "exchange")
	s["EtfFundFlow"] = oaObject("One fund's figures of one trading day, in raw US dollars and coins. A fund without a figure for a day has no record for it.", oaProps{
		"uid":          {Type: "string", Pattern: `^etffund_[A-Z0-9]{1,7}_\d{4}-\d{2}-\d{2}$`, Description: "Stable identifier, `etffund_<TICKER>_<YYYY-MM-DD>`."},
		"ticker":       {Type: "string", Pattern: `^[A-Z0-9]{1,7}$`, Description: "The fund's ticker."},
		"asset":        {Type: "string", Enum: oaAssets, Description: "The fund's asset."},
		"flow_date":    {Type: "string", Format: "date", Description: "Day of the flow."},
		"net_inflow":   oaMoney("Net inflow of the day; negative for an outflow."),
		"net_assets":   nullableMoney("Net assets at the end of the day; null where the issuer did not publish them."),
		"value_traded": nullableMoney("Value traded during the day; null where not published."),
		"holdings":     coins("Coins held at the end of the day; null where the issuer did not publish them."),
		"updated_at":   oaDateTime("Last update of this record; later than the asset's record for a figure published late."),
	}, "uid", "ticker", "asset", "flow_date", "net_inflow", "net_assets", "value_traded", "holdings", "updated_at")
	s["EtfTopFund"] = oaObject("One fund's flows over the summary entry's latest 30 trading days (`last_30d`).", oaProps{
		"fund":       oaRef("EtfFund"),
		"net_inflow": oaMoney("Sum of the fund's net flows of those days."),
		"days":       {Type: "integer", Minimum: oaPtr[int64](1), Description: "Number of those days on which the fund has a figure."},
		"net_assets": nullableMoney("The fund's latest published net assets on or before the entry's `latest_flow_date`; null when none."),
		"holdings":   coins("The fund's latest published holdings on or before the entry's `latest_flow_date`; null when none."),
	}, "fund", "net_inflow", "days", "net_assets", "holdings")
	topFunds := &oaSchema{Type: "array", Items: oaRef("EtfTopFund"),
		Description: "The 5 funds with the largest net inflows over `last_30d` (ties by ticker), largest first; for the total, among the funds of every selected asset. Funds without a figure in those days are left out. Always sent; not listed as required so that answers of v1 before it stay valid."}
	s["EtfSummaryTotal"].Properties["top_funds"] = topFunds
	s["EtfAssetSummary"].Properties["top_funds"] = topFunds
	s["EtfAssetSummary"].Properties["holdings"] = coins("Coins held by the asset's funds: the sum of each fund's latest published holdings on or before `latest_flow_date`; null when no fund published holdings. Always sent; not listed as required so that answers of v1 before it stay valid.")
	s["EtfFlow"].Properties["funds_complete"] = &oaSchema{Type: "boolean",
		Description: "Whether the figures the asset's funds published for this day (`/v1/etf-flows/funds`) sum exactly to `net_inflow`: false while a fund's figure is not yet published, when the published figures disagree with the total, and when no fund has a figure for the day. The record is kept as published, never adjusted. Always sent; not listed as required so that answers of v1 before it stay valid."}
	s["EtfFlowsResponse"].Properties["pagination"] = &oaSchema{AnyOf: []*oaSchema{oaRef("Pagination"), {Type: "null"}},
		Description: "Null unless asked for: with `paginate=true` or a `cursor`, `/v1/etf-flows` answers with the pagination object of the paginated lists. Always null on `/v1/etf-flows/latest`."}
	s["EtfFundsResponse"] = oaEnvelope(&oaSchema{Type: "array", Items: oaRef("EtfFund")}, false, "EtfMeta")
	s["EtfFundFlowsPage"] = oaEnvelope(&oaSchema{Type: "array", Items: oaRef("EtfFundFlow")}, true, "EtfMeta")
}

// oaDashboardPaths documents the dashboard page and its assets.
func oaDashboardPaths(p map[string]*oaPathItem, o OpenAPIOptions) {
	panels := "a live panel of the newest posts and firehose messages (a GraphQL subscription over the websocket of `/graphql`, with coins, search and pane filters)"
	if o.ETFEnabled {
		panels = "the ETF flows of each asset (daily net inflow bars with the cumulative line; latest day, 7 and 30 days, month and year to date and the streak; the top funds) and " + panels
	}
	p[dashboardPath] = &oaPathItem{Get: &oaOperation{
		OperationID: "getDashboard", Summary: "The internal dashboard (HTML)", Tags: []string{oaTagGQL}, Security: oaOpen(),
		Description: "A page for people: " + panels + ". It needs no key to load (it holds no data) and is limited per client IP; it asks for an `internal` key, keeps it in the tab's memory only, and reads `/graphql` with it. Its assets come from `/dashboard/assets/`, so it works offline.",
		Responses: oaWithErrors(oaOpenResponses(map[string]*oaResponse{
			"200": {Description: "The page.", Headers: oaHeaders("ETag", "X-Request-Id"), Content: map[string]oaMediaType{
				"text/html": {Schema: &oaSchema{Type: "string"}},
			}},
		})),
	}}
	p[dashboardAssetsPath+"/{file}"] = &oaPathItem{Get: &oaOperation{
		OperationID: "getDashboardAsset", Summary: "A script or stylesheet of the dashboard", Tags: []string{oaTagGQL}, Security: oaOpen(),
		Description: "The dashboard loads its scripts and stylesheets from here, never from another host. Names carry the package version and are cached as immutable. Needs no key; limited per client IP.",
		Parameters: []*oaParameter{{Name: "file", In: "path", Required: true, Description: "The file's name, as the page references it.",
			Schema: &oaSchema{Type: "string", Examples: []any{"uPlot-1.6.32.iife.min.js"}}}},
		Responses: oaWithErrors(oaOpenResponses(map[string]*oaResponse{
			"200": {Description: "The file.", Headers: oaHeaders("ETag", "X-Request-Id"), Content: map[string]oaMediaType{
				"text/javascript": {Schema: &oaSchema{Type: "string"}},
				"text/css":        {Schema: &oaSchema{Type: "string"}},
			}},
		}), "404"),
	}}
}
