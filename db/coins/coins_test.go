package coins

import (
	"slices"
	"strings"
	"testing"
)

func TestExtract(t *testing.T) {
	tests := []struct {
		name  string
		texts []string
		want  []string
	}{
		{"name", []string{"Bitcoin slips below $90,000 as ETF outflows mount"}, []string{"BTC"}},
		{"cashtags in any case", []string{"$eth and $Sol lead the rebound; $btc lags"}, []string{"BTC", "ETH", "SOL"}},
		{"upper-case tickers", []string{"BTC, ETH and XRP funding rates flip negative"}, []string{"BTC", "ETH", "XRP"}},
		{"aliases", []string{"Ether options open interest hits record ahead of Friday expiry"}, []string{"ETH"}},
		{"Hyperliquid", []string{"Hyperliquid whale opens $200M short on Solana"}, []string{"HYPE", "SOL"}},
		{"longest phrase first", []string{"Bitcoin Cash hard fork anniversary passes quietly"}, []string{"BCH"}},
		{"both BTC and BCH", []string{"Bitcoin outperforms Bitcoin Cash for the fifth week"}, []string{"BCH", "BTC"}},
		{"possessive", []string{"Solana's validator count drops after fee change"}, []string{"SOL"}},
		{"pair notation", []string{"ETH/BTC ratio at a five-year low; SOL-USD steady"}, []string{"BTC", "ETH", "SOL"}},
		{"several texts", []string{"Markets wrap", "Cardano and Polkadot rally", ""}, []string{"ADA", "DOT"}},
		{"none", []string{"Fed holds rates steady; Powell signals patience"}, nil},
		{"empty", []string{""}, nil},

		// False friends.
		{"link is a word", []string{"Read the full report at the link below"}, nil},
		{"LINK in capitals is not enough", []string{"Click the LINK in bio"}, nil},
		{"Chainlink by name", []string{"Chainlink partners with SWIFT on tokenised funds"}, []string{"LINK"}},
		{"$LINK cashtag", []string{"$LINK breaks out of a six-month range"}, []string{"LINK"}},
		{"SOL inside a word", []string{"SOLUTIONS provider Consolidated raises Series B"}, nil},
		{"ETH inside a word", []string{"Methodology changes at the index provider"}, nil},
		{"wrapped BTC is not BTC", []string{"wBTC supply on Ethereum falls"}, []string{"ETH"}},
		{"ONE as a number word", []string{"ONE more rate cut is priced in, says ONE analyst"}, nil},
		{"$ONE cashtag", []string{"$ONE jumps 20% on Harmony bridge relaunch"}, []string{"ONE"}},
		{"NEAR as a preposition", []string{"Bitcoin trades NEAR record high"}, []string{"BTC"}},
		{"NEAR Protocol", []string{"NEAR Protocol unveils chain abstraction roadmap"}, []string{"NEAR"}},
		{"OP as an abbreviation", []string{"OP-ED: why stablecoins need rules"}, nil},
		{"GAS fees", []string{"Ethereum GAS fees drop to a three-year low"}, []string{"ETH"}},
		{"gas lower case", []string{"Natural gas futures jump 6%"}, nil},
		{"SAND", []string{"Head in the SAND: regulators ignore DeFi"}, nil},
		{"$SAND", []string{"$SAND and $MANA lead metaverse tokens"}, []string{"MANA", "SAND"}},
		{"DOGE the department", []string{"DOGE cuts another 2,000 federal jobs"}, nil},
		{"Dogecoin", []string{"Dogecoin rallies after Musk tweet"}, []string{"DOGE"}},
		{"Trump the person", []string{"Trump signs executive order on crypto reserves"}, nil},
		{"TRUMP cashtag", []string{"$TRUMP unlock of 90M tokens looms"}, []string{"TRUMP"}},
		{"ETH Zurich", []string{"ETH Zurich researchers publish quantum attack paper"}, nil},
		{"ETH Zurich and Ether", []string{"ETH Zurich study: Ether staking yields converge"}, []string{"ETH"}},
		{"ripple effect", []string{"The ripple effect of higher yields on risk assets"}, nil},
		{"Ripple the company", []string{"Ripple wins partial victory against the SEC"}, []string{"XRP"}},
		{"an avalanche of", []string{"an avalanche of liquidations hit longs overnight"}, nil},
		{"Avalanche", []string{"Avalanche launches subnet incentive programme"}, []string{"AVAX"}},
		{"stellar results", []string{"Coinbase posts stellar results"}, nil},
		{"sui generis", []string{"The case is sui generis, the judge said"}, nil},
		{"Binance is an exchange", []string{"Binance lists new perpetual futures"}, nil},
		{"BNB Chain", []string{"BNB Chain activity surges"}, []string{"BNB"}},
		{"shouted headline", []string{"BREAKING: ONE OF THE BIGGEST ETF OUTFLOWS EVER, SAYS ARB DESK"}, nil},
		{"shouted name still counts", []string{"BREAKING: BITCOIN SPOT ETFS SEE RECORD OUTFLOWS TODAY"}, []string{"BTC"}},
		{"short tweet in capitals", []string{"BTC 100K"}, []string{"BTC"}},
		{"price is not a cashtag", []string{"Strategy buys $1.2B of bitcoin"}, []string{"BTC"}},
		{"unknown cashtag", []string{"$ACME moons"}, nil},
		{"fetch.ai with a dot", []string{"Fetch.ai merges tokens"}, []string{"FET"}},
		{"ether.fi is not ether", []string{"ether.fi TVL tops $6B"}, []string{"ETHFI"}},
		{"digits in tickers", []string{"$1INCH governance vote passes"}, []string{"1INCH"}},
		{"uniswap", []string{"Uniswap fee switch vote; UNI holders cheer"}, []string{"UNI"}},
		{"uni lower case", []string{"Back to uni: students and crypto"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Extract(tt.texts...)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Extract(%q): got %q, want %q", tt.texts, got, tt.want)
			}
		})
	}
}

func TestListIsWellFormed(t *testing.T) {
	e := Default()
	cs := e.Coins()
	if n := len(cs); n < 140 {
		t.Fatalf("coins.json lists %d coins, want about 150", n)
	}
	for _, c := range cs {
		// Every entry is found by its cashtag, whatever its other rules.
		if got := e.Extract("$" + strings.ToLower(c.Ticker) + " moves"); !slices.Equal(got, []string{c.Ticker}) {
			t.Errorf("cashtag of %s: got %q", c.Ticker, got)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct{ name, json string }{
		{"not JSON", `{`},
		{"lower-case ticker", `{"coins":[{"ticker":"btc"}]}`},
		{"duplicate", `{"coins":[{"ticker":"BTC"},{"ticker":"BTC"}]}`},
		{"empty name", `{"coins":[{"ticker":"BTC","names":["  "]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New([]byte(tt.json)); err == nil {
				t.Errorf("New(%s): no error", tt.json)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"btc", "BTC", true}, {"1inch", "1INCH", true}, {"", "", false}, {"B-TC", "B-TC", false},
		{"ABCDEFGHIJKLM", "ABCDEFGHIJKLM", false}, {"é", "É", false},
	}
	for _, tt := range tests {
		got, ok := Normalize(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Normalize(%q): got %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func BenchmarkExtract(b *testing.B) {
	title := "Bitcoin slips below $90,000 as Ether and Solana ETF outflows mount"
	body := strings.Repeat("Traders said the move followed a week of heavy selling in the spot market. ", 6)
	for b.Loop() {
		Extract(title, body)
	}
}
