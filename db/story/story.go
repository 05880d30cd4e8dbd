// Package story decides which items tell the same story: the same event
// reworded by other sources (a wire headline, three news sites, twenty
// accounts quoting or retweeting it). It is a pure package: the importer,
// the seed and the live demo compute an item's Features when they write it,
// index its Bands (locality-sensitive hashes) in the database, and ask Same
// about the few candidates an index probe returns.
//
// Text is normalized into word 1-shingles: lower case, URLs, mentions and
// retweet prefixes removed, coin names and tickers folded into the ticker
// (Solana, $SOL and SOL are one word), numbers folded into their value
// ($95k, 95,000 and $95K are one word), light stemming, common words and
// words of no news value dropped. MinHash over the shingles, cut into
// bands of two, gives the index keys: two texts whose shingle sets overlap
// by half share a band with a probability above 0.9.
//
// Same then decides on the shingles themselves, not on the estimate: enough
// overlap, no contradiction (inflows against outflows, approves against
// rejects, rises against falls) and the same figures where both give
// figures: templated headlines such as "ETFs see $512M inflows" are
// different stories when the figure differs, and so are two headlines
// most of whose figures the other item does not give, though they share
// one ("a wallet dormant for 10 years moves 2,693 BTC" and another one's
// 1,885 BTC). The time window is the caller's: the index probe only
// returns items seen within Window.
package story

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zeebo/xxh3"

	"github.com/feedapi/feedapi/db/coins"
)

// Window is how far apart in time two items of one story can be: the same
// words a month later are another event.
const Window = 48 * time.Hour

const (
	numHashes  = 24 // MinHash values per item
	bandRows   = 2  // values per band
	NumBands   = numHashes / bandRows
	maxWords   = 48               // shingles kept per item: the headline and the start of the body
	maxHead    = 24               // words of the body taken as the headline of an item without a title
	maxText    = 600              // bytes of body read
	minWords   = 2                // fewer shingles: the item starts its own story
	maxAnchors = 2                // coin-and-figure keys per item
	hashSeed   = 0x5eed_5107_0a11 // fixed: bands are stored, so they must not change between runs
)

// Features is what the detector keeps of an item's text.
type Features struct {
	// Head are the shingles of the headline (the title, or the start of
	// the body of an item without one), sorted and distinct.
	Head []string
	// Words are the shingles of the headline and the start of the body,
	// sorted and distinct.
	Words []string
	// Coins are the tickers the item names, sorted.
	Coins []string
	// Figures are the numbers the item gives, normalized and sorted.
	Figures []string
	// Stance has two bits per pair of opposite words (see opposites): the
	// first's when the headline says the first word, the second's when it
	// says the second. The body is not read: "record redemptions one day
	// after record inflows" is an outflow story.
	Stance uint64
	// coinBits and figureBits have bit h%64 set for the hash h of each of
	// Coins and Figures (0 for features without sets): two items whose
	// bits share none share no coin, or no figure, which rejects most
	// candidates without reading their sets from memory.
	coinBits, figureBits uint64
	// sets are Head, Words, Coins and Figures (and the headline's
	// figures) hashed and sorted, set by Of and Decode: a detector weighs
	// each item against dozens of candidates, and counting what two items
	// share is then a merge of integers rather than of strings. Two
	// distinct words of 64-bit hashes collide once in billions of billions
	// of pairs.
	sets *hashedSets
}

type hashedSets struct {
	head, words, coins, figures []uint64
	// headFigures are the figures the headline gives (its shingles
	// "#"+figure), hashed as figures are.
	headFigures []uint64
}

// hashed sets f.sets, the five sets in one array.
func (f *Features) hashed() {
	var headFigures []string
	for _, w := range f.Head {
		if v, ok := strings.CutPrefix(w, "#"); ok {
			headFigures = append(headFigures, v)
		}
	}
	all := make([]uint64, 0, len(f.Head)+len(f.Words)+len(f.Coins)+len(f.Figures)+len(headFigures))
	hash := func(ws []string) []uint64 {
		start := len(all)
		for _, w := range ws {
			all = append(all, xxh3.HashString(w))
		}
		hs := all[start:len(all):len(all)]
		slices.Sort(hs)
		return hs
	}
	f.sets = &hashedSets{head: hash(f.Head), words: hash(f.Words), coins: hash(f.Coins), figures: hash(f.Figures),
		headFigures: hash(headFigures)}
	f.coinBits, f.figureBits = bitsOf(f.sets.coins), bitsOf(f.sets.figures)
}

func bitsOf(hashes []uint64) uint64 {
	var bits uint64
	for _, h := range hashes {
		bits |= 1 << (h % 64)
	}
	return bits
}

// hashes returns f's sets, computed now for features built otherwise
// than by Of or Decode.
func (f *Features) hashes() *hashedSets {
	if f.sets == nil {
		c := *f
		c.hashed()
		return c.sets
	}
	return f.sets
}

// Slim returns f without its words: what Same and a Picker read (the
// hashed sets and the stance) and nothing else, for a writer that holds
// many items' features in memory. Bands and Encode need the words: take
// them first.
func (f Features) Slim() Features {
	if f.sets == nil {
		f.hashed()
	}
	return Features{Stance: f.Stance, sets: f.sets, coinBits: f.coinBits, figureBits: f.figureBits}
}

// Of computes the features of an item from its title (may be empty) and
// body.
func Of(title, body string) Features {
	if len(body) > maxText {
		cut := maxText
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut]
	}
	var f Features
	head, rest := words(title), words(body)
	if len(head) == 0 {
		// An item without a title: its first sentence (or its first
		// words) is its headline.
		first, after := firstSentence(body)
		head, rest = words(first), words(after)
		if len(head) > maxHead {
			head, rest = head[:maxHead], append(head[maxHead:], rest...)
		}
	}
	f.Head = f.add(head, make([]string, 0, min(maxWords, len(head))), true)
	// The headline's shingles are the first words; the body adds its own.
	all := make([]string, len(f.Head), min(maxWords, len(f.Head)+len(rest)))
	copy(all, f.Head)
	f.Words = f.add(rest, all, false)
	slices.Sort(f.Head)
	slices.Sort(f.Words)
	slices.Sort(f.Figures)
	slices.Sort(f.Coins)
	f.hashed()
	return f
}

// firstSentence splits text after its first sentence of at least four
// words.
func firstSentence(text string) (string, string) {
	words := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == ' ':
			words++
		case c == '\n' && words >= 1, (c == '.' || c == '!' || c == '?') && words >= 3 && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n'):
			return text[:i+1], text[i+1:]
		}
	}
	return text, ""
}

// add folds ws into shingles, appends the new ones to to and returns it;
// figures, coins and stance are noted on the way.
func (f *Features) add(ws []string, to []string, head bool) []string {
	for i := 0; i < len(ws); i++ {
		w := trimPunct(ws[i])
		if v, ok := figure(w, next(ws, i)); ok {
			if next(ws, i) != "" && unit[next(ws, i)] != 0 {
				i++
			}
			if !slices.Contains(f.Figures, v) {
				f.Figures = append(f.Figures, v)
			}
			w = "#" + v
		} else {
			s := shingleOf(w)
			if s.word == "" {
				continue
			}
			w = s.word
			if head {
				f.Stance |= s.stance
			}
			if s.coin && !slices.Contains(f.Coins, w) {
				f.Coins = append(f.Coins, w)
			}
		}
		if !slices.Contains(to, w) && len(to) < maxWords {
			to = append(to, w)
		}
	}
	return to
}

func next(ws []string, i int) string {
	if i+1 < len(ws) {
		return trimPunct(ws[i+1])
	}
	return ""
}

// Bands returns the item's index keys: one per band of the MinHash
// signature of its headline, each a hash of the band's values and its
// number, and one per coin and figure the headline names together ("BTC"
// and "95000"), which rewordings keep however else they differ. An item
// with too few shingles has none and always starts its own story.
func (f Features) Bands() []int64 {
	if len(f.Head) < minWords {
		return nil
	}
	var sig [numHashes]uint64
	for i := range sig {
		sig[i] = math.MaxUint64
	}
	for _, w := range f.Head {
		h := xxh3.HashStringSeed(w, hashSeed)
		for i := range sig {
			// A cheap family of permutations of one good hash.
			v := (h ^ seeds[i]) * 0x9E3779B97F4A7C15
			v ^= v >> 29
			if v < sig[i] {
				sig[i] = v
			}
		}
	}
	bands := make([]int64, 0, NumBands+maxAnchors)
	var buf [8 * (bandRows + 1)]byte
	for b := range NumBands {
		binary.LittleEndian.PutUint64(buf[:], uint64(b))
		for r := range bandRows {
			binary.LittleEndian.PutUint64(buf[8*(r+1):], sig[b*bandRows+r])
		}
		bands = append(bands, int64(xxh3.Hash(buf[:])))
	}
	for _, c := range f.Coins {
		for _, v := range f.Figures {
			if len(bands) == cap(bands) {
				return bands
			}
			bands = append(bands, int64(xxh3.HashStringSeed(c+"#"+v, hashSeed)))
		}
	}
	return bands
}

var seeds = func() (s [numHashes]uint64) {
	x := uint64(hashSeed)
	for i := range s {
		// splitmix64
		x += 0x9E3779B97F4A7C15
		z := x
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		s[i] = z ^ (z >> 31)
	}
	return s
}()

// Same reports whether two items whose features are a and b, seen within
// Window of each other, tell the same story.
func Same(a, b Features) bool {
	same, _ := match(&a, &b)
	return same
}

// match tells whether a and b tell the same story (Same) and, when they
// do, how alike they are, for picking the best of several matching
// candidates: the Jaccard similarity of their headlines' shingles.
func match(a, b *Features) (same bool, score float64) {
	if disjoint(a.coinBits, b.coinBits) || disjoint(a.figureBits, b.figureBits) {
		return false, 0 // as the checks of coins and figures below decide
	}
	x, y := a.hashes(), b.hashes()
	if len(x.head) < minWords || len(y.head) < minWords {
		return false, 0
	}
	if contradict(a.Stance, b.Stance) {
		return false, 0
	}
	if len(x.coins) > 0 && len(y.coins) > 0 && intersect(x.coins, y.coins) == 0 {
		return false, 0 // "SEC approves spot XRP ETFs" is not the SOL story
	}
	figures := intersect(x.figures, y.figures)
	if len(x.figures) > 0 && len(y.figures) > 0 && figures == 0 {
		return false, 0 // templated headlines with other figures
	}
	if mostlyUnsaid(x.headFigures, y.figures) && mostlyUnsaid(y.headFigures, x.figures) {
		// Templated headlines that share a figure and differ in those
		// that tell their events apart: "a wallet dormant for 10 years
		// moves 2,693 BTC ($268.9M)" and another one's 1,885 BTC
		// ($188.3M). A rewording adds a figure or rounds one ("nearly
		// 500K" for 499,096), but says most of the other headline's.
		return false, 0
	}
	// The headlines agree, or one headline is mostly said by the other item.
	common := intersect(x.head, y.head)
	union := len(x.head) + len(y.head) - common
	score = float64(common) / float64(union)
	need := headJaccard
	if figures > 0 {
		need = headJaccardFigure
	}
	if common >= 3 && float64(common) >= need*float64(union) {
		return true, score
	}
	for _, p := range [2][2]*hashedSets{{x, y}, {y, x}} {
		c := intersect(p[0].head, p[1].words)
		if c >= 3 && float64(c) >= headCovered*float64(len(p[0].head)) {
			return true, score
		}
	}
	return false, 0
}

const (
	headJaccard       = 0.4 // of the two headlines' shingles
	headJaccardFigure = 0.3 // when they give a figure in common
	headCovered       = 0.6 // share of one headline's shingles that the other item says
)

// mostlyUnsaid tells whether most of a headline's figures (sorted
// hashes) are not among an item's figures.
func mostlyUnsaid(headFigures, figures []uint64) bool {
	said := intersect(headFigures, figures)
	return len(headFigures)-said > said
}

// disjoint tells whether two items' bits of coins (or figures) show that
// both name some and share none.
func disjoint(a, b uint64) bool {
	return a != 0 && b != 0 && a&b == 0
}

// intersect counts the elements two sorted lists share.
func intersect[E cmp.Ordered](a, b []E) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch cmp.Compare(a[i], b[j]) {
		case 0:
			n++
			i++
			j++
		case -1:
			i++
		default:
			j++
		}
	}
	return n
}

// contradict reports whether one item says a word whose opposite the other
// says, and not both.
func contradict(a, b uint64) bool {
	// Bit 2i of firstOnly(s) is set when s says the first word of pair i
	// and not the second, of secondOnly(s) the other way round: every pair
	// at once.
	const firsts = 0x5555_5555_5555_5555
	firstOnly := func(s uint64) uint64 { return s &^ (s >> 1) & firsts }
	secondOnly := func(s uint64) uint64 { return (s >> 1) &^ s & firsts }
	return firstOnly(a)&secondOnly(b)|secondOnly(a)&firstOnly(b) != 0
}

// words splits text into lower-case words; URLs, mentions and a leading
// retweet marker are dropped, and a word keeps the characters that make
// figures ($, %, ., ,) so that figure can read them.
func words(text string) []string {
	fields := strings.Fields(text)
	out := make([]string, 0, len(fields))
	for i, field := range fields {
		if strings.HasPrefix(field, "http://") || strings.HasPrefix(field, "https://") || strings.HasPrefix(field, "www.") {
			continue
		}
		if strings.HasPrefix(field, "@") {
			continue
		}
		if i == 0 && strings.EqualFold(field, "RT") {
			continue
		}
		field = strings.ToLower(field)
		// Split on anything that is neither a letter, a digit nor a figure's
		// character; hyphenated words become two words, except a name
		// that joins letters and digits ("S-1", "8-K", "COVID-19"), which
		// is a name, not a figure.
		start := -1
		for j, r := range field {
			keep := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '$' || r == '%' || r == '.' || r == ',' ||
				r == '-' && namesForm(field, j)
			if keep && start < 0 {
				start = j
			}
			if !keep && start >= 0 {
				out = appendWord(out, field[start:j])
				start = -1
			}
		}
		if start >= 0 {
			out = appendWord(out, field[start:])
		}
	}
	return out
}

// namesForm tells whether the hyphen at field[j] joins a letter and a
// digit, in either order.
func namesForm(field string, j int) bool {
	before, _ := utf8.DecodeLastRuneInString(field[:j])
	after, _ := utf8.DecodeRuneInString(field[j+1:])
	return unicode.IsLetter(before) && unicode.IsDigit(after) || unicode.IsDigit(before) && unicode.IsLetter(after)
}

// trimPunct is strings.Trim(w, ".,") without building the set of the two
// characters anew for each word.
func trimPunct(w string) string {
	for len(w) > 0 && (w[0] == '.' || w[0] == ',') {
		w = w[1:]
	}
	for len(w) > 0 && (w[len(w)-1] == '.' || w[len(w)-1] == ',') {
		w = w[:len(w)-1]
	}
	return w
}

func appendWord(out []string, w string) []string {
	w = strings.TrimLeft(trimPunct(w), "$")
	if w == "" {
		return out
	}
	// "sec's" and similar arrive without the apostrophe already split.
	return append(out, w)
}

// figure reads w as a number, with the unit word that follows it if any:
// 95k, 95,000, $1.5 billion, 12%. The value is written without a unit so
// that the forms agree ($95K and 95,000 are both "95000", $1.5B and
// $1.5 billion both "1500000000"), to three significant digits ("$95.2k"
// and "95,210" are the same figure in two headlines); percentages keep
// their sign.
func figure(w, after string) (string, bool) {
	if w == "" || !(w[0] >= '0' && w[0] <= '9') {
		return "", false
	}
	pct := strings.HasSuffix(w, "%")
	w = strings.TrimSuffix(w, "%")
	mult := 1.0
	for _, suf := range unitSuffixes {
		if strings.HasSuffix(w, suf) {
			if _, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSuffix(w, suf), ",", ""), 64); err == nil {
				mult, w = unit[suf], strings.TrimSuffix(w, suf)
				break
			}
		}
	}
	if m := unit[after]; m != 0 && mult == 1 {
		mult = m
	}
	w = strings.ReplaceAll(w, ",", "")
	v, err := strconv.ParseFloat(w, 64)
	if err != nil {
		return "", false
	}
	v *= mult
	if v != 0 {
		p := math.Pow(10, math.Floor(math.Log10(math.Abs(v)))-2)
		v = math.Round(v/p) * p
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if pct {
		s += "%"
	}
	return s, true
}

// unit maps the words and suffixes of magnitudes to their value.
var unit = map[string]float64{
	"k": 1e3, "thousand": 1e3,
	"m": 1e6, "mn": 1e6, "mln": 1e6, "million": 1e6, "millions": 1e6,
	"b": 1e9, "bn": 1e9, "billion": 1e9, "billions": 1e9,
	"t": 1e12, "tn": 1e12, "trillion": 1e12,
}

// unitSuffixes are the keys of unit written onto a number ("95k",
// "1.5bn"): at most one of them ends a word whose rest is a number.
var unitSuffixes = func() []string {
	var s []string
	for suf := range unit {
		if len(suf) <= 2 {
			s = append(s, suf)
		}
	}
	slices.Sort(s)
	return s
}()

// fold maps a word to its shingle: the ticker for a coin's name or ticker,
// the canonical word of a group of synonyms, a light stem otherwise; ""
// for words of no news value.
func fold(w string) string {
	if t, ok := tickers[w]; ok {
		return t
	}
	if stop[w] {
		return ""
	}
	if c, ok := synonyms[w]; ok {
		return c
	}
	return foldStem(stem(w))
}

// foldStem is fold of a word that is no coin, stop word or synonym as
// written, from its stem s.
func foldStem(s string) string {
	if c, ok := synonyms[s]; ok {
		return c
	}
	if stop[s] {
		return ""
	}
	return s
}

// shingle is what a word gives an item's features.
type shingle struct {
	word   string // fold's shingle; "" for a word of no news value
	stance uint64 // the shingle's bits of Features.Stance
	// coin is set for a ticker named as written, not by a stem that
	// happens to be a ticker ("filing" is not Filecoin).
	coin bool
}

// shingleOf is fold, stanceBits and isName of w in one or two map reads
// rather than a dozen: a word the tables name is in lexicon; another one
// names no coin, and its stem is read in stems.
func shingleOf(w string) shingle {
	if s, ok := lexicon[w]; ok {
		return s
	}
	st := stem(w)
	if s, ok := stems[st]; ok {
		return s
	}
	return shingle{word: st}
}

// newShingle is a word's shingle by the rules themselves: fold, isName
// and stanceBits.
func newShingle(w string) shingle {
	word := fold(w)
	return shingle{word: word, stance: stanceBits[word], coin: isName(w) && isTicker[word]}
}

// lexicon holds the shingle of every word that fold or isName finds in a
// table as written: the coins' names and tickers and their plurals (the
// only words isName is true of), stop words and synonyms. Of any other
// word, fold reads only the stem.
var lexicon = func() map[string]shingle {
	m := map[string]shingle{}
	for _, words := range []map[string]bool{keysOf(tickers), isTicker, stop, keysOf(synonyms)} {
		for w := range words {
			m[w] = newShingle(w)
			m[w+"s"] = newShingle(w + "s")
		}
	}
	return m
}()

// stems holds the shingle of every stem a table names (a synonym, a stop
// word, a word with stance bits); any other stem is its own shingle.
var stems = func() map[string]shingle {
	m := map[string]shingle{}
	for _, words := range []map[string]bool{stop, keysOf(synonyms), keysOf(stanceBits)} {
		for s := range words {
			word := foldStem(s)
			m[s] = shingle{word: word, stance: stanceBits[word]}
		}
	}
	return m
}()

func keysOf[V any](m map[string]V) map[string]bool {
	keys := make(map[string]bool, len(m))
	for k := range m {
		keys[k] = true
	}
	return keys
}

// isName tells whether w names a coin as written (a ticker or a name), or
// as its plural.
func isName(w string) bool {
	for _, v := range [2]string{w, strings.TrimSuffix(w, "s")} {
		if _, ok := tickers[v]; ok || isTicker[v] {
			return true
		}
	}
	return false
}

// stem strips common English suffixes, enough to make "approves",
// "approved" and "approval" one word.
func stem(w string) string {
	if len(w) <= 4 {
		return strings.TrimSuffix(w, "s")
	}
	for _, suf := range []string{"ations", "ation", "ings", "ing", "ied", "ies", "ed", "es", "als", "al", "s", "ly"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = strings.TrimSuffix(w, suf)
			break
		}
	}
	return strings.TrimSuffix(w, "e")
}

// tickers maps the lower-case single-word names and tickers of the coins
// list to their ticker.
var tickers = func() map[string]string {
	m := map[string]string{}
	for _, c := range coins.Default().Coins() {
		t := strings.ToLower(c.Ticker)
		if !c.CashtagOnly && !c.CapsWord {
			m[t] = t
		}
		for _, n := range append(slices.Clone(c.Names), c.Cased...) {
			if !strings.Contains(n, " ") {
				m[strings.ToLower(n)] = t
			}
		}
	}
	// Common short forms the list does not carry as names.
	m["ether"] = "eth"
	m["btc"] = "btc"
	return m
}()

// isTicker tells the shingles that are coins.
var isTicker = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range tickers {
		m[t] = true
	}
	return m
}()

// Encode writes the features as one string, for the database's
// story_members table; Decode reads it back.
func (f Features) Encode() string {
	var b strings.Builder
	for i, list := range [][]string{f.Head, f.Words, f.Figures, f.Coins} {
		if i > 0 {
			b.WriteByte(fieldSep)
		}
		for j, w := range list {
			if j > 0 {
				b.WriteByte(wordSep)
			}
			b.WriteString(w)
		}
	}
	b.WriteByte(fieldSep)
	b.WriteString(strconv.FormatUint(f.Stance, 10))
	return b.String()
}

// Decode reads features written by Encode.
func Decode(s string) (Features, error) {
	parts := strings.Split(s, string(rune(fieldSep)))
	if len(parts) != 5 {
		return Features{}, fmt.Errorf("story features: %d fields, want 5", len(parts))
	}
	split := func(p string) []string {
		if p == "" {
			return nil
		}
		return strings.Split(p, string(rune(wordSep)))
	}
	stance, err := strconv.ParseUint(parts[4], 10, 64)
	if err != nil {
		return Features{}, fmt.Errorf("story features: stance: %w", err)
	}
	f := Features{Head: split(parts[0]), Words: split(parts[1]), Figures: split(parts[2]), Coins: split(parts[3]), Stance: stance}
	f.hashed()
	return f, nil
}

// Separators of Encode: ASCII record and unit separators, which
// normalized words never hold.
const (
	fieldSep = 0x1e
	wordSep  = 0x1f
)
