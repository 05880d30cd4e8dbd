package graph

import (
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/generated"
	"github.com/feedapi/feedapi/graph/limits"
	"github.com/feedapi/feedapi/graph/model"
)

// The cost model. An operation's cost estimates the size of its response
// in units of about 32 bytes of JSON, so that the complexity budget
// (Limits.MaxComplexity, 10,000 by default: some 320 KB of typical data)
// bounds what a query makes the server read, build and send:
//
//   - a field costs 1 plus the cost of its selection: a scalar, an enum or
//     an object's own field is one unit;
//   - a long text field costs its typical size in units instead
//     (typicalBytes, measured on the demo data of `feedapi seed`);
//   - a list costs its length times its selection, plus 1: a connection its
//     page size (first or last, else 50), etfFlows its first (else 100),
//     etfFlowsLatest and EtfSummary.assets one item per asset, the ETF
//     connections their page size (else 100; ETF records are priced by
//     their fields' typical size, see etfItems), the lists of funds
//     typicalFunds items, topFunds its first (else 5). Nested lists
//     multiply.
//
// Every REST endpoint's fixed query costs at most 4,001 at its largest
// page (rest's TestFixedQueriesCostWellUnderTheBudget); the dashboard
// queries of the README and of feedbench cost 35 and 321.
const costUnitBytes = 32

// typicalBytes are the mean lengths of the long text fields on the demo
// data; each costs its typical size in units, rounded up (textCost).
var typicalBytes = struct {
	briefContent, postBody, postRaw, firehoseBody, firehoseSummary int
	etfField                                                       int
}{
	briefContent:    2682, // Brief.content: 84 units
	postBody:        182,  // Post.body: 6
	postRaw:         492,  // Post.raw: 16
	firehoseBody:    187,  // FirehoseMessage.body: 6
	firehoseSummary: 92,   // FirehoseMessage.summaryAi: 3
	etfField:        27,   // a field of an ETF record (EtfFlow, EtfFundFlow), name included
}

// etfItems is the cost of n ETF records of selection child: ETF records
// are numbers, dates and codes, each field less than a unit, so they are
// priced at typicalBytes.etfField a field, rounded up over the page.
func etfItems(n, child int) int {
	return (n*child*typicalBytes.etfField + costUnitBytes - 1) / costUnitBytes
}

// textCost is the cost of a text field of the given typical size.
func textCost(bytes int) int { return (bytes + costUnitBytes - 1) / costUnitBytes }

// setComplexity installs the cost model in gqlgen's complexity functions,
// which gqlgen's complexity limit sums over an operation before it runs.
// Page sizes are clamped into their valid range here; out-of-range sizes
// are refused by the resolvers with a precise message, before any SQL.
func setComplexity(c *generated.ComplexityRoot) {
	text := func(bytes int) func(int) int {
		cost := textCost(bytes)
		return func(int) int { return cost }
	}
	c.Brief.Content = text(typicalBytes.briefContent)
	c.Post.Body = text(typicalBytes.postBody)
	c.Post.Raw = text(typicalBytes.postRaw)
	c.FirehoseMessage.Body = text(typicalBytes.firehoseBody)
	c.FirehoseMessage.SummaryAI = text(typicalBytes.firehoseSummary)

	conn := func(child int, first, last *int) int {
		return 1 + pageCost(first, last)*child
	}
	c.Query.Posts = func(child int, first *int, _ *string, last *int, _ *string, _ *string, _ *time.Time, _ []string, _ *string, _ *int64, _ *string, _ *model.Collapse) int {
		return conn(child, first, last)
	}
	c.Query.Briefs = func(child int, first *int, _ *string, last *int, _ *string, _ *time.Time) int {
		return conn(child, first, last)
	}
	c.Query.Firehose = func(child int, first *int, _ *string, last *int, _ *string, _ *db.Pane, _ *string, _ *bool, _ *time.Time, _ []string, _ *string, _ *int64, _ *string, _ *model.Collapse) int {
		return conn(child, first, last)
	}
	c.Brief.Posts = func(child int, first *int, _ *string, last *int, _ *string) int {
		return conn(child, first, last)
	}
	c.Query.PostStream = func(child int, _ *string, first *int, _ *string, _ *time.Time, _ []string, _ *string, _ *model.Collapse) int {
		return 1 + streamCost(first)*child
	}
	c.Query.FirehoseStream = func(child int, _ *string, first *int, _ *db.Pane, _ *string, _ *bool, _ *time.Time, _ []string, _ *string, _ *model.Collapse) int {
		return 1 + streamCost(first)*child
	}
	c.Query.EtfFlows = func(child int, _ []db.Asset, _, _ *time.Time, first *int) int {
		n := defaultEtfSize
		if first != nil {
			n = min(max(*first, 1), maxEtfSize)
		}
		return 1 + etfItems(n, child)
	}
	c.Query.EtfFlowsLatest = func(child int, _ []db.Asset) int {
		return 1 + len(db.Assets)*child
	}
	c.EtfSummary.Assets = func(child int) int {
		return 1 + len(db.Assets)*child
	}
	etfConn := func(child int, first, last *int) int {
		n := defaultEtfSize
		switch {
		case first != nil:
			n = *first
		case last != nil:
			n = *last
		}
		return 1 + etfItems(min(max(n, 1), maxEtfSize), child)
	}
	// A page's pageInfo is written once, not per item: it costs the
	// least a field may (gqlgen ignores less), so that the page size
	// multiplies one unit of it rather than its whole selection.
	c.EtfFlowConnection.PageInfo = func(int) int { return 1 }
	c.EtfFundFlowConnection.PageInfo = func(int) int { return 1 }
	c.Query.EtfFlowsConnection = func(child int, _ []db.Asset, _, _ *time.Time, first *int, _ *string, last *int, _ *string) int {
		return etfConn(child, first, last)
	}
	c.Query.EtfFundFlows = func(child int, _ []db.Asset, _ []string, _, _ *time.Time, first *int, _ *string, last *int, _ *string) int {
		return etfConn(child, first, last)
	}
	c.Query.EtfFunds = func(child int, _ []db.Asset) int {
		return 1 + typicalFunds*child
	}
	c.Sources.EtfFunds = func(int) int { return 1 + typicalFunds }
	c.Sources.Delays = func(child int) int { return 1 + typicalSources*child }
	c.Query.Stories = func(child int, first *int, _ *string, _ []string, _ *string, _ *db.Pane, _ *time.Time) int {
		n := limits.StoriesPageDefault
		if first != nil {
			n = min(max(*first, 1), maxPageSize)
		}
		return 1 + n*child
	}
	// A story's items: its first n, else a typical story's size. An item
	// is a Post or a FirehoseMessage, and the selection of the union is
	// priced as both fragments together: an item costs half of it.
	storyItems := func(child int, first *int) int {
		n := typicalStoryItems
		if first != nil {
			n = min(max(*first, 1), maxPageSize)
		}
		return 1 + n*((child+1)/2)
	}
	c.Story.Items = storyItems
	c.Story.ItemsConnection = func(child int, first *int, _ *string) int { return storyItems(child, first) }
	c.StoryItemConnection.PageInfo = func(int) int { return 1 }
	c.EtfSummaryEntry.TopFunds = func(child int, first *int) int {
		n := defaultTopFund
		if first != nil {
			n = min(max(*first, 1), maxTopFunds)
		}
		return 1 + n*child
	}
}

// typicalSources is the number of sources a list of sources' delays is
// priced at; typicalStoryItems the items of a story whose items are asked
// for without a bound (most stories hold a handful).
const (
	typicalSources    = 100
	typicalStoryItems = 10
)

// typicalFunds is the number of ETF funds a list of them is priced at: the
// US spot ETFs of the four assets, with room for more.
const typicalFunds = 40

// pageCost is the number of items a connection may return for its arguments.
func pageCost(first, last *int) int {
	n := defaultPageSize
	switch {
	case first != nil:
		n = *first
	case last != nil:
		n = *last
	}
	return min(max(n, 1), maxPageSize)
}

// streamCost is the number of items a stream read may return.
func streamCost(first *int) int {
	if first == nil {
		return streamPageSize
	}
	return min(max(*first, 1), maxPageSize)
}
