package db

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/uptrace/bun"
)

// Post is one item of the curated feed.
type Post struct {
	bun.BaseModel `bun:"table:posts"`

	ID                int64           `bun:"id,pk"`
	Source            string          `bun:"source,notnull"`
	Username          string          `bun:"username,notnull"`
	Body              string          `bun:"body,notnull"`
	URL               *string         `bun:"url"`
	OriginalSourceURL *string         `bun:"original_source_url"`
	Raw               json.RawMessage `bun:"raw,type:jsonb,notnull"`
	CreatedAt         time.Time       `bun:"created_at,notnull"`
	// Coins are the tickers the post is about, sorted (nil: not derived yet).
	Coins []string `bun:"coins,array"`
	// StreamPos is the row's stream position (db/stream.go), assigned by
	// the database on insert; never written by the service.
	StreamPos int64 `bun:"stream_pos,scanonly"`
	// StoryID is the item's story (db/stories.go), set by the writer from
	// a StoryAssigner; nil for items written before stories existed.
	StoryID *int64 `bun:"story_id"`
	// ReceivedAt is the database's clock when the row was written (nil
	// before arrival times were kept); UpdatedAt when an import last
	// changed what it says (nil: never). Both are set by the database.
	ReceivedAt *time.Time `bun:"received_at,scanonly"`
	UpdatedAt  *time.Time `bun:"updated_at,scanonly"`
	// Redelivery is set by the reads after a stream position: whether
	// the row was first stored at or before that position, so that its
	// reader was given it before and this is its update (nil: not read
	// from a stream).
	Redelivery *bool `bun:"redelivery,scanonly"`
}

// Updated reports whether an import has changed the post since it was
// first stored; read after a stream position, whether this delivery is
// the update of a post the reader was given before: a post both first
// stored and changed after that position is new to the reader.
func (p *Post) Updated() bool {
	if p.Redelivery != nil {
		return *p.Redelivery
	}
	return p.UpdatedAt != nil
}

// UID is the stable cross-session identifier of the post.
func (p *Post) UID() string { return "cp_" + strconv.FormatInt(p.ID, 10) }

// Brief is the weekly Markdown digest of the curated feed.
type Brief struct {
	bun.BaseModel `bun:"table:briefs"`

	ID        int64     `bun:"id,pk"`
	WeekStart time.Time `bun:"week_start,type:date,notnull"`
	WeekEnd   time.Time `bun:"week_end,type:date,notnull"`
	PostCount int       `bun:"post_count,notnull"`
	Content   string    `bun:"content,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

// UID is the stable cross-session identifier of the brief.
func (b *Brief) UID() string { return "wb_" + strconv.FormatInt(b.ID, 10) }

// Pane is one of the fixed partitions of the firehose.
type Pane string

// The firehose panes, in the order the contract lists them.
const (
	PaneNews      Pane = "news"
	PaneCrypto    Pane = "crypto"
	PaneWire      Pane = "wire"
	PaneBlogs     Pane = "blogs"
	PaneTwitter   Pane = "twitter"
	PaneIansintel Pane = "iansintel"
)

// Panes lists every pane, sorted.
var Panes = []Pane{PaneBlogs, PaneCrypto, PaneIansintel, PaneNews, PaneTwitter, PaneWire}

// Valid reports whether p is one of the known panes.
func (p Pane) Valid() bool {
	for _, known := range Panes {
		if p == known {
			return true
		}
	}
	return false
}

// FirehoseMessage is one item of the unfiltered upstream news stream.
type FirehoseMessage struct {
	bun.BaseModel `bun:"table:firehose_messages"`

	ID                int64     `bun:"id,pk"`
	Pane              Pane      `bun:"pane,notnull"`
	Source            string    `bun:"source,notnull"`
	SourceName        *string   `bun:"source_name"`
	Name              *string   `bun:"name"`
	Username          *string   `bun:"username"`
	Title             *string   `bun:"title"`
	Body              *string   `bun:"body"`
	SummaryAI         *string   `bun:"summary_ai"`
	Important         bool      `bun:"important,notnull"`
	URL               *string   `bun:"url"`
	OriginalSourceURL *string   `bun:"original_source_url"`
	CreatedAt         time.Time `bun:"created_at,notnull"`
	// Coins are the tickers the message is about, sorted (nil: not derived yet).
	Coins []string `bun:"coins,array"`
	// StreamPos is the row's stream position (db/stream.go), assigned by
	// the database on insert; never written by the service.
	StreamPos int64 `bun:"stream_pos,scanonly"`
	// StoryID is the item's story (db/stories.go), set by the writer from
	// a StoryAssigner; nil for items written before stories existed.
	StoryID *int64 `bun:"story_id"`
	// ReceivedAt is the database's clock when the row was written (nil
	// before arrival times were kept); UpdatedAt when an import last
	// changed what it says (nil: never). Both are set by the database.
	ReceivedAt *time.Time `bun:"received_at,scanonly"`
	UpdatedAt  *time.Time `bun:"updated_at,scanonly"`
	// Redelivery is set by the reads after a stream position: whether
	// the row was first stored at or before that position, so that its
	// reader was given it before and this is its update (nil: not read
	// from a stream).
	Redelivery *bool `bun:"redelivery,scanonly"`
}

// Updated reports whether an import has changed the message since it was
// first stored; read after a stream position, whether this delivery is
// the update of a message the reader was given before: a message both first
// stored and changed after that position is new to the reader.
func (m *FirehoseMessage) Updated() bool {
	if m.Redelivery != nil {
		return *m.Redelivery
	}
	return m.UpdatedAt != nil
}

// UID is the stable cross-session identifier of the message.
func (m *FirehoseMessage) UID() string { return "tm_" + strconv.FormatInt(m.ID, 10) }

// Asset is an asset with US spot ETFs.
type Asset string

// The ETF assets, in the contract's order (also the etf_asset enum's order).
const (
	AssetBTC  Asset = "BTC"
	AssetETH  Asset = "ETH"
	AssetSOL  Asset = "SOL"
	AssetHYPE Asset = "HYPE"
)

// Assets lists every asset in the contract's order.
var Assets = []Asset{AssetBTC, AssetETH, AssetSOL, AssetHYPE}

// Valid reports whether a is one of the known assets.
func (a Asset) Valid() bool {
	for _, known := range Assets {
		if a == known {
			return true
		}
	}
	return false
}

// EtfFlow is one day of US spot-ETF flows for one asset, in raw US dollars.
type EtfFlow struct {
	bun.BaseModel `bun:"table:etf_flows"`

	Asset        Asset     `bun:"asset,pk,type:etf_asset"`
	FlowDate     time.Time `bun:"flow_date,pk,type:date"`
	NetInflow    Money     `bun:"net_inflow,type:numeric(20,2),notnull"`
	CumNetInflow Money     `bun:"cum_net_inflow,type:numeric(20,2),notnull"`
	NetAssets    Money     `bun:"net_assets,type:numeric(20,2),notnull"`
	ValueTraded  Money     `bun:"value_traded,type:numeric(20,2),notnull"`
	UpdatedAt    time.Time `bun:"updated_at,notnull"`
	// FundsComplete reports whether the figures the asset's funds
	// published for the day sum exactly to NetInflow; computed on read,
	// never written.
	FundsComplete bool `bun:"funds_complete,scanonly"`
}

// UID is the stable identifier of the record: etf_<ASSET>_<YYYY-MM-DD>.
func (f *EtfFlow) UID() string {
	return "etf_" + string(f.Asset) + "_" + f.FlowDate.Format(time.DateOnly)
}

// EtfFund is one US spot ETF of an asset.
type EtfFund struct {
	bun.BaseModel `bun:"table:etf_funds"`

	// Ticker is the exchange symbol, 1 to 7 upper-case letters or digits.
	Ticker     string    `bun:"ticker,pk"`
	Asset      Asset     `bun:"asset,type:etf_asset,notnull"`
	Issuer     string    `bun:"issuer,notnull"`
	Name       string    `bun:"name,notnull"`
	Fee        Percent   `bun:"fee,type:numeric(5,2),notnull"` // yearly, in percent
	LaunchDate time.Time `bun:"launch_date,type:date,notnull"`
	Exchange   string    `bun:"exchange,notnull"`
}

// EtfFundFlow is one fund's figures of one trading day, in raw US dollars
// and coins. A day without a figure has no record.
type EtfFundFlow struct {
	bun.BaseModel `bun:"table:etf_fund_flows"`

	Ticker    string    `bun:"ticker,pk"`
	FlowDate  time.Time `bun:"flow_date,pk,type:date"`
	NetInflow Money     `bun:"net_inflow,type:numeric(20,2),notnull"`
	// NetAssets, ValueTraded and Holdings are nil where not published.
	NetAssets   *Money      `bun:"net_assets,type:numeric(20,2)"`
	ValueTraded *Money      `bun:"value_traded,type:numeric(20,2)"`
	Holdings    *CoinAmount `bun:"holdings,type:numeric(18,8)"` // coins held at the end of the day
	UpdatedAt   time.Time   `bun:"updated_at,notnull"`
	// Asset is the fund's asset, which the database sets from etf_funds;
	// never written by the service.
	Asset Asset `bun:"asset,scanonly"`
}

// UID is the stable identifier of the record: etffund_<TICKER>_<YYYY-MM-DD>.
func (f *EtfFundFlow) UID() string {
	return "etffund_" + f.Ticker + "_" + f.FlowDate.Format(time.DateOnly)
}

// Tier is the access level of an API key.
type Tier string

// The key tiers.
const (
	TierFree     Tier = "free"
	TierPro      Tier = "pro"
	TierInternal Tier = "internal"
)

// Valid reports whether t is a known tier.
func (t Tier) Valid() bool { return t == TierFree || t == TierPro || t == TierInternal }

// APIKey is an issued key. Only the SHA-256 hash of the secret is stored.
type APIKey struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID        int64      `bun:"id,pk,autoincrement"`
	KeyHash   []byte     `bun:"key_hash,notnull"`
	Prefix    string     `bun:"prefix,notnull"`
	Tier      Tier       `bun:"tier,notnull"`
	Name      string     `bun:"name,notnull"`
	CreatedAt time.Time  `bun:"created_at,notnull,default:current_timestamp"`
	RevokedAt *time.Time `bun:"revoked_at"`
}
