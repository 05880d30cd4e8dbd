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

		// Headlines in capitals: tickers count unless they are words too
		// (caps_word), names count, cased names and cashtag-only tickers
		// do not.
		{"shouted ticker", []string{"*SEC APPROVES CBOE BZX LISTING OF 21SHARES'S SPOT SUI ETF"}, []string{"SUI"}},
		{"shouted cashtag", []string{"JUST IN: $SUI SPOT ETF APPROVED BY THE SEC"}, []string{"SUI"}},
		{"shouted tickers", []string{"BREAKING: BTC AND ETH ETFS DRAW RECORD INFLOWS AS XRP RALLIES"}, []string{"BTC", "ETH", "XRP"}},
		{"shouted tickers beside words", []string{"SPOT SOL ETF FILINGS PILE UP AS TRX AND LTC FOLLOW"}, []string{"LTC", "SOL", "TRX"}},
		{"shouted common words", []string{"THE SUN WILL LINK NEAR ONE GAS FIELD TO THE GRID, SAYS DOGE"}, nil},
		{"a ton of", []string{"A TON OF SELLING HITS RISK ASSETS ACROSS THE BOARD"}, nil},
		{"DOT the department", []string{"DOT ORDERS AIRLINES TO REFUND PASSENGERS FOR DELAYS"}, nil},
		{"AI hype", []string{"AI HYPE DRIVES NASDAQ TO A RECORD HIGH, ANALYSTS SAY"}, nil},
		{"not one iota", []string{"NOT ONE IOTA OF EVIDENCE, SAYS THE DEFENCE"}, nil},
		{"algo trading", []string{"ALGO TRADING FIRMS PROFIT FROM THE VOLATILITY"}, nil},
		{"APT group", []string{"NORTH KOREAN APT GROUP BEHIND EXCHANGE HACK, FBI SAYS"}, nil},
		{"ADA the act", []string{"DOJ SETTLES ADA CASE WITH A NATIONAL HOTEL CHAIN"}, nil},
		{"gala dinner", []string{"GALA DINNER RAISES MILLIONS FOR CHILDREN'S CHARITY"}, nil},
		{"theta decay", []string{"OPTIONS DESKS WARN OF THETA DECAY INTO FRIDAY EXPIRY"}, nil},
		{"CRO the officer", []string{"BANK NAMES NEW CRO AFTER REVENUE MISS"}, nil},
		{"shouted ripple effect", []string{"RIPPLE EFFECT OF RATE HIKES HITS GLOBAL STOCKS"}, nil},
		{"shouted avalanche", []string{"AN AVALANCHE OF LIQUIDATIONS HITS LONGS OVERNIGHT"}, nil},
		{"shouted stellar", []string{"STELLAR EARNINGS LIFT TECH SHARES TO A RECORD"}, nil},
		{"shouted Ripple Labs", []string{"RIPPLE LABS WINS APPEAL AGAINST THE SEC"}, []string{"XRP"}},
		{"shouted word ticker by its cashtag", []string{"BREAKING: $TON SURGES AS TELEGRAM WALLET LAUNCHES"}, []string{"TON"}},
		{"shouted word ticker by its name", []string{"TONCOIN AND POLKADOT LEAD ALTCOINS HIGHER TODAY"}, []string{"DOT", "TON"}},
		{"word tickers outside capitals", []string{"TON and DOT rally as altcoins rebound"}, []string{"DOT", "TON"}},
		{"shouted sui generis", []string{"COURT CALLS THE CASE SUI GENERIS AND DISMISSES ALL CLAIMS"}, nil},
		{"Sui generis at the start", []string{"Sui generis rules apply here, says the court"}, nil},
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
		if c.CashtagOnly && c.CapsWord {
			t.Errorf("%s is cashtag_only and caps_word: caps_word says nothing more", c.Ticker)
		}
		// A bare ticker counts unless cashtag-only, and in a text in
		// capitals unless it is a word too.
		var want []string
		if !c.CashtagOnly {
			want = []string{c.Ticker}
		}
		if got := e.Extract(c.Ticker + " rallies while the wider market waits for the Fed"); !slices.Equal(got, want) {
			t.Errorf("bare %s: got %q, want %q", c.Ticker, got, want)
		}
		if c.CapsWord {
			want = nil
		}
		if got := e.Extract("BREAKING: " + c.Ticker + " RALLIES WHILE THE WIDER MARKET WAITS"); !slices.Equal(got, want) {
			t.Errorf("bare %s in capitals: got %q, want %q", c.Ticker, got, want)
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
		got, ok := Normalize(tt.in, 12)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Normalize(%q, 12): got %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
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
