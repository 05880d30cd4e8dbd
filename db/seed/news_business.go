package seed

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

var (
	// Fictional protocols: exploits are only ever reported against these.
	fictionalProtocols = []string{"Ribbonfall Finance", "Kestrel Bridge", "Orbitline DEX", "Nimbus Lend", "Parallax Vaults",
		"Driftwood Swap", "Cobalt Perps", "Lanternfish Yield", "Meridian Money Market", "Quillon Protocol", "Saltmarsh Finance",
		"Verdant Restake", "Halcyon Options", "Tidepool AMM", "Granite Lending"}
	chains         = []string{"Ethereum", "Arbitrum", "BNB Chain", "Base", "Solana", "Sui", "Optimism", "Avalanche", "Polygon", "Sonic"}
	exploitVectors = []string{"a price-oracle manipulation", "a compromised private key", "a reentrancy bug in its vault contract",
		"a flawed access-control check", "a malicious proxy upgrade", "a rounding error in its share accounting",
		"a spoofed cross-chain message", "a flash-loan attack on a thin liquidity pool"}
	securityFirms = []string{"PeckShield", "CertiK", "Cyvers", "SlowMist", "Hacken", "BlockSec"}

	// Real venture firms, used only as lead investors of fictional startups.
	ventureFirms = []string{"Paradigm", "a16z crypto", "Polychain Capital", "Pantera Capital", "Dragonfly", "Multicoin Capital",
		"Haun Ventures", "Electric Capital", "Framework Ventures", "Coinbase Ventures", "Galaxy Ventures", "Variant", "Placeholder"}
	fictionalStartups = []string{"Nexa Labs", "Tessera Finance", "Quanta Rollup", "Lumen Markets", "Arcadia Prime", "Halo Settlement",
		"Fathom Oracle", "Brightline Pay", "Polaris Custody", "Cinder Labs", "Onyx Credit", "Vela Protocol", "Mosaic Intents",
		"Fjord Compute", "Keel Finance", "Sparrow Wallet", "Atlas Proofs", "Juniper Chain"}
	startupPurposes = []string{"an intent-based cross-chain trading layer", "institutional stablecoin payment rails",
		"a restaking-secured oracle network", "a marketplace for zero-knowledge proofs", "on-chain credit for market makers",
		"a Bitcoin-native lending protocol", "tokenized money market funds for corporate treasuries",
		"a self-custodial wallet with passkey recovery", "a decentralized GPU compute network", "compliance tooling for DeFi front ends",
		"a perpetuals exchange on its own app-chain", "payroll in stablecoins for remote teams"}

	// Fictional listed companies holding crypto on their balance sheets.
	treasuryCompanies = []struct{ name, exch, ticker, sym string }{
		{"Halcyon Digital Holdings", "NASDAQ", "HLCN", "BTC"}, {"Meridian Bitcoin Corp.", "NASDAQ", "MBTC", "BTC"},
		{"Kestrel Treasury Inc.", "NYSE", "KTRY", "BTC"}, {"Blue Harbor Industries", "NASDAQ", "BHIN", "BTC"},
		{"Sakuragawa Capital", "TSE", "3791", "BTC"}, {"Northgate Ether Reserve", "NASDAQ", "NGER", "ETH"},
		{"Lumen Ether Treasury", "NASDAQ", "LMTH", "ETH"}, {"Solstice Treasury Corp.", "NASDAQ", "SLST", "SOL"},
		{"Pinecrest SOL Holdings", "NASDAQ", "PSOL", "SOL"}, {"Hyperion Reserve Inc.", "NASDAQ", "HYRV", "HYPE"},
	}
	// Fictional miners, for earnings releases.
	miners = []struct{ name, exch, ticker string }{
		{"Cobalt Ridge Mining", "NASDAQ", "CRMG"}, {"Aurora Hashworks", "NASDAQ", "AHWK"}, {"Frostline Digital", "NASDAQ", "FRLD"},
	}
	cities = []string{"NEW YORK", "SAN FRANCISCO", "MIAMI", "AUSTIN", "LONDON", "SINGAPORE", "ZUG, Switzerland", "TORONTO", "DUBAI, UAE", "CHICAGO"}

	// Real issuers, exchanges and protocols appear only in routine, neutral news.
	etfIssuers    = []string{"BlackRock", "Fidelity", "Grayscale", "VanEck", "Bitwise", "21Shares", "Franklin Templeton", "Invesco Galaxy", "Canary Capital", "WisdomTree", "REX-Osprey"}
	etfCandidates = []struct{ name, sym string }{{"Sui", "SUI"}, {"Avalanche", "AVAX"}, {"Polkadot", "DOT"}, {"Near", "NEAR"},
		{"Aptos", "APT"}, {"Sei", "SEI"}, {"Ondo", "ONDO"}, {"Tron", "TRX"}, {"BNB", "BNB"}, {"Injective", "INJ"},
		{"Bittensor", "TAO"}, {"Ethena", "ENA"}, {"Aave", "AAVE"}, {"Chainlink", "LINK"}}
	listingTokens = []struct{ name, sym string }{{"Monad", "MON"}, {"Berachain", "BERA"}, {"Plasma", "XPL"}, {"Aster", "ASTER"},
		{"Pump.fun", "PUMP"}, {"Linea", "LINEA"}, {"Story", "IP"}, {"Kaito", "KAITO"}, {"Walrus", "WAL"}, {"Initia", "INIT"},
		{"Ethena", "ENA"}, {"Ondo", "ONDO"}, {"Bittensor", "TAO"}, {"Hyperliquid", "HYPE"}, {"Jupiter", "JUP"},
		{"Pyth Network", "PYTH"}, {"Celestia", "TIA"}, {"Render", "RENDER"}, {"Injective", "INJ"}, {"Sei", "SEI"},
		{"Starknet", "STRK"}, {"LayerZero", "ZRO"}, {"EigenLayer", "EIGEN"}, {"Pendle", "PENDLE"}, {"Morpho", "MORPHO"},
		{"Jito", "JTO"}, {"Aerodrome", "AERO"}, {"Virtuals Protocol", "VIRTUAL"}, {"Succinct", "PROVE"}, {"Falcon Finance", "FF"}}
	protocols = []string{"Uniswap", "Aave", "Lido", "EigenLayer", "Jupiter", "Pendle", "Morpho", "Ethena", "Sky", "Curve",
		"GMX", "dYdX", "Jito", "Raydium", "Compound", "Kamino", "Euler", "Spark", "Balancer", "Across"}
	protocolFeatures = []string{"native account abstraction", "hooks for custom pool logic", "cross-margin accounts",
		"isolated lending markets", "a built-in MEV auction", "intent-based order routing", "permissionless vault curation",
		"gasless swaps", "a new fee tier for stablecoin pairs"}
	products = []string{"USDC-margined perpetual futures", "crypto-backed loans", "tokenized US stock trading",
		"a Solana staking product", "zero-fee bitcoin trading pairs", "a crypto debit card", "an institutional prime brokerage desk",
		"options trading on bitcoin and ether", "a self-custodial wallet", "recurring buys in stablecoins"}
	regions  = []string{"EU", "Brazilian", "Australian", "Canadian", "Japanese", "UAE", "Singaporean", "UK", "Mexican", "South Korean"}
	partners = []string{"Nexa Labs", "Tessera Finance", "Lumen Markets", "Halo Settlement", "Brightline Pay", "Polaris Custody",
		"Coinbase", "Kraken", "Circle", "Chainlink"}
)

// quarter returns the last completed quarter as of t.
func quarter(t time.Time) (q, year int) {
	q = (int(t.Month())-1)/3 + 1
	if q == 1 {
		return 4, t.Year() - 1
	}
	return q - 1, t.Year()
}

func hackStory(r *rand.Rand, t time.Time) story {
	proto := pick(r, fictionalProtocols)
	chain := pick(r, chains)
	loss := math.Min(400e6, math.Max(0.3e6, around(r, 7e6, 1.2)))
	vector := pick(r, exploitVectors)
	firm := pick(r, securityFirms)
	bounty := pick(r, []int{5, 10, 10, 15, 20})
	s := story{cat: catSecurity, emoji: "🚨", weight: 0.4 + loss/80e6}
	switch r.IntN(3) {
	case 0:
		s.title = proto + " loses " + usdWords(loss) + " to exploit involving " + vector
	case 1:
		s.title = proto + " on " + chain + " drained of " + usdWords(loss) + "; team pauses contracts"
	default:
		s.title = "DeFi protocol " + proto + " hit by " + usdWords(loss) + " exploit, " + firm + " says"
	}
	s.flash = strings.ToUpper(proto) + " EXPLOITED FOR " + usdShort(loss) + " ON " + strings.ToUpper(chain)
	s.lede = "DeFi protocol " + proto + " lost about " + usdWords(loss) + " on " + chain + " after an attacker exploited " + vector +
		", blockchain security firm " + firm + " said. The team paused its contracts and said it was working with law enforcement."
	s.more = "The attacker swapped the stolen assets for ether and moved them through " +
		pick(r, []string{"a cross-chain bridge", "Tornado Cash", "a string of fresh wallets", "THORChain"}) + ". " + proto +
		" offered a " + strconv.Itoa(bounty) + "% bounty for the return of the funds."
	s.summary = proto + " on " + chain + " was exploited for about " + usdShort(loss) + " via " + vector +
		"; contracts are paused and a " + strconv.Itoa(bounty) + "% bounty is on offer."
	return s
}

func regulationStory(r *rand.Rand, t time.Time) story {
	s := story{cat: catPolicy, weight: 0.3}
	later := apDate(t.AddDate(0, 0, 30+r.IntN(60)))
	issuer := pick(r, etfIssuers)
	cand := pick(r, etfCandidates)
	product := pick(r, []string{"spot ", "staked ", "spot "}) + cand.name + " ETF"
	topic := pick(r, []string{"tokenized securities", "DeFi and the securities laws", "crypto custody", "staking",
		"on-chain privacy", "trading venues for crypto assets"})
	switch r.IntN(14) {
	case 0:
		s.flag = "🇺🇸"
		s.title = "SEC delays decision on " + issuer + "'s " + product + " to " + later
		s.lede = "The US Securities and Exchange Commission extended its review of " + issuer + "'s proposed " + product +
			", setting a new deadline of " + later + ", according to a filing. The agency said it needed more time to consider the proposal."
		s.summary = "The SEC pushed its deadline on " + issuer + "'s " + product + " to " + later + "."
	case 1:
		venue := pick(r, []string{"Nasdaq", "NYSE Arca", "Cboe BZX"})
		s.flag = "🇺🇸"
		s.title = "SEC approves " + venue + " listing of " + issuer + "'s " + product
		s.lede = "The US Securities and Exchange Commission approved a rule change allowing " + venue + " to list " + issuer + "'s " +
			product + ", clearing the way for trading to begin as soon as this week."
		s.summary = "The SEC approved the listing of " + issuer + "'s " + product + " on " + venue + "."
		s.weight = 0.55
	case 2:
		s.flag = "🇺🇸"
		s.title = "SEC crypto task force schedules roundtable on " + topic + " for " + later
		s.lede = "The SEC's crypto task force will hold a public roundtable on " + topic + " on " + later +
			", with panels of industry executives, academics and former regulators."
		s.summary = "The SEC will hold a roundtable on " + topic + " on " + later + "."
		s.weight = 0.15
	case 3:
		s.flag = "🇺🇸"
		s.title = "CFTC launches pilot allowing tokenized collateral in derivatives markets"
		s.lede = "The Commodity Futures Trading Commission launched a pilot program letting futures commission merchants accept " +
			"stablecoins and tokenized Treasury funds as margin collateral, subject to custody and reporting conditions."
		s.summary = "The CFTC started a pilot for stablecoins and tokenized Treasuries as derivatives collateral."
		s.weight = 0.4
	case 4:
		yes := 13 + r.IntN(3)
		s.flag = "🇺🇸"
		s.title = "Senate Banking Committee advances crypto market structure bill in " + strconv.Itoa(yes) + "-" + strconv.Itoa(24-yes) + " vote"
		s.lede = "The Senate Banking Committee voted " + strconv.Itoa(yes) + "-" + strconv.Itoa(24-yes) +
			" to advance legislation dividing oversight of digital assets between the SEC and the CFTC, sending the bill to the full Senate."
		s.summary = "A Senate committee advanced the crypto market structure bill " + strconv.Itoa(yes) + "-" + strconv.Itoa(24-yes) + "."
		s.weight = 0.65
	case 5:
		s.flag = "🇺🇸"
		s.title = "Treasury proposes reserve and audit rules for stablecoin issuers under the GENIUS Act"
		s.lede = "The US Treasury Department proposed rules requiring payment stablecoin issuers to hold one-to-one reserves in cash and short-dated Treasuries and to publish monthly attestations. Comments are due by " + later + "."
		s.summary = "Treasury proposed GENIUS Act reserve and attestation rules; comments are due " + later + "."
		s.weight = 0.45
	case 6:
		n := 3 + r.IntN(40)
		s.flag = "🇺🇸"
		group := pick(r, []string{"a ransomware group", "a North Korean laundering network", "a darknet marketplace", "a sanctions-evasion network"})
		s.title = "OFAC sanctions " + strconv.Itoa(n) + " crypto addresses tied to " + group
		s.lede = "The Treasury's Office of Foreign Assets Control added " + strconv.Itoa(n) + " cryptocurrency addresses linked to " + group +
			" to its sanctions list, barring US persons from dealing with them."
		s.summary = "OFAC sanctioned " + strconv.Itoa(n) + " addresses tied to " + group + "."
	case 7:
		s.flag = "🇪🇺"
		s.title = "ESMA publishes guidance for crypto firms as MiCA transition period nears its end"
		s.lede = "The European Securities and Markets Authority told national regulators to ensure crypto-asset service providers without a MiCA license wind down EU operations in an orderly way once the transitional period ends."
		s.summary = "ESMA issued guidance on the end of MiCA's transitional period."
	case 8:
		s.flag = "🇬🇧"
		s.title = "UK FCA publishes final rules for stablecoin issuers and crypto custodians"
		s.lede = "Britain's Financial Conduct Authority published final rules for issuing qualifying stablecoins and safeguarding crypto assets, part of the regime due to take effect next year."
		s.summary = "The FCA finalized UK rules for stablecoin issuance and crypto custody."
	case 9:
		n := 2 + r.IntN(5)
		s.flag = "🇭🇰"
		s.title = "Hong Kong SFC grants licenses to " + numberWord(n) + " more virtual asset trading platforms"
		s.lede = "Hong Kong's Securities and Futures Commission approved " + numberWord(n) +
			" additional virtual asset trading platforms, bringing the number of licensed venues in the city to " + strconv.Itoa(11+n+r.IntN(6)) + "."
		s.summary = "Hong Kong licensed " + strconv.Itoa(n) + " more crypto trading platforms."
	case 10:
		s.flag = "🇯🇵"
		s.title = "Japan's FSA submits bill to treat crypto as financial products, paving way for 20% tax"
		s.lede = "Japan's Financial Services Agency submitted legislation moving crypto assets under the Financial Instruments and Exchange Act, a step toward taxing gains at a flat 20% and allowing crypto ETFs."
		s.summary = "Japan moved to classify crypto as financial products, enabling a 20% flat tax."
		s.weight = 0.4
	case 11:
		s.flag = "🇰🇷"
		s.title = "South Korea's FSC to let listed companies trade crypto under new guidelines"
		s.lede = "South Korea's Financial Services Commission said listed companies and professional investors will be allowed to open real-name exchange accounts, capped at a share of equity capital."
		s.summary = "South Korea will allow listed companies to trade crypto within limits."
	case 12:
		ex := pick(r, []string{"OKX", "Bybit", "Kraken", "Crypto.com", "Bitget"})
		s.flag = "🇦🇪"
		s.title = "Dubai's VARA grants full operating license to " + ex
		s.lede = "Dubai's Virtual Assets Regulatory Authority granted " + ex + " a full license to offer exchange and broker-dealer services to retail and institutional clients in the emirate."
		s.summary = "Dubai's VARA fully licensed " + ex + "."
		s.weight = 0.2
	default:
		s.flag = "🇧🇷"
		s.title = "Brazil's central bank publishes final rules for crypto service providers"
		s.lede = "Banco Central do Brasil published rules requiring crypto service providers to obtain authorization, segregate client assets and report foreign-exchange transactions involving stablecoins."
		s.summary = "Brazil's central bank finalized its crypto provider rules."
	}
	s.flash = s.title
	return s
}

func fundingStory(r *rand.Rand, t time.Time) story {
	name := pick(r, fictionalStartups)
	purpose := pick(r, startupPurposes)
	round, amt := "seed", between(r, 2e6, 9e6)
	switch r.IntN(4) {
	case 1, 2:
		round, amt = "Series A", between(r, 10e6, 35e6)
	case 3:
		round, amt = "Series B", between(r, 30e6, 90e6)
	}
	amt = math.Round(amt/5e5) * 5e5
	lead := pick(r, ventureFirms)
	co1, co2 := pick(r, ventureFirms), pick(r, ventureFirms)
	for co1 == lead {
		co1 = pick(r, ventureFirms)
	}
	for co2 == lead || co2 == co1 {
		co2 = pick(r, ventureFirms)
	}
	s := story{cat: catBusiness, emoji: "💰", company: name, weight: 0.08 + amt/400e6}
	if chance(r, 0.5) {
		s.title = name + " raises " + usdWords(amt) + " " + round + " led by " + lead
	} else {
		s.title = name + " secures " + usdWords(amt) + " to build " + purpose
	}
	s.flash = strings.ToUpper(name + " raises " + usdShort(amt) + " in " + round + " funding led by " + lead)
	s.lede = name + ", which is building " + purpose + ", raised " + usdWords(amt) + " in a " + round + " round led by " + lead +
		", with participation from " + co1 + " and " + co2 + "."
	q, y := quarter(t.AddDate(0, 6, 0))
	s.more = "The company plans to use the funds to grow its engineering team and expects to launch on mainnet in Q" +
		strconv.Itoa(q) + " " + strconv.Itoa(y) + "."
	if round != "seed" && chance(r, 0.5) {
		s.more = "The round values the company at " + usdWords(amt*between(r, 6, 15)) + ", a person familiar with the matter said. " + s.more
	}
	s.summary = name + " raised " + usdShort(amt) + " (" + round + ", led by " + lead + ") to build " + purpose + "."
	s.prTitle = titleCase(name + " raises " + usdWords(amt) + " " + round + " led by " + lead + " to build " + purpose)
	return s
}

func (nr *newsroom) treasuryStory(r *rand.Rand, t time.Time, focus string) story {
	c := pick(r, treasuryCompanies)
	for focus != "" && c.sym != focus {
		c = pick(r, treasuryCompanies)
	}
	ci := 0
	for i := range coins[:etfCoins] {
		if coins[i].sym == c.sym {
			ci = i
		}
	}
	px := nr.m.price(ci, t.Add(-3*day)) * between(r, 0.985, 1.015)
	value := around(r, 60e6, 0.8)
	amount := math.Round(value / px)
	if amount < 1 {
		amount = 1
	}
	value = amount * px
	holdings := math.Round(amount * between(r, 4, 40))
	s := story{cat: catBusiness, emoji: "🏦", sym: c.sym, company: c.name, weight: 0.18 + value/1e9}
	s.title = c.name + " buys " + units(amount) + " " + c.sym + " for " + usdWords(value) + ", lifting holdings to " + units(holdings) + " " + c.sym
	s.flash = strings.ToUpper(c.name) + " ACQUIRES " + units(amount) + " $" + c.sym + " FOR ~" + usdShort(value) + "; NOW HOLDS " + units(holdings) + " $" + c.sym
	s.lede = c.name + " (" + c.exch + ": " + c.ticker + ") said it acquired " + units(amount) + " " + c.sym + " at an average price of " +
		price(px) + " between " + apDate(t.AddDate(0, 0, -7)) + " and " + apDate(t.AddDate(0, 0, -1)) + ". The company now holds " +
		units(holdings) + " " + c.sym + ", acquired for about " + usdWords(holdings*px*between(r, 0.8, 1.05)) + " in total."
	move := 0.05 * r.NormFloat64()
	s.more = "Shares of " + c.ticker + " " + either(move >= 0, "rose ", "fell ") + pct(move) + " in premarket trading."
	s.summary = c.name + " bought " + units(amount) + " " + c.sym + " (~" + usdShort(value) + ") and now holds " + units(holdings) + " " + c.sym + "."
	s.prTitle = titleCase(c.name + " announces purchase of " + units(amount) + " " + c.sym + " and provides treasury update")
	return s
}

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

func (nr *newsroom) macroStory(r *rand.Rand, t time.Time) story {
	s := story{cat: catMacro, flag: "🇺🇸", emoji: "🏛", weight: 0.3}
	prev := monthNames[(int(t.Month())+10)%12]
	mon := strings.ToUpper(prev[:3])
	btc := nr.m.price(0, t)
	btcMove := nr.m.change(0, t, time.Hour)
	reaction := "Bitcoin " + either(btcMove >= 0, "rose ", "fell ") + pct(btcMove) + " in the hour after the release to " + price(btc) + "."
	if math.Abs(btcMove) < 0.001 {
		reaction = "Bitcoin was little changed after the release at " + price(btc) + "."
	}
	f1 := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	switch r.IntN(6) {
	case 0, 1:
		index := either(r.IntN(2) == 0, "CPI", "PPI")
		long := either(index == "CPI", "consumer price index", "producer price index")
		yoy := math.Round(between(r, 2.3, 3.4)*10) / 10
		est := yoy + float64(r.IntN(3)-1)/10
		mom := math.Round(between(r, 0.1, 0.45)*10) / 10
		core := math.Round((yoy+between(r, -0.2, 0.4))*10) / 10
		s.title = "US " + either(index == "CPI", "consumer", "producer") + " prices rise " + f1(mom) + "% in " + prev + "; annual rate " + f1(yoy) + "% vs " + f1(est) + "% expected"
		s.flash = "*US " + mon + " " + index + " RISES " + f1(mom) + "% M/M; Y/Y " + f1(yoy) + "%, EST. " + f1(est) + "%"
		s.lede = "The US " + long + " rose " + f1(mom) + "% in " + prev + " from the prior month and " + f1(yoy) +
			"% from a year earlier, the Labor Department said, compared with economists' forecast of " + f1(est) +
			"%. The core measure, which strips out food and energy, rose " + f1(core) + "% year over year."
		s.summary = "US " + index + " rose " + f1(yoy) + "% y/y in " + prev + " (" + f1(est) + "% expected); core " + f1(core) + "%. " + reaction
		s.weight = 0.45 + math.Abs(yoy-est)
	case 2:
		jobs := 20 + r.IntN(230)
		est := jobs + r.IntN(80) - 40
		ur := math.Round(between(r, 4.1, 4.7)*10) / 10
		s.title = "US economy adds " + strconv.Itoa(jobs) + ",000 jobs in " + prev + "; unemployment rate " + f1(ur) + "%"
		s.flash = "*US " + mon + " NONFARM PAYROLLS +" + strconv.Itoa(jobs) + "K; EST. +" + strconv.Itoa(max(est, 5)) + "K; UNEMPLOYMENT RATE " + f1(ur) + "%"
		s.lede = "US employers added " + strconv.Itoa(jobs) + ",000 jobs in " + prev + ", compared with the " + strconv.Itoa(max(est, 5)) +
			",000 economists had expected, and the unemployment rate was " + f1(ur) + "%, the Bureau of Labor Statistics said."
		s.summary = "US payrolls rose " + strconv.Itoa(jobs) + "K in " + prev + " vs " + strconv.Itoa(max(est, 5)) + "K expected; unemployment " + f1(ur) + "%. " + reaction
		s.weight = 0.45
	case 3:
		lo := 3.25 + 0.25*float64(r.IntN(3))
		f2 := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
		if chance(r, 0.5) {
			s.title = "Fed cuts rates by 25 basis points to " + f2(lo) + "%-" + f2(lo+0.25) + "%, signals caution on further easing"
			s.flash = "*FED CUTS RATES BY 25 BPS TO " + f2(lo) + "%-" + f2(lo+0.25) + "%"
			s.lede = "The Federal Reserve lowered its benchmark rate by a quarter point to a range of " + f2(lo) + "% to " + f2(lo+0.25) +
				"%, with " + dissenters(1+r.IntN(3)) + " dissenting, and said future moves would depend on incoming data."
		} else {
			s.title = "Fed holds rates at " + f2(lo) + "%-" + f2(lo+0.25) + "% as officials weigh sticky inflation"
			s.flash = "*FED HOLDS RATES AT " + f2(lo) + "%-" + f2(lo+0.25) + "%"
			s.lede = "The Federal Reserve left its benchmark rate unchanged in a range of " + f2(lo) + "% to " + f2(lo+0.25) +
				"%, saying inflation remains somewhat elevated while the labor market has cooled."
		}
		s.summary = strings.TrimSuffix(s.lede, ".") + ". " + reaction
		s.weight = 0.7
	case 4:
		claims := 205 + r.IntN(50)
		est := claims + r.IntN(14) - 7
		s.title = "US initial jobless claims at " + strconv.Itoa(claims) + ",000 vs " + strconv.Itoa(est) + ",000 expected"
		s.flash = "*US INITIAL JOBLESS CLAIMS " + strconv.Itoa(claims) + "K; EST. " + strconv.Itoa(est) + "K"
		s.lede = "Initial claims for US unemployment benefits came in at " + strconv.Itoa(claims) + ",000 for the latest week, against forecasts of " + strconv.Itoa(est) + ",000, the Labor Department said."
		s.summary = "US jobless claims were " + strconv.Itoa(claims) + "K vs " + strconv.Itoa(est) + "K expected."
		s.weight = 0.15
	default:
		y := math.Round(between(r, 3.9, 4.7)*100) / 100
		bp := r.IntN(15) - 7
		s.title = "10-year Treasury yield " + either(bp >= 0, "climbs", "falls") + " to " + strconv.FormatFloat(y, 'f', 2, 64) + "%"
		s.flash = "*US 10-YEAR YIELD " + either(bp >= 0, "RISES", "FALLS") + " " + strconv.Itoa(abs(bp)) + " BPS TO " + strconv.FormatFloat(y, 'f', 2, 64) + "%"
		s.lede = "The yield on the benchmark 10-year Treasury note " + either(bp >= 0, "rose ", "fell ") + strconv.Itoa(abs(bp)) +
			" basis points to " + strconv.FormatFloat(y, 'f', 2, 64) + "% as traders reassessed the path of Fed policy."
		s.summary = "The US 10-year yield moved " + strconv.Itoa(bp) + " bps to " + strconv.FormatFloat(y, 'f', 2, 64) + "%."
		s.weight = 0.15
	}
	s.more = reaction
	return s
}

func listingStory(r *rand.Rand, t time.Time) story {
	tok := pick(r, listingTokens)
	s := story{cat: catMarkets, sym: tok.sym, emoji: "🔥", weight: 0.15}
	pump := between(r, 0.08, 0.6)
	switch r.IntN(7) {
	case 0:
		s.title = "Binance will list " + tok.name + " (" + tok.sym + ") with a Seed Tag applied"
		s.lede = "Binance said it will open spot trading for " + tok.name + " (" + tok.sym + ") against USDT, USDC and TRY, with deposits opening ahead of trading. The token carries a Seed Tag, which Binance applies to newer, more volatile projects."
		s.weight = 0.3
	case 1:
		lev := pick(r, []int{20, 25, 50, 75})
		s.title = "Binance Futures to launch " + tok.sym + "USDT perpetual contract with up to " + strconv.Itoa(lev) + "x leverage"
		s.lede = "Binance Futures will launch a USDⓈ-margined " + tok.sym + "USDT perpetual contract with leverage of up to " + strconv.Itoa(lev) + "x on " + apDate(t.Add(day)) + "."
	case 2:
		s.title = "Coinbase adds " + tok.name + " (" + tok.sym + ") to its listing roadmap"
		s.lede = "Coinbase added " + tok.name + " (" + tok.sym + ") to its roadmap of assets under consideration, saying trading would begin once market-making support and technical requirements are met."
		s.weight = 0.25
	case 3:
		s.flag = "🇰🇷"
		ex := pick(r, []string{"Upbit", "Bithumb"})
		s.title = ex + " to list " + tok.sym + " on KRW, BTC and USDT markets"
		s.lede = "South Korean exchange " + ex + " said it will list " + tok.name + " (" + tok.sym + ") on its Korean won, bitcoin and USDT markets, with trading starting at " + strconv.Itoa(13+r.IntN(5)) + ":00 KST."
		s.weight = 0.3
		pump += 0.2
	case 4:
		s.flag = "🇺🇸"
		s.title = "Robinhood adds " + tok.sym + " trading for US customers"
		s.lede = "Robinhood made " + tok.name + " (" + tok.sym + ") available to trade for customers in the US, expanding its crypto lineup."
	default:
		ex := pick(r, []string{"OKX", "Bybit", "Kraken", "Bitget", "KuCoin"})
		s.title = ex + " lists " + tok.name + " (" + tok.sym + ") for spot trading"
		s.lede = ex + " listed " + tok.name + " (" + tok.sym + ") for spot trading against USDT, with withdrawals opening a day later."
		s.weight = 0.1
	}
	if chance(r, 0.45) {
		s.more = tok.sym + " jumped " + pct(pump) + " within an hour of the announcement."
		s.flash = s.title + " — $" + tok.sym + " +" + pct(pump)
		s.summary = s.title + "; " + tok.sym + " rose " + pct(pump) + " on the news."
	} else {
		s.flash = s.title
		s.summary = s.lede
	}
	return s
}

func exchangeStory(r *rand.Rand, t time.Time) story {
	ex := pick(r, []string{"Coinbase", "Kraken", "OKX", "Bybit", "Binance", "Gemini", "Bitstamp", "Crypto.com", "Bitget"})
	s := story{cat: catBusiness, emoji: "🏢", company: ex, weight: 0.12}
	switch r.IntN(3) {
	case 0:
		prod := pick(r, products)
		region := pick(r, regions)
		s.title = ex + " launches " + prod + " for " + region + " users"
		s.lede = ex + " rolled out " + prod + " for " + region + " customers, the exchange said in a blog post, citing demand from retail and institutional clients."
		s.summary = ex + " launched " + prod + " for " + region + " users."
		s.prTitle = titleCase(ex + " launches " + prod + " for " + region + " customers")
	case 1:
		q, y := quarter(t)
		vol := around(r, 180e9, 0.5)
		s.title = ex + " reports Q" + strconv.Itoa(q) + " trading volume of " + usdWords(vol) + ", " + either(chance(r, 0.6), "up", "down") + " " + pct(between(r, 0.03, 0.4)) + " from the prior quarter"
		s.lede = ex + " said spot and derivatives volume on its platform reached " + usdWords(vol) + " in the " + ordinalWord(q) + " quarter of " + strconv.Itoa(y) + "."
		s.summary = ex + " reported " + usdShort(vol) + " in Q" + strconv.Itoa(q) + " volume."
	default:
		tok := pick(r, listingTokens)
		when := apDate(t.AddDate(0, 0, 3+r.IntN(10)))
		s.title = ex + " to delist " + tok.sym + " margin trading pairs on " + when
		s.lede = ex + " will remove margin trading pairs for " + tok.name + " (" + tok.sym + ") on " + when + ", citing low liquidity; spot trading is unaffected."
		s.summary = ex + " will delist " + tok.sym + " margin pairs on " + when + "."
	}
	s.flash = s.title
	return s
}

func etfFilingStory(r *rand.Rand, t time.Time) story {
	issuer := pick(r, etfIssuers)
	cand := pick(r, etfCandidates)
	s := story{cat: catPolicy, flag: "🇺🇸", emoji: "📄", sym: cand.sym, company: issuer, weight: 0.25}
	product := either(chance(r, 0.3), "staked ", "spot ") + cand.name + " ETF"
	ticker := strings.ToUpper(cand.sym[:min(3, len(cand.sym))]) + string(rune('A'+r.IntN(26)))
	switch r.IntN(4) {
	case 0:
		s.title = issuer + " files for " + product
		s.lede = issuer + " filed a registration statement with the SEC for a " + product + ", the latest in a wave of single-asset crypto fund applications."
		s.summary = issuer + " filed an S-1 for a " + product + "."
	case 1:
		fee := strconv.FormatFloat(between(r, 0.15, 0.85), 'f', 2, 64)
		s.title = issuer + " amends " + product + " filing, sets fee at " + fee + "%"
		s.lede = issuer + " filed an amended S-1 for its " + product + ", disclosing a sponsor fee of " + fee + "% and the ticker " + ticker + ", a sign a launch may be near."
		s.summary = issuer + " amended its " + product + " filing: fee " + fee + "%, ticker " + ticker + "."
	case 2:
		venue := pick(r, []string{"Nasdaq", "NYSE Arca", "Cboe BZX"})
		s.title = issuer + "'s " + product + " to begin trading on " + venue + " " + t.Add(day).Weekday().String()
		s.lede = issuer + "'s " + product + " will begin trading on " + venue + " under the ticker " + ticker + " on " + apDate(t.Add(day)) + ", according to a listing notice."
		s.summary = issuer + "'s " + product + " (" + ticker + ") lists on " + venue + " on " + apDate(t.Add(day)) + "."
		s.weight = 0.4
	default:
		v := around(r, 25e6, 0.8)
		s.title = issuer + "'s " + product + " draws " + usdWords(v) + " on first day of trading"
		s.lede = issuer + "'s " + product + " (" + ticker + ") took in " + usdWords(v) + " of net inflows on its first day, with " + usdWords(v*between(r, 1.2, 4)) + " in volume."
		s.summary = issuer + "'s " + product + " had " + usdShort(v) + " of first-day inflows."
		s.weight = 0.35
	}
	s.flash = s.title
	s.prTitle = titleCase(s.title)
	return s
}

func protocolStory(r *rand.Rand, t time.Time) story {
	p := pick(r, protocols)
	s := story{cat: catTech, emoji: "🛠", company: p, weight: 0.1}
	switch r.IntN(4) {
	case 0:
		action := pick(r, []string{"activate a protocol fee switch", "launch a " + usdWords(around(r, 30e6, 0.6)) + " token buyback program",
			"deploy on " + pick(r, chains), "fund a " + usdWords(around(r, 20e6, 0.5)) + " ecosystem grants program",
			"cut emissions by " + strconv.Itoa(20+r.IntN(40)) + "%"})
		pctYes := between(r, 0.7, 0.99)
		s.title = p + " DAO approves proposal to " + action
		s.lede = "Token holders of " + p + " approved a proposal to " + action + ", with " + pct(pctYes) + " of votes in favor."
		s.summary = p + " governance voted to " + action + " (" + pct(pctYes) + " yes)."
		s.weight = 0.15
	case 1:
		ch := pick(r, chains)
		s.title = p + " goes live on " + ch
		s.lede = p + " deployed its contracts on " + ch + ", extending its reach to the network's users after a governance vote."
		s.summary = p + " launched on " + ch + "."
	case 2:
		tvl := around(r, 4e9, 0.9)
		s.title = p + " total value locked climbs to record " + usdWords(tvl)
		s.lede = "Deposits in " + p + " rose to a record " + usdWords(tvl) + ", according to DefiLlama, as " + pick(r, []string{"stablecoin yields", "restaking incentives", "looping strategies", "new market listings"}) + " drew capital."
		s.summary = p + " TVL hit a record " + usdShort(tvl) + "."
	default:
		v := 2 + r.IntN(4)
		feat := pick(r, protocolFeatures)
		s.title = p + " launches v" + strconv.Itoa(v) + " with " + feat
		s.lede = p + " released version " + strconv.Itoa(v) + " of its protocol, adding " + feat + " after a months-long audit process."
		s.summary = p + " v" + strconv.Itoa(v) + " is live with " + feat + "."
		s.prTitle = titleCase(p + " launches v" + strconv.Itoa(v) + " with " + feat)
	}
	s.flash = s.title
	return s
}

func (nr *newsroom) earningsStory(r *rand.Rand, t time.Time) story {
	q, y := quarter(t)
	m := pick(r, miners)
	rev := around(r, 180e6, 0.4)
	btc := math.Round(around(r, 1100, 0.4))
	eh := between(r, 25, 70)
	s := story{cat: catBusiness, emoji: "📑", sym: "BTC", company: m.name, weight: 0.12}
	s.title = m.name + " posts Q" + strconv.Itoa(q) + " revenue of " + usdWords(rev) + ", mines " + commas(int64(btc)) + " BTC"
	s.flash = strings.ToUpper(m.name) + " Q" + strconv.Itoa(q) + " REVENUE " + usdShort(rev) + "; MINED " + commas(int64(btc)) + " BTC"
	s.lede = m.name + " (" + m.exch + ": " + m.ticker + ") reported revenue of " + usdWords(rev) + " for the " + ordinalWord(q) + " quarter of " +
		strconv.Itoa(y) + ", having mined " + commas(int64(btc)) + " bitcoin with an average operating hashrate of " +
		strconv.FormatFloat(eh, 'f', 1, 64) + " EH/s."
	s.more = "The company said it is converting part of its capacity to host AI and high-performance computing workloads."
	s.summary = m.name + " had Q" + strconv.Itoa(q) + " revenue of " + usdShort(rev) + " and mined " + commas(int64(btc)) + " BTC."
	s.prTitle = titleCase(m.name + " reports " + ordinalWord(q) + " quarter " + strconv.Itoa(y) + " results")
	return s
}

func partnershipStory(r *rand.Rand, t time.Time) story {
	a := pick(r, partners)
	b := pick(r, []string{"Norvik Bank", "Asteria Payments", "Halden Financial", "Marisol Pay", "Keystone Trust", "Corvid Asset Management"})
	what := pick(r, []string{"bring tokenized Treasury funds to institutional clients", "offer stablecoin settlement for cross-border payments",
		"provide crypto custody to wealth management clients", "launch a regulated on-chain money market fund",
		"let merchants accept stablecoin payments"})
	s := story{cat: catBusiness, emoji: "🤝", company: a, weight: 0.1}
	s.title = a + " partners with " + b + " to " + what
	s.flash = s.title
	s.lede = a + " and " + b + " announced a partnership to " + what + ", with a pilot expected to start in the coming months."
	s.summary = a + " and " + b + " will work together to " + what + "."
	s.prTitle = titleCase(a + " and " + b + " partner to " + what)
	return s
}

// dissenters names how many officials dissented: "one official", "two officials".
func dissenters(n int) string { return either(n == 1, "one official", numberWord(n)+" officials") }
