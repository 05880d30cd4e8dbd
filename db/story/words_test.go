package story

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestFormNamesAndStemsAreNotCoinsOrFigures: a filing's form name ("S-1",
// "8-K") gives no figure, and a word whose stem happens to be a ticker
// ("filing", FIL) names no coin; a cashtag, a ticker and a coin's name
// still do. Two templated filings of other issuers, coins and fees are
// then not one story.
func TestFormNamesAndStemsAreNotCoinsOrFigures(t *testing.T) {
	for _, tc := range []struct {
		title, body    string
		coins, figures []string
	}{
		{"", "VanEck amends spot Bittensor ETF filing, sets fee at 0.28%\nVanEck filed an amended S-1 for its spot Bittensor ETF",
			[]string{"tao"}, []string{"0.28%"}},
		{"Coinbase files 8-K after the outage", "", nil, nil},
		{"", "JUST IN: $HYPE hits new all-time high of $48.", []string{"hype"}, []string{"48"}},
		{"Solana ETFs see record inflows as SOL tops $250", "", []string{"sol"}, []string{"250"}},
	} {
		f := Of(tc.title, tc.body)
		if !slices.Equal(f.Coins, tc.coins) || !slices.Equal(f.Figures, tc.figures) {
			t.Errorf("Of(%q, %q): coins %q, figures %q; want %q, %q", tc.title, tc.body, f.Coins, f.Figures, tc.coins, tc.figures)
		}
	}
	vaneck := Of("", "VanEck amends spot Bittensor ETF filing, sets fee at 0.28%\nVanEck filed an amended S-1 for its spot Bittensor ETF, disclosing a sponsor fee of 0.28%")
	rex := Of("REX-Osprey amends staked Polkadot ETF filing, sets fee at 0.26%",
		"REX-Osprey filed an amended S-1 for its staked Polkadot ETF, disclosing a sponsor fee of 0.26% and the ticker DOTQ, a sign a launch may be near.")
	if Same(vaneck, rex) {
		t.Errorf("VanEck's Bittensor filing and REX-Osprey's Polkadot filing are one story; coins %q and %q, figures %q and %q",
			vaneck.Coins, rex.Coins, vaneck.Figures, rex.Figures)
	}
}

// TestShingleOfIsTheRules: the lexicon and stems that shingleOf reads
// give each word the shingle fold, isName and stanceBits give it, for the
// words of the labelled events and for the tables' words with the endings
// stem strips and the plurals isName reads.
func TestShingleOfIsTheRules(t *testing.T) {
	data, err := os.ReadFile("testdata/events.txt")
	if err != nil {
		t.Fatal(err)
	}
	ws := words(string(data))
	for _, table := range []map[string]bool{keysOf(tickers), isTicker, stop, keysOf(synonyms), keysOf(stanceBits)} {
		for w := range table {
			for _, end := range []string{"", "s", "es", "e", "ed", "ing", "ings", "ation", "ly", "al"} {
				ws = append(ws, w+end, strings.TrimSuffix(w, "s")+end)
			}
		}
	}
	ws = append(ws, "filing", "filings", "sols", "solana's", "etfs", "approves", "approval", "approved", "ethers", "surges", "x")
	if len(ws) < 5000 {
		t.Fatalf("%d words to check; the events alone have more", len(ws))
	}
	for _, w := range ws {
		w = trimPunct(w)
		if got, want := shingleOf(w), newShingle(w); got != want {
			t.Errorf("shingleOf(%q) = %+v; the rules give %+v", w, got, want)
		}
	}
}
