package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db"
)

// TestEtfFundFlowsPaging pages etfFundFlows forward and backward over the
// seeded figures: backward pages read the same rows as the forward ones,
// and both agree with SQL.
func TestEtfFundFlowsPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	type page struct {
		EtfFundFlows struct {
			Edges []struct {
				Cursor string
				Node   struct{ UID string }
			}
			PageInfo struct {
				HasNextPage, HasPreviousPage bool
				StartCursor, EndCursor       *string
			}
		}
	}
	const fields = `edges { cursor node { uid } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`
	var want []string
	if err := e.bdb.NewRaw(`SELECT 'etffund_' || ff.ticker || '_' || ff.flow_date FROM etf_fund_flows ff JOIN etf_funds f USING (ticker)
		WHERE f.asset IN ('SOL', 'HYPE') AND ff.flow_date >= '2026-10-01'
		ORDER BY ff.flow_date DESC, f.asset, ff.ticker COLLATE "C"`).Scan(t.Context(), &want); err != nil {
		t.Fatal(err)
	}
	filter := `assets: [HYPE, SOL], from: "2026-10-01"`

	var forward []string
	var cursors []string
	after := ""
	for {
		var p page
		e.query(fmt.Sprintf(`{ etfFundFlows(%s, first: 13%s) { %s } }`, filter, after, fields), nil, &p)
		for _, ed := range p.EtfFundFlows.Edges {
			forward = append(forward, ed.Node.UID)
			cursors = append(cursors, ed.Cursor)
		}
		if !p.EtfFundFlows.PageInfo.HasNextPage {
			break
		}
		after = fmt.Sprintf(`, after: %q`, *p.EtfFundFlows.PageInfo.EndCursor)
	}
	if !slices.Equal(forward, want) {
		t.Fatalf("forward: %d figures, SQL %d", len(forward), len(want))
	}

	var backward []string
	before := fmt.Sprintf(`, before: %q`, cursors[len(cursors)-1])
	backward = append(backward, forward[len(forward)-1])
	for {
		var p page
		e.query(fmt.Sprintf(`{ etfFundFlows(%s, last: 17%s) { %s } }`, filter, before, fields), nil, &p)
		var uids []string
		for _, ed := range p.EtfFundFlows.Edges {
			uids = append(uids, ed.Node.UID)
		}
		backward = append(uids, backward...)
		if !p.EtfFundFlows.PageInfo.HasPreviousPage {
			break
		}
		before = fmt.Sprintf(`, before: %q`, *p.EtfFundFlows.PageInfo.StartCursor)
	}
	if !slices.Equal(backward, want) {
		t.Errorf("backward: %d figures, SQL %d", len(backward), len(want))
	}
}

func TestEtfFundsFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	t.Run("a figure's fund, and the day's completeness", func(t *testing.T) {
		var out struct {
			EtfFundFlows struct {
				Nodes []struct {
					Ticker, Asset string
					Holdings      *json.Number
					Fund          struct{ Ticker, Issuer, LaunchDate string }
				}
			}
			EtfFlowsConnection struct {
				Nodes []struct {
					Asset, FlowDate string
					FundsComplete   bool
				}
			}
		}
		e.with(t).query(`{
			etfFundFlows(funds: ["ibit", "BSOL"], first: 4) { nodes { ticker asset holdings fund { ticker issuer fee launchDate } } }
			etfFlowsConnection(assets: [BTC, ETH], first: 4) { nodes { asset flowDate fundsComplete } }
		}`, nil, &out)
		var got []string
		for _, n := range out.EtfFundFlows.Nodes {
			got = append(got, n.Ticker+" "+n.Asset+" "+n.Fund.Ticker+" "+n.Fund.Issuer+" "+n.Fund.LaunchDate)
		}
		want := []string{"IBIT BTC IBIT BlackRock 2024-01-11", "BSOL SOL BSOL Bitwise 2025-10-28",
			"IBIT BTC IBIT BlackRock 2024-01-11", "BSOL SOL BSOL Bitwise 2025-10-28"}
		if !slices.Equal(got, want) {
			t.Errorf("figures: %v, want %v", got, want)
		}
		var complete []string
		for _, n := range out.EtfFlowsConnection.Nodes {
			complete = append(complete, fmt.Sprintf("%s %s %v", n.Asset, n.FlowDate, n.FundsComplete))
		}
		// The seed holds back one BTC figure of its latest day.
		if want := []string{"BTC 2026-11-13 false", "ETH 2026-11-13 true", "BTC 2026-11-12 true", "ETH 2026-11-12 true"}; !slices.Equal(complete, want) {
			t.Errorf("fundsComplete: %v, want %v", complete, want)
		}
	})

	t.Run("a summary row's top funds are funds, three statements for all rows", func(t *testing.T) {
		var out struct {
			EtfSummary struct {
				Total struct {
					Holdings *json.Number
					TopFunds []struct{ Fund struct{ Asset string } }
				}
				Assets []struct {
					Asset    string
					Holdings *json.Number
					TopFunds []struct {
						Fund struct{ Ticker, Asset string }
						Days int
					}
				}
			}
		}
		e := newEnv(t) // its own statement counter
		before := e.queries.Load()
		e.query(`{ etfSummary(assets: [HYPE, ETH]) {
			total { holdings topFunds(first: 50) { fund { asset } } }
			assets { asset holdings topFunds(first: 1) { fund { ticker asset } days } }
		} }`, nil, &out)
		if n := e.queries.Load() - before; n != 3 {
			t.Errorf("%d statements, want 3: the summary, the top funds of every row, the holdings of every asset", n)
		}
		s := out.EtfSummary
		if s.Total.Holdings != nil || len(s.Total.TopFunds) != 11 {
			t.Errorf("total: holdings %v, %d top funds; want none and the 11 ETH and HYPE funds", s.Total.Holdings, len(s.Total.TopFunds))
		}
		for _, a := range s.Assets {
			if a.Holdings == nil || len(a.TopFunds) != 1 || a.TopFunds[0].Fund.Asset != a.Asset || a.TopFunds[0].Days != 30 {
				t.Errorf("%s: holdings %v, top funds %+v", a.Asset, a.Holdings, a.TopFunds)
			}
		}
	})

	t.Run("topFunds with first from a variable", func(t *testing.T) {
		var out struct {
			EtfSummary struct {
				Assets []struct{ TopFunds []struct{ Days int } }
			}
		}
		e.with(t).query(`query($n: Int) { etfSummary(assets: [BTC]) { assets { topFunds(first: $n) { days } } } }`,
			map[string]any{"n": 8}, &out)
		if got := len(out.EtfSummary.Assets[0].TopFunds); got != 8 {
			t.Errorf("%d top funds, want 8", got)
		}
	})

	t.Run("bad arguments", func(t *testing.T) {
		for _, tc := range []struct{ query, param, message string }{
			{`{ etfFundFlows(funds: ["NOPE"]) { nodes { uid } } }`, "funds", "NOPE is not a fund"},
			{`{ etfFundFlows(funds: ["BRK.B"]) { nodes { uid } } }`, "funds", "fund tickers"},
			{`{ etfFundFlows(first: 501) { nodes { uid } } }`, "first", "1 to 500"},
			{`{ etfFundFlows(first: 1, last: 1) { nodes { uid } } }`, "last", "cannot be combined"},
			{`{ etfFundFlows(from: "2026-02-01", to: "2026-01-01") { nodes { uid } } }`, "from", "not be after"},
			{`{ etfFlowsConnection(after: "AQAAAAAAAAABAAAAAAAAAAA") { nodes { uid } } }`, "cursor", "invalid"},
			{`{ etfSummary { assets { topFunds(first: 0) { days } } } }`, "first", "1 to 50"},
		} {
			r := e.with(t).do(db.TierInternal, tc.query, nil)
			if len(r.Errors) == 0 || r.Errors[0].Extensions.Code != "bad_request" || r.Errors[0].Extensions.Param != tc.param ||
				!strings.Contains(r.Errors[0].Message, tc.message) {
				t.Errorf("%s: errors %+v, want bad_request on %s saying %q", tc.query, r.Errors, tc.param, tc.message)
			}
		}
	})

	t.Run("a cursor of one ETF list is refused by the other", func(t *testing.T) {
		var out struct {
			EtfFlowsConnection struct{ PageInfo struct{ EndCursor string } }
		}
		e.with(t).query(`{ etfFlowsConnection(first: 1) { pageInfo { endCursor } } }`, nil, &out)
		r := e.with(t).do(db.TierInternal, fmt.Sprintf(`{ etfFundFlows(after: %q) { nodes { uid } } }`, out.EtfFlowsConnection.PageInfo.EndCursor), nil)
		if len(r.Errors) == 0 || r.Errors[0].Extensions.Code != "bad_request" {
			t.Errorf("errors %+v, want bad_request", r.Errors)
		}
	})
}

// TestEtfFundsAbsentWithoutETF: without ETF flows the funds' fields are
// not in the schema.
func TestEtfFundsAbsentWithoutETF(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withoutETF)
	for _, q := range []string{
		`{ etfFunds { ticker } }`,
		`{ etfFundFlows { nodes { uid } } }`,
		`{ etfFlowsConnection { nodes { uid } } }`,
		`{ sources { etfFunds } }`,
	} {
		r := e.do(db.TierInternal, q, nil)
		if len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, "Cannot query field") {
			t.Errorf("%s: errors %+v, want a validation error", q, r.Errors)
		}
	}
}
