package seed

import (
	"math"
	"math/rand/v2"
	"time"
)

// coin is an asset the generated news talks about, with the price history
// its simulated path is pinned to.
type coin struct {
	sym     string
	name    string  // as news copy names the asset ("ether", not "Ethereum")
	chain   string  // Whale Alert's blockchain key
	vol     float64 // hourly log volatility
	step    float64 // round-number step for "tops $X" headlines
	weight  float64 // how often the coin is in the news
	since   time.Time
	anchors []anchorPrice
}

// anchorPrice pins a coin's simulated price on a day.
type anchorPrice struct {
	at  time.Time
	usd float64
}

// coins is the asset universe. The first four have US spot ETFs. Anchors
// follow the real price history up to late 2025; the last one is the assumed
// price at the default end of the data set.
var coins = []coin{
	{"BTC", "bitcoin", "bitcoin", 0.0048, 1000, 40, date(2024, 1, 1), []anchorPrice{
		{date(2024, 1, 1), 42300}, {date(2024, 1, 11), 46600}, {date(2024, 3, 14), 72900},
		{date(2024, 8, 5), 54100}, {date(2024, 12, 17), 106100}, {date(2025, 4, 8), 76300},
		{date(2025, 10, 6), 124700}, {date(2026, 2, 5), 88500}, {date(2026, 11, 16), 103500}}},
	{"ETH", "ether", "ethereum", 0.0065, 100, 22, date(2024, 7, 1), []anchorPrice{
		{date(2024, 7, 1), 3440}, {date(2024, 7, 23), 3480}, {date(2024, 12, 16), 4000},
		{date(2025, 4, 8), 1470}, {date(2025, 8, 24), 4830}, {date(2026, 2, 5), 2750}, {date(2026, 11, 16), 3650}}},
	{"SOL", "Solana", "solana", 0.008, 5, 10, date(2025, 10, 1), []anchorPrice{
		{date(2025, 10, 1), 208}, {date(2025, 10, 28), 195}, {date(2026, 2, 5), 118}, {date(2026, 11, 16), 172}}},
	{"HYPE", "Hyperliquid's HYPE", "hyperliquid", 0.011, 1, 6, date(2026, 5, 1), []anchorPrice{
		{date(2025, 9, 18), 57}, {date(2026, 5, 19), 38}, {date(2026, 11, 16), 41}}},
	{"XRP", "XRP", "ripple", 0.008, 0.1, 6, time.Time{}, []anchorPrice{{date(2025, 7, 18), 3.55}, {date(2026, 11, 16), 2.35}}},
	{"BNB", "BNB", "bsc", 0.0055, 10, 3, time.Time{}, []anchorPrice{{date(2025, 10, 13), 1300}, {date(2026, 11, 16), 980}}},
	{"DOGE", "dogecoin", "dogecoin", 0.009, 0.01, 4, time.Time{}, []anchorPrice{{date(2026, 11, 16), 0.21}}},
	{"ADA", "Cardano's ADA", "cardano", 0.009, 0.05, 2, time.Time{}, []anchorPrice{{date(2026, 11, 16), 0.68}}},
	{"AVAX", "Avalanche's AVAX", "avalanche", 0.0095, 1, 2, time.Time{}, []anchorPrice{{date(2026, 11, 16), 24}}},
	{"LINK", "Chainlink's LINK", "ethereum", 0.009, 1, 2, time.Time{}, []anchorPrice{{date(2026, 11, 16), 18.5}}},
	{"SUI", "Sui", "sui", 0.011, 0.1, 2, time.Time{}, []anchorPrice{{date(2026, 11, 16), 3.1}}},
	{"TRX", "Tron's TRX", "tron", 0.005, 0.01, 1, time.Time{}, []anchorPrice{{date(2026, 11, 16), 0.29}}},
	{"LTC", "litecoin", "litecoin", 0.008, 5, 1, time.Time{}, []anchorPrice{{date(2026, 11, 16), 95}}},
	{"TAO", "Bittensor's TAO", "bittensor", 0.012, 10, 1, time.Time{}, []anchorPrice{{date(2026, 11, 16), 380}}},
	{"ENA", "Ethena's ENA", "ethereum", 0.012, 0.05, 1, time.Time{}, []anchorPrice{{date(2026, 11, 16), 0.48}}},
	{"ONDO", "Ondo", "ethereum", 0.011, 0.05, 1, time.Time{}, []anchorPrice{{date(2026, 11, 16), 0.82}}},
	{"PEPE", "pepe", "ethereum", 0.012, 0.000001, 1, time.Time{}, []anchorPrice{{date(2026, 11, 16), 0.0000092}}},
	{"AAVE", "Aave's AAVE", "ethereum", 0.009, 5, 1, time.Time{}, []anchorPrice{{date(2026, 11, 16), 265}}},
}

// etfCoins is the number of leading entries of coins that have US spot ETFs.
const etfCoins = 4

// anchorLog interpolates the log price between anchors, flat outside them.
func (c *coin) anchorLog(t time.Time) float64 {
	a := c.anchors
	if !t.After(a[0].at) {
		return math.Log(a[0].usd)
	}
	for i := 1; i < len(a); i++ {
		if t.Before(a[i].at) {
			f := float64(t.Sub(a[i-1].at)) / float64(a[i].at.Sub(a[i-1].at))
			return math.Log(a[i-1].usd) + f*(math.Log(a[i].usd)-math.Log(a[i-1].usd))
		}
	}
	return math.Log(a[len(a)-1].usd)
}

// pricePath is a simulated hourly log-price series.
type pricePath struct {
	start time.Time
	logp  []float64
}

// market holds one price path per entry of coins.
type market struct {
	paths []pricePath
}

// streamMarket and the other stream constants pick independent random
// streams per part of the data set, so that changing one option leaves the
// other parts as they were.
const (
	streamMarket   = 0x6d61726b65740000 // + coin index
	streamETF      = 0x6574660000000000 // + asset index
	streamETFFunds = 0x6574666600000000 // + asset index
	streamPosts    = 0x706f737473000000
	streamFirehose = 0x6669726568000000
	streamBriefs   = 0x6272696566000000
	streamTimeline = 0x74696d6500000000
)

// newMarket simulates every coin's hourly price from its start (or from, if
// earlier) to until, as Brownian bridges between the anchors.
func newMarket(seed uint64, from, until time.Time) *market {
	m := &market{paths: make([]pricePath, len(coins))}
	for i := range coins {
		c := &coins[i]
		r := rand.New(rand.NewPCG(seed, streamMarket+uint64(i)))
		start := from
		if !c.since.IsZero() && c.since.Before(start) {
			start = c.since
		}
		start = start.Truncate(time.Hour)
		n := int(until.Sub(start)/time.Hour) + 2
		logp := make([]float64, n)

		// Knots: the start, every anchor inside the period, and the end when
		// an anchor lies at or after it; otherwise the end walks free.
		type knot struct {
			i int
			v float64
		}
		knots := []knot{{0, c.anchorLog(start)}}
		for _, a := range c.anchors {
			if a.at.After(start) && a.at.Before(until) {
				knots = append(knots, knot{int(a.at.Sub(start) / time.Hour), math.Log(a.usd)})
			}
		}
		free := until.After(c.anchors[len(c.anchors)-1].at)
		if !free {
			knots = append(knots, knot{n - 1, c.anchorLog(start.Add(time.Duration(n-1) * time.Hour))})
		} else if knots[len(knots)-1].i != n-1 {
			knots = append(knots, knot{n - 1, math.NaN()})
		}
		logp[0] = knots[0].v
		for k := 1; k < len(knots); k++ {
			a, b := knots[k-1], knots[k]
			steps := b.i - a.i
			if steps <= 0 {
				continue
			}
			w := 0.0
			for j := 1; j <= steps; j++ {
				e := r.NormFloat64()
				if chance(r, 0.01) { // fat tails
					e *= 3.5
				}
				w += c.vol * e
				logp[a.i+j] = logp[a.i] + w
			}
			if math.IsNaN(b.v) {
				continue
			}
			// Bridge: bend the walk so it ends on the knot.
			gap := logp[b.i] - b.v
			for j := 1; j <= steps; j++ {
				logp[a.i+j] -= gap * float64(j) / float64(steps)
			}
		}
		m.paths[i] = pricePath{start: start, logp: logp}
	}
	return m
}

// price returns coin i's simulated price at t (linear between hours).
func (m *market) price(i int, t time.Time) float64 {
	p := &m.paths[i]
	h := float64(t.Sub(p.start)) / float64(time.Hour)
	if h <= 0 {
		return math.Exp(p.logp[0])
	}
	j := int(h)
	if j >= len(p.logp)-1 {
		return math.Exp(p.logp[len(p.logp)-1])
	}
	f := h - float64(j)
	return math.Exp(p.logp[j]*(1-f) + p.logp[j+1]*f)
}

// change returns coin i's relative price change over the window ending at t.
func (m *market) change(i int, t time.Time, window time.Duration) float64 {
	return m.price(i, t)/m.price(i, t.Add(-window)) - 1
}
