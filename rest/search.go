package rest

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/feedapi/feedapi/graph"
)

// maxSinceID is the largest since_id: ids are at most 2^53-1.
const maxSinceID = 1<<53 - 1

// coinsParam is a comma-separated, case-insensitive list of tickers (1 to
// 12 letters or digits each), passed on upper-cased and deduplicated. The
// tickers are not checked against those that occur: an unknown one gives
// an empty page, like an unknown source.
func coinsParam() param {
	return param{
		name: "coins", variable: "coins",
		allowed: "a comma-separated list of 1 to " + strconv.Itoa(graph.MaxCoins) +
			" tickers of 1 to 12 letters or digits, such as BTC,eth",
		parse: func(v string) (any, bool) {
			var tickers []string
			for item := range strings.SplitSeq(v, ",") {
				t := strings.ToUpper(strings.TrimSpace(item))
				if t == "" || len(t) > 12 || strings.Trim(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
					return nil, false
				}
				tickers = append(tickers, t)
			}
			slices.Sort(tickers)
			tickers = slices.Compact(tickers)
			if len(tickers) > graph.MaxCoins {
				return nil, false
			}
			out := make([]any, len(tickers))
			for i, t := range tickers {
				out[i] = t
			}
			return out, true
		},
	}
}

// queryParam is a full-text search in websearch_to_tsquery syntax: 1 to
// graph.MaxQueryBytes bytes of UTF-8 without NUL, not blank.
func queryParam() param {
	return param{
		name: "q", variable: "q",
		allowed: "a search of 1 to " + strconv.Itoa(graph.MaxQueryBytes) +
			` bytes, not blank: words, "quoted phrases", -excluded words and or`,
		parse: func(v string) (any, bool) {
			if strings.TrimSpace(v) == "" || len(v) > graph.MaxQueryBytes || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
				return nil, false
			}
			return v, true
		},
	}
}

// sinceIDParam is an id, 0 to 2^53-1: only items with a larger id.
func sinceIDParam() param {
	return param{
		name: "since_id", variable: "sinceId",
		allowed: "an integer from 0 to " + strconv.Itoa(maxSinceID) + " (the largest id already seen)",
		parse: func(v string) (any, bool) {
			if v == "" || len(v) > 16 || strings.Trim(v, "0123456789") != "" {
				return nil, false
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n > maxSinceID {
				return nil, false
			}
			return int(n), true
		},
	}
}

// positionParam is after: a stream position, after which the polled lists
// hold exactly the items that became visible since (graph's afterPosition).
func positionParam() param {
	p := cursorParam()
	p.name, p.variable = "after", "afterPosition"
	p.allowed = "the meta.position of an earlier answer of this endpoint with the same filters, or the id of an event of its stream"
	return p
}
