package rest

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/scalar"
)

// maxTextParam bounds free-text parameters (source, cursor) in bytes.
const maxTextParam = 256

// param is one query parameter an endpoint accepts and the GraphQL variable
// it sets. Parameters are strict: each problem is a 400 whose message names
// the parameter and what is allowed.
type param struct {
	name     string // in the query string
	variable string // the GraphQL variable it sets
	def      any    // the variable's value when the parameter is absent; nil leaves it unset
	parse    func(value string) (any, bool)
	allowed  string // completes "<name> must be …" when parse refuses a value
}

// invalid is the error for a refused value of p.
func (p param) invalid() *apperr.Error {
	return apperr.Invalid(p.name, "%s must be %s", p.name, p.allowed)
}

// parseParams checks the query string of r against the endpoint's
// parameters and returns the GraphQL variables they give. Unknown and
// repeated parameters are refused; checks run in a fixed order (unknown
// names alphabetically, then the endpoint's parameters in table order), so a
// request with several problems always gets the same message.
func parseParams(r *http.Request, params []param) (map[string]any, error) {
	vars := make(map[string]any, len(params)+2)
	var values url.Values
	if r.URL.RawQuery != "" {
		var err error
		values, err = url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return nil, apperr.Invalid("", "the query string is malformed: use name=value pairs joined by & with percent-encoding")
		}
	}
	if unknown := unknownParams(values, params); len(unknown) > 0 {
		return nil, unknownParamError(unknown[0], params)
	}
	for _, p := range params {
		vs, ok := values[p.name]
		switch {
		case !ok:
			if p.def != nil {
				vars[p.variable] = p.def
			}
			continue
		case len(vs) > 1:
			return nil, apperr.Invalid(p.name, "%s must be given at most once", p.name)
		}
		v, ok := p.parse(vs[0])
		if !ok {
			return nil, p.invalid()
		}
		vars[p.variable] = v
	}
	return vars, nil
}

func unknownParams(values url.Values, params []param) []string {
	var unknown []string
	for name := range values {
		if !slices.ContainsFunc(params, func(p param) bool { return p.name == name }) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return unknown
}

func unknownParamError(name string, params []param) error {
	shown := strconv.Quote(name)
	if len(params) == 0 {
		return apperr.Invalid(name, "unknown parameter %s: this endpoint takes no query parameters", shown)
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.name
	}
	return apperr.Invalid(name, "unknown parameter %s: allowed are %s", shown, strings.Join(names, ", "))
}

// limitParam is the page size, an integer from lo to hi, default def.
func limitParam(lo, hi, def int) param {
	return param{
		name: "limit", variable: "first", def: def,
		allowed: "an integer from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi),
		parse: func(v string) (any, bool) {
			if v == "" || len(v) > 6 || strings.Trim(v, "0123456789") != "" {
				return nil, false
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				return nil, false
			}
			return n, true
		},
	}
}

// cursorParam is the keyset cursor, passed on as GraphQL's after. The graph
// layer decodes it and refuses one that is tampered with or that another
// endpoint issued.
func cursorParam() param {
	return param{
		name: "cursor", variable: "after",
		allowed: "the pagination.next_cursor of a previous page of this endpoint",
		parse: func(v string) (any, bool) {
			if v == "" || len(v) > maxTextParam {
				return nil, false
			}
			return v, true
		},
	}
}

// boolParam is a boolean: true/false or 1/0, case-insensitive.
func boolParam(name, variable string, def any) param {
	return param{
		name: name, variable: variable, def: def,
		allowed: "true or false (or 1 or 0)",
		parse: func(v string) (any, bool) {
			switch strings.ToLower(v) {
			case "true", "1":
				return true, true
			case "false", "0":
				return false, true
			}
			return nil, false
		},
	}
}

// textParam is a non-empty string of at most maxTextParam bytes of UTF-8
// without NUL.
func textParam(name, variable string) param {
	return param{
		name: name, variable: variable,
		allowed: "a non-empty text of at most " + strconv.Itoa(maxTextParam) + " bytes",
		parse: func(v string) (any, bool) {
			if v == "" || len(v) > maxTextParam || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
				return nil, false
			}
			return v, true
		},
	}
}

// sinceParam is an instant: an RFC 3339 date-time with Z or an offset, or a
// bare date meaning 00:00 UTC that day. A date-time is passed on as given:
// the DateTime scalar reads it as this parser does, while its UTC form may
// not be RFC 3339 at all (9999-12-31T23:59:59-01:00 is in the year 10000).
func sinceParam() param {
	return param{
		name: "since", variable: "since",
		allowed: "an RFC 3339 date-time with Z or an offset, such as 2026-01-02T15:04:05Z " +
			"(write + as %2B), or a date YYYY-MM-DD",
		parse: func(v string) (any, bool) {
			if t, err := time.Parse(time.DateOnly, v); err == nil {
				return t.Format(time.RFC3339Nano), true
			}
			if _, err := scalar.UnmarshalDateTime(v); err != nil {
				return nil, false
			}
			return v, true
		},
	}
}

// dateParam is a real calendar day, YYYY-MM-DD, as the Date scalar reads it.
func dateParam(name string) param {
	return param{
		name: name, variable: name,
		allowed: "a calendar date YYYY-MM-DD",
		parse: func(v string) (any, bool) {
			t, err := scalar.UnmarshalDate(v)
			if err != nil {
				return nil, false
			}
			return t.Format(time.DateOnly), true
		},
	}
}

// enumParam is one of values, exactly as written.
func enumParam(name, variable string, values []string) param {
	return param{
		name: name, variable: variable,
		allowed: "one of " + strings.Join(values, ", "),
		parse: func(v string) (any, bool) {
			if !slices.Contains(values, v) {
				return nil, false
			}
			return v, true
		},
	}
}

// assetParam is a comma-separated, case-insensitive list drawn from assets.
// It is passed on deduplicated, in the order of assets.
func assetParam(assets []string) param {
	return param{
		name: "asset", variable: "assets",
		allowed: "a comma-separated list drawn from " + strings.Join(assets, ", "),
		parse: func(v string) (any, bool) {
			picked := make([]bool, len(assets))
			for item := range strings.SplitSeq(v, ",") {
				i := slices.Index(assets, strings.ToUpper(strings.TrimSpace(item)))
				if i < 0 {
					return nil, false
				}
				picked[i] = true
			}
			var out []any
			for i, a := range assets {
				if picked[i] {
					out = append(out, a)
				}
			}
			return out, true
		},
	}
}

// parseID checks a path id: a positive integer that fits in int64.
func parseID(v string) (int64, error) {
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return 0, apperr.Invalid("id", "id must be a positive integer")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, apperr.Invalid("id", "id must be a positive integer")
	}
	return n, nil
}

// pagingParam asks a list that is not paginated by default for its
// pagination object (shapeOptionalPage).
const pagingParam = "paginate"

// cursorPaginates refuses paginate=false with a cursor, which asks for the
// next page of a paginated walk.
func cursorPaginates(vars map[string]any) error {
	if vars[pagingParam] == false && vars["after"] != nil {
		return apperr.Invalid(pagingParam, "paginate cannot be false with a cursor: a cursor continues a paginated walk")
	}
	return nil
}

// all combines cross-parameter rules, checked in order.
func all(checks ...func(map[string]any) error) func(map[string]any) error {
	return func(vars map[string]any) error {
		for _, c := range checks {
			if err := c(vars); err != nil {
				return err
			}
		}
		return nil
	}
}

// fundParam is a comma-separated list of fund tickers, passed on as given
// (trimmed); the graph layer checks each against the funds.
func fundParam() param {
	return param{
		name: "fund", variable: "funds",
		allowed: "a comma-separated list of at most 50 fund tickers listed by /v1/etf-funds",
		parse: func(v string) (any, bool) {
			var out []any
			for item := range strings.SplitSeq(v, ",") {
				item = strings.TrimSpace(item)
				if item == "" || len(item) > maxTextParam {
					return nil, false
				}
				out = append(out, item)
			}
			return out, true
		},
	}
}

// fromNotAfterTo refuses an ETF date range whose from lies after its to.
// The dates are YYYY-MM-DD, so they compare as strings.
func fromNotAfterTo(vars map[string]any) error {
	from, okFrom := vars["from"].(string)
	to, okTo := vars["to"].(string)
	if okFrom && okTo && from > to {
		return apperr.Invalid("from", "from must not be after to (from=%s, to=%s)", from, to)
	}
	return nil
}
