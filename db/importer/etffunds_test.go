package importer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
)

var (
	fundBase = []string{
		`"ticker":"TSTX"`, `"asset":"BTC"`, `"issuer":"Test Issuer"`, `"name":"Test Bitcoin ETF"`,
		`"fee":0.25`, `"launch_date":"2030-06-03"`, `"exchange":"Nasdaq"`,
	}
	// A figure of a seeded fund (IBIT, launched 2024-01-11) on a day far
	// from the seeded data.
	fundFlowBase = []string{
		`"ticker":"IBIT"`, `"flow_date":"2031-01-06"`, `"net_inflow":"-1234.5"`, `"net_assets":98765432109.87`,
		`"value_traded":"1000"`, `"holdings":"812345.12345678"`, `"updated_at":"2031-01-07T01:00:00Z"`,
	}
)

func TestImportEtfFunds(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	funds, flows := importer.KindEtfFunds, importer.KindEtfFundFlows
	good := []struct {
		name, line, where, want string
		kind                    importer.Kind
	}{
		{"fund", line(fundBase), "ticker = 'TSTX'", `{"ticker":"TSTX","asset":"BTC","issuer":"Test Issuer","name":"Test Bitcoin ETF",
			"fee":0.25,"launch_date":"2030-06-03","exchange":"Nasdaq"}`, funds},
		{"fund in lower case with the fee as text", line(fundBase, `"ticker":"tsty"`, `"asset":"sol"`, `"fee":"1.5"`),
			"ticker = 'TSTY'", `{"ticker":"TSTY","asset":"SOL","issuer":"Test Issuer","name":"Test Bitcoin ETF",
			"fee":1.50,"launch_date":"2030-06-03","exchange":"Nasdaq"}`, funds},
		{"figure", line(fundFlowBase), "ticker = 'IBIT' AND flow_date = '2031-01-06'", `{"ticker":"IBIT","asset":"BTC","flow_date":"2031-01-06",
			"net_inflow":-1234.50,"net_assets":98765432109.87,"value_traded":1000.00,"holdings":812345.12345678,
			"updated_at":"2031-01-07T01:00:00+00:00"}`, flows},
		{"figure in its REST form, without what was not published", line(fundFlowBase, `"uid":"etffund_FBTC_2031-01-06"`,
			`"ticker":"fbtc"`, `"asset":"btc"`, `"net_assets":null`, `-value_traded`, `"holdings":null`),
			"ticker = 'FBTC' AND flow_date = '2031-01-06'", `{"ticker":"FBTC","asset":"BTC","flow_date":"2031-01-06",
			"net_inflow":-1234.50,"net_assets":null,"value_traded":null,"holdings":null,
			"updated_at":"2031-01-07T01:00:00+00:00"}`, flows},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			res, rejects := run(t, bdb, tt.kind, importer.Options{}, tt.line)
			if rejects != "" {
				t.Fatalf("rejects: %s", rejects)
			}
			if want := (importer.Result{Read: 1, Imported: 1}); res != want {
				t.Errorf("result: got %+v, want %+v", res, want)
			}
			if got, want := stored(t, bdb, table(tt.kind), tt.where), jsonb(t, bdb, tt.want); got != want {
				t.Errorf("stored:\n got %s\nwant %s", got, want)
			}
		})
	}
	t.Run("a fund without a figure for a day has no row", func(t *testing.T) {
		if got := figuresOf(t, bdb, "2031-01-06"); got != 2 {
			t.Errorf("figures of 2031-01-06: %d rows, want the 2 imported (no zeros for the other funds)", got)
		}
	})

	bad := []struct {
		name, line, want string
		kind             importer.Kind
	}{
		{"ticker with a dot", line(fundBase, `"ticker":"BRK.B"`), "ticker: must be 1 to 7 letters A-Z or digits", funds},
		{"ticker too long", line(fundBase, `"ticker":"ABCDEFGH"`), "ticker: must be 1 to 7 letters A-Z or digits", funds},
		{"unknown asset", line(fundBase, `"asset":"DOGE"`), "asset: must be one of BTC, ETH, SOL, HYPE", funds},
		{"fee with three decimals", line(fundBase, `"fee":0.255`), "fee: must be a percentage from 0 to 999.99 with at most two decimals (0.25 for 0.25%)", funds},
		{"negative fee", line(fundBase, `"fee":-0.1`), "fee: must be a percentage from 0 to 999.99 with at most two decimals (0.25 for 0.25%)", funds},
		{"blank issuer", line(fundBase, `"issuer":" "`), "issuer: must not be empty", funds},
		{"missing launch date", line(fundBase, `-launch_date`), "launch_date: required", funds},
		{"a stored fund moved to another asset", line(fundBase, `"ticker":"IBIT"`, `"asset":"ETH"`), "asset: IBIT is a BTC fund; a fund's asset cannot change", funds},
		{"figure of an unknown fund", line(fundFlowBase, `"ticker":"NOPE"`), "ticker: no fund NOPE: import it with etf-funds first", flows},
		{"figure naming another asset", line(fundFlowBase, `"asset":"ETH"`), "asset: IBIT is a BTC fund, not ETH", flows},
		{"figure before the launch", line(fundFlowBase, `"flow_date":"2024-01-10"`), "flow_date: 2024-01-10 is before IBIT's launch on 2024-01-11", flows},
		{"holdings with nine decimals", line(fundFlowBase, `"holdings":"1.123456789"`), "holdings: must be a non-negative decimal amount of coins with at most 8 decimals, below 10^10, and no exponent", flows},
		{"negative holdings", line(fundFlowBase, `"holdings":-1`), "holdings: must be a non-negative decimal amount of coins with at most 8 decimals, below 10^10, and no exponent", flows},
		{"negative net assets", line(fundFlowBase, `"net_assets":"-1"`), "net_assets: must not be negative", flows},
		{"net inflow with an exponent", line(fundFlowBase, `"net_inflow":1e6`), "net_inflow: must be a decimal amount with at most two decimals and no exponent", flows},
		{"missing net inflow", line(fundFlowBase, `-net_inflow`), "net_inflow: required", flows},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			rows, versions := fingerprint(t, bdb, table(tt.kind))
			res, rejects := run(t, bdb, tt.kind, importer.Options{}, tt.line)
			if got, want := rejects, "line 1: "+tt.want+"\n"; got != want {
				t.Errorf("rejects: got %q, want %q", got, want)
			}
			if want := (importer.Result{Read: 1, Rejected: 1}); res != want {
				t.Errorf("result: got %+v, want %+v", res, want)
			}
			if r, v := fingerprint(t, bdb, table(tt.kind)); r != rows || v != versions {
				t.Errorf("%s changed", table(tt.kind))
			}
		})
	}
}

// TestImportEtfFundFlowsFollow imports figures with --follow, as a scraper
// piping them in would, and again, which changes nothing.
func TestImportEtfFundFlowsFollow(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	lines := []string{
		line(fundFlowBase),
		line(fundFlowBase, `"ticker":"GBTC"`, `"net_inflow":-99.99`),
		line(fundFlowBase, `"ticker":"NOPE"`),
		line(fundFlowBase, `"ticker":"ETHA"`, `"holdings":"4000000"`),
	}
	for round := range 2 {
		var rejects strings.Builder
		res, err := importer.Import(context.Background(), bdb, importer.KindEtfFundFlows,
			strings.NewReader(strings.Join(lines, "\n")+"\n"), importer.Options{Follow: true, Rejects: &rejects})
		if err != nil {
			t.Fatal(err)
		}
		if want := (importer.Result{Read: 4, Imported: 3, Rejected: 1}); res != want {
			t.Errorf("round %d: result %+v, want %+v", round, res, want)
		}
		if got, want := rejects.String(), "line 3: ticker: no fund NOPE: import it with etf-funds first\n"; got != want {
			t.Errorf("round %d: rejects %q, want %q", round, got, want)
		}
	}
	if got := figuresOf(t, bdb, "2031-01-06"); got != 3 {
		t.Errorf("figures: %d, want 3", got)
	}
}

// figuresOf counts the per-fund figures of a day.
func figuresOf(t *testing.T, bdb *bun.DB, day string) int {
	t.Helper()
	n, err := bdb.NewSelect().Table("etf_fund_flows").Where("flow_date = ?", day).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}
