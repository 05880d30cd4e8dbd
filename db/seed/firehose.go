package seed

import (
	"context"
	"math"
	"math/rand/v2"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"github.com/feedapi/feedapi/db"
)

// fhFormat is how a firehose source's items are shaped.
type fhFormat int

const (
	fmtArticle fhFormat = iota // news and crypto outlets: title, lede, byline
	fmtRelease                 // press-release wires
	fmtBlog                    // company and research blogs
	fmtTweet                   // X accounts: no title
	fmtIntel                   // the service's own analyst notes
	fmtFed                     // Federal Reserve Board press releases (rare)
	fmtCFTC                    // CFTC press releases (rare)
)

// fhSource is one upstream source of the firehose.
type fhSource struct {
	pane   db.Pane
	key    string // firehose_messages.source
	name   string // source_name
	weight float64
	format fhFormat
	mix    *mix
	style  postStyle // for tweets
	handle string    // X handle, for tweets
	outlet string    // outlet key whose articles an outlet's account links
	focus  string
	rare   int // exact number of rows for rare sources (weight is then 0)
}

// fhSources lists every firehose source. Twitter sources carry the "tw:"
// prefix, blogs "blog:". Two official sources are rare on purpose: a
// handful of rows however large the data set, so that substring searches on
// them are selective.
var fhSources = []fhSource{
	{db.PaneNews, "reuters", "Reuters", 30, fmtArticle, &mixDeskNews, 0, "", "", "", 0},
	{db.PaneNews, "bloomberg", "Bloomberg", 28, fmtArticle, &mixDeskNews, 0, "", "", "", 0},
	{db.PaneNews, "cnbc", "CNBC", 12, fmtArticle, &mixDeskNews, 0, "", "", "", 0},
	{db.PaneNews, "wsj", "The Wall Street Journal", 10, fmtArticle, &mixDeskNews, 0, "", "", "", 0},
	{db.PaneNews, "ft", "Financial Times", 8, fmtArticle, &mixDeskNews, 0, "", "", "", 0},
	{db.PaneNews, "apnews", "AP News", 6, fmtArticle, &mixDeskNews, 0, "", "", "", 0},
	{db.PaneNews, "nikkei", "Nikkei Asia", 4, fmtArticle, &mixAsia, 0, "", "", "", 0},
	{db.PaneNews, "federalreserve", "Federal Reserve Board", 0, fmtFed, nil, 0, "", "", "", 5},

	{db.PaneCrypto, "coindesk", "CoinDesk", 30, fmtArticle, &mixArticle, 0, "", "", "", 0},
	{db.PaneCrypto, "theblock", "The Block", 25, fmtArticle, &mixArticle, 0, "", "", "", 0},
	{db.PaneCrypto, "cointelegraph", "Cointelegraph", 22, fmtArticle, &mixArticle, 0, "", "", "", 0},
	{db.PaneCrypto, "decrypt", "Decrypt", 12, fmtArticle, &mixArticle, 0, "", "", "", 0},
	{db.PaneCrypto, "blockworks", "Blockworks", 8, fmtArticle, &mixArticle, 0, "", "", "", 0},
	{db.PaneCrypto, "dlnews", "DL News", 6, fmtArticle, &mixArticle, 0, "", "", "", 0},
	{db.PaneCrypto, "bitcoinmagazine", "Bitcoin Magazine", 5, fmtArticle, &mixBitcoinish, 0, "", "", "BTC", 0},

	{db.PaneWire, "prnewswire", "PR Newswire", 40, fmtRelease, &mixPress, 0, "", "", "", 0},
	{db.PaneWire, "businesswire", "Business Wire", 30, fmtRelease, &mixPress, 0, "", "", "", 0},
	{db.PaneWire, "globenewswire", "GlobeNewswire", 25, fmtRelease, &mixPress, 0, "", "", "", 0},
	{db.PaneWire, "accesswire", "ACCESS Newswire", 5, fmtRelease, &mixPress, 0, "", "", "", 0},
	{db.PaneWire, "cftc", "CFTC Press Releases", 0, fmtCFTC, nil, 0, "", "", "", 7},

	{db.PaneBlogs, "blog:coinbase", "Coinbase Blog", 20, fmtBlog, nil, 0, "", "", "", 0},
	{db.PaneBlogs, "blog:binance", "Binance Blog", 15, fmtBlog, nil, 0, "", "", "", 0},
	{db.PaneBlogs, "blog:ethereum", "Ethereum Foundation Blog", 15, fmtBlog, nil, 0, "", "", "", 0},
	{db.PaneBlogs, "blog:kraken", "Kraken Blog", 12, fmtBlog, nil, 0, "", "", "", 0},
	{db.PaneBlogs, "blog:galaxy", "Galaxy Research", 10, fmtBlog, nil, 0, "", "", "", 0},
	{db.PaneBlogs, "blog:a16zcrypto", "a16z crypto", 8, fmtBlog, nil, 0, "", "", "", 0},
	{db.PaneBlogs, "blog:chainlink", "Chainlink Blog", 8, fmtBlog, nil, 0, "", "", "", 0},
	{db.PaneBlogs, "blog:solana", "Solana News", 7, fmtBlog, nil, 0, "", "", "", 0},
	{db.PaneBlogs, "blog:paradigm", "Paradigm", 5, fmtBlog, nil, 0, "", "", "", 0},

	{db.PaneTwitter, "tw:WatcherGuru", "Watcher.Guru", 25, fmtTweet, &mixBreaking, styleJustIn, "WatcherGuru", "", "", 0},
	{db.PaneTwitter, "tw:tier10k", "db", 18, fmtTweet, &mixMacro, styleStar, "tier10k", "", "", 0},
	{db.PaneTwitter, "tw:whale_alert", "Whale Alert", 14, fmtTweet, &mixWhale, styleWhale, "whale_alert", "", "", 0},
	{db.PaneTwitter, "tw:lookonchain", "Lookonchain", 10, fmtTweet, &mixOnchain, styleOnchain, "lookonchain", "", "", 0},
	{db.PaneTwitter, "tw:WuBlockchain", "Wu Blockchain", 8, fmtTweet, &mixAsia, styleShort, "WuBlockchain", "", "", 0},
	{db.PaneTwitter, "tw:Cointelegraph", "Cointelegraph", 7, fmtTweet, &mixArticle, styleArticle, "Cointelegraph", "cointelegraph", "", 0},
	{db.PaneTwitter, "tw:EmberCN", "余烬", 6, fmtTweet, &mixOnchain, styleOnchain, "EmberCN", "", "", 0},
	{db.PaneTwitter, "tw:CoinDesk", "CoinDesk", 6, fmtTweet, &mixArticle, styleArticle, "CoinDesk", "coindesk", "", 0},
	{db.PaneTwitter, "tw:solidintel_x", "Solid Intel 📡", 5, fmtTweet, &mixBreaking, styleLatest, "solidintel_x", "", "", 0},
	{db.PaneTwitter, "tw:TheBlock__", "The Block", 5, fmtTweet, &mixArticle, styleArticle, "TheBlock__", "theblock", "", 0},
	{db.PaneTwitter, "tw:BitcoinMagazine", "Bitcoin Magazine", 4, fmtTweet, &mixBitcoinish, styleArticle, "BitcoinMagazine", "bitcoinmagazine", "BTC", 0},
	{db.PaneTwitter, "tw:glassnode", "glassnode", 3, fmtTweet, &mixMetric, styleMetric, "glassnode", "", "", 0},
	{db.PaneTwitter, "tw:PeckShieldAlert", "PeckShieldAlert", 2, fmtTweet, &mixSecurity, styleWire, "PeckShieldAlert", "", "", 0},

	{db.PaneIansintel, "iansintel", "Ian's Intel", 60, fmtIntel, &mixIntel, 0, "", "", "", 0},
	{db.PaneIansintel, "iansintel:flows", "Ian's Intel · Flows", 25, fmtIntel, &mixIntel, 0, "", "", "", 0},
	{db.PaneIansintel, "iansintel:macro", "Ian's Intel · Macro", 15, fmtIntel, &mixDeskNews, 0, "", "", "", 0},
}

// paneProfile holds each pane's share of the stream and its rates of AI
// summaries and important flags.
var paneProfile = map[db.Pane]struct{ share, summary, important float64 }{
	db.PaneTwitter:   {34, 0.30, 0.07},
	db.PaneCrypto:    {24, 0.60, 0.07},
	db.PaneNews:      {18, 0.65, 0.09},
	db.PaneWire:      {9, 0.50, 0.025},
	db.PaneBlogs:     {5, 0.70, 0.02},
	db.PaneIansintel: {10, 0.90, 0.22},
}

var firehoseColumns = []string{"id", "pane", "source", "source_name", "name", "username", "title", "body",
	"summary_ai", "important", "url", "original_source_url", "created_at", "coins", "story_id"}

// fhGen streams firehose messages in id order; it implements
// pgx.CopyFromSource.
type fhGen struct {
	ctx      context.Context
	r        *rand.Rand
	nr       *newsroom
	tl       *timeline
	n, i     int
	paneW    weighted
	panes    [][]int // source indexes per pane, in paneW order
	srcW     []weighted
	rare     []rareSlot
	progress *progress
	row      []any
	err      error
	recent   recentStories
	stories  *storyTracker // nil: the writer assigns stories (Live)
	received *arrivals     // nil: the database's clock (Live); see receive
}

// receive makes the generator write received_at, drawn by a, after the
// columns of firehoseColumns.
func (g *fhGen) receive(a *arrivals) {
	g.received = a
	g.row = make([]any, len(firehoseColumns)+1)
}

// rareSlot places one row of a rare source at a fixed position.
type rareSlot struct{ pos, src int }

func newFirehoseGen(ctx context.Context, seed uint64, nr *newsroom, start, until time.Time, n int, p *progress) *fhGen {
	g := &fhGen{
		ctx:      ctx,
		r:        rand.New(rand.NewPCG(seed, streamFirehose)),
		nr:       nr,
		tl:       newTimeline(rand.New(rand.NewPCG(seed, streamTimeline+1)), start, until, n),
		n:        n,
		progress: p,
		row:      make([]any, len(firehoseColumns)),
		recent:   newRecentStories(seed, streamFirehose),
	}
	var shares []float64
	for _, pane := range []db.Pane{db.PaneNews, db.PaneCrypto, db.PaneWire, db.PaneBlogs, db.PaneTwitter, db.PaneIansintel} {
		shares = append(shares, paneProfile[pane].share)
		var idx []int
		var ws []float64
		for i := range fhSources {
			if fhSources[i].pane == pane && fhSources[i].weight > 0 {
				idx = append(idx, i)
				ws = append(ws, fhSources[i].weight)
			}
		}
		g.panes = append(g.panes, idx)
		g.srcW = append(g.srcW, newWeighted(ws...))
	}
	g.paneW = newWeighted(shares...)
	// Rare sources: k rows evenly spread over the stream, never two on
	// the same position.
	taken := map[int]bool{}
	for i := range fhSources {
		k := fhSources[i].rare
		for j := 0; j < k; j++ {
			pos := int((float64(j) + 0.5) * float64(n) / float64(k))
			for taken[pos] {
				pos++
			}
			if pos < n {
				taken[pos] = true
				g.rare = append(g.rare, rareSlot{pos: pos, src: i})
			}
		}
	}
	sortSlots(g.rare)
	return g
}

// sortSlots orders rare slots by position (insertion sort: a dozen items).
func sortSlots(s []rareSlot) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].pos < s[j-1].pos; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Next generates the next message.
func (g *fhGen) Next() bool {
	if g.i >= g.n || g.err != nil {
		return false
	}
	if g.i%4096 == 0 {
		if err := g.ctx.Err(); err != nil {
			g.err = err
			return false
		}
	}
	si := -1
	if len(g.rare) > 0 && g.rare[0].pos == g.i {
		si = g.rare[0].src
		g.rare = g.rare[1:]
	}
	g.i++
	g.generate(int64(g.i), si)
	g.progress.tick(g.i)
	return true
}

// Values returns the current row.
func (g *fhGen) Values() ([]any, error) { return g.row, nil }

// Err reports why generation stopped early.
func (g *fhGen) Err() error { return g.err }

// nullable maps "" to SQL NULL.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (g *fhGen) generate(id int64, si int) {
	g.generateAt(id, si, g.tl.next(g.r))
}

// generateAt writes into g.row the message with this id created at t, of
// source si (a weighted pick when negative); the seed's stream and the live
// publisher both go through it.
func (g *fhGen) generateAt(id int64, si int, t time.Time) {
	r := g.r
	if si < 0 {
		p := g.paneW.pick(r)
		si = g.panes[p][g.srcW[p].pick(r)]
	}
	src := &fhSources[si]
	prof := paneProfile[src.pane]

	var m struct{ name, username, title, body, summary, url, orig string }
	weight := 0.1
	switch src.format {
	case fmtBlog:
		m.title, m.body, m.name, m.url, m.summary = blogPost(r, src.key, t)
	case fmtFed:
		m.title, m.body, m.url = fedRelease(r, t)
		m.summary = m.body
		weight = 0.8
	case fmtCFTC:
		m.title, m.body, m.url = cftcRelease(r, t)
		m.summary = m.body
		weight = 0.4
	default:
		// The story is drawn even when an earlier one is retold instead,
		// so that the random stream, and every other row, stays the same.
		s := g.nr.story(r, t, src.mix.pick(r), src.focus)
		if old, retold := g.recent.pick(t); retold {
			s = old
		} else {
			g.recent.add(s, t)
		}
		weight = s.weight
		m.summary = s.summary
		switch src.format {
		case fmtArticle:
			m.title = s.title
			m.url = articleURL(r, src.key, t, s.title, s.cat)
			if chance(r, 0.75) {
				m.name = byline(r)
			}
			paywalled := src.key == "bloomberg" || src.key == "wsj" || src.key == "ft"
			if !paywalled || chance(r, 0.6) {
				m.body = s.lede
				if s.more != "" && chance(r, 0.5) {
					m.body += " " + s.more
				}
			}
			if s.link != "" {
				m.orig = s.link
			}
		case fmtRelease:
			m.title, m.body, m.name, m.url = pressRelease(r, src.key, t, &s)
		case fmtTweet:
			m.name = src.name
			m.username = src.handle
			m.url = tweetURL(r, src.handle, t)
			m.body, m.orig = renderTweet(r, src, &s, t)
		case fmtIntel:
			m.title = s.title
			m.body = intelNote(r, &s)
			if s.link != "" {
				m.orig = s.link
			} else {
				key := pick(r, deskOutlets[s.cat])
				m.orig = articleURL(r, key, t, s.title, s.cat)
			}
		}
	}
	important := chance(r, math.Min(0.95, prof.important*(0.4+3*weight)))
	if !chance(r, prof.summary) {
		m.summary = ""
	}

	g.row[0] = id
	g.row[1] = string(src.pane)
	g.row[2] = src.key
	g.row[3] = src.name
	g.row[4] = nullable(m.name)
	g.row[5] = nullable(m.username)
	g.row[6] = nullable(m.title)
	g.row[7] = nullable(m.body)
	g.row[8] = nullable(m.summary)
	g.row[9] = important
	g.row[10] = nullable(m.url)
	g.row[11] = nullable(m.orig)
	g.row[12] = t
	g.row[13] = tickers(m.title, m.body, m.summary)
	g.row[14] = nil
	if g.stories != nil {
		g.row[14] = g.stories.assign(id, t, m.title, m.body)
	}
	if g.received != nil {
		delay, ok := formatDelay[src.format]
		if !ok {
			delay = paneDelay[src.pane]
		}
		g.row[15] = g.received.at(src.key, delay, t)
	}
}

// renderTweet writes an account's tweet for the story and the link it
// carries ("" for none).
func renderTweet(r *rand.Rand, src *fhSource, s *story, t time.Time) (text, orig string) {
	switch src.style {
	case styleJustIn, styleLatest:
		mark := s.flag
		if mark == "" {
			mark = strings.TrimSpace(s.emoji)
		}
		prefix := "JUST IN: "
		if src.style == styleLatest {
			prefix = "🚨 "
		}
		text = prefix + strings.TrimSpace(mark+" "+s.title)
		if chance(r, 0.25) {
			orig = articleURL(r, pick(r, deskOutlets[s.cat]), t, s.title, s.cat)
		}
	case styleStar:
		text = s.flash
		if !strings.HasPrefix(text, "*") {
			text = "*" + strings.ToUpper(text)
		}
	case styleWhale, styleMetric:
		text, orig = s.flash, s.link
	case styleOnchain:
		text = s.flash
		if src.handle == "EmberCN" {
			text = emberText(r, s)
		}
	case styleShort:
		text = upperFirst(s.summary)
		if chance(r, 0.5) {
			orig = articleURL(r, pick(r, deskOutlets[s.cat]), t, s.title, s.cat)
		}
	case styleWire: // security alerts
		text = "#PeckShieldAlert " + s.flash
	default: // outlets tweeting their headlines
		text = s.title
		if s.emoji != "" && chance(r, 0.4) {
			text = strings.TrimSpace(s.emoji) + " " + text
		}
		orig = articleURL(r, src.outlet, t, s.title, s.cat)
	}
	if orig != "" {
		text += " " + orig
	}
	return text, orig
}

// emberText writes an on-chain observation in Chinese, as EmberCN does.
func emberText(r *rand.Rand, s *story) string {
	if s.kind != kWhaleTrade {
		return s.flash
	}
	hours := strconv.Itoa(1 + r.IntN(12))
	wan := func(usd float64) string { return commas(int64(usd/1e4)) + " 万美元" }
	v := around(r, 9e6, 0.8)
	switch r.IntN(3) {
	case 0:
		return "一巨鲸在过去 " + hours + " 小时从 " + pick(r, exchanges[:6]) + " 提出了 " + s.sym + "，价值约 " + wan(v) + "。\n\n地址：" + shortAddr(r)
	case 1:
		return "这个地址刚刚又买入了 " + s.sym + "：花费 " + wan(v) + " USDC。\n它在过去一周累计买入 " + wan(v*between(r, 2, 6)) + "。"
	default:
		return "一位休眠多年的早期持有者刚刚将 " + s.sym + " 转入交易所，价值 " + wan(v) + "，可能准备卖出。"
	}
}

// intelNote writes the service's own analyst note on a story.
func intelNote(r *rand.Rand, s *story) string {
	takes := []string{
		"Our read: constructive for %s near term, but positioning is getting crowded.",
		"Our read: mostly noise for %s; we would not chase the move.",
		"Our read: a short-term headwind for %s until flows stabilise.",
		"Our read: watch whether spot volume confirms; perp-led moves in %s have faded all month.",
		"Our read: this matters more for sentiment than for %s fundamentals.",
	}
	sym := s.sym
	if sym == "" {
		sym = "majors"
	}
	note := s.lede + " " + strings.Replace(pick(r, takes), "%s", sym, 1)
	if chance(r, 0.5) && s.more != "" {
		note = s.lede + " " + s.more + " " + strings.Replace(pick(r, takes), "%s", sym, 1)
	}
	return note
}

// pressRelease writes a wire item: a title-cased headline and a dateline.
func pressRelease(r *rand.Rand, key string, t time.Time, s *story) (title, body, company, url string) {
	company = s.company
	if company == "" {
		company = pick(r, fictionalStartups)
	}
	title = s.prTitle
	if title == "" {
		title = titleCase(s.title)
	}
	city := pick(r, cities)
	dateline := apDate(t) + ", " + strconv.Itoa(t.Year())
	slug := slugify(title, 100)
	switch key {
	case "businesswire":
		body = city + "--(BUSINESS WIRE)--" + s.lede
		url = "https://www.businesswire.com/news/home/" + t.Format("20060102") + strconv.Itoa(100000+r.IntN(900000)) + "/en/" + neturl.PathEscape(strings.ReplaceAll(title, " ", "-"))
	case "globenewswire":
		body = city + ", " + dateline + " (GLOBE NEWSWIRE) -- " + s.lede
		url = "https://www.globenewswire.com/news-release/" + t.Format("2006/01/02") + "/" + strconv.Itoa(3100000+r.IntN(200000)) + "/0/en/" + neturl.PathEscape(strings.ReplaceAll(title, " ", "-")) + ".html"
	case "accesswire":
		body = city + ", " + dateline + " /ACCESS Newswire/ -- " + s.lede
		url = "https://www.accessnewswire.com/newsroom/en/blockchain-and-cryptocurrency/" + slug + "-" + strconv.Itoa(1000000+r.IntN(100000))
	default:
		body = city + ", " + dateline + " /PRNewswire/ -- " + s.lede
		url = "https://www.prnewswire.com/news-releases/" + slug + "-30" + strconv.Itoa(2500000+r.IntN(400000)) + ".html"
	}
	if s.more != "" {
		body += " " + s.more
	}
	return title, body, company, url
}

// fedRelease writes a Federal Reserve Board press release (a rare source).
func fedRelease(r *rand.Rand, t time.Time) (title, body, url string) {
	kinds := []struct{ title, body, path string }{
		{"Federal Reserve Board announces approval of application by Keystone Trust",
			"The Federal Reserve Board on " + apDate(t) + " announced its approval of the application by Keystone Trust to become a member of the Federal Reserve System.", "orders"},
		{"Agencies issue statement on banks' custody of crypto-assets",
			"Federal bank regulatory agencies issued a statement outlining risk-management considerations for banks that safeguard crypto-assets for customers.", "bcreg"},
		{"Federal Reserve Board withdraws guidance on banks' crypto-asset activities",
			"The Federal Reserve Board announced it is withdrawing guidance for banks related to their crypto-asset and stablecoin activities and will monitor such activities through the normal supervisory process.", "bcreg"},
		{"Federal Reserve Board releases minutes of discount rate meetings",
			"The Federal Reserve Board released the minutes of its discount rate meetings held by the Board of Directors of the Federal Reserve Banks.", "monetary"},
	}
	k := pick(r, kinds)
	return k.title, k.body, "https://www.federalreserve.gov/newsevents/pressreleases/" + k.path + t.Format("20060102") + "a.htm"
}

// cftcRelease writes a CFTC press release (a rare source).
func cftcRelease(r *rand.Rand, t time.Time) (title, body, url string) {
	firm := pick(r, []string{"Vantara Markets", "Northwind Digital Exchange", "Bluefin Derivatives", "Orchid Futures"})
	fine := usdWords(math.Round(between(r, 0.5e6, 12e6)/1e5) * 1e5)
	kinds := []struct{ title, body string }{
		{"CFTC Orders " + firm + " to Pay " + fine + " for Offering Illegal Off-Exchange Digital Asset Derivatives",
			"The Commodity Futures Trading Commission issued an order filing and settling charges against " + firm + " for offering leveraged digital asset transactions to US customers without registering."},
		{"CFTC Staff Issues No-Action Letter Regarding Tokenized Collateral",
			"The CFTC's Market Participants Division issued a no-action letter allowing futures commission merchants to accept certain tokenized money market fund shares as customer margin."},
		{"CFTC Announces Digital Asset Markets Advisory Committee Meeting",
			"The CFTC will hold a public meeting of its digital asset markets subcommittee on " + apDate(t.AddDate(0, 0, 21)) + " to discuss perpetual contracts and 24/7 trading."},
	}
	k := pick(r, kinds)
	return k.title, k.body, "https://www.cftc.gov/PressRoom/PressReleases/" + strconv.Itoa(9000+r.IntN(900)) + "-" + t.Format("06")
}
