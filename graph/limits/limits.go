// Package limits holds the bounds of the API that both of its faces
// enforce: the REST parameters of /v1 (rest/contract) and the GraphQL
// arguments (graph). Each is declared here once, so that the two cannot
// drift; schema.graphqls states them in its doc strings, which a test of
// this package checks against these values. It imports nothing of the
// project, so every layer above db may import it; it sits under graph, whose
// schema enforces these bounds. db, below graph, does not read it: a bound
// the store needs is passed by its caller (the importer's MaxTickerLen).
package limits

// Page sizes of the keyset-paginated lists (posts, briefs, firehose and
// the GraphQL connections), refused outside the range rather than clamped.
const (
	PageMin     = 1
	PageMax     = 100
	PageDefault = 50
)

// Stories: a page of them carries their first items, so its default is
// smaller than a list's; /v1/stories bounds it lower still, and the items
// shown per story.
const (
	StoriesPageDefault = 20
	StoriesPageMaxREST = 25
	StoryItemsMax      = 5
	StoryItemsDefault  = 3
)

// Sizes of the ETF lists, whose records are small and whose clients read
// whole windows of days.
const (
	EtfPageMax     = 500
	EtfPageDefault = 100
)

// The coins filter: at most MaxCoins tickers, each 1 to TickerMaxLen
// letters or digits.
const (
	MaxCoins     = 20
	TickerMaxLen = 12
)

// MaxQueryBytes bounds the full-text search q, in bytes of UTF-8: longer
// searches add cost without selecting better.
const MaxQueryBytes = 256

// MaxSinceID is the largest since_id (sinceId): ids are at most 2^53-1, the
// largest integer a JSON client reading numbers as doubles holds exactly.
const MaxSinceID = 1<<53 - 1

// MaxTextBytes bounds the free-text parameters (source, cursor, after) in
// bytes: enough for every label and cursor the service issues.
const MaxTextBytes = 256

// The funds filter of the per-fund ETF figures: at most MaxFunds tickers
// of 1 to FundTickerMaxLen letters or digits.
const (
	MaxFunds         = 50
	FundTickerMaxLen = 7
)
