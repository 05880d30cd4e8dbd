package story

// stop lists the words (and stems) of no news value: function words, and
// the words feeds add around a headline (BREAKING, JUST IN, report, says).
var stop = set(`a an the and or but of to in on at by for from with as into onto over under about after before
is are was were be been being has have had do does did will would can could may might must shall should
it its it's this that these those there here their they them he she his her we our you your i me my
not no yes so than then too very just now new more most less least also still yet again ever
what which who whom whose when where why how all any both each few many much some such only own same
up out off down via per vs amid says say said saying report reports reported according source sources
breaking just urgent alert update live watch read thread 🚨 news today tonight week day
first time amp rt qt`)

// synonyms folds words that headlines use for one another into one word.
var synonyms = withStems(map[string]string{
	// rises
	"surge": "rise", "soar": "rise", "jump": "rise", "rally": "rise", "rallie": "rise", "rall": "rise", "spike": "rise",
	"climb": "rise", "gain": "rise", "rises": "rise", "rose": "rise", "pump": "rise", "skyrocket": "rise",
	// falls
	"plunge": "fall", "tumble": "fall", "drop": "fall", "slide": "fall", "sink": "fall", "crash": "fall",
	"fell": "fall", "slump": "fall", "dump": "fall", "dip": "fall", "plummet": "fall", "sank": "fall",
	// crossing a level
	"top": "break", "tops": "break", "breaks": "break", "broke": "break", "cross": "break", "surpass": "break",
	"pass": "break", "hit": "break", "hits": "break", "reach": "break", "reaches": "break", "clear": "break",
	// approvals
	"approv": "approve", "greenlight": "approve", "green": "approve", "greenlit": "approve", "okay": "approve",
	"nod": "approve", "sign": "approve",
	"delay": "delay", "postpone": "delay", "extend": "delay", "push": "delay",
	"reject": "reject", "deny": "reject", "deni": "reject", "denie": "reject", "refus": "reject", "turn": "reject",
	// flows
	"inflow": "inflow", "influx": "inflow", "bleed": "outflow", "outflow": "outflow", "withdrawal": "outflow", "redemption": "outflow",
	// exploits
	"hack": "hack", "exploit": "hack", "drain": "hack", "breach": "hack", "attack": "hack", "stolen": "hack", "steal": "hack",
	// listings
	"list": "list", "add": "list", "delist": "delist", "remov": "delist",
	// buying
	"buy": "buy", "bought": "buy", "acquir": "buy", "purchas": "buy", "scoop": "buy", "adds": "list",
	"sell": "sell", "sold": "sell", "offload": "sell", "dumps": "fall",
	// launch
	"launch": "launch", "debut": "launch", "roll": "launch", "unveil": "launch", "introduc": "launch",
	// regulators and words of one meaning
	"regulator": "regulator", "etfs": "etf", "fund": "etf", "funds": "etf", "million": "mn", "billion": "bn",
	"record": "record", "all-time": "record", "ath": "record", "high": "high", "highs": "high",
	"cut": "cut", "hike": "hike", "raise": "hike",
	"ban": "ban", "prohibit": "ban", "outlaw": "ban",
	"sue": "sue", "lawsuit": "sue", "charg": "sue", "charge": "sue",
	"bullish": "bullish", "bearish": "bearish",
})

// withStems adds the stem of each word to m, so that a word found by its
// stem folds too ("surges" stems to "surg").
func withStems(m map[string]string) map[string]string {
	out := make(map[string]string, 2*len(m))
	for k, v := range m {
		out[k] = v
		if s := stem(k); s != k {
			if _, taken := m[s]; !taken {
				out[s] = v
			}
		}
	}
	return out
}

// opposites are pairs of words two items of one story do not say against
// each other; the bits of Features.Stance follow this order.
var opposites = [][2]string{
	{"rise", "fall"},
	{"break", "fall"},
	{"inflow", "outflow"},
	{"approve", "reject"},
	{"approve", "delay"},
	{"buy", "sell"},
	{"bullish", "bearish"},
	{"hike", "cut"},
	{"list", "delist"},
	{"long", "short"},
	{"win", "lose"},
	{"up", "down"},
}

var stanceBits = func() map[string]uint64 {
	m := map[string]uint64{}
	for i, p := range opposites {
		m[p[0]] |= 1 << (2 * i)
		m[p[1]] |= 1 << (2*i + 1)
	}
	return m
}()

func set(words string) map[string]bool {
	m := map[string]bool{}
	w := ""
	for _, r := range words + " " {
		if r == ' ' || r == '\n' || r == '\t' {
			if w != "" {
				m[w] = true
			}
			w = ""
			continue
		}
		w += string(r)
	}
	return m
}
