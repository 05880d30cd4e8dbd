package seed

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// kind is a type of news event the generator can write about.
type kind int

const (
	kPrice kind = iota
	kETFFlow
	kLiquidation
	kWhaleTransfer
	kWhaleTrade
	kHack
	kRegulation
	kFunding
	kTreasury
	kMacro
	kListing
	kStablecoin
	kNetwork
	kUnlock
	kDerivatives
	kExchange
	kETFFiling
	kMetric
	kProtocol
	kEarnings
	kPartnership
	numKinds
)

// category is a newsroom desk; it decides which outlets carry a story.
type category int

const (
	catMarkets category = iota
	catPolicy
	catBusiness
	catTech
	catMacro
	catOnchain
	catSecurity
)

// story is one generated news event, written in the registers the sources
// need: a headline, a terse alert, article copy and a neutral summary.
type story struct {
	kind    kind
	cat     category
	title   string  // news headline, sentence case, no final period
	flash   string  // terse alert line, as alert channels post it
	lede    string  // first paragraph
	more    string  // optional second paragraph
	summary string  // neutral one- or two-sentence summary
	sym     string  // main ticker, if any
	flag    string  // flag emoji of the jurisdiction, if any
	emoji   string  // mood emoji for alert styles
	weight  float64 // newsworthiness in [0, 1]
	link    string  // a source-specific link (explorer, chart), if any
	company string  // the announcing company, for press releases
	prTitle string  // title-cased press-release headline, if it can be one
}

// mix is a distribution over kinds.
type mix struct {
	kinds []kind
	w     weighted
}

// newMix builds a mix from kind/weight pairs.
func newMix(pairs ...any) mix {
	var m mix
	var ws []float64
	for i := 0; i < len(pairs); i += 2 {
		m.kinds = append(m.kinds, pairs[i].(kind))
		ws = append(ws, float64(pairs[i+1].(int)))
	}
	m.w = newWeighted(ws...)
	return m
}

func (m mix) pick(r *rand.Rand) kind { return m.kinds[m.w.pick(r)] }

// Mixes of kinds per kind of source.
var (
	mixGeneral = newMix(kPrice, 14, kETFFlow, 8, kLiquidation, 4, kWhaleTransfer, 3, kWhaleTrade, 3,
		kHack, 3, kRegulation, 9, kFunding, 6, kTreasury, 6, kMacro, 6, kListing, 7, kStablecoin, 4,
		kNetwork, 3, kUnlock, 3, kDerivatives, 4, kExchange, 5, kETFFiling, 5, kProtocol, 6, kEarnings, 1, kPartnership, 2)
	mixBreaking = newMix(kPrice, 16, kETFFlow, 10, kLiquidation, 6, kHack, 4, kRegulation, 12, kTreasury, 8,
		kMacro, 12, kListing, 6, kStablecoin, 3, kETFFiling, 7, kExchange, 3, kDerivatives, 3)
	mixMacro = newMix(kMacro, 35, kRegulation, 20, kETFFlow, 10, kPrice, 10, kTreasury, 8, kHack, 4,
		kETFFiling, 6, kStablecoin, 4, kEarnings, 3)
	mixArticle = newMix(kPrice, 12, kETFFlow, 7, kRegulation, 10, kFunding, 8, kTreasury, 6, kMacro, 5,
		kListing, 5, kStablecoin, 4, kNetwork, 4, kUnlock, 3, kDerivatives, 5, kExchange, 5, kETFFiling, 5,
		kProtocol, 8, kHack, 3, kEarnings, 2, kPartnership, 3, kLiquidation, 2)
	mixOnchain    = newMix(kWhaleTrade, 75, kWhaleTransfer, 8, kHack, 5, kETFFlow, 6, kTreasury, 6)
	mixWhale      = newMix(kWhaleTransfer, 1)
	mixMetric     = newMix(kMetric, 9, kNetwork, 1)
	mixSecurity   = newMix(kHack, 1)
	mixPress      = newMix(kFunding, 30, kTreasury, 20, kExchange, 10, kETFFiling, 10, kProtocol, 8, kEarnings, 12, kPartnership, 14, kStablecoin, 3)
	mixAsia       = newMix(kPrice, 8, kRegulation, 14, kListing, 12, kExchange, 10, kFunding, 8, kWhaleTrade, 6, kHack, 5, kStablecoin, 6, kTreasury, 6, kProtocol, 6, kETFFlow, 5)
	mixIntel      = newMix(kETFFlow, 18, kPrice, 16, kMacro, 14, kRegulation, 12, kLiquidation, 8, kDerivatives, 10, kWhaleTrade, 6, kHack, 6, kTreasury, 5, kUnlock, 5)
	mixDeskNews   = newMix(kMacro, 30, kRegulation, 18, kPrice, 12, kETFFlow, 10, kTreasury, 8, kETFFiling, 6, kEarnings, 6, kStablecoin, 5, kHack, 3, kFunding, 2)
	mixBitcoinish = newMix(kPrice, 30, kETFFlow, 20, kTreasury, 20, kNetwork, 12, kMacro, 8, kDerivatives, 6, kRegulation, 4)
)

// outlet is a publisher the generated items link to.
type outlet struct {
	key  string // firehose source key
	name string // display name
}

// Outlets by key. Keys double as firehose source keys.
var outlets = map[string]outlet{
	"reuters":         {"reuters", "Reuters"},
	"bloomberg":       {"bloomberg", "Bloomberg"},
	"cnbc":            {"cnbc", "CNBC"},
	"wsj":             {"wsj", "The Wall Street Journal"},
	"ft":              {"ft", "Financial Times"},
	"apnews":          {"apnews", "AP News"},
	"nikkei":          {"nikkei", "Nikkei Asia"},
	"coindesk":        {"coindesk", "CoinDesk"},
	"theblock":        {"theblock", "The Block"},
	"cointelegraph":   {"cointelegraph", "Cointelegraph"},
	"decrypt":         {"decrypt", "Decrypt"},
	"dlnews":          {"dlnews", "DL News"},
	"blockworks":      {"blockworks", "Blockworks"},
	"bitcoinmagazine": {"bitcoinmagazine", "Bitcoin Magazine"},
}

// deskOutlets lists, per category, the outlets likely to carry a story.
var deskOutlets = map[category][]string{
	catMarkets:  {"coindesk", "coindesk", "theblock", "cointelegraph", "decrypt", "bloomberg", "blockworks"},
	catPolicy:   {"reuters", "bloomberg", "coindesk", "theblock", "theblock", "dlnews"},
	catBusiness: {"coindesk", "theblock", "cointelegraph", "blockworks", "dlnews", "bloomberg"},
	catTech:     {"theblock", "coindesk", "decrypt", "blockworks", "dlnews"},
	catMacro:    {"reuters", "reuters", "bloomberg", "bloomberg", "cnbc", "wsj", "ft", "apnews"},
	catOnchain:  {"cointelegraph", "theblock", "decrypt"},
	catSecurity: {"theblock", "cointelegraph", "decrypt", "dlnews"},
}

// coindeskSections maps desks to CoinDesk URL sections.
var coindeskSections = map[category]string{
	catMarkets: "markets", catPolicy: "policy", catBusiness: "business", catTech: "tech",
	catMacro: "markets", catOnchain: "markets", catSecurity: "tech",
}

// articleURL builds a publisher-style URL for a story published at t.
func articleURL(r *rand.Rand, key string, t time.Time, title string, cat category) string {
	slug := slugify(title, 90)
	ymd := t.Format("2006/01/02")
	switch key {
	case "reuters":
		section := "business/finance"
		if cat == catMacro {
			section = "markets/us"
		} else if cat == catPolicy {
			section = "legal/government"
		}
		return "https://www.reuters.com/" + section + "/" + slug + "-" + t.Format("2006-01-02") + "/"
	case "bloomberg":
		return "https://www.bloomberg.com/news/articles/" + t.Format("2006-01-02") + "/" + slug
	case "cnbc":
		return "https://www.cnbc.com/" + ymd + "/" + slug + ".html"
	case "wsj":
		return "https://www.wsj.com/finance/currencies/" + slug + "-" + hexString(r, 8)
	case "ft":
		return "https://www.ft.com/content/" + hexString(r, 8) + "-" + hexString(r, 4) + "-4" + hexString(r, 3) + "-a" + hexString(r, 3) + "-" + hexString(r, 12)
	case "apnews":
		return "https://apnews.com/article/" + slug + "-" + hexString(r, 32)
	case "nikkei":
		return "https://asia.nikkei.com/business/markets/" + slug
	case "coindesk":
		return "https://www.coindesk.com/" + coindeskSections[cat] + "/" + ymd + "/" + slug
	case "theblock":
		return "https://www.theblock.co/post/" + strconv.Itoa(370000+r.IntN(60000)) + "/" + slug
	case "cointelegraph":
		return "https://cointelegraph.com/news/" + slug
	case "decrypt":
		return "https://decrypt.co/" + strconv.Itoa(340000+r.IntN(40000)) + "/" + slug
	case "dlnews":
		return "https://www.dlnews.com/articles/" + either(cat == catPolicy, "regulation", "markets") + "/" + slug + "/"
	case "blockworks":
		return "https://blockworks.co/news/" + slug
	case "bitcoinmagazine":
		return "https://bitcoinmagazine.com/" + either(cat == catBusiness, "business", "markets") + "/" + slug
	}
	return "https://" + key + ".com/" + slug
}

// tweetURL builds an x.com status URL whose id encodes t, as Twitter's
// snowflake ids do.
func tweetURL(r *rand.Rand, handle string, t time.Time) string {
	const twitterEpoch = 1288834974657
	id := (t.UnixMilli()-twitterEpoch)<<22 | int64(r.IntN(1<<22))
	return "https://x.com/" + handle + "/status/" + strconv.FormatInt(id, 10)
}

// firstNames and lastNames make reporter and author bylines.
var (
	firstNames = []string{"Olivia", "James", "Sofia", "Daniel", "Hannah", "Marcus", "Priya", "Lucas", "Elena", "Tom",
		"Aisha", "Kenji", "Clara", "Mateo", "Nadia", "Ethan", "Yuki", "Grace", "Omar", "Lena", "Victor", "Maya",
		"Samuel", "Ines", "Jonah", "Chloe", "Arjun", "Beatriz", "Felix", "Zara"}
	lastNames = []string{"Hartley", "Okafor", "Lindqvist", "Moreau", "Castellanos", "Whitaker", "Nakamura", "Brennan",
		"Kowalski", "Adeyemi", "Fischer", "Ramanathan", "Delgado", "Sato", "Mercer", "Novak", "Achterberg", "Quinn",
		"Haddad", "Olsen", "Varga", "Pereira", "Lau", "Sutherland", "Iyer", "Kaplan", "Duarte", "Holm"}
)

// person returns a generated full name.
func person(r *rand.Rand) string { return pick(r, firstNames) + " " + pick(r, lastNames) }

// byline returns one or two reporter names.
func byline(r *rand.Rand) string {
	if chance(r, 0.2) {
		return person(r) + " and " + person(r)
	}
	return person(r)
}

// newsroom writes stories consistent with the simulated market and ETF data.
type newsroom struct {
	m      *market
	etf    []etfSeries
	coinW  weighted
	whaleW weighted
	etfW   weighted // how often each ETF asset's flows make the news
}

// newNewsroom prepares the story generator.
func newNewsroom(m *market, etf []etfSeries) *newsroom {
	ws := make([]float64, len(coins))
	for i := range coins {
		ws[i] = coins[i].weight
	}
	wws := make([]float64, len(whaleAssets))
	for i, a := range whaleAssets {
		wws[i] = a.weight
	}
	return &newsroom{m: m, etf: etf, coinW: newWeighted(ws...), whaleW: newWeighted(wws...),
		etfW: newWeighted(55, 30, 10, 5)}
}

// story writes a story of kind k as of time t. focus, if not empty, is the
// ticker the source concentrates on.
func (nr *newsroom) story(r *rand.Rand, t time.Time, k kind, focus string) story {
	if wd := t.Weekday(); (wd == time.Saturday || wd == time.Sunday) && (k == kMacro || k == kEarnings || k == kETFFiling) {
		k = kPrice // no data releases, earnings or fund launches at weekends
	}
	var s story
	switch k {
	case kPrice:
		s = nr.priceStory(r, t, nr.coinFor(r, focus))
	case kETFFlow:
		var ok bool
		if s, ok = nr.etfFlowStory(r, t, focus); !ok {
			s = nr.priceStory(r, t, nr.coinFor(r, focus))
		}
	case kLiquidation:
		s = nr.liquidationStory(r, t)
	case kWhaleTransfer:
		s = nr.whaleTransferStory(r, t)
	case kWhaleTrade:
		s = nr.whaleTradeStory(r, t, focus)
	case kHack:
		s = hackStory(r, t)
	case kRegulation:
		s = regulationStory(r, t)
	case kFunding:
		s = fundingStory(r, t)
	case kTreasury:
		s = nr.treasuryStory(r, t, focus)
	case kMacro:
		s = nr.macroStory(r, t)
	case kListing:
		s = listingStory(r, t)
	case kStablecoin:
		s = stablecoinStory(r, t)
	case kNetwork:
		s = networkStory(r, t, focus)
	case kUnlock:
		s = unlockStory(r, t)
	case kDerivatives:
		s = nr.derivativesStory(r, t, focus)
	case kExchange:
		s = exchangeStory(r, t)
	case kETFFiling:
		s = etfFilingStory(r, t)
	case kMetric:
		s = metricStory(r, t)
	case kProtocol:
		s = protocolStory(r, t)
	case kEarnings:
		s = nr.earningsStory(r, t)
	case kPartnership:
		s = partnershipStory(r, t)
	}
	s.kind = k
	if s.weight > 1 {
		s.weight = 1
	}
	return s
}

// coinFor picks a coin index, honouring a source's focus.
func (nr *newsroom) coinFor(r *rand.Rand, focus string) int {
	if focus != "" {
		for i := range coins {
			if coins[i].sym == focus {
				return i
			}
		}
	}
	return nr.coinW.pick(r)
}
