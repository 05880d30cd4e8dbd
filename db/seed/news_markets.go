package seed

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

var (
	priceSources = []string{"CoinGecko", "CoinMarketCap", "CoinDesk Indices", "Kaiko", "TradingView"}
	reasonsUp    = []string{
		"as spot ETF inflows pick up", "after softer-than-expected US inflation data", "as short sellers rush to cover",
		"on renewed institutional demand", "as stablecoin deposits to exchanges climb", "amid a broader risk-on move in equities",
		"as the dollar index slips", "after a large options expiry cleared overhead resistance",
	}
	reasonsDown = []string{
		"as traders de-risk ahead of the Fed decision", "amid a wave of long liquidations", "as US stocks slide",
		"after large transfers to exchanges", "as spot ETF outflows mount", "as the dollar strengthens",
		"after a hotter-than-expected jobs report", "as funding rates reset from elevated levels",
	}
	catalysts = []string{
		"the Fed's rate decision", "US inflation data", "Friday's jobs report", "a large options expiry",
		"Nvidia's earnings", "the Treasury's refunding announcement", "the end of the quarter",
	}
	exchanges   = []string{"Binance", "Coinbase", "OKX", "Bybit", "Kraken", "Bitget", "Upbit", "Bitfinex", "Gemini", "Robinhood"}
	perpVenues  = []string{"Binance", "Bybit", "OKX", "Hyperliquid", "Bitget", "HTX"}
	whaleActors = []string{"A whale", "An OG whale", "A smart money trader", "A fresh wallet", "An ICO-era whale",
		"A market maker's wallet", "A long-dormant wallet"}
)

// level formats a round price level: "$170" rather than "$170.00".
func level(x float64) string {
	switch {
	case x >= 1 && x == math.Trunc(x):
		return "$" + commas(int64(x))
	case x < 1:
		return "$" + strconv.FormatFloat(math.Round(x*1e9)/1e9, 'f', -1, 64)
	}
	return price(x)
}

// roundDown rounds x down to a multiple of step (steps below 1 keep their precision).
func roundDown(x, step float64) float64 { return math.Floor(x/step) * step }

// roundUp rounds x up to a multiple of step.
func roundUp(x, step float64) float64 { return math.Ceil(x/step) * step }

// openInterest is a plausible perpetual-futures open interest for a coin.
func openInterest(r *rand.Rand, c *coin) float64 { return around(r, c.weight*1.6e9, 0.15) }

func (nr *newsroom) priceStory(r *rand.Rand, t time.Time, ci int) story {
	c := &coins[ci]
	p := nr.m.price(ci, t)
	ch := nr.m.change(ci, t, day)
	week := nr.m.change(ci, t, 7*day)
	Name := upperFirst(c.name)
	src := pick(r, priceSources)
	clock := t.Format("15:04")
	oiCh := ch*between(r, 0.6, 1.8) + 0.01*r.NormFloat64()
	oi := openInterest(r, c)
	s := story{cat: catMarkets, sym: c.sym, weight: 0.12 + math.Abs(ch)*7}
	if ci < 2 {
		s.weight += 0.1
	}
	moved := "rose"
	if ch < 0 {
		moved = "fell"
	}
	oiMoved := "rose"
	if oiCh < 0 {
		oiMoved = "fell"
	}
	switch {
	case math.Abs(ch) < 0.012:
		lvl := level(math.Round(p/c.step) * c.step)
		cat := pick(r, catalysts)
		s.emoji = "⏳"
		switch r.IntN(3) {
		case 0:
			s.title = Name + " holds near " + lvl + " as traders await " + cat
		case 1:
			s.title = Name + " trades in a tight range around " + lvl + "; implied volatility sinks"
		default:
			s.title = Name + " steadies at " + price(p) + " ahead of " + cat
		}
		s.flash = "$" + c.sym + " flat at " + price(p) + " (" + signedPct(ch) + " 24h) ahead of " + cat
		change := moved + " " + pct(ch) + " over 24 hours"
		if math.Abs(ch) < 0.001 {
			change = "little changed over 24 hours"
		}
		s.lede = Name + " changed hands at " + price(p) + " as of " + clock + " UTC, " + change + ", according to " + src + " data. Traders are reluctant to take large positions before " + cat + "."
		s.summary = Name + " was little changed at about " + price(p) + " (" + signedPct(ch) + " in 24 hours) as markets waited for " + cat + "."
	case ch > 0:
		lvl := level(roundDown(p, c.step))
		reason := pick(r, reasonsUp)
		s.emoji = "📈"
		switch r.IntN(3) {
		case 0:
			s.title = Name + " climbs above " + lvl + ", up " + pct(ch) + " in 24 hours"
		case 1:
			s.title = Name + " rallies " + pct(ch) + " to " + price(p) + " " + reason
		default:
			if week < 0 {
				s.title = Name + " rebounds to " + price(p) + ", trimming weekly losses"
			} else {
				s.title = Name + " extends weekly gain to " + pct(week) + " as it tops " + lvl
			}
		}
		s.flash = "$" + c.sym + " BREAKS ABOVE " + lvl
		s.lede = Name + " rose " + pct(ch) + " over the past 24 hours to " + price(p) + " as of " + clock +
			" UTC, according to " + src + " data, " + reason + "."
		s.summary = Name + " gained " + pct(ch) + " in 24 hours to about " + price(p) + ", " + reason + "."
	default:
		lvl := level(roundUp(p, c.step))
		reason := pick(r, reasonsDown)
		s.emoji = "📉"
		switch r.IntN(3) {
		case 0:
			s.title = Name + " slips below " + lvl + " " + reason
		case 1:
			s.title = Name + " falls " + pct(ch) + " to " + price(p)
			if week < 0 {
				s.title += ", extending weekly losses"
			} else {
				s.title += ", erasing part of the week's gains"
			}
		default:
			s.title = Name + " drops " + pct(ch) + " " + reason
		}
		s.flash = "$" + c.sym + " DROPS BELOW " + lvl
		s.lede = Name + " fell " + pct(ch) + " over the past 24 hours to " + price(p) + " as of " + clock +
			" UTC, according to " + src + " data, " + reason + "."
		s.summary = Name + " lost " + pct(ch) + " in 24 hours to about " + price(p) + ", " + reason + "."
	}
	s.more = "Open interest in " + c.sym + " perpetual futures " + oiMoved + " " + pct(oiCh) + " to " +
		usdWords(oi) + " over the same period, CoinGlass data show. Over seven days the token is " +
		either(week >= 0, "up ", "down ") + pct(week) + "."
	s.summary += " Futures open interest " + oiMoved + " " + pct(oiCh) + "."
	return s
}

// etfNames is how news copy names each asset's ETF complex.
var etfNames = []string{"bitcoin", "ether", "Solana", "HYPE"}

func (nr *newsroom) etfFlowStory(r *rand.Rand, t time.Time, focus string) (story, bool) {
	ai := nr.etfW.pick(r)
	if focus == "BTC" {
		ai = 0
	}
	series := &nr.etf[ai]
	i := series.publishedBy(t)
	if i < 0 {
		series = &nr.etf[0]
		ai = 0
		if i = series.publishedBy(t); i < 0 {
			return story{}, false
		}
	}
	d := &series.days[i]
	name := etfNames[ai]
	sym := string(series.params.asset)
	wd := d.date.Weekday().String()
	src := pick(r, []string{"SoSoValue", "Farside Investors", "issuer"})
	s := story{cat: catMarkets, sym: sym, flag: "🇺🇸",
		weight: 0.25 + math.Min(0.6, 0.2*math.Abs(d.netUSD)/series.params.scale)}
	if ai == 0 {
		s.weight += 0.1
	}
	tail := "Cumulative net inflows since launch stand at " + usdWords(d.cumUSD) + ", and the funds hold " +
		usdWords(d.assetsUSD) + " in total net assets. Value traded across the funds was " + usdWords(d.tradedUSD) + "."
	if d.net == 0 {
		s.title = "Spot " + name + " ETFs record zero net flows on " + wd
		s.flash = "US spot $" + sym + " ETFs saw zero net flows on " + wd
		s.lede = "US spot " + name + " exchange-traded funds recorded no net creations or redemptions on " +
			apDate(d.date) + ", according to " + src + " data."
		s.summary = "Spot " + name + " ETFs had no net flows on " + apDate(d.date) + "; cumulative net inflows total " + usdShort(d.cumUSD) + "."
		s.more = tail
		s.emoji = "⏸"
		return s, true
	}
	dir, verb := "inflows", "draw"
	s.emoji = "🟢"
	if d.net < 0 {
		dir, verb = "outflows", "bleed"
		s.emoji = "🔴"
	}
	amt := math.Abs(d.netUSD)
	streak := ""
	if d.streak >= 3 {
		streak = ", the " + ordinalWord(d.streak) + " straight day of " + dir
	}
	switch {
	case d.streak >= 3 && chance(r, 0.5):
		s.title = "Spot " + name + " ETFs extend " + strings.TrimSuffix(dir, "s") + " streak to " + strconv.Itoa(d.streak) + " days with " + usdWords(amt)
	case chance(r, 0.4):
		s.title = upperFirst(d.leadFund) + " leads " + usdWords(amt) + " " + strings.TrimSuffix(dir, "s") + " day for spot " + name + " ETFs"
	case chance(r, 0.5):
		s.title = "Spot " + name + " ETFs " + verb + " " + usdWords(amt) + " on " + wd
	default:
		s.title = "US spot " + name + " ETFs see " + usdWords(amt) + " in net " + dir
	}
	s.flash = "US spot $" + sym + " ETFs saw " + usdShort(amt) + " in net " + dir + " on " + wd
	s.lede = "US spot " + name + " exchange-traded funds recorded net " + dir + " of " + usdWords(amt) + " on " +
		apDate(d.date) + streak + ", according to " + src + " data. " + upperFirst(d.leadFund) + " accounted for " +
		usdWords(math.Abs(d.leadUSD)) + "."
	s.more = tail
	s.summary = "Spot " + name + " ETFs in the US had " + usdShort(amt) + " of net " + dir + " on " + apDate(d.date) +
		streak + "; cumulative net inflows are " + usdShort(d.cumUSD) + " and net assets " + usdShort(d.assetsUSD) + "."
	return s, true
}

func (nr *newsroom) liquidationStory(r *rand.Rand, t time.Time) story {
	move := nr.m.change(0, t, day)
	total := around(r, 170e6*(1+30*math.Abs(move)), 0.35)
	longs := between(r, 0.15, 0.45)
	if move < 0 {
		longs = between(r, 0.6, 0.92)
	}
	side, share := "Long", longs
	if longs < 0.5 {
		side, share = "Short", 1-longs
	}
	traders := int64(total / around(r, 2600, 0.3))
	venue := pick(r, perpVenues)
	pair := pick(r, []string{"BTCUSDT", "ETHUSDT", "BTC-USDT-SWAP", "ETH-USD", "SOLUSDT", "BTC-PERP"})
	largest := total * between(r, 0.004, 0.04)
	mv := "rises " + pct(move)
	switch {
	case math.Abs(move) < 0.002:
		mv = "chops sideways"
	case move < 0:
		mv = "slides " + pct(move)
	}
	s := story{cat: catMarkets, sym: "BTC", emoji: "💥", weight: 0.15 + total/2.5e9}
	switch r.IntN(2) {
	case 0:
		s.title = usdWords(total) + " in leveraged crypto bets liquidated as bitcoin " + mv
	default:
		s.title = "Crypto liquidations top " + usdWords(total) + " in 24 hours; " + strings.ToLower(side) + "s take " + pct(share) + " of losses"
	}
	s.flash = usdShort(total) + " LIQUIDATED FROM THE CRYPTO MARKET IN THE PAST 24 HOURS"
	s.lede = commas(traders) + " traders were liquidated over the past 24 hours, with " + usdWords(total) +
		" in leveraged positions wiped out, according to CoinGlass. " + side + " positions accounted for " + pct(share) + " of the total."
	s.more = "The largest single liquidation happened on " + venue + " in the " + pair + " market, valued at " + usdWords(largest) + "."
	s.summary = "About " + usdShort(total) + " of crypto derivatives positions were liquidated in 24 hours, " + pct(share) +
		" of it " + strings.ToLower(side) + "s, as bitcoin " + mv + "."
	return s
}

// whaleAssets are the assets Whale Alert reports on, with their chain keys.
var whaleAssets = []struct {
	sym, chain string
	coin       int // index into coins, -1 for dollar stablecoins
	weight     float64
}{
	{"BTC", "bitcoin", 0, 30}, {"ETH", "ethereum", 1, 18}, {"USDT", "tron", -1, 14}, {"USDT", "ethereum", -1, 6},
	{"USDC", "ethereum", -1, 10}, {"XRP", "ripple", 4, 7}, {"SOL", "solana", 2, 5}, {"DOGE", "dogecoin", 6, 3},
	{"TRX", "tron", 11, 2},
}

var whaleVenues = []string{"Binance", "Coinbase", "Coinbase Institutional", "Kraken", "OKX", "Bitfinex", "Bybit",
	"Robinhood", "Gemini", "Bitstamp", "HTX", "Upbit"}

func (nr *newsroom) whaleTransferStory(r *rand.Rand, t time.Time) story {
	a := whaleAssets[nr.whaleW.pick(r)]
	px := 1.0
	if a.coin >= 0 {
		px = nr.m.price(a.coin, t)
	}
	value := math.Max(5e6, around(r, 35e6, 0.9))
	amount := value / px
	if a.coin < 0 {
		amount = math.Round(amount/1e4) * 1e4
		value = amount
	}
	hash := hexString(r, 64)
	if a.chain == "ethereum" {
		hash = "0x" + hash
	}
	s := story{cat: catOnchain, sym: a.sym, weight: 0.08 + value/1.2e9,
		link: "https://whale-alert.io/transaction/" + a.chain + "/" + hash}
	s.emoji = strings.Repeat("🚨 ", min(5, 1+int(value/100e6)))
	if a.coin < 0 && chance(r, 0.3) {
		issuer := map[string]string{"USDT": "Tether Treasury", "USDC": "USDC Treasury"}[a.sym]
		amount = math.Round(amount/1e8) * 1e8
		if amount == 0 {
			amount = 1e8
		}
		verb := "minted"
		if chance(r, 0.25) {
			verb = "burned"
		}
		s.flash = s.emoji + "💵 " + commas(int64(amount)) + " #" + a.sym + " (" + commas(int64(amount)) + " USD) " + verb + " at " + issuer
		s.title = issuer + " " + verb + " " + usdWords(amount) + " of " + a.sym + " on " + upperFirst(a.chain)
		s.lede = "Blockchain tracker Whale Alert flagged " + usdWords(amount) + " of " + a.sym + " " + verb + " at " + issuer +
			" on " + upperFirst(a.chain) + ". Large mints often precede stablecoin inflows to exchanges."
		s.summary = usdShort(amount) + " of " + a.sym + " was " + verb + " at " + issuer + "."
		s.weight = 0.1 + amount/5e9
		return s
	}
	from, to := "unknown wallet", "#"+pick(r, whaleVenues)
	switch x := r.Float64(); {
	case x < 0.35:
		from, to = "#"+pick(r, whaleVenues), "unknown wallet"
	case x < 0.55:
		to = "unknown wallet"
	case x < 0.62:
		from = "#" + pick(r, whaleVenues)
	}
	plain := func(s string) string {
		s = strings.TrimPrefix(s, "#")
		if s == "unknown wallet" {
			return "an unknown wallet"
		}
		return s
	}
	s.flash = s.emoji + units(amount) + " #" + a.sym + " (" + commas(int64(value)) + " USD) transferred from " + from + " to " + to
	s.title = "Whale moves " + units(amount) + " " + a.sym + " worth " + usdWords(value) + " from " + plain(from) + " to " + plain(to)
	s.lede = "Blockchain tracker Whale Alert flagged a transfer of " + units(amount) + " " + a.sym + ", worth about " +
		usdWords(value) + ", from " + plain(from) + " to " + plain(to) + "."
	if strings.HasPrefix(to, "#") {
		s.more = "Deposits to exchanges are often read as a sign that a holder intends to sell."
	} else if strings.HasPrefix(from, "#") {
		s.more = "Withdrawals from exchanges usually point to long-term holding or custody changes."
	}
	s.summary = "A " + usdShort(value) + " transfer of " + a.sym + " moved from " + plain(from) + " to " + plain(to) + ", per Whale Alert."
	return s
}

func (nr *newsroom) whaleTradeStory(r *rand.Rand, t time.Time, focus string) story {
	ci := nr.coinFor(r, focus)
	if ci > 6 {
		ci = r.IntN(3)
	}
	c := &coins[ci]
	px := nr.m.price(ci, t)
	value := math.Max(1e6, around(r, 9e6, 0.9))
	amount := value / px
	actor := pick(r, whaleActors)
	addr := shortAddr(r)
	hours := 1 + r.IntN(12)
	s := story{cat: catOnchain, sym: c.sym, emoji: "🐳", weight: 0.08 + value/4e8}
	switch r.IntN(5) {
	case 0:
		ex := pick(r, exchanges[:6])
		s.flash = actor + " withdrew " + units(amount) + " $" + c.sym + " (" + usdShort(value) + ") from #" + ex +
			" in the past " + strconv.Itoa(hours) + " hours.\n\nAddress: " + addr
		s.title = "Whale withdraws " + units(amount) + " " + c.sym + " worth " + usdWords(value) + " from " + ex
		s.summary = "A wallet withdrew " + units(amount) + " " + c.sym + " (" + usdShort(value) + ") from " + ex + " within " + strconv.Itoa(hours) + " hours."
	case 1:
		s.flash = actor + " spent " + usdShort(value) + " $USDC to buy " + units(amount) + " $" + c.sym + " at " + price(px) +
			" in the past " + strconv.Itoa(hours) + " hours.\n\nAddress: " + addr
		s.title = "Whale buys " + units(amount) + " " + c.sym + " worth " + usdWords(value) + " on-chain"
		s.summary = "An on-chain buyer spent about " + usdShort(value) + " on " + units(amount) + " " + c.sym + " at " + price(px) + "."
	case 2:
		lev := pick(r, []int{3, 5, 10, 20, 25, 40})
		side, liq := "long", px*(1-0.85/float64(lev))
		if chance(r, 0.45) {
			side, liq = "short", px*(1+0.85/float64(lev))
		}
		s.flash = "A trader opened a " + strconv.Itoa(lev) + "x " + side + " on " + units(amount) + " $" + c.sym + " (" +
			usdShort(value) + ") on #Hyperliquid.\n\nLiquidation price: " + price(liq)
		s.title = "Hyperliquid trader opens " + usdWords(value) + " " + strconv.Itoa(lev) + "x " + side + " on " + c.sym
		s.summary = "A Hyperliquid trader opened a " + strconv.Itoa(lev) + "x " + side + " worth " + usdShort(value) +
			" on " + c.sym + ", with liquidation near " + price(liq) + "."
	case 3:
		months := 2 + r.IntN(30)
		gain := between(r, 0.2, 3)
		s.flash = actor + " sold " + units(amount) + " $" + c.sym + " (" + usdShort(value) + ") at " + price(px) +
			", making a profit of " + usdShort(value*gain/(1+gain)) + " (+" + strconv.Itoa(int(gain*100)) + "%) after holding for " +
			strconv.Itoa(months) + " months.\n\nAddress: " + addr
		s.title = "Whale sells " + units(amount) + " " + c.sym + " after " + strconv.Itoa(months) + " months, booking " + usdWords(value*gain/(1+gain)) + " profit"
		s.summary = "A long-term holder sold " + units(amount) + " " + c.sym + " for about " + usdShort(value) + ", booking a profit."
	default:
		years := 8 + r.IntN(7)
		btc := math.Round(between(r, 50, 4000))
		v := btc * nr.m.price(0, t)
		s.sym = "BTC"
		s.flash = "A dormant wallet that received " + commas(int64(btc)) + " $BTC " + strconv.Itoa(years) +
			" years ago just woke up and moved all of it (" + usdShort(v) + ").\n\nAddress: bc1q" + base58(r, 6) + "…" + base58(r, 4)
		s.title = "Bitcoin wallet dormant for " + strconv.Itoa(years) + " years moves " + commas(int64(btc)) + " BTC worth " + usdWords(v)
		s.summary = "A bitcoin address inactive for " + strconv.Itoa(years) + " years moved " + commas(int64(btc)) + " BTC (" + usdShort(v) + ")."
		s.weight = 0.15 + v/1e9
	}
	s.lede = "On-chain analytics account Lookonchain flagged the activity. " + s.summary
	return s
}

func (nr *newsroom) derivativesStory(r *rand.Rand, t time.Time, focus string) story {
	ci := 0
	if focus == "" && chance(r, 0.35) {
		ci = 1
	}
	c := &coins[ci]
	px := nr.m.price(ci, t)
	s := story{cat: catMarkets, sym: c.sym, emoji: "📊", weight: 0.12}
	name := c.name
	switch r.IntN(4) {
	case 0:
		friday := dayStart(t).AddDate(0, 0, (int(time.Friday)-int(t.Weekday())+7)%7)
		notional := around(r, eitherF(ci == 0, 4e9, 1.1e9), 0.3)
		monthly := friday.AddDate(0, 0, 7).Month() != friday.Month()
		if monthly {
			notional *= 2.8
			s.weight += 0.15
		}
		maxPain := level(math.Round(px*between(r, 0.93, 1.04)/c.step) * c.step)
		pcr := strconv.FormatFloat(between(r, 0.55, 1.15), 'f', 2, 64)
		s.title = "About " + usdWords(notional) + " in " + name + " options expire on Deribit " + friday.Weekday().String() + "; max pain at " + maxPain
		if monthly {
			s.title = "Monthly " + name + " options expiry: " + usdWords(notional) + " in notional value rolls off on " + apDate(friday)
		}
		s.flash = usdShort(notional) + " in $" + c.sym + " options expire on " + shortDate(friday) + ". Put/call ratio: " + pcr + ", max pain: " + maxPain
		s.lede = "Options on " + name + " with a notional value of " + usdWords(notional) + " expire on Deribit at 08:00 UTC on " +
			apDate(friday) + ". The put-to-call ratio stands at " + pcr + " and the max pain price, where most contracts expire worthless, is " + maxPain + "."
		s.summary = usdShort(notional) + " of " + name + " options expire " + apDate(friday) + " (put/call " + pcr + ", max pain " + maxPain + ")."
	case 1:
		oi := around(r, eitherF(ci == 0, 17e9, 6e9), 0.15)
		ch := 0.08 * r.NormFloat64()
		s.title = "CME " + name + " futures open interest " + either(ch >= 0, "rises ", "falls ") + pct(ch) + " to " + usdWords(oi)
		s.flash = "CME $" + c.sym + " futures OI at " + usdShort(oi) + " (" + signedPct(ch) + " w/w)"
		s.lede = "Open interest in " + name + " futures on CME Group " + either(ch >= 0, "rose ", "fell ") + pct(ch) +
			" over the week to " + usdWords(oi) + ", a sign that institutional traders are " +
			either(ch >= 0, "adding exposure", "cutting exposure") + "."
		s.summary = "CME " + name + " futures open interest moved " + signedPct(ch) + " on the week to " + usdShort(oi) + "."
	case 2:
		rate := 0.01 * r.NormFloat64() * 0.5
		venue := pick(r, perpVenues)
		if rate < 0 {
			s.title = upperFirst(name) + " perpetual funding rates turn negative on " + venue + " as shorts pile in"
		} else {
			s.title = upperFirst(name) + " funding rates climb to " + strconv.FormatFloat(rate*100, 'f', 3, 64) + "% per eight hours on " + venue
		}
		s.flash = "$" + c.sym + " funding on " + venue + ": " + strconv.FormatFloat(rate*100, 'f', 4, 64) + "% (8h)"
		s.lede = "Funding rates on " + name + " perpetual swaps on " + venue + " stood at " + strconv.FormatFloat(rate*100, 'f', 4, 64) +
			"% per eight-hour period, according to CoinGlass, with " + name + " at " + price(px) + "."
		s.summary = upperFirst(name) + " perpetual funding on " + venue + " is " + strconv.FormatFloat(rate*100, 'f', 4, 64) + "% per 8 hours."
	default:
		basis := between(r, 0.04, 0.14)
		weeks := 2 + r.IntN(14)
		s.title = "Annualized " + c.sym + " futures basis climbs to " + pct(basis) + ", highest in " + strconv.Itoa(weeks) + " weeks"
		s.flash = "$" + c.sym + " 3-month annualized basis at " + pct(basis)
		s.lede = "The annualized premium of three-month " + name + " futures over spot rose to " + pct(basis) +
			", the highest in " + strconv.Itoa(weeks) + " weeks, making cash-and-carry trades more attractive to basis funds."
		s.summary = c.sym + " futures basis reached " + pct(basis) + " annualized, a " + strconv.Itoa(weeks) + "-week high."
	}
	return s
}

// glassnodeMetrics are on-chain metrics that alerts report.
var glassnodeMetrics = []struct {
	title, path, sym string
	base             float64
	unit             string // "", "coins", "usd", "pct"
}{
	{"Number of Addresses Holding 10+ Coins", "addresses.Min10Count", "BTC", 152000, ""},
	{"Number of Addresses Holding 0.1+ Coins", "addresses.Min0_1Count", "BTC", 4450000, ""},
	{"Exchange Balance", "distribution.BalanceExchanges", "BTC", 2310000, "coins"},
	{"Miner Balance", "distribution.BalanceMinersAll", "BTC", 1803000, "coins"},
	{"Percent of Supply in Profit (7d MA)", "indicators.ProfitRelative", "BTC", 82.5, "pct"},
	{"Mean Transaction Fees (7d MA)", "fees.VolumeMean", "BTC", 1.62, "usd"},
	{"Number of Non-Zero Addresses", "addresses.NonZeroCount", "ETH", 162000000, ""},
	{"Number of Active Addresses (7d MA)", "addresses.ActiveCount", "ETH", 540000, ""},
	{"Amount of Staked ETH", "eth2.StakingTotalVolumeSum", "ETH", 36100000, "coins"},
	{"Exchange Balance", "distribution.BalanceExchanges", "ETH", 15800000, "coins"},
}

func metricStory(r *rand.Rand, t time.Time) story {
	g := glassnodeMetrics[r.IntN(len(glassnodeMetrics))]
	v := around(r, g.base, 0.03)
	span := pick(r, []string{"1-month", "3-month", "6-month", "1-year", "4-year"})
	high := chance(r, 0.5)
	word, emoji := "high", "📈"
	if !high {
		word, emoji = "low", "📉"
	}
	var val string
	switch g.unit {
	case "coins":
		val = decimal(v, 3) + " " + g.sym
	case "usd":
		val = "$" + decimal(v, 2)
	case "pct":
		v = math.Min(v, 99.8)
		val = decimal(v, 3) + "%"
	default:
		val = commas(int64(v))
	}
	chain := map[string]string{"BTC": "Bitcoin", "ETH": "Ethereum"}[g.sym]
	s := story{cat: catOnchain, sym: g.sym, emoji: emoji, weight: 0.06,
		link: "https://studio.glassnode.com/charts/" + g.path + "?a=" + g.sym}
	s.flash = emoji + " #" + chain + " $" + g.sym + " " + g.title + " just reached a " + span + " " + word + " of " + val
	metric := strings.ToLower(g.title[:1]) + g.title[1:]
	s.title = chain + " " + strings.ToLower(metric) + " hits " + span + " " + word + " of " + val
	s.lede = "The " + metric + " on " + chain + " reached a " + span + " " + word + " of " + val + ", according to Glassnode data."
	s.summary = chain + "'s " + metric + " is at a " + span + " " + word + " (" + val + "), Glassnode data show."
	return s
}

func networkStory(r *rand.Rand, t time.Time, focus string) story {
	s := story{cat: catTech, emoji: "⛓", weight: 0.1}
	n := r.IntN(6)
	if focus == "BTC" {
		n = r.IntN(2)
	}
	switch n {
	case 0:
		hr := between(r, 1.05, 1.32)
		s.sym = "BTC"
		s.title = "Bitcoin hashrate hits record " + strconv.FormatFloat(hr, 'f', 2, 64) + " ZH/s on a seven-day average"
		s.flash = "#Bitcoin hashrate reaches new all-time high of " + strconv.FormatFloat(hr*1000, 'f', 0, 64) + " EH/s"
		s.lede = "The computing power securing the Bitcoin network climbed to a seven-day average of " +
			strconv.FormatFloat(hr, 'f', 2, 64) + " zettahashes per second, a record, according to mempool.space data, even as hashprice hovers near multi-year lows."
		s.summary = "Bitcoin's 7-day average hashrate set a record at " + strconv.FormatFloat(hr, 'f', 2, 64) + " ZH/s."
	case 1:
		ch := 0.04 * r.NormFloat64()
		diff := between(r, 148, 178)
		s.sym = "BTC"
		s.title = "Bitcoin mining difficulty " + either(ch >= 0, "rises ", "falls ") + pct(ch) + " to " + strconv.FormatFloat(diff, 'f', 2, 64) + "T in latest adjustment"
		s.flash = "#Bitcoin difficulty adjustment: " + signedPct(ch) + " to " + strconv.FormatFloat(diff, 'f', 2, 64) + "T at block " + commas(int64(920000+r.IntN(60000)))
		s.lede = "Bitcoin's mining difficulty adjusted " + signedPct(ch) + " to " + strconv.FormatFloat(diff, 'f', 2, 64) +
			" trillion, the network's automatic recalibration every 2,016 blocks, making blocks " +
			either(ch >= 0, "harder", "easier") + " to find."
		s.summary = "Bitcoin difficulty moved " + signedPct(ch) + " to " + strconv.FormatFloat(diff, 'f', 2, 64) + "T."
	case 2:
		gwei := between(r, 0.15, 1.2)
		s.sym = "ETH"
		s.title = "Ethereum gas fees drop to " + strconv.FormatFloat(gwei, 'f', 2, 64) + " gwei as activity shifts to layer 2s"
		s.flash = "⛽ Ethereum gas at " + strconv.FormatFloat(gwei, 'f', 2, 64) + " gwei"
		s.lede = "Average gas prices on Ethereum fell to " + strconv.FormatFloat(gwei, 'f', 2, 64) +
			" gwei, with a simple transfer costing a fraction of a cent, as rollups absorb most retail activity after the latest blob capacity increase."
		s.summary = "Ethereum base-layer gas fell to about " + strconv.FormatFloat(gwei, 'f', 2, 64) + " gwei."
	case 3:
		q := between(r, 0.3e6, 2.6e6)
		days := int(q / 57600)
		which := pick(r, []string{"exit", "entry"})
		s.sym = "ETH"
		s.title = "Ethereum validator " + which + " queue swells to " + units(q) + " ETH, a " + strconv.Itoa(days) + "-day wait"
		s.flash = "Ethereum validator " + which + " queue: " + units(q) + " ETH (~" + strconv.Itoa(days) + " days)"
		s.lede = "About " + units(q) + " ETH is waiting in Ethereum's validator " + which + " queue, implying a wait of roughly " +
			strconv.Itoa(days) + " days, according to validatorqueue.com."
		s.summary = "Ethereum's validator " + which + " queue holds " + units(q) + " ETH (~" + strconv.Itoa(days) + " days)."
		s.weight = 0.15
	case 4:
		tx := between(r, 70, 140)
		s.sym = "SOL"
		s.title = "Solana processes " + strconv.FormatFloat(tx, 'f', 1, 64) + " million transactions in a day, highest since " + t.AddDate(0, -1-r.IntN(6), 0).Format("January")
		s.flash = "#Solana daily transactions hit " + strconv.FormatFloat(tx, 'f', 1, 64) + "M"
		s.lede = "The Solana network handled " + strconv.FormatFloat(tx, 'f', 1, 64) +
			" million transactions over 24 hours, including votes, driven by memecoin trading and stablecoin transfers."
		s.summary = "Solana recorded " + strconv.FormatFloat(tx, 'f', 1, 64) + "M daily transactions."
	default:
		l2 := pick(r, []string{"Base", "Arbitrum", "Optimism", "Starknet", "Linea", "zkSync"})
		tvl := between(r, 0.8e9, 16e9)
		s.sym = "ETH"
		s.title = l2 + "'s total value locked climbs to " + usdWords(tvl)
		s.flash = l2 + " TVL hits " + usdShort(tvl)
		s.lede = "Assets bridged to and deployed on " + l2 + " rose to " + usdWords(tvl) + ", according to L2Beat."
		s.summary = l2 + " TVL is " + usdShort(tvl) + "."
	}
	return s
}

// unlockTokens are tokens with scheduled unlocks.
var unlockTokens = []struct{ name, sym string }{
	{"Sui", "SUI"}, {"Aptos", "APT"}, {"Arbitrum", "ARB"}, {"Optimism", "OP"}, {"Starknet", "STRK"},
	{"LayerZero", "ZRO"}, {"Celestia", "TIA"}, {"Pyth Network", "PYTH"}, {"Jupiter", "JUP"}, {"Wormhole", "W"},
	{"Ethena", "ENA"}, {"Ondo", "ONDO"}, {"Berachain", "BERA"}, {"EigenLayer", "EIGEN"}, {"Movement", "MOVE"},
	{"ZKsync", "ZK"}, {"Immutable", "IMX"}, {"Avalanche", "AVAX"},
}

func unlockStory(r *rand.Rand, t time.Time) story {
	tok := pick(r, unlockTokens)
	share := between(r, 0.004, 0.045)
	value := around(r, 45e6, 0.8)
	tokens := value / between(r, 0.2, 6)
	when := dayStart(t).AddDate(0, 0, 1+r.IntN(9))
	to := pick(r, []string{"early investors and core contributors", "the ecosystem fund", "the foundation treasury", "community incentives"})
	s := story{cat: catMarkets, sym: tok.sym, emoji: "🔓", weight: 0.08 + value/1e9}
	s.title = tok.name + " (" + tok.sym + ") to unlock " + pct(share) + " of supply worth " + usdWords(value) + " on " + apDate(when)
	s.flash = "🔓 $" + tok.sym + " unlock: " + decimal(tokens/1e6, 2) + "M tokens (" + usdShort(value) + ", " + pct(share) + " of supply) on " + shortDate(when)
	s.lede = tok.name + " will release " + decimal(tokens/1e6, 2) + " million " + tok.sym + " tokens, about " + pct(share) +
		" of its circulating supply, on " + apDate(when) + ", according to Tokenomist data. The tokens, worth about " +
		usdWords(value) + " at current prices, go to " + to + "."
	s.summary = tok.name + " unlocks " + pct(share) + " of supply (" + usdShort(value) + ") on " + apDate(when) + ", mostly to " + to + "."
	return s
}

func stablecoinStory(r *rand.Rand, t time.Time) story {
	s := story{cat: catMarkets, emoji: "💵", weight: 0.12}
	days := t.Sub(date(2026, 1, 1)).Hours() / 24
	switch r.IntN(4) {
	case 0:
		amt := float64(1+r.IntN(4)) * 5e8
		chain := pick(r, []string{"Tron", "Ethereum", "Solana", "TON"})
		s.sym = "USDT"
		s.title = "Tether mints " + usdWords(amt) + " in USDT on " + chain
		s.flash = "Tether minted " + usdShort(amt) + " $USDT on #" + chain
		s.lede = "Tether issued " + usdWords(amt) + " of new USDT on the " + chain + " network, according to on-chain data, adding to a supply that has grown steadily this year."
		s.summary = "Tether minted " + usdShort(amt) + " USDT on " + chain + "."
	case 1:
		cap := around(r, 305e9+days*0.18e9, 0.01)
		s.title = "Stablecoin market capitalization climbs to record " + usdWords(cap)
		s.flash = "Total stablecoin market cap hits new all-time high of " + usdShort(cap)
		s.lede = "The combined market value of dollar-pegged and other stablecoins rose to " + usdWords(cap) +
			", a record, according to DefiLlama, with USDT accounting for about 58% of the total."
		s.summary = "Stablecoin supply reached a record " + usdShort(cap) + " per DefiLlama."
		s.weight = 0.2
	case 2:
		sup := around(r, 78e9+days*0.05e9, 0.02)
		s.sym = "USDC"
		s.title = "USDC circulating supply tops " + usdWords(sup)
		s.flash = "$USDC supply reaches " + usdShort(sup)
		s.lede = "The supply of Circle's USDC rose above " + usdWords(sup) + ", according to the issuer's transparency page."
		s.summary = "USDC supply is above " + usdShort(sup) + "."
	default:
		firm := pick(r, []string{"Norvik Bank", "Asteria Payments", "Halden Financial", "Marisol Pay", "Keystone Trust"})
		cur := pick(r, []string{"euro", "US dollar", "Swiss franc", "Singapore dollar", "yen"})
		chain := pick(r, []string{"Ethereum", "Solana", "Base", "Stellar", "Avalanche"})
		s.cat = catBusiness
		s.company = firm
		s.title = firm + " launches " + cur + "-backed stablecoin on " + chain
		s.flash = firm + " launches " + cur + " stablecoin on " + chain
		s.lede = firm + " launched a " + cur + "-denominated stablecoin on " + chain + ", backed one-to-one by cash and short-term government debt held with regulated custodians."
		s.summary = firm + " issued a " + cur + " stablecoin on " + chain + "."
		s.prTitle = titleCase(firm + " launches " + cur + "-backed stablecoin on " + chain)
	}
	return s
}
