package seed

import (
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/feedapi/feedapi/db"
)

// etfParams describes the simulated US spot-ETF complex of one asset.
type etfParams struct {
	asset    db.Asset
	coin     int       // index into coins
	launch   time.Time // first trading day
	seedUSD  float64   // assets held before the first day's flows
	scale    float64   // typical size of a day's net flow, dollars
	drift    float64   // mean daily flow in units of scale
	turnover float64   // value traded as a share of net assets
	quiet    float64   // share of days without any creations or redemptions
	funds    []string  // largest funds, as the news names them
}

// etfTable lists the assets in the contract's order. Launch dates are the
// real ones for BTC, ETH and SOL; the HYPE launch is assumed.
var etfTable = []etfParams{
	{db.AssetBTC, 0, date(2024, 1, 11), 28.8e9, 310e6, 0.30, 0.030, 0, []string{"BlackRock's IBIT", "Fidelity's FBTC", "Ark 21Shares' ARKB", "Bitwise's BITB"}},
	{db.AssetETH, 1, date(2024, 7, 23), 10.3e9, 120e6, 0.21, 0.040, 0.02, []string{"BlackRock's ETHA", "Fidelity's FETH", "Grayscale's ETH"}},
	{db.AssetSOL, 2, date(2025, 10, 28), 0.22e9, 9e6, 0.45, 0.050, 0.10, []string{"Bitwise's BSOL", "Grayscale's GSOL", "Fidelity's FSOL"}},
	{db.AssetHYPE, 3, date(2026, 5, 19), 0.06e9, 4.5e6, 0.40, 0.060, 0.15, []string{"the largest HYPE fund"}},
}

// etfDay is one asset's flows on one trading day.
type etfDay struct {
	date                        time.Time
	net, cum, assets, traded    db.Money
	netUSD, cumUSD, assetsUSD   float64
	tradedUSD, close, dayReturn float64
	updated                     time.Time
	leadFund                    string
	leadUSD                     float64
	streak                      int // consecutive days of flows with this day's sign
}

// etfSeries is every published trading day of one asset since launch.
type etfSeries struct {
	params *etfParams
	days   []etfDay
}

// genETF simulates each asset's flows from launch until the last trading day
// whose figures were published (the evening after) by until. Flows follow a
// persistent sentiment and recent price momentum; net assets follow the
// simulated price; cumulative flows are summed exactly in cents.
func genETF(seed uint64, until time.Time, m *market) []etfSeries {
	out := make([]etfSeries, len(etfTable))
	for i := range etfTable {
		p := &etfTable[i]
		r := rand.New(rand.NewPCG(seed, streamETF+uint64(i)))
		c := &coins[p.coin]
		dailyVol := c.vol * math.Sqrt(24)
		series := etfSeries{params: p}
		var (
			holdings  float64 // coins held
			cum       db.Money
			sentiment float64
			closes    []float64
			prevSign  int
			streak    int
		)
		for d := p.launch; !d.After(until); d = d.AddDate(0, 0, 1) {
			if !isTradingDay(d) {
				continue
			}
			updated := d.Add(day + time.Hour + time.Duration(r.IntN(150*60_000))*time.Millisecond)
			if updated.After(until) {
				break
			}
			closePx := m.price(p.coin, d.Add(21*time.Hour))
			if holdings == 0 {
				holdings = p.seedUSD / closePx
			}
			dayRet := 0.0
			momentum := 0.0
			if n := len(closes); n > 0 {
				dayRet = closePx/closes[n-1] - 1
				back := closes[max(0, n-5)]
				momentum = (closePx/back - 1) / (dailyVol * math.Sqrt(5))
				momentum = math.Max(-3, math.Min(3, momentum))
			}
			closes = append(closes, closePx)

			sentiment = 0.85*sentiment + 0.5*r.NormFloat64()
			noise := r.NormFloat64()
			if chance(r, 0.04) {
				noise *= 3
			}
			x := p.drift + 0.55*sentiment + 0.45*momentum + 0.6*noise
			if len(closes) == 1 {
				x += 1.5 // launch-day demand
			}
			netUSD := p.scale * x
			if chance(r, p.quiet) {
				netUSD = 0
			}
			if floor := -0.2 * holdings * closePx; netUSD < floor {
				netUSD = floor
			}
			net := db.Money(math.Round(netUSD * 100))
			netUSD = float64(net) / 100
			cum += net
			holdings += netUSD / closePx
			assetsUSD := holdings * closePx
			tradedUSD := assetsUSD * p.turnover * logNormal(r, 0, 0.35) * (1 + 0.5*math.Abs(dayRet)/dailyVol)

			sign := 0
			switch {
			case net > 0:
				sign = 1
			case net < 0:
				sign = -1
			}
			if sign == prevSign && sign != 0 {
				streak++
			} else {
				streak = 1
			}
			prevSign = sign
			lead := p.funds[0]
			if sign < 0 && chance(r, 0.4) {
				lead = pick(r, p.funds)
			}

			assets := db.Money(math.Round(assetsUSD * 100))
			traded := db.Money(math.Round(tradedUSD * 100))
			series.days = append(series.days, etfDay{
				date: d, net: net, cum: cum, assets: assets, traded: traded,
				netUSD: netUSD, cumUSD: float64(cum) / 100, assetsUSD: float64(assets) / 100,
				tradedUSD: float64(traded) / 100, close: closePx, dayReturn: dayRet,
				updated:  updated.Truncate(time.Millisecond),
				leadFund: lead, leadUSD: netUSD * between(r, 0.45, 0.95),
				streak: streak,
			})
		}
		out[i] = series
	}
	return out
}

// publishedBy returns the index of the newest day published at or before t,
// or -1.
func (s *etfSeries) publishedBy(t time.Time) int {
	return sort.Search(len(s.days), func(i int) bool { return s.days[i].updated.After(t) }) - 1
}

// weekNet sums the net flows of the trading days in [from, to).
func (s *etfSeries) weekNet(from, to time.Time) (sum db.Money, days int, last *etfDay) {
	for i := range s.days {
		d := &s.days[i]
		if !d.date.Before(from) && d.date.Before(to) {
			sum += d.net
			days++
			last = d
		}
	}
	return sum, days, last
}

// numeric converts cents into an exact numeric(20,2) value for COPY.
func numeric(m db.Money) pgtype.Numeric {
	return pgtype.Numeric{Int: big.NewInt(int64(m)), Exp: -2, Valid: true}
}
