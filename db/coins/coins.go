// Package coins finds the crypto assets a text is about: cashtags ($BTC,
// $eth) and the names and tickers of a curated list of the most traded
// assets (coins.json, the one reviewed data file), without false friends
// (the word "link" is not Chainlink, "SOL" inside another word is not
// Solana, "ETH Zurich" is a university, "A TON OF" in a shouted headline is
// not Toncoin). It is a pure function package:
// the importer and the seed call it when they write an item.
package coins

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

//go:embed coins.json
var listJSON []byte

// Coin is one entry of the list.
type Coin struct {
	Ticker      string   `json:"ticker"`
	Names       []string `json:"names"`
	Cased       []string `json:"cased"`
	CashtagOnly bool     `json:"cashtag_only"`
	// CapsWord: the ticker is also a word that text in capitals writes
	// the same way (TON, DOT, ARB); in such a text it does not count bare.
	CapsWord bool `json:"caps_word"`
}

// list is the parsed coins.json.
type list struct {
	Doc      []string `json:"_doc"`
	Blockers []string `json:"blockers"`
	Coins    []Coin   `json:"coins"`
}

// rule is one phrase of the list: the tokens it is made of, whether their
// case must match, and the ticker it means ("" for a blocker).
type rule struct {
	tokens []string
	cased  bool
	ticker string
}

// Extractor finds tickers in texts. It is safe for concurrent use.
type Extractor struct {
	coins   []Coin
	tickers map[string]*Coin  // by ticker
	phrases map[string][]rule // by the lower-case first token
	window  int               // words in the longest phrase
	longest int               // bytes in the longest ticker
}

// defaultExtractor is built from the embedded list; a list that does not
// parse fails every test of this package, so the panic cannot ship.
var defaultExtractor = func() *Extractor {
	e, err := New(listJSON)
	if err != nil {
		panic(fmt.Sprintf("coins.json: %v", err))
	}
	return e
}()

// Default returns the extractor of the embedded list.
func Default() *Extractor { return defaultExtractor }

// Extract returns the tickers the texts mention, by the embedded list.
func Extract(texts ...string) []string { return defaultExtractor.Extract(texts...) }

// New parses a list in the format of coins.json.
func New(data []byte) (*Extractor, error) {
	var l list
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("parse coin list: %w", err)
	}
	e := &Extractor{tickers: map[string]*Coin{}, phrases: map[string][]rule{}, coins: l.Coins}
	add := func(phrase, ticker string, cased bool) error {
		toks := tokens(phrase)
		if len(toks) == 0 {
			return fmt.Errorf("%s: empty phrase %q", ticker, phrase)
		}
		words := make([]string, len(toks))
		for i, t := range toks {
			words[i] = t.lower
			if cased {
				words[i] = t.text
			}
		}
		if len(words) > 8 {
			return fmt.Errorf("%s: phrase %q: more than 8 words", ticker, phrase)
		}
		e.window = max(e.window, len(words))
		key := toks[0].lower
		e.phrases[key] = append(e.phrases[key], rule{tokens: words, cased: cased, ticker: ticker})
		return nil
	}
	for i := range e.coins {
		c := &e.coins[i]
		if !tickerForm(c.Ticker) {
			return nil, fmt.Errorf("ticker %q: want upper-case letters or digits", c.Ticker)
		}
		if _, dup := e.tickers[c.Ticker]; dup {
			return nil, fmt.Errorf("ticker %s listed twice", c.Ticker)
		}
		e.tickers[c.Ticker] = c
		e.longest = max(e.longest, len(c.Ticker))
		for _, n := range c.Names {
			if err := add(n, c.Ticker, false); err != nil {
				return nil, err
			}
		}
		for _, n := range c.Cased {
			if err := add(n, c.Ticker, true); err != nil {
				return nil, err
			}
		}
	}
	for _, b := range l.Blockers {
		if err := add(b, "", false); err != nil {
			return nil, err
		}
	}
	// Longer phrases first, so "Bitcoin Cash" wins over "Bitcoin".
	for k := range e.phrases {
		slices.SortStableFunc(e.phrases[k], func(a, b rule) int { return len(b.tokens) - len(a.tokens) })
	}
	return e, nil
}

// Coins returns the list's entries, in the file's order.
func (e *Extractor) Coins() []Coin { return slices.Clone(e.coins) }

// ValidTicker reports whether s has the form of a ticker: 1 to maxLen
// upper-case ASCII letters or digits. The bound is the caller's: the API's
// coins filter declares it (graph/limits), and a stored ticker longer than
// that could never be asked for.
func ValidTicker(s string, maxLen int) bool {
	return len(s) <= maxLen && tickerForm(s)
}

// tickerForm reports whether s is one or more upper-case ASCII letters or
// digits.
func tickerForm(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !('A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// Normalize returns s upper-cased when it has the form of a ticker of at
// most maxLen bytes in any letter case ("eth" gives "ETH"), and false
// otherwise.
func Normalize(s string, maxLen int) (string, bool) {
	u := strings.ToUpper(s)
	return u, ValidTicker(u, maxLen)
}

// token is a maximal run of letters and digits: its text, the same in
// lower case, and whether a $ sits right before it.
type token struct {
	text, lower string
	cashtag     bool
}

// tokens splits s into its words.
func tokens(s string) []token {
	var out []token
	for t := range words(s) {
		out = append(out, t)
	}
	return out
}

// words yields the words of s.
func words(s string) func(yield func(token) bool) {
	return func(yield func(token) bool) {
		lower := strings.ToLower(s)
		if len(lower) != len(s) {
			lower = "" // lower-casing changed the byte offsets: per token
		}
		start := -1
		emit := func(end int) bool {
			t := token{text: s[start:end], cashtag: start > 0 && s[start-1] == '$'}
			if lower != "" {
				t.lower = lower[start:end]
			} else {
				t.lower = strings.ToLower(t.text)
			}
			return yield(t)
		}
		for i := 0; i < len(s); {
			r, n := rune(s[i]), 1
			if r >= utf8.RuneSelf {
				r, n = utf8.DecodeRuneInString(s[i:])
			}
			word := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
				r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
			switch {
			case word && start < 0:
				start = i
			case !word && start >= 0:
				if !emit(i) {
					return
				}
				start = -1
			}
			i += n
		}
		if start >= 0 {
			emit(len(s))
		}
	}
}

// shouting reports whether s is written in capitals (a headline in upper
// case), where an upper-case word is a ticker only if it is no word too
// (Coin.CapsWord): at least 20 letters, of which at least 80% are upper
// case.
func shouting(s string) bool {
	letters, upper := 0, 0
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		i += n
		switch {
		case 'a' <= r && r <= 'z':
			letters++
		case 'A' <= r && r <= 'Z':
			letters++
			upper++
		case r >= utf8.RuneSelf && unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	return letters >= 20 && upper*5 >= letters*4
}

// Extract returns the tickers the texts mention, sorted and distinct;
// nil when none. Each text is read on its own (a phrase never spans two).
func (e *Extractor) Extract(texts ...string) []string {
	var found []string
	for _, s := range texts {
		found = e.extract(s, found)
	}
	if len(found) == 0 {
		return nil
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// extract appends the tickers of s to found. Words are read into a window
// as long as the longest phrase, so a text is never held as a whole list
// of words.
func (e *Extractor) extract(s string, found []string) []string {
	loud := shouting(s)
	var buf [8]token
	win := buf[:0]
	skip := 0 // words of the window already consumed by a phrase
	step := func() {
		t := win[0]
		win = win[:copy(win, win[1:])]
		if skip > 0 {
			skip--
			return
		}
		if t.cashtag && len(t.text) <= e.longest {
			if c, ok := e.tickers[strings.ToUpper(t.text)]; ok {
				found = append(found, c.Ticker)
				return
			}
		}
		if r, ok := e.match(t, win); ok {
			if r.ticker != "" {
				found = append(found, r.ticker)
			}
			skip = len(r.tokens) - 1
			return
		}
		if c, ok := e.tickers[t.text]; ok && !c.CashtagOnly && !(loud && c.CapsWord) {
			found = append(found, c.Ticker)
		}
	}
	for t := range words(s) {
		if len(win) == e.window {
			step()
		}
		win = append(win, t)
	}
	for len(win) > 0 {
		step()
	}
	return found
}

// match returns the longest phrase made of first and the words after it.
func (e *Extractor) match(first token, next []token) (rule, bool) {
	for _, r := range e.phrases[first.lower] {
		if len(r.tokens) > 1+len(next) {
			continue
		}
		ok := true
		for j, w := range r.tokens {
			t := first
			if j > 0 {
				t = next[j-1]
			}
			if r.cased && t.text != w || !r.cased && t.lower != w {
				ok = false
				break
			}
		}
		if ok {
			return r, true
		}
	}
	return rule{}, false
}
