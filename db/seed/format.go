package seed

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// commas formats n with thousands separators: 1234567 → "1,234,567".
func commas(n int64) string {
	if n < 0 {
		return "-" + commas(-n)
	}
	s := strconv.FormatInt(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/3)
	lead := len(s) % 3
	if lead == 0 {
		lead = 3
	}
	b.WriteString(s[:lead])
	for i := lead; i < len(s); i += 3 {
		b.WriteByte(',')
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// decimal formats x with the given number of fraction digits and thousands
// separators: decimal(1234.5, 2) → "1,234.50".
func decimal(x float64, digits int) string {
	neg := x < 0
	if neg {
		x = -x
	}
	s := strconv.FormatFloat(x, 'f', digits, 64)
	whole, frac, _ := strings.Cut(s, ".")
	n, _ := strconv.ParseInt(whole, 10, 64)
	out := commas(n)
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// usdShort formats dollars compactly, as headlines and alerts do: "$412.3M",
// "$1.24B", "$86.2K".
func usdShort(x float64) string {
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	switch {
	case x >= 1e9:
		return sign + "$" + strconv.FormatFloat(x/1e9, 'f', 2, 64) + "B"
	case x >= 1e6:
		return sign + "$" + strconv.FormatFloat(x/1e6, 'f', 1, 64) + "M"
	case x >= 1e4:
		return sign + "$" + strconv.FormatFloat(x/1e3, 'f', 1, 64) + "K"
	default:
		return sign + "$" + commas(int64(math.Round(x)))
	}
}

// usdWords formats dollars as news copy does: "$412.3 million", "$1.24 billion".
func usdWords(x float64) string {
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	switch {
	case x >= 1e9:
		return sign + "$" + strconv.FormatFloat(x/1e9, 'f', 2, 64) + " billion"
	case x >= 1e6:
		return sign + "$" + strconv.FormatFloat(x/1e6, 'f', 1, 64) + " million"
	default:
		return sign + "$" + commas(int64(math.Round(x)))
	}
}

// price formats a coin price with the precision traders quote it at.
func price(x float64) string {
	switch {
	case x >= 1000:
		return "$" + commas(int64(math.Round(x)))
	case x >= 1:
		return "$" + decimal(x, 2)
	case x >= 0.01:
		return "$" + strconv.FormatFloat(x, 'f', 4, 64)
	default:
		return "$" + strconv.FormatFloat(x, 'f', 8, 64)
	}
}

// pct formats a fraction as a percentage with one decimal: 0.0321 → "3.2%".
func pct(x float64) string { return strconv.FormatFloat(math.Abs(x)*100, 'f', 1, 64) + "%" }

// signedPct is pct with an explicit sign: "+3.2%", "-1.4%".
func signedPct(x float64) string {
	if x < 0 {
		return "-" + pct(x)
	}
	return "+" + pct(x)
}

// units formats a coin amount: whole units above 100, else two decimals.
func units(x float64) string {
	if x >= 100 {
		return commas(int64(math.Round(x)))
	}
	return decimal(x, 2)
}

// apMonths are the month names in Associated Press style.
var apMonths = [...]string{"Jan.", "Feb.", "March", "April", "May", "June", "July", "Aug.", "Sept.", "Oct.", "Nov.", "Dec."}

// apDate formats a day as news copy does: "Nov. 12".
func apDate(t time.Time) string { return apMonths[t.Month()-1] + " " + strconv.Itoa(t.Day()) }

// shortDate formats a day as alerts do: "Nov 12".
func shortDate(t time.Time) string { return t.Format("Jan 2") }

// slugify turns a headline into a URL path segment of at most max bytes.
func slugify(s string, max int) string {
	b := make([]byte, 0, len(s))
	dash := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
			fallthrough
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			if dash && len(b) > 0 {
				b = append(b, '-')
			}
			dash = false
			b = append(b, c)
		case c == '\'':
			// "Coinbase's" → "coinbases"
		default:
			dash = true
		}
	}
	if len(b) > max {
		b = b[:max]
		if i := strings.LastIndexByte(string(b), '-'); i > max/2 {
			b = b[:i]
		}
	}
	return strings.TrimRight(string(b), "-")
}

// smallWords stay lower case inside a title-cased headline.
var smallWords = map[string]bool{
	"a": true, "an": true, "and": true, "as": true, "at": true, "by": true, "for": true,
	"from": true, "in": true, "of": true, "on": true, "or": true, "the": true, "to": true, "with": true,
}

// titleCase capitalises a headline the way press releases are titled.
func titleCase(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		if w == "" || (i > 0 && smallWords[w]) || strings.ContainsAny(w, "0123456789") {
			continue // "a16z" and "$25" stay as they are
		}
		if c := w[0]; c >= 'a' && c <= 'z' {
			words[i] = string(c-'a'+'A') + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// upperFirst capitalises the first byte of an ASCII sentence.
func upperFirst(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// hexString returns n random lower-case hex digits.
func hexString(r *rand.Rand, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return string(b)
}

// base58 returns n random characters of Bitcoin's base58 alphabet.
func base58(r *rand.Rand, n int) string {
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// shortAddr returns an abbreviated EVM address as explorers show it: "0x4f2a…9c1d".
func shortAddr(r *rand.Rand) string { return "0x" + hexString(r, 4) + "…" + hexString(r, 4) }

// utf16Len is the length of s in UTF-16 code units, the unit of Telegram's
// entity offsets.
func utf16Len(s string) int {
	n := 0
	for _, c := range s {
		n += len(utf16.AppendRune(nil, c))
	}
	return n
}

// pick returns a uniformly chosen element of list.
func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

// logNormal returns exp(mu + sigma·N(0,1)).
func logNormal(r *rand.Rand, mu, sigma float64) float64 {
	return math.Exp(mu + sigma*r.NormFloat64())
}

// around returns x scaled by a log-normal factor of the given spread.
func around(r *rand.Rand, x, spread float64) float64 { return x * logNormal(r, 0, spread) }

// between returns a uniform float in [lo, hi).
func between(r *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }

// chance reports true with probability p.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// weighted chooses an index with probability proportional to its weight,
// given the cumulative weights.
type weighted []float64

// newWeighted builds the cumulative table of ws.
func newWeighted(ws ...float64) weighted {
	cum := make(weighted, len(ws))
	sum := 0.0
	for i, w := range ws {
		sum += w
		cum[i] = sum
	}
	return cum
}

// pick returns an index drawn from the table.
func (w weighted) pick(r *rand.Rand) int {
	x := r.Float64() * w[len(w)-1]
	lo, hi := 0, len(w)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if w[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// ordinal returns "1st", "2nd", "3rd", "4th", …
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// ordinalWord spells ordinals up to tenth, as news copy does: "fifth".
func ordinalWord(n int) string {
	words := [...]string{"", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}
	if n > 0 && n < len(words) {
		return words[n]
	}
	return ordinal(n)
}

// numberWord spells small counts as news copy does.
func numberWord(n int) string {
	words := [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

// either returns a when cond holds, else b.
func either(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// eitherF returns a when cond holds, else b.
func eitherF(cond bool, a, b float64) float64 {
	if cond {
		return a
	}
	return b
}

// abs returns the absolute value of n.
func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
