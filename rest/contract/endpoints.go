package contract

// OpenAPI tags of the endpoints.
const (
	TagMeta    = "meta"
	TagPosts   = "posts"
	TagBriefs  = "briefs"
	TagFeed    = "firehose"
	TagSources = "sources"
	TagETF     = "etf"
	TagGraphQL = "graphql"
)

// The parameters several endpoints share.
var (
	includeRaw = Bool("include_raw", "includeRaw", false, false, "IncludeRaw",
		"Whether posts carry `raw`, the source payload. Large payloads make pages end early (see Pagination); a post whose payload alone is over a page's size bound gives 400 naming this parameter.")
	from = Date("from", "From", "Earliest `flow_date`, inclusive: a real calendar date `YYYY-MM-DD`. A `from` after `to` gives 400.")
	to   = Date("to", "To", "Latest `flow_date`, inclusive: a real calendar date `YYYY-MM-DD`.")
)

// streamLimits ends the description of every stream.
const streamLimits = " Each stream counts once against the key's rate limit when it opens; the open streams and GraphQL subscriptions of a key together are limited by tier (per replica; over it 429 before the stream starts)."

// Endpoints returns the keyed /v1 endpoints; with etf, those of the ETF
// flows too (and /v1/sources lists their values).
func Endpoints(etf bool) []Endpoint {
	eps := []Endpoint{
		{
			Path: "/v1/posts", Query: "posts", Shape: Page, Poll: PollPosts,
			Params: []Param{
				PageLimit(),
				Cursor(),
				Text("source", "source", "PostSource", "Only posts whose `source` is exactly this label (see `/v1/sources`). An unknown label gives an empty page, not an error."),
				Since(),
				Coins(),
				Search("PostQuery", "the body"),
				SinceID(),
				Position(),
				Bool("include_body", "includeBody", true, true, "IncludeBody", "Whether posts carry `body`."),
				includeRaw,
			},
			OperationID: "listPosts", Summary: "List curated posts", Tag: TagPosts,
			Description: "Curated posts, newest first (by `id`), a page at a time.",
			Response:    "PostsPage", OK: "A page of posts.",
			Stream: &Stream{
				Path: "/v1/posts/stream", Query: "posts_stream", Event: "post",
				OperationID: "streamPosts", Summary: "Stream new curated posts (SSE)",
				Description: "New curated posts as Server-Sent Events, with the filters of `/v1/posts`; with `since`, first every post created since then." + streamLimits,
			},
		},
		{
			Path: "/v1/posts/{id}", Query: "post", Shape: Item, Kind: "post",
			Params:      []Param{includeRaw},
			OperationID: "getPost", Summary: "Get a curated post", Tag: TagPosts,
			Description: "One curated post by its numeric `id`, with `body` and, with `include_raw=true`, the source payload `raw`. An id that is not a positive 64-bit integer gives 400; a well-formed id with no post gives 404.",
			Response:    "PostResponse", OK: "The post.", PathID: "PostID",
		},
		{
			Path: "/v1/briefs", Query: "briefs", Shape: Page,
			Params: []Param{
				PageLimit(),
				Cursor(),
				Date("from", "BriefsFrom", "Only briefs whose week starts on or after this day (`week_start`, inclusive): a real calendar date `YYYY-MM-DD`."),
			},
			OperationID: "listBriefs", Summary: "List weekly briefs", Tag: TagBriefs,
			Description: "Weekly briefs in list form (without `content`), newest first (by `id`), a page at a time.",
			Response:    "BriefsPage", OK: "A page of briefs.",
		},
		{
			Path: "/v1/briefs/{id}", Query: "brief", Shape: Item, Kind: "brief",
			OperationID: "getBrief", Summary: "Get a weekly brief with its Markdown", Tag: TagBriefs,
			Description: "One weekly brief by its numeric `id`, in full form: the fields of the list form plus `content`, the brief as Markdown. An id that is not a positive 64-bit integer gives 400; a well-formed id with no brief gives 404.",
			Response:    "BriefResponse", OK: "The brief in full form.", PathID: "BriefID",
		},
		{
			Path: "/v1/firehose", Query: "firehose", Shape: Page, Poll: PollFirehose,
			Params: []Param{
				PageLimit(),
				Cursor(),
				Enum("pane", "pane", PaneValues, "Pane", "Only messages of this pane, written exactly; any other value gives 400 listing the panes."),
				Text("source", "source", "FirehoseSource", "Only messages whose `source` contains this text, case-insensitive. `%` and `_` are literal characters, not wildcards."),
				Bool("important", "important", nil, false, "Important", "When true, only messages flagged `important`; false (or absent) means no filter."),
				Since(),
				Coins(),
				Search("FirehoseQuery", "the title, body and AI summary together"),
				SinceID(),
				Position(),
				Bool("include_summary", "includeSummary", false, false, "IncludeSummary", "Whether messages carry `summary_ai`."),
			},
			OperationID: "listFirehose", Summary: "List firehose messages", Tag: TagFeed,
			Description: "The unfiltered upstream news stream, newest first (by `id`), a page at a time.",
			Response:    "FirehosePage", OK: "A page of firehose messages.",
			Stream: &Stream{
				Path: "/v1/firehose/stream", Query: "firehose_stream", Event: "firehose_message",
				OperationID: "streamFirehose", Summary: "Stream new firehose messages (SSE)",
				Description: "New firehose messages as Server-Sent Events, with the filters of `/v1/firehose`; with `since`, first every message created since then." + streamLimits,
			},
		},
		{
			Path: "/v1/sources", Query: "sources", Shape: Value,
			OperationID: "getSources", Summary: "Valid filter values", Tag: TagSources,
			Description: "The valid values of the filters, each list sorted. Every listed value works as a filter.",
			Response:    "SourcesResponse", OK: "The filter values.",
		},
	}
	if !etf {
		return eps
	}
	eps[len(eps)-1].Query = "sources_etf"
	return append(eps,
		Endpoint{
			Path: "/v1/etf-flows", Query: "etf_flows", Shape: OptionalPage, Units: "usd", ETF: true,
			Params:      []Param{Assets(), from, to, EtfLimit(), Paginate(), Cursor()},
			Check:       All(FromNotAfterTo, CursorPaginates),
			OperationID: "listEtfFlows", Summary: "List daily ETF flows", Tag: TagETF,
			Description: "Daily US spot-ETF flows, ordered by `flow_date` descending, then asset in the order BTC, ETH, SOL, HYPE. By default not paginated (`pagination` is null): narrow the window with `from`, `to` and `limit`. To walk the whole history, ask for `paginate=true`: the answer then carries `pagination` like the paginated lists, and `cursor` reads the next, older page of the same filters. `funds_complete` says whether the day's per-fund figures (`/v1/etf-flows/funds`) add up to the record.",
			Response:    "EtfFlowsResponse", OK: "The flow records.",
		},
		Endpoint{
			Path: "/v1/etf-flows/funds", Query: "etf_fund_flows", Shape: Page, Units: "usd", ETF: true,
			Params:      []Param{Assets(), Funds(), from, to, EtfLimit(), Cursor()},
			Check:       FromNotAfterTo,
			OperationID: "listEtfFundFlows", Summary: "List each fund's daily ETF figures", Tag: TagETF,
			Description: "Each fund's daily figures, ordered by `flow_date` descending, then asset in the order BTC, ETH, SOL, HYPE, then ticker; paginated with a keyset cursor like the other paginated lists. A fund without a figure for a day has no record for it, never a zero: a figure not yet published is absent, and the day's asset record says so with `funds_complete: false`.",
			Response:    "EtfFundFlowsPage", OK: "A page of per-fund figures.",
		},
		Endpoint{
			Path: "/v1/etf-funds", Query: "etf_funds", Shape: Value, Units: "usd", ETF: true,
			Params:      []Param{Assets()},
			OperationID: "listEtfFunds", Summary: "List the US spot-ETF funds", Tag: TagETF,
			Description: "Every fund of the selected assets (ticker, issuer, name, yearly fee, launch date, exchange), ordered by asset in the order BTC, ETH, SOL, HYPE, then ticker (`pagination` is null).",
			Response:    "EtfFundsResponse", OK: "The funds.",
		},
		Endpoint{
			Path: "/v1/etf-flows/latest", Query: "etf_flows_latest", Shape: Value, Units: "usd", ETF: true,
			Params:      []Param{Assets()},
			OperationID: "listLatestEtfFlows", Summary: "Latest ETF flow of each asset", Tag: TagETF,
			Description: "The record with the most recent `flow_date` of each asset, in the order BTC, ETH, SOL, HYPE (`pagination` is null).",
			Response:    "EtfFlowsResponse", OK: "The newest record of each asset.",
		},
		Endpoint{
			Path: "/v1/etf-flows/summary", Query: "etf_summary", Shape: Value, Units: "usd", ETF: true,
			Params:      []Param{Assets()},
			OperationID: "getEtfFlowsSummary", Summary: "ETF flows summarised: periods and streak", Tag: TagETF,
			Description: "The flows summarised as of `as_of`, the latest flow date of the selected assets (`pagination` is null): per asset (in the order BTC, ETH, SOL, HYPE) and for the selected assets together (`total`), the latest day's `net_inflow`, the sums of the latest 7 and 30 trading days, month and year to date, `cum_net_inflow`, `net_assets` and the current `streak`. A day on which an asset has no figure is absent, never counted as zero: an asset's trading days are the days it has a figure (its `last_7d` are its 7 latest figures), the total's are the days on which any selected asset has one (the total of a day is the sum of the figures of that day). Month and year to date are the calendar days of `as_of`'s month and year up to `as_of`, for every entry. `data` is null when the selected assets have no flows.",
			Response:    "EtfSummaryResponse", OK: "The summary.",
		},
	)
}
