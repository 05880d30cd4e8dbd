package graph

import (
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/generated"
)

// The cost model. An operation's cost estimates the size of its response
// in units of about 32 bytes of JSON, so that the complexity budget
// (Limits.MaxComplexity, 10,000 by default: some 320 KB of typical data)
// bounds what a query makes the server read, build and send:
//
//   - a field costs 1 plus the cost of its selection: a scalar, an enum or
//     an object's own field is one unit;
//   - a long text field costs its typical size in units instead (the table
//     below, measured on the demo data of `feedapi seed`);
//   - a list costs its length times its selection, plus 1: a connection its
//     page size (first or last, else 50), etfFlows its first (else 100),
//     etfFlowsLatest one item per asset. Nested lists multiply.
//
// Every REST endpoint's fixed query costs at most 4,001 at its largest
// page (rest's TestFixedQueriesCostWellUnderTheBudget); the dashboard
// queries of the README and of feedbench cost 35 and 321.
const costUnitBytes = 32

// longTextCost is what each long text field costs: its typical size on
// the demo data (mean length in bytes, in parentheses) divided by
// costUnitBytes, rounded up.
var longTextCost = struct {
	briefContent, postBody, postRaw, firehoseBody, firehoseSummary int
}{
	briefContent:    84, // Brief.content (2,682)
	postBody:        6,  // Post.body (182)
	postRaw:         16, // Post.raw (492)
	firehoseBody:    6,  // FirehoseMessage.body (187)
	firehoseSummary: 3,  // FirehoseMessage.summaryAi (92)
}

// setComplexity installs the cost model in gqlgen's complexity functions,
// which gqlgen's complexity limit sums over an operation before it runs.
// Page sizes are clamped into their valid range here; out-of-range sizes
// are refused by the resolvers with a precise message, before any SQL.
func setComplexity(c *generated.ComplexityRoot) {
	text := func(cost int) func(int) int {
		return func(int) int { return cost }
	}
	c.Brief.Content = text(longTextCost.briefContent)
	c.Post.Body = text(longTextCost.postBody)
	c.Post.Raw = text(longTextCost.postRaw)
	c.FirehoseMessage.Body = text(longTextCost.firehoseBody)
	c.FirehoseMessage.SummaryAI = text(longTextCost.firehoseSummary)

	conn := func(child int, first, last *int) int {
		return 1 + pageCost(first, last)*child
	}
	c.Query.Posts = func(child int, first *int, _ *string, last *int, _ *string, _ *string, _ *time.Time) int {
		return conn(child, first, last)
	}
	c.Query.Briefs = func(child int, first *int, _ *string, last *int, _ *string) int {
		return conn(child, first, last)
	}
	c.Query.Firehose = func(child int, first *int, _ *string, last *int, _ *string, _ *db.Pane, _ *string, _ *bool, _ *time.Time) int {
		return conn(child, first, last)
	}
	c.Brief.Posts = func(child int, first *int, _ *string, last *int, _ *string) int {
		return conn(child, first, last)
	}
	c.Query.EtfFlows = func(child int, _ []db.Asset, _, _ *time.Time, first *int) int {
		n := defaultEtfSize
		if first != nil {
			n = min(max(*first, 1), maxEtfSize)
		}
		return 1 + n*child
	}
	c.Query.EtfFlowsLatest = func(child int, _ []db.Asset) int {
		return 1 + len(db.Assets)*child
	}
}

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
