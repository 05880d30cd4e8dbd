package contract

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/limits"
	"github.com/feedapi/feedapi/graph/scalar"
)

// The kinds of parameters: each constructor sets the parser and the
// OpenAPI schema from the same bounds.

// booleans completes the description of every boolean parameter.
const booleans = " A boolean: `true` or `false`; the server also takes `1` and `0`, case-insensitive (`TRUE`), and anything else gives 400."

func types(t ...string) *openapi3.Types { x := openapi3.Types(t); return &x }

func float(n float64) *float64 { return &n }

func size(n uint64) *uint64 { return &n }

// textSchema is a non-empty string of at most max bytes.
func textSchema(max uint64) *openapi3.Schema {
	return &openapi3.Schema{Type: types("string"), MinLength: 1, MaxLength: size(max)}
}

// Limit is the page size, an integer from limits.PageMin to hi, default
// def; component and description document it.
func Limit(component, description string, hi, def int) Param {
	lo := limits.PageMin
	return Param{
		Name: "limit", Variable: "first", Default: def, Paging: true,
		Allowed: "an integer from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi),
		Parse: func(v string) (any, bool) {
			if v == "" || len(v) > 6 || strings.Trim(v, "0123456789") != "" {
				return nil, false
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				return nil, false
			}
			return n, true
		},
		Component: component, Description: description,
		Schema: &openapi3.Schema{Type: types("integer"), Min: float(float64(lo)), Max: float(float64(hi)), Default: def},
	}
}

// PageLimit is the page size of the keyset-paginated lists.
func PageLimit() Param {
	return Limit("Limit", fmt.Sprintf("Page size, an integer from %d to %d; out of range gives 400 (never clamped).", limits.PageMin, limits.PageMax),
		limits.PageMax, limits.PageDefault)
}

// EtfLimit is the number of records of the ETF lists.
func EtfLimit() Param {
	return Limit("EtfLimit", fmt.Sprintf("Maximum number of records, an integer from %d to %d; out of range gives 400 (never clamped).", limits.PageMin, limits.EtfPageMax),
		limits.EtfPageMax, limits.EtfPageDefault)
}

// text is a non-empty string of at most limits.MaxTextBytes bytes.
func parseText(v string) (any, bool) {
	if v == "" || len(v) > limits.MaxTextBytes || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
		return nil, false
	}
	return v, true
}

var textAllowed = "a non-empty text of at most " + strconv.Itoa(limits.MaxTextBytes) + " bytes"

// Cursor is the keyset cursor, passed on as GraphQL's after. The graph
// layer decodes it and refuses one that is tampered with or that another
// endpoint issued.
func Cursor() Param {
	return Param{
		Name: "cursor", Variable: "after", Paging: true,
		Allowed: "the pagination.next_cursor of a previous page of this endpoint",
		Parse: func(v string) (any, bool) {
			if v == "" || len(v) > limits.MaxTextBytes {
				return nil, false
			}
			return v, true
		},
		Component:   "Cursor",
		Description: "The previous page's `pagination.next_cursor`, passed back as is. Opaque and bound to the endpoint that issued it: an undecodable, tampered or foreign cursor gives 400.",
		Schema:      textSchema(limits.MaxTextBytes),
	}
}

// StreamCursor is the stream position to resume after (an event's id);
// the Last-Event-ID header takes precedence.
func StreamCursor() Param {
	p := Cursor()
	p.Paging = false
	p.Allowed = "the id of an event of this stream"
	p.Component = ""
	p.Description = "Resume after this event: the `id` of an event of this stream (the `Last-Event-ID` header, which browsers send when they reconnect, takes precedence). Without it, and without `since`, the stream starts with the items that arrive from now on. An undecodable or foreign position gives 400."
	return p
}

// Position is after: a stream position, after which the polled lists hold
// exactly the items that became visible since.
func Position() Param {
	p := Cursor()
	p.Name, p.Variable = "after", "afterPosition"
	p.Allowed = "the meta.position of an earlier answer of this endpoint with the same filters, or the id of an event of its stream"
	p.Component = "After"
	p.Description = "Only items that became visible after this stream position: the `meta.position` of an earlier answer of " +
		"this endpoint with the same filters, or the `id` of an event of its stream. The page then holds those items newest first in the order " +
		"they became visible (not by `id`), `next_cursor` walks the rest of them, and `meta.position` of the first page is where the next poll " +
		"starts: polling so, each answer holds exactly the items that became visible since the one before, none twice and none skipped, " +
		"whatever their ids and however writers interleave. Anything else gives 400 naming `after`."
	return p
}

// Bool is a boolean: true/false or 1/0, case-insensitive. def is the
// variable's value when it is absent (nil: unset), shown the default of
// the documented schema.
func Bool(name, variable string, def any, shown bool, component, description string) Param {
	return Param{
		Name: name, Variable: variable, Default: def,
		Allowed: "true or false (or 1 or 0)",
		Parse: func(v string) (any, bool) {
			switch strings.ToLower(v) {
			case "true", "1":
				return true, true
			case "false", "0":
				return false, true
			}
			return nil, false
		},
		Component: component, Description: description + booleans,
		Schema: &openapi3.Schema{Type: types("boolean"), Default: shown},
	}
}

// Text is a non-empty string of at most limits.MaxTextBytes bytes of
// UTF-8 without NUL.
func Text(name, variable, component, description string) Param {
	return Param{
		Name: name, Variable: variable, Allowed: textAllowed, Parse: parseText,
		Component: component, Description: description, Schema: textSchema(limits.MaxTextBytes),
	}
}

// sincePattern is the shape of since: a date, or a date-time with Z or an
// offset. It uses only the syntax shared by ECMA-262, RE2 and PCRE, so that
// every tool reads it alike.
const sincePattern = `^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))?$`

// Since is an instant: an RFC 3339 date-time with Z or an offset, or a
// bare date meaning 00:00 UTC that day. A date-time is passed on as given:
// the DateTime scalar reads it as this parser does, while its UTC form may
// not be RFC 3339 at all (9999-12-31T23:59:59-01:00 is in the year 10000).
func Since() Param {
	return Param{
		Name: "since", Variable: "since",
		Allowed: "an RFC 3339 date-time with Z or an offset, such as 2026-01-02T15:04:05Z " +
			"(write + as %2B), or a date YYYY-MM-DD",
		Parse: func(v string) (any, bool) {
			if t, err := time.Parse(time.DateOnly, v); err == nil {
				return t.Format(time.RFC3339Nano), true
			}
			if _, err := scalar.UnmarshalDateTime(v); err != nil {
				return nil, false
			}
			return v, true
		},
		Component:   "Since",
		Description: "Only items created at or after this instant (inclusive): an RFC 3339 date-time with `Z` or an offset (write `+` as `%2B`), or a bare date `YYYY-MM-DD` meaning 00:00 UTC that day. The pattern gives the shape; a value of that shape that is not a real instant (month 13, offset +24:00) also gives 400.",
		Schema:      &openapi3.Schema{Type: types("string"), Pattern: sincePattern, Examples: []any{"2026-01-02T15:04:05Z", "2026-01-02T17:04:05.5+02:00", "2026-01-02"}},
	}
}

// Date is a real calendar day, YYYY-MM-DD, as the Date scalar reads it.
func Date(name, component, description string) Param {
	return Param{
		Name: name, Variable: name,
		Allowed: "a calendar date YYYY-MM-DD",
		Parse: func(v string) (any, bool) {
			t, err := scalar.UnmarshalDate(v)
			if err != nil {
				return nil, false
			}
			return t.Format(time.DateOnly), true
		},
		Component: component, Description: description,
		Schema: &openapi3.Schema{Type: types("string"), Format: "date"},
	}
}

// Enum is one of values, exactly as written.
func Enum(name, variable string, values []string, component, description string) Param {
	return Param{
		Name: name, Variable: variable,
		Allowed: "one of " + strings.Join(values, ", "),
		Parse: func(v string) (any, bool) {
			if !slices.Contains(values, v) {
				return nil, false
			}
			return v, true
		},
		Component: component, Description: description,
		Schema: &openapi3.Schema{Type: types("string"), Enum: Anys(values)},
	}
}

// Anys returns values as a list of any, as schemas and variables take them.
func Anys(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// caseless writes s as a pattern that matches it in any letter case,
// without an inline flag, which not every tool reads.
func caseless(s string) string {
	var b strings.Builder
	for _, r := range s {
		if u, l := strings.ToUpper(string(r)), strings.ToLower(string(r)); u != l {
			b.WriteString("[" + u + l + "]")
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// listPattern is a comma-separated list of item, with optional spaces
// around each.
func listPattern(item string) string {
	return `^\s*` + item + `\s*(,\s*` + item + `\s*)*$`
}

// Assets is a comma-separated, case-insensitive list drawn from
// AssetValues, passed on deduplicated, in the order of AssetValues.
func Assets() Param {
	alts := make([]string, len(AssetValues))
	for i, a := range AssetValues {
		alts[i] = caseless(a)
	}
	return Param{
		Name: "asset", Variable: "assets",
		Allowed: "a comma-separated list drawn from " + strings.Join(AssetValues, ", "),
		Parse: func(v string) (any, bool) {
			picked := make([]bool, len(AssetValues))
			for item := range strings.SplitSeq(v, ",") {
				i := slices.Index(AssetValues, strings.ToUpper(strings.TrimSpace(item)))
				if i < 0 {
					return nil, false
				}
				picked[i] = true
			}
			var out []any
			for i, a := range AssetValues {
				if picked[i] {
					out = append(out, a)
				}
			}
			return out, true
		},
		Component:   "Asset",
		Description: "Comma-separated list of assets from BTC, ETH, SOL and HYPE, case-insensitive (`btc,ETH`); all assets when absent. Any other value gives 400.",
		Schema: &openapi3.Schema{Type: types("string"), Pattern: `^\s*(` + strings.Join(alts, "|") + `)\s*(,\s*(` + strings.Join(alts, "|") + `)\s*)*$`,
			Examples: []any{"BTC", "btc,eth"}},
	}
}

// Funds is a comma-separated list of fund tickers, passed on as given
// (trimmed); the graph layer checks each against the funds.
func Funds() Param {
	ticker := fmt.Sprintf(`[A-Za-z0-9]{1,%d}`, limits.FundTickerMaxLen)
	return Param{
		Name: "fund", Variable: "funds",
		Allowed: fmt.Sprintf("a comma-separated list of at most %d fund tickers listed by /v1/etf-funds", limits.MaxFunds),
		Parse: func(v string) (any, bool) {
			var out []any
			for item := range strings.SplitSeq(v, ",") {
				item = strings.TrimSpace(item)
				if item == "" || len(item) > limits.MaxTextBytes {
					return nil, false
				}
				out = append(out, item)
			}
			return out, true
		},
		Component: "Fund",
		Description: fmt.Sprintf("Only these funds: a comma-separated list of at most %d tickers (`IBIT`, `ibit,fbtc`), case-insensitive, each a fund of `/v1/etf-funds` (also listed as `etf_funds` by `/v1/sources`). A ticker that is not a fund gives 400 naming `fund`; with `asset`, only the listed funds of those assets.",
			limits.MaxFunds),
		Schema: &openapi3.Schema{Type: types("string"), Pattern: listPattern(ticker), Examples: []any{"IBIT", "ibit,fbtc,gbtc"}},
	}
}

// PagingParam asks a list that is not paginated by default for its
// pagination object (OptionalPage). The query has no variable for it: it
// only shapes the envelope.
const PagingParam = "paginate"

// Paginate is the PagingParam switch.
func Paginate() Param {
	p := Bool(PagingParam, PagingParam, nil, false, "Paginate",
		"Whether the answer carries `pagination` (`{next_cursor, has_more}`) to walk the whole history page by page with `cursor`; without it (or false) `pagination` is null, as it always was. A `cursor` implies it (`paginate=false` with a cursor gives 400).")
	// Its description says in its own words what booleans take.
	p.Description = strings.TrimSuffix(p.Description, booleans) + " A boolean: `true` or `false`; the server also takes `1` and `0`, case-insensitive, and anything else gives 400."
	return p
}

// CursorPaginates refuses paginate=false with a cursor, which asks for the
// next page of a paginated walk.
func CursorPaginates(vars map[string]any) error {
	if vars[PagingParam] == false && vars["after"] != nil {
		return apperr.Invalid(PagingParam, "paginate cannot be false with a cursor: a cursor continues a paginated walk")
	}
	return nil
}

// FromNotAfterTo refuses an ETF date range whose from lies after its to.
// The dates are YYYY-MM-DD, so they compare as strings.
func FromNotAfterTo(vars map[string]any) error {
	from, okFrom := vars["from"].(string)
	to, okTo := vars["to"].(string)
	if okFrom && okTo && from > to {
		return apperr.Invalid("from", "from must not be after to (from=%s, to=%s)", from, to)
	}
	return nil
}

// All combines cross-parameter rules, checked in order.
func All(checks ...func(map[string]any) error) func(map[string]any) error {
	return func(vars map[string]any) error {
		for _, c := range checks {
			if err := c(vars); err != nil {
				return err
			}
		}
		return nil
	}
}

// TickerPattern is the shape of a coin ticker as served.
var TickerPattern = fmt.Sprintf(`^[A-Z0-9]{1,%d}$`, limits.TickerMaxLen)

// FundTickerPattern is the shape of a fund ticker as served.
var FundTickerPattern = fmt.Sprintf(`^[A-Z0-9]{1,%d}$`, limits.FundTickerMaxLen)

// Coins is a comma-separated, case-insensitive list of tickers, passed on
// upper-cased and deduplicated. The tickers are not checked against those
// that occur: an unknown one gives an empty page, like an unknown source.
func Coins() Param {
	return Param{
		Name: "coins", Variable: "coins",
		Allowed: fmt.Sprintf("a comma-separated list of 1 to %d tickers of 1 to %d letters or digits, such as BTC,eth",
			limits.MaxCoins, limits.TickerMaxLen),
		Parse: func(v string) (any, bool) {
			var tickers []string
			for item := range strings.SplitSeq(v, ",") {
				t := strings.ToUpper(strings.TrimSpace(item))
				if t == "" || len(t) > limits.TickerMaxLen || strings.Trim(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
					return nil, false
				}
				tickers = append(tickers, t)
			}
			slices.Sort(tickers)
			tickers = slices.Compact(tickers)
			if len(tickers) > limits.MaxCoins {
				return nil, false
			}
			return Anys(tickers), true
		},
		Component: "Coins",
		Description: fmt.Sprintf("Only items about any of these coins: a comma-separated list of 1 to %d tickers (`BTC`, `btc,eth`), "+
			"case-insensitive, each 1 to %d letters or digits. `/v1/sources` lists the tickers that occur; a ticker no item mentions gives an empty page, "+
			"not an error. Anything else gives 400 naming `coins`.", limits.MaxCoins, limits.TickerMaxLen),
		Schema: &openapi3.Schema{Type: types("string"), Pattern: listPattern(fmt.Sprintf(`[A-Za-z0-9]{1,%d}`, limits.TickerMaxLen)),
			Examples: []any{"BTC", "btc,eth,sol"}},
	}
}

// Search is a full-text search in websearch_to_tsquery syntax: 1 to
// limits.MaxQueryBytes bytes of UTF-8 without NUL, not blank. what says
// which texts it searches.
func Search(component, what string) Param {
	return Param{
		Name: "q", Variable: "q",
		Allowed: "a search of 1 to " + strconv.Itoa(limits.MaxQueryBytes) +
			` bytes, not blank: words, "quoted phrases", -excluded words and or`,
		Parse: func(v string) (any, bool) {
			if strings.TrimSpace(v) == "" || len(v) > limits.MaxQueryBytes || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
				return nil, false
			}
			return v, true
		},
		Component: component,
		Description: "Full-text search of " + what + " (PostgreSQL `websearch_to_tsquery`, English stemming): words (all must occur), " +
			"`\"quoted phrases\"`, `-excluded` words and `or`. Results stay newest first and combine with every other filter. " +
			"1 to " + strconv.Itoa(limits.MaxQueryBytes) + " bytes, not blank; else 400 naming `q`. A search of stop words only (`the`) matches nothing.",
		Schema: &openapi3.Schema{Type: types("string"), MinLength: 1, MaxLength: size(limits.MaxQueryBytes),
			Examples: []any{"etf inflows", `"spot bitcoin" -ether`}},
	}
}

// SinceID is an id, 0 to limits.MaxSinceID: only items with a larger id.
func SinceID() Param {
	return Param{
		Name: "since_id", Variable: "sinceId", Paging: true,
		Allowed: "an integer from 0 to " + strconv.Itoa(limits.MaxSinceID) + " (the largest id already seen)",
		Parse: func(v string) (any, bool) {
			if v == "" || len(v) > 16 || strings.Trim(v, "0123456789") != "" {
				return nil, false
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n > limits.MaxSinceID {
				return nil, false
			}
			return int(n), true
		},
		Component: "SinceID",
		Description: "Only items with an `id` larger than this one, newest first and paginated like the list (the cursor " +
			"keeps the bound). Ids come from the imported data and concurrent writers commit out of order, so an item with a smaller `id` than " +
			"one already seen may still appear later and is then missed: to get exactly what is new, poll with `after`. " +
			"An integer from 0 to " + strconv.Itoa(limits.MaxSinceID) + "; else 400 naming `since_id`.",
		Schema: &openapi3.Schema{Type: types("integer"), Format: "int64", Min: float(0), Max: float(limits.MaxSinceID)},
	}
}
