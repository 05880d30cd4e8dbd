package seed

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/feedapi/feedapi/db"
)

// fundParams describes one US spot ETF: what etf_funds holds, and how the
// simulation splits its asset's daily figures among the funds.
type fundParams struct {
	ticker, issuer, name, exchange string
	asset                          db.Asset
	fee                            db.Percent // hundredths of a percent a year
	launch                         time.Time
	demand                         float64 // share of the asset's new money
	initial                        float64 // share of the assets held at the asset's first day (conversions)
	spinOff                        string  // fund that hands over spinShare of its coins at launch
	spinShare                      float64
	bleed                          float64 // outflow of a converted trust at launch, in units of the asset's scale, fading
	quiet                          float64 // share of days without creations or redemptions
	holdings                       bool    // publishes its holdings in coins every day
}

// fundTable lists the funds in the contract's asset order. Tickers,
// issuers, names, exchanges and launch dates are the real ones for BTC, ETH
// and SOL, and fees the current published ones; the HYPE funds' details
// are assumed, launching with the simulated HYPE complex. GBTC and ETHE
// are trusts converted on their asset's first day, which the mini trusts
// were spun off from.
var fundTable = []fundParams{
	{"IBIT", "BlackRock", "iShares Bitcoin Trust ETF", "Nasdaq", db.AssetBTC, 25, date(2024, 1, 11), 0.46, 0, "", 0, 0, 0, true},
	{"FBTC", "Fidelity", "Fidelity Wise Origin Bitcoin Fund", "Cboe BZX", db.AssetBTC, 25, date(2024, 1, 11), 0.18, 0, "", 0, 0, 0.05, true},
	{"GBTC", "Grayscale", "Grayscale Bitcoin Trust ETF", "NYSE Arca", db.AssetBTC, 150, date(2024, 1, 11), 0.01, 1, "", 0, 1.8, 0.25, true},
	{"BTC", "Grayscale", "Grayscale Bitcoin Mini Trust ETF", "NYSE Arca", db.AssetBTC, 15, date(2024, 7, 31), 0.05, 0, "GBTC", 0.1, 0, 0.3, true},
	{"ARKB", "ARK 21Shares", "ARK 21Shares Bitcoin ETF", "Cboe BZX", db.AssetBTC, 21, date(2024, 1, 11), 0.07, 0, "", 0, 0, 0.25, true},
	{"BITB", "Bitwise", "Bitwise Bitcoin ETF", "NYSE Arca", db.AssetBTC, 20, date(2024, 1, 11), 0.07, 0, "", 0, 0, 0.25, true},
	{"HODL", "VanEck", "VanEck Bitcoin ETF", "Cboe BZX", db.AssetBTC, 20, date(2024, 1, 11), 0.04, 0, "", 0, 0, 0.4, true},
	{"BRRR", "CoinShares", "CoinShares Bitcoin ETF", "Nasdaq", db.AssetBTC, 25, date(2024, 1, 11), 0.01, 0, "", 0, 0, 0.7, true},
	{"EZBC", "Franklin Templeton", "Franklin Bitcoin ETF", "Cboe BZX", db.AssetBTC, 19, date(2024, 1, 11), 0.02, 0, "", 0, 0, 0.6, true},
	{"BTCO", "Invesco Galaxy", "Invesco Galaxy Bitcoin ETF", "Cboe BZX", db.AssetBTC, 25, date(2024, 1, 11), 0.02, 0, "", 0, 0, 0.6, true},
	{"BTCW", "WisdomTree", "WisdomTree Bitcoin Fund", "Cboe BZX", db.AssetBTC, 25, date(2024, 1, 11), 0.01, 0, "", 0, 0, 0.8, true},
	{"DEFI", "Hashdex", "Hashdex Bitcoin ETF", "NYSE Arca", db.AssetBTC, 94, date(2024, 1, 11), 0.002, 0, "", 0, 0, 0.9, false},

	{"ETHA", "BlackRock", "iShares Ethereum Trust ETF", "Nasdaq", db.AssetETH, 25, date(2024, 7, 23), 0.5, 0, "", 0, 0, 0.05, true},
	{"FETH", "Fidelity", "Fidelity Ethereum Fund", "Cboe BZX", db.AssetETH, 25, date(2024, 7, 23), 0.18, 0, "", 0, 0, 0.15, true},
	{"ETHE", "Grayscale", "Grayscale Ethereum Trust ETF", "NYSE Arca", db.AssetETH, 250, date(2024, 7, 23), 0.01, 0.9, "", 0, 1, 0.3, true},
	{"ETH", "Grayscale", "Grayscale Ethereum Mini Trust ETF", "NYSE Arca", db.AssetETH, 15, date(2024, 7, 23), 0.09, 0.1, "", 0, 0, 0.35, true},
	{"ETHW", "Bitwise", "Bitwise Ethereum ETF", "NYSE Arca", db.AssetETH, 20, date(2024, 7, 23), 0.06, 0, "", 0, 0, 0.35, true},
	{"ETHV", "VanEck", "VanEck Ethereum ETF", "Cboe BZX", db.AssetETH, 20, date(2024, 7, 23), 0.03, 0, "", 0, 0, 0.6, true},
	{"CETH", "21Shares", "21Shares Core Ethereum ETF", "Cboe BZX", db.AssetETH, 21, date(2024, 7, 23), 0.015, 0, "", 0, 0, 0.7, true},
	{"QETH", "Invesco Galaxy", "Invesco Galaxy Ethereum ETF", "Cboe BZX", db.AssetETH, 25, date(2024, 7, 23), 0.005, 0, "", 0, 0, 0.85, false},
	{"EZET", "Franklin Templeton", "Franklin Ethereum ETF", "Cboe BZX", db.AssetETH, 19, date(2024, 7, 23), 0.01, 0, "", 0, 0, 0.75, true},

	{"BSOL", "Bitwise", "Bitwise Solana Staking ETF", "NYSE Arca", db.AssetSOL, 20, date(2025, 10, 28), 0.55, 0.7, "", 0, 0, 0.15, true},
	{"GSOL", "Grayscale", "Grayscale Solana Trust ETF", "NYSE Arca", db.AssetSOL, 35, date(2025, 10, 29), 0.15, 0, "", 0, 0, 0.35, true},
	{"VSOL", "VanEck", "VanEck Solana ETF", "Cboe BZX", db.AssetSOL, 30, date(2025, 11, 17), 0.1, 0, "", 0, 0, 0.5, true},
	{"FSOL", "Fidelity", "Fidelity Solana Fund", "Cboe BZX", db.AssetSOL, 25, date(2025, 11, 18), 0.2, 0, "", 0, 0, 0.4, true},

	{"BHYP", "Bitwise", "Bitwise Hyperliquid ETF", "NYSE Arca", db.AssetHYPE, 67, date(2026, 5, 19), 0.65, 0.7, "", 0, 0, 0.2, true},
	{"THYP", "21Shares", "21Shares Hyperliquid ETF", "Nasdaq", db.AssetHYPE, 70, date(2026, 5, 19), 0.35, 0.3, "", 0, 0, 0.3, false},
}

// The chance that a fund other than its asset's largest publishes a day's
// figure a trading day late.
const lateFundChance = 0.003

// fundDay is one fund's figures of one trading day.
type fundDay struct {
	fund                      *fundParams
	date                      time.Time
	net, assets, traded       db.Money
	holdings                  db.CoinAmount
	updated                   time.Time // zero: not published by the end of the data
	publishedLate, hasHolding bool
}

// genFunds splits each asset's simulated days among its funds so that the
// funds' net flows, net assets and value traded of a day sum exactly, to
// the cent, to the asset's. A fund's holdings are its net assets at the
// day's closing price. Most figures are published with the asset's; a few
// come a trading day later, and on BTC's and SOL's latest days one fund's
// figure is still out, so that the data set shows days whose published
// funds do not add up yet. It uses streams of its own: the asset totals
// are the same with or without funds.
func genFunds(seed uint64, series []etfSeries) [][]fundDay {
	out := make([][]fundDay, len(series))
	for si := range series {
		s := &series[si]
		p := s.params
		r := rand.New(rand.NewPCG(seed, streamETFFunds+uint64(si)))
		var funds []*fundParams
		for i := range fundTable {
			if fundTable[i].asset == p.asset {
				funds = append(funds, &fundTable[i])
			}
		}
		coins := make([]float64, len(funds)) // each fund's coins, for its share of net assets
		lead := 0                            // the fund with the largest demand never skips a day
		for i, f := range funds {
			if f.demand > funds[lead].demand {
				lead = i
			}
		}
		var rows []fundDay
		for di := range s.days {
			d := &s.days[di]
			var active []int
			for i, f := range funds {
				if f.launch.After(d.date) {
					continue
				}
				active = append(active, i)
				switch {
				case di == 0:
					coins[i] = f.initial * d.assetsUSD / d.close
				case f.launch.Equal(d.date) && f.spinOff != "":
					from := slices.IndexFunc(funds, func(g *fundParams) bool { return g.ticker == f.spinOff })
					coins[i] = coins[from] * f.spinShare
					coins[from] -= coins[i]
				}
			}
			nets := splitFlow(r, funds, active, lead, d, p, coins)
			for k, i := range active {
				coins[i] = math.Max(0, coins[i]+float64(nets[k])/100/d.close)
			}
			assets := splitExact(d.assets, weightsOf(active, func(i int) float64 { return coins[i] }))
			traded := splitExact(d.traded, weightsOf(active, func(i int) float64 { return coins[i] * logNormal(r, 0, 0.4) }))
			for k, i := range active {
				f := funds[i]
				fd := fundDay{fund: f, date: d.date, net: nets[k], assets: assets[k], traded: traded[k],
					holdings: db.CoinAmount(math.Round(float64(assets[k]) / 100 / d.close * 1e8)),
					updated:  d.updated, hasHolding: f.holdings}
				// A late zero would still add up; only figures that move
				// the sum are held back, so that a missing one shows.
				if i != lead && chance(r, lateFundChance) && fd.net != 0 {
					fd.publishedLate = true
				}
				rows = append(rows, fd)
			}
		}
		holdBack(rows, s, p.asset == db.AssetBTC || p.asset == db.AssetSOL)
		out[si] = rows
	}
	return out
}

// splitFlow divides the day's net flow among the active funds: each takes
// its share of the demand plus noise of its own, a converted trust bleeds,
// small funds often see no creations or redemptions, and what the draws
// leave over goes to the funds that moved, by demand, so that the cents
// add up to the asset's exactly. A day without flows is a zero for all.
func splitFlow(r *rand.Rand, funds []*fundParams, active []int, lead int, d *etfDay, p *etfParams, coins []float64) []db.Money {
	out := make([]db.Money, len(active))
	if d.net == 0 {
		return out
	}
	total := float64(d.net) / 100
	raw := make([]float64, len(active))
	moved := make([]bool, len(active))
	demand := 0.0
	for _, i := range active {
		demand += funds[i].demand
	}
	for k, i := range active {
		f := funds[i]
		if i != lead && chance(r, f.quiet) {
			continue
		}
		moved[k] = true
		share := f.demand / demand
		raw[k] = share*total + 0.3*math.Sqrt(share)*p.scale*r.NormFloat64()
		if f.bleed > 0 {
			age := d.date.Sub(f.launch).Hours() / 24
			out := f.bleed * p.scale * (math.Exp(-age/45) + 0.03) * logNormal(r, 0, 0.3)
			raw[k] -= math.Min(out, 0.03*coins[i]*d.close)
		}
	}
	left, weight := total, 0.0
	for k, i := range active {
		if moved[k] {
			left -= raw[k]
			weight += funds[i].demand
		}
	}
	cents := make([]float64, len(active))
	for k, i := range active {
		if moved[k] {
			cents[k] = (raw[k] + left*funds[i].demand/weight) * 100
		}
	}
	return roundExact(d.net, cents, slices.Index(active, lead))
}

// roundExact rounds each value (in cents) and puts what the rounding
// leaves on index fix, so that the amounts sum to total exactly.
func roundExact(total db.Money, cents []float64, fix int) []db.Money {
	out := make([]db.Money, len(cents))
	sum := db.Money(0)
	for k, c := range cents {
		out[k] = db.Money(math.Round(c))
		sum += out[k]
	}
	out[fix] += total - sum
	return out
}

// splitExact divides total in proportion to the weights (negative weights
// count as zero), to the cent: largest remainders take the cents left over.
func splitExact(total db.Money, weights []float64) []db.Money {
	sum := 0.0
	for _, w := range weights {
		sum += math.Max(w, 0)
	}
	out := make([]db.Money, len(weights))
	if sum == 0 {
		out[0] = total
		return out
	}
	type rest struct {
		k   int
		rem float64
	}
	rests := make([]rest, len(weights))
	given := db.Money(0)
	for k, w := range weights {
		exact := float64(total) * math.Max(w, 0) / sum
		out[k] = db.Money(math.Floor(exact))
		given += out[k]
		rests[k] = rest{k, exact - math.Floor(exact)}
	}
	slices.SortStableFunc(rests, func(a, b rest) int {
		switch {
		case a.rem > b.rem:
			return -1
		case a.rem < b.rem:
			return 1
		}
		return a.k - b.k
	})
	for left := total - given; left > 0; left-- {
		out[rests[int(total-given-left)%len(rests)].k]++
	}
	return out
}

func weightsOf(active []int, w func(int) float64) []float64 {
	out := make([]float64, len(active))
	for k, i := range active {
		out[k] = w(i)
	}
	return out
}

// holdBack dates each late figure to the next trading day's publication,
// which for the latest day is after the end of the data: that figure is
// not published yet. With withMissing, the smallest fund that moved on the
// latest day is late too.
func holdBack(rows []fundDay, s *etfSeries, withMissing bool) {
	if len(s.days) == 0 {
		return
	}
	next := map[time.Time]time.Time{} // a day's publication → the next day's
	for i := 0; i+1 < len(s.days); i++ {
		next[s.days[i].date] = s.days[i+1].updated
	}
	last := s.days[len(s.days)-1].date
	if withMissing {
		smallest := -1
		for i := range rows {
			if rows[i].date.Equal(last) && rows[i].net != 0 &&
				(smallest < 0 || rows[i].fund.demand < rows[smallest].fund.demand) {
				smallest = i
			}
		}
		if smallest >= 0 && rows[smallest].fund.demand < 0.4 {
			rows[smallest].publishedLate = true
		}
	}
	for i := range rows {
		if rows[i].publishedLate {
			rows[i].updated = next[rows[i].date] // zero for the latest day
		}
	}
}

// fundRows lists the etf_funds rows.
func fundRows() [][]any {
	out := make([][]any, len(fundTable))
	for i, f := range fundTable {
		out[i] = []any{f.ticker, string(f.asset), f.issuer, f.name, percent(f.fee), f.launch, f.exchange}
	}
	return out
}

// fundFlowRows lists the published etf_fund_flows rows of the days that
// etfRows writes (the last keep days of each asset when keep > 0).
func fundFlowRows(series []etfSeries, funds [][]fundDay, keep int) [][]any {
	var out [][]any
	for si := range series {
		days := series[si].days
		var from time.Time
		if keep > 0 && len(days) > keep {
			from = days[len(days)-keep].date
		}
		for _, fd := range funds[si] {
			if fd.updated.IsZero() || fd.date.Before(from) {
				continue
			}
			var holdings any
			if fd.hasHolding {
				holdings = pgtype.Numeric{Int: big.NewInt(int64(fd.holdings)), Exp: -8, Valid: true}
			}
			out = append(out, []any{fd.fund.ticker, fd.date, numeric(fd.net), numeric(fd.assets),
				numeric(fd.traded), holdings, fd.updated})
		}
	}
	return out
}

// percent converts hundredths of a percent into an exact numeric(5,2).
func percent(p db.Percent) pgtype.Numeric {
	return pgtype.Numeric{Int: big.NewInt(int64(p)), Exp: -2, Valid: true}
}

var (
	fundColumns     = []string{"ticker", "asset", "issuer", "name", "fee", "launch_date", "exchange"}
	fundFlowColumns = []string{"ticker", "flow_date", "net_inflow", "net_assets", "value_traded", "holdings", "updated_at"}
)
