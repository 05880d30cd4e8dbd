package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
)

// restPeriod and restEntry decode the summary with its money as the exact
// text served.
type restPeriod struct {
	NetInflow json.RawMessage `json:"net_inflow"`
	Days      int             `json:"days"`
	From      *string         `json:"from"`
}

type restEntry struct {
	Asset          *string         `json:"asset"`
	LatestFlowDate string          `json:"latest_flow_date"`
	NetInflow      json.RawMessage `json:"net_inflow"`
	Last7d         restPeriod      `json:"last_7d"`
	Last30d        restPeriod      `json:"last_30d"`
	MonthToDate    restPeriod      `json:"month_to_date"`
	YearToDate     restPeriod      `json:"year_to_date"`
	CumNetInflow   json.RawMessage `json:"cum_net_inflow"`
	NetAssets      json.RawMessage `json:"net_assets"`
	Streak         struct {
		Direction string `json:"direction"`
		Days      int    `json:"days"`
		Since     string `json:"since"`
	} `json:"streak"`
	// The funds' figures, checked by TestEtfSummaryTopFunds.
	TopFunds json.RawMessage `json:"top_funds,omitempty"`
	Holdings json.RawMessage `json:"holdings,omitempty"`
}

// asText renders the store's summary entry the way REST must serve it.
func asText(e db.EtfSummaryEntry) restEntry {
	money := func(m *db.Money) json.RawMessage {
		if m == nil {
			return json.RawMessage("null")
		}
		return json.RawMessage(m.String())
	}
	day := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := t.Format(time.DateOnly)
		return &s
	}
	period := func(p db.EtfPeriod) restPeriod {
		return restPeriod{NetInflow: money(p.NetInflow), Days: p.Days, From: day(p.From)}
	}
	out := restEntry{
		LatestFlowDate: e.LatestFlowDate.Format(time.DateOnly),
		NetInflow:      money(&e.NetInflow),
		Last7d:         period(e.Last7Days),
		Last30d:        period(e.Last30Days),
		MonthToDate:    period(e.MonthToDate),
		YearToDate:     period(e.YearToDate),
		CumNetInflow:   money(&e.CumNetInflow),
		NetAssets:      money(&e.NetAssets),
	}
	if e.Asset != nil {
		a := string(*e.Asset)
		out.Asset = &a
	}
	out.Streak.Direction, out.Streak.Days, out.Streak.Since = string(e.Streak.Direction), e.Streak.Days, e.Streak.Since.Format(time.DateOnly)
	return out
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEtfSummary(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	store := db.NewStore(a.bdb)

	// The parallel checks end before the data changes below.
	t.Run("read", func(t *testing.T) {
		for _, tc := range []struct {
			query  string
			assets []db.Asset
		}{
			{"", nil},
			{"?asset=btc", []db.Asset{db.AssetBTC}},
			{"?asset=HYPE,%20eth", []db.Asset{db.AssetETH, db.AssetHYPE}},
		} {
			t.Run("as the store computes it"+tc.query, func(t *testing.T) {
				t.Parallel()
				r := a.get(t, "/v1/etf-flows/summary"+tc.query, a.free)
				r.wantStatus(t, http.StatusOK)
				if r.env.Meta.Units == nil || *r.env.Meta.Units != "usd" {
					t.Errorf("meta.units = %v, want usd", r.env.Meta.Units)
				}
				if r.env.Pagination != nil {
					t.Errorf("pagination = %+v, want null", r.env.Pagination)
				}
				var got struct {
					AsOf   string      `json:"as_of"`
					Total  restEntry   `json:"total"`
					Assets []restEntry `json:"assets"`
				}
				dec := json.NewDecoder(bytes.NewReader(r.env.Data))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&got); err != nil {
					t.Fatalf("data %s: %v", r.env.Data, err)
				}
				got.Total.TopFunds, got.Total.Holdings = nil, nil
				for i := range got.Assets {
					got.Assets[i].TopFunds, got.Assets[i].Holdings = nil, nil
				}
				want, err := store.SummarizeEtfFlows(context.Background(), db.EtfFilter{Assets: tc.assets})
				if err != nil {
					t.Fatal(err)
				}
				if got.AsOf != want.AsOf.Format(time.DateOnly) {
					t.Errorf("as_of = %s, want %s", got.AsOf, want.AsOf.Format(time.DateOnly))
				}
				if g, w := jsonText(t, got.Total), jsonText(t, asText(want.Total)); g != w {
					t.Errorf("total\n got %s\nwant %s", g, w)
				}
				if got.Total.Asset != nil {
					t.Errorf("total has asset %q", *got.Total.Asset)
				}
				if len(got.Assets) != len(want.Assets) {
					t.Fatalf("%d assets, want %d", len(got.Assets), len(want.Assets))
				}
				for i := range want.Assets {
					if g, w := jsonText(t, got.Assets[i]), jsonText(t, asText(want.Assets[i])); g != w {
						t.Errorf("asset %d\n got %s\nwant %s", i, g, w)
					}
				}
			})
		}

		for _, tc := range []struct{ query, param string }{
			{"?asset=XRP", "asset"},
			{"?asset=", "asset"},
			{"?from=2026-01-01", "from"},
			{"?asset=btc&asset=eth", "asset"},
		} {
			t.Run("400 names the parameter"+tc.query, func(t *testing.T) {
				t.Parallel()
				r := a.get(t, "/v1/etf-flows/summary"+tc.query, a.free)
				r.wantStatus(t, http.StatusBadRequest)
				if !strings.Contains(r.env.Error.Message, tc.param) {
					t.Errorf("message %q does not name %s", r.env.Error.Message, tc.param)
				}
			})
		}

		t.Run("GraphQL etfSummary alike", func(t *testing.T) {
			t.Parallel()
			body := `{"query":"{ etfSummary(assets: [SOL]) { asOf total { netInflow last30Days { netInflow days from } streak { direction days since } } assets { asset cumNetInflow } } }"}`
			r := a.do(t, http.MethodPost, "/graphql", a.intern, strings.NewReader(body), "Content-Type", "application/json")
			r.wantStatus(t, http.StatusOK)
			want, err := store.SummarizeEtfFlows(context.Background(), db.EtfFilter{Assets: []db.Asset{db.AssetSOL}})
			if err != nil {
				t.Fatal(err)
			}
			w := asText(want.Total)
			expect := `{"data":{"etfSummary":{"asOf":"` + want.AsOf.Format(time.DateOnly) + `","total":{"netInflow":` + string(w.NetInflow) +
				`,"last30Days":{"netInflow":` + string(w.Last30d.NetInflow) + `,"days":30,"from":"` + *w.Last30d.From + `"}` +
				`,"streak":{"direction":"` + w.Streak.Direction + `","days":` + jsonText(t, w.Streak.Days) + `,"since":"` + w.Streak.Since + `"}}` +
				`,"assets":[{"asset":"SOL","cumNetInflow":` + want.Assets[0].CumNetInflow.String() + `}]}}}`
			if got := strings.TrimSpace(string(r.plain)); got != expect {
				t.Errorf("GraphQL\n got %s\nwant %s", got, expect)
			}
		})
	})

	t.Run("no flows gives null data", func(t *testing.T) {
		b := a.with(t)
		if _, err := b.bdb.ExecContext(context.Background(), `DELETE FROM etf_flows WHERE asset = 'HYPE'`); err != nil {
			t.Fatal(err)
		}
		r := b.get(t, "/v1/etf-flows/summary?asset=hype", b.free)
		r.wantStatus(t, http.StatusOK)
		if string(r.env.Data) != "null" {
			t.Errorf("data = %s, want null", r.env.Data)
		}
	})
}
