package importer

import (
	"encoding/json"
	"slices"

	"github.com/feedapi/feedapi/db/coins"
)

// maxCoins bounds an explicit coins array.
const maxCoins = 50

// coins reads the optional coins member: an explicit array of tickers
// (upper-cased, each 1 to Options.MaxTickerLen letters or digits, stored
// sorted and distinct), used as given; when absent (or null), the tickers derived
// from texts by the coin list. Never nil: [] means "none", while NULL in
// the column means "not derived yet".
func (o *object) coins(name string, texts ...*string) []string {
	v, ok := o.take(name)
	if !ok {
		var ts []string
		for _, t := range texts {
			if t != nil {
				ts = append(ts, *t)
			}
		}
		if found := coins.Extract(ts...); found != nil {
			return found
		}
		return []string{}
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		o.fail(name, "must be an array of tickers, such as [\"BTC\", \"ETH\"]")
		return nil
	}
	if len(raw) > maxCoins {
		o.fail(name, "must hold at most %d tickers", maxCoins)
		return nil
	}
	out := make([]string, 0, len(raw))
	for i, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			o.fail(name, "item %d: must be a string", i)
			return nil
		}
		maxLen := o.maxTicker
		if maxLen <= 0 {
			maxLen = len(s)
		}
		t, ok := coins.Normalize(s, maxLen)
		if !ok {
			if o.maxTicker > 0 {
				o.fail(name, "item %d: %q is not a ticker: want 1 to %d letters or digits", i, s, o.maxTicker)
			} else {
				o.fail(name, "item %d: %q is not a ticker: want letters or digits", i, s)
			}
			return nil
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
