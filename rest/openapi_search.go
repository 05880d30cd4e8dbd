package rest

import "strconv"

// oaPatternCoins is the coins parameter: comma-separated tickers of 1 to
// 12 letters or digits, in any case, with optional spaces around each.
const oaPatternCoins = `^\s*[A-Za-z0-9]{1,12}\s*(,\s*[A-Za-z0-9]{1,12}\s*)*$`

// oaWithSearchParameters adds the parameters of coins, full-text search
// and since_id (issue 14, issue 11 item 6) to params.
func oaWithSearchParameters(params map[string]*oaParameter) map[string]*oaParameter {
	query := func(name, description string, s *oaSchema) *oaParameter {
		return &oaParameter{Name: name, In: "query", Description: description, Schema: s}
	}
	params["Coins"] = query("coins", "Only items about any of these coins: a comma-separated list of 1 to 20 tickers (`BTC`, `btc,eth`), "+
		"case-insensitive, each 1 to 12 letters or digits. `/v1/sources` lists the tickers that occur; a ticker no item mentions gives an empty page, "+
		"not an error. Anything else gives 400 naming `coins`.",
		&oaSchema{Type: "string", Pattern: oaPatternCoins, Examples: []any{"BTC", "btc,eth,sol"}})
	params["PostQuery"] = query("q", "Full-text search of the body (PostgreSQL `websearch_to_tsquery`, English stemming): words (all must occur), "+
		"`\"quoted phrases\"`, `-excluded` words and `or`. Results stay newest first and combine with every other filter. "+
		"1 to "+strconv.Itoa(256)+" bytes, not blank; else 400 naming `q`. A search of stop words only (`the`) matches nothing.",
		&oaSchema{Type: "string", MinLength: oaPtr[int64](1), MaxLength: oaPtr[int64](256), Examples: []any{"etf inflows", `"spot bitcoin" -ether`}})
	params["FirehoseQuery"] = query("q", "Full-text search of the title, body and AI summary together (PostgreSQL `websearch_to_tsquery`, English stemming): "+
		"words (all must occur), `\"quoted phrases\"`, `-excluded` words and `or`. Results stay newest first and combine with every other filter. "+
		"1 to "+strconv.Itoa(256)+" bytes, not blank; else 400 naming `q`. A search of stop words only (`the`) matches nothing.",
		&oaSchema{Type: "string", MinLength: oaPtr[int64](1), MaxLength: oaPtr[int64](256), Examples: []any{"etf inflows", `"spot bitcoin" -ether`}})
	params["SinceID"] = query("since_id", "Only items with an `id` larger than this one, newest first and paginated like the list (the cursor "+
		"keeps the bound). Ids come from the imported data and concurrent writers commit out of order, so an item with a smaller `id` than "+
		"one already seen may still appear later and is then missed: to get exactly what is new, poll with `after`. "+
		"An integer from 0 to 9007199254740991; else 400 naming `since_id`.",
		&oaSchema{Type: "integer", Format: "int64", Minimum: oaPtr[int64](0), Maximum: oaPtr[int64](maxSinceID)})
	params["After"] = query("after", "Only items that became visible after this stream position: the `meta.position` of an earlier answer of "+
		"this endpoint with the same filters, or the `id` of an event of its stream. The page then holds those items newest first in the order "+
		"they became visible (not by `id`), `next_cursor` walks the rest of them, and `meta.position` of the first page is where the next poll "+
		"starts: polling so, each answer holds exactly the items that became visible since the one before, none twice and none skipped, "+
		"whatever their ids and however writers interleave. Anything else gives 400 naming `after`.",
		&oaSchema{Type: "string", MinLength: oaPtr[int64](1), MaxLength: oaPtr[int64](256)})
	return params
}

// oaCoins is the coins field of posts and firehose messages.
func oaCoins() *oaSchema {
	return &oaSchema{Type: "array", UniqueItems: true, Items: &oaSchema{Type: "string", Pattern: `^[A-Z0-9]{1,12}$`},
		Description: "Tickers of the coins the item is about (cashtags such as `$BTC`, and the names and tickers of the most traded assets), sorted; `[]` when none. Always sent; not listed as required so that answers of v1 before it stay valid."}
}
