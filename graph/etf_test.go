package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
)

// addEtf inserts one record per asset and day, for days days from start,
// with net inflow chosen to exercise the Money format.
func (e *env) addEtf(assets []db.Asset, start time.Time, days int) {
	e.t.Helper()
	var rows []db.EtfFlow
	for d := range days {
		for i, a := range assets {
			rows = append(rows, db.EtfFlow{
				Asset: a, FlowDate: start.AddDate(0, 0, d),
				NetInflow: db.Money(-7 + int64(d*100+i)), CumNetInflow: db.Money(150000000000),
				NetAssets: db.Money(int64(d) * 1_000_000_00), ValueTraded: 0,
				UpdatedAt: start.AddDate(0, 0, d+1),
			})
		}
	}
	if _, err := e.bdb.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
		e.t.Fatalf("insert etf flows: %v", err)
	}
}

type etfRow struct {
	UID, Asset, FlowDate, UpdatedAt string
	NetInflow, CumNetInflow         json.Number
}

func TestEtfFlows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	start := time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC)
	e.addEtf([]db.Asset{db.AssetHYPE, db.AssetBTC, db.AssetSOL, db.AssetETH}, start, 3)

	uids := func(rows []etfRow) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = r.UID
		}
		return out
	}
	tests := []struct {
		name string
		args string
		want []string
	}{
		{"ordered by day descending then asset order", `from: "2031-03-02"`, []string{
			"etf_BTC_2031-03-03", "etf_ETH_2031-03-03", "etf_SOL_2031-03-03", "etf_HYPE_2031-03-03",
			"etf_BTC_2031-03-02", "etf_ETH_2031-03-02", "etf_SOL_2031-03-02", "etf_HYPE_2031-03-02"}},
		{"assets filter", `from: "2031-03-01", assets: [HYPE, BTC]`, []string{
			"etf_BTC_2031-03-03", "etf_HYPE_2031-03-03", "etf_BTC_2031-03-02", "etf_HYPE_2031-03-02",
			"etf_BTC_2031-03-01", "etf_HYPE_2031-03-01"}},
		{"from and to are inclusive", `from: "2031-03-02", to: "2031-03-02", assets: [ETH]`, []string{"etf_ETH_2031-03-02"}},
		{"first limits", `from: "2031-03-01", first: 3`, []string{"etf_BTC_2031-03-03", "etf_ETH_2031-03-03", "etf_SOL_2031-03-03"}},
		{"from equal to to", `from: "2031-03-03", to: "2031-03-03", assets: [SOL]`, []string{"etf_SOL_2031-03-03"}},
		{"nothing in range", `from: "2031-04-01"`, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out struct{ EtfFlows []etfRow }
			e.with(t).query(fmt.Sprintf(`{ etfFlows(%s) { uid } }`, tt.args), nil, &out)
			if got := uids(out.EtfFlows); !slices.Equal(got, tt.want) {
				t.Errorf("uids = %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("latest per asset in asset order", func(t *testing.T) {
		var out struct{ EtfFlowsLatest []etfRow }
		e.with(t).query(`{ etfFlowsLatest { uid } }`, nil, &out)
		want := []string{"etf_BTC_2031-03-03", "etf_ETH_2031-03-03", "etf_SOL_2031-03-03", "etf_HYPE_2031-03-03"}
		if got := uids(out.EtfFlowsLatest); !slices.Equal(got, want) {
			t.Errorf("uids = %v, want %v", got, want)
		}
	})
	t.Run("latest filtered by asset", func(t *testing.T) {
		var out struct{ EtfFlowsLatest []etfRow }
		e.with(t).query(`{ etfFlowsLatest(assets: [SOL, ETH, SOL]) { uid } }`, nil, &out)
		want := []string{"etf_ETH_2031-03-03", "etf_SOL_2031-03-03"}
		if got := uids(out.EtfFlowsLatest); !slices.Equal(got, want) {
			t.Errorf("uids = %v, want %v", got, want)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct{ args, param, msg string }{
			{`first: 0`, "first", "first must be an integer from 1 to 500"},
			{`first: 501`, "first", "first must be an integer from 1 to 500"},
			{`from: "2031-03-02", to: "2031-03-01"`, "from", "from must not be after to"},
		} {
			r := e.with(t).do(db.TierInternal, fmt.Sprintf(`{ etfFlows(%s) { uid } }`, tc.args), nil)
			if len(r.Errors) != 1 || r.Errors[0].Extensions.Code != "bad_request" || r.Errors[0].Extensions.Param != tc.param || r.Errors[0].Message != tc.msg {
				t.Errorf("%s: errors = %+v, want bad_request %s %q", tc.args, r.Errors, tc.param, tc.msg)
			}
		}
		r := e.with(t).do(db.TierInternal, `{ etfFlows(from: "2031-02-30") { uid } }`, nil)
		if len(r.Errors) != 1 || r.Errors[0].Extensions.Code != "bad_request" || !strings.Contains(r.Errors[0].Message, "calendar date") {
			t.Errorf("impossible date: errors = %+v, want bad_request", r.Errors)
		}
	})
}

func TestScalarFormats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.exec(`INSERT INTO etf_flows (asset, flow_date, net_inflow, cum_net_inflow, net_assets, value_traded, updated_at)
		VALUES ('SOL', '2031-05-05', -0.07, 1500000000, 12.5, 0, '2031-05-06T07:08:09Z'),
		       ('ETH', '2031-05-05', 123456789012.34, -1500000000.1, 0.01, 99999999999999.99, '2031-05-06T07:08:09.123456+02:00')`)
	r := e.do(db.TierInternal, `{ etfFlows(from: "2031-05-05", to: "2031-05-05") { asset flowDate netInflow cumNetInflow netAssets valueTraded updatedAt } }`, nil)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	// The raw JSON, not a decoding of it: the exact digits matter.
	want := `{"etfFlows":[` +
		`{"asset":"ETH","flowDate":"2031-05-05","netInflow":123456789012.34,"cumNetInflow":-1500000000.10,"netAssets":0.01,"valueTraded":99999999999999.99,"updatedAt":"2031-05-06T05:08:09.123Z"},` +
		`{"asset":"SOL","flowDate":"2031-05-05","netInflow":-0.07,"cumNetInflow":1500000000.00,"netAssets":12.50,"valueTraded":0.00,"updatedAt":"2031-05-06T07:08:09.000Z"}]}`
	if got := string(r.Data); got != want {
		t.Errorf("data =\n%s\nwant\n%s", got, want)
	}
}
