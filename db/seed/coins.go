package seed

import coinlist "github.com/feedapi/feedapi/db/coins"

// tickers derives the coins column of a generated item from its texts, as
// every writer does: an empty array (never NULL, which means "not derived
// yet") when none is mentioned.
func tickers(texts ...string) []string {
	if t := coinlist.Extract(texts...); t != nil {
		return t
	}
	return []string{}
}
