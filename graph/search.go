package graph

import (
	"slices"
	"strings"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/coins"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/limits"
)

// The bounds of the search arguments, declared in graph/limits for REST
// and GraphQL alike.
const (
	MaxCoins      = limits.MaxCoins
	MaxQueryBytes = limits.MaxQueryBytes
	maxSinceID    = limits.MaxSinceID
)

// searchArgs checks the coins, q and sinceId arguments that posts and the
// firehose share and returns their filter. Tickers are upper-cased and
// deduplicated; a well-formed ticker that no item mentions is fine (an
// empty page).
func searchArgs(coinArgs []string, q *string, sinceID *int64) (db.SearchFilter, error) {
	var f db.SearchFilter
	if coinArgs != nil {
		if len(coinArgs) == 0 || len(coinArgs) > MaxCoins {
			return f, apperr.Invalid("coins", "coins must hold 1 to %d tickers", MaxCoins)
		}
		for _, c := range coinArgs {
			t, ok := coins.Normalize(strings.TrimSpace(c), limits.TickerMaxLen)
			if !ok {
				return f, apperr.Invalid("coins", "coins must be tickers of 1 to %d letters or digits, such as BTC or eth; got %q", limits.TickerMaxLen, c)
			}
			f.Coins = append(f.Coins, t)
		}
		slices.Sort(f.Coins)
		f.Coins = slices.Compact(f.Coins)
	}
	if q != nil {
		text, err := textArg("q", q)
		if err != nil {
			return f, err
		}
		if strings.TrimSpace(text) == "" || len(text) > MaxQueryBytes {
			return f, apperr.Invalid("q", "q must be a search of 1 to %d bytes, not blank", MaxQueryBytes)
		}
		f.Query = text
	}
	if sinceID != nil {
		if *sinceID < 0 || *sinceID > maxSinceID {
			return f, apperr.Invalid("sinceId", "sinceId must be an integer from 0 to %d", maxSinceID)
		}
		f.SinceID = *sinceID
	}
	return f, nil
}
