package graph_test

import (
	"testing"

	"github.com/feedapi/feedapi/db/coins"
	"github.com/feedapi/feedapi/graph/limits"
)

// Every ticker the coin list derives fits the coins filter's bound, so
// that an item tagged from its texts can be asked for by its coin.
func TestEveryListedCoinFitsTheCoinsFilter(t *testing.T) {
	list := coins.Default().Coins()
	if len(list) == 0 {
		t.Fatal("the coin list is empty")
	}
	for _, c := range list {
		if !coins.ValidTicker(c.Ticker, limits.TickerMaxLen) {
			t.Errorf("ticker %q: longer than the coins filter's %d bytes", c.Ticker, limits.TickerMaxLen)
		}
	}
}
