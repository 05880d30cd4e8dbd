package seed

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// postStyle is how a curated channel writes its posts.
type postStyle int

const (
	styleWire    postStyle = iota // "BLOOMBERG: HEADLINE IN CAPITALS" + link
	styleJustIn                   // "JUST IN: 🇺🇸 Headline"
	styleStar                     // "*TERSE TERMINAL-STYLE HEADLINE"
	styleArticle                  // bold headline, paragraphs, link to own article
	styleShort                    // one-paragraph summary and link
	styleOnchain                  // on-chain observation with an address and a tweet link
	styleWhale                    // Whale Alert transfer line and explorer link
	styleLatest                   // "🇺🇸 LATEST: Headline"
	styleMetric                   // Glassnode alert and chart link
)

// curatedSource is a Telegram channel the curated feed follows.
type curatedSource struct {
	label    string // posts.source
	handle   string // Telegram username: posts.username and the permalink path
	title    string // channel title
	chatID   int64
	style    postStyle
	mix      *mix
	focus    string  // ticker the channel concentrates on
	own      string  // outlet key of the channel's own articles
	link     float64 // share of posts that link an original source
	firstMsg int64   // message id of the channel's first post in the period
	subs     float64 // subscribers
}

// curatedSources is ordered by volume: weights fall off as 1/rank^1.15,
// so two channels carry half of the feed and the tail posts rarely.
var curatedSources = []curatedSource{
	{"TreeNews", "TreeNewsFeed", "Tree News", -1001520396442, styleWire, &mixGeneral, "", "", 0.85, 48210, 96000},
	{"WatcherGuru", "WatcherGuru", "Watcher.Guru", -1001356442310, styleJustIn, &mixBreaking, "", "", 0.35, 61880, 482000},
	{"DBNews", "dbnewsfeed", "DB News", -1001637003421, styleStar, &mixMacro, "", "", 0.45, 90312, 61000},
	{"WuBlockchain", "wublockchainenglish", "Wu Blockchain News", -1001405213677, styleShort, &mixAsia, "", "", 0.75, 23407, 121000},
	{"Cointelegraph", "cointelegraph", "Cointelegraph", -1001093744389, styleArticle, &mixArticle, "", "cointelegraph", 0.97, 118233, 390000},
	{"CoinDesk", "coindesk", "CoinDesk", -1001182931035, styleArticle, &mixArticle, "", "coindesk", 0.98, 37120, 86000},
	{"TheBlock", "theblock_news", "The Block", -1001354112095, styleArticle, &mixArticle, "", "theblock", 0.98, 29811, 41000},
	{"Lookonchain", "lookonchainchannel", "Lookonchain", -1001755321468, styleOnchain, &mixOnchain, "", "", 0.9, 15522, 72000},
	{"WhaleAlert", "whale_alert_io", "Whale Alert", -1001309043988, styleWhale, &mixWhale, "", "", 1, 210533, 231000},
	{"Unfolded", "unfolded", "Unfolded", -1001719260045, styleLatest, &mixBreaking, "", "", 0.2, 8820, 55000},
	{"Glassnode", "glassnode_alerts", "Glassnode Alerts", -1001426014890, styleMetric, &mixMetric, "", "", 1, 40116, 30000},
	{"BitcoinMagazine", "bitcoinmagazine", "Bitcoin Magazine", -1001204811743, styleArticle, &mixBitcoinish, "BTC", "bitcoinmagazine", 0.95, 12077, 45000},
}

// tgMessage is the raw payload of a curated post: a Telegram channel
// message as the collector stored it.
type tgMessage struct {
	MessageID       int64         `json:"message_id"`
	Date            int64         `json:"date"`
	Chat            tgChat        `json:"chat"`
	AuthorSignature string        `json:"author_signature,omitempty"`
	Text            string        `json:"text"`
	Entities        []tgEntity    `json:"entities,omitempty"`
	LinkPreview     *tgLinkOption `json:"link_preview_options,omitempty"`
	EditDate        int64         `json:"edit_date,omitempty"`
	Views           int64         `json:"views"`
	Forwards        int64         `json:"forwards"`
}

type tgChat struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"`
	Title    string `json:"title"`
	Username string `json:"username"`
}

type tgEntity struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
}

type tgLinkOption struct {
	URL           string `json:"url"`
	PreferLarge   bool   `json:"prefer_large_media,omitempty"`
	ShowAboveText bool   `json:"show_above_text,omitempty"`
}

// entities finds Telegram's automatic entities (URLs, hashtags, cashtags)
// in text, with offsets in UTF-16 code units, plus a bold first line.
func entities(text string, boldFirstLine bool) []tgEntity {
	var out []tgEntity
	if boldFirstLine {
		first, _, _ := strings.Cut(text, "\n")
		out = append(out, tgEntity{Type: "bold", Offset: 0, Length: utf16Len(first)})
	}
	u16 := 0
	for i := 0; i < len(text); {
		c := text[i]
		atWordStart := i == 0 || text[i-1] == ' ' || text[i-1] == '\n' || text[i-1] == '('
		switch {
		case atWordStart && strings.HasPrefix(text[i:], "https://"):
			j := i
			for j < len(text) && text[j] != ' ' && text[j] != '\n' {
				j++
			}
			out = append(out, tgEntity{Type: "url", Offset: u16, Length: utf16Len(text[i:j])})
			u16 += utf16Len(text[i:j])
			i = j
			continue
		case atWordStart && (c == '#' || c == '$') && i+1 < len(text) && isLetter(text[i+1]):
			j := i + 1
			for j < len(text) && (isLetter(text[j]) || text[j] >= '0' && text[j] <= '9' || text[j] == '_') {
				j++
			}
			typ := "hashtag"
			if c == '$' {
				typ = "cashtag"
			}
			out = append(out, tgEntity{Type: typ, Offset: u16, Length: j - i})
			u16 += j - i
			i = j
			continue
		}
		if c < 0x80 {
			u16++
			i++
			continue
		}
		// Multi-byte rune: count its UTF-16 length.
		j := i + 1
		for j < len(text) && text[j]&0xC0 == 0x80 {
			j++
		}
		u16 += utf16Len(text[i:j])
		i = j
	}
	return out
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

// postGen streams curated posts in id order; it implements
// pgx.CopyFromSource.
type postGen struct {
	ctx      context.Context
	r        *rand.Rand
	nr       *newsroom
	tl       *timeline
	until    time.Time
	n, i     int
	srcW     weighted
	msgID    []int64
	weeks    *weekStats
	progress *progress
	row      []any
	err      error
	recent   recentStories
	stories  *storyTracker // nil: the writer assigns stories (Live)
	received *arrivals     // nil: the database's clock (Live); see receive
}

var postColumns = []string{"id", "source", "username", "body", "url", "original_source_url", "raw", "created_at", "coins", "story_id"}

func newPostGen(ctx context.Context, seed uint64, nr *newsroom, start, until time.Time, n int, weeks *weekStats, p *progress) *postGen {
	g := &postGen{
		ctx:      ctx,
		r:        rand.New(rand.NewPCG(seed, streamPosts)),
		nr:       nr,
		tl:       newTimeline(rand.New(rand.NewPCG(seed, streamTimeline)), start, until, n),
		until:    until,
		n:        n,
		msgID:    make([]int64, len(curatedSources)),
		weeks:    weeks,
		progress: p,
		row:      make([]any, len(postColumns)),
		recent:   newRecentStories(seed, streamPosts),
	}
	ws := make([]float64, len(curatedSources))
	for i := range curatedSources {
		ws[i] = 1 / math.Pow(float64(i+1), 1.15)
		g.msgID[i] = curatedSources[i].firstMsg
	}
	g.srcW = newWeighted(ws...)
	return g
}

// receive makes the generator write received_at, drawn by a, after the
// columns of postColumns.
func (g *postGen) receive(a *arrivals) {
	g.received = a
	g.row = make([]any, len(postColumns)+1)
}

// Next generates the next post.
func (g *postGen) Next() bool {
	if g.i >= g.n || g.err != nil {
		return false
	}
	if g.i%4096 == 0 {
		if err := g.ctx.Err(); err != nil {
			g.err = err
			return false
		}
	}
	g.i++
	g.generate(int64(g.i))
	g.progress.tick(g.i)
	return true
}

// Values returns the current row.
func (g *postGen) Values() ([]any, error) { return g.row, nil }

// Err reports why generation stopped early.
func (g *postGen) Err() error { return g.err }

func (g *postGen) generate(id int64) {
	g.generateAt(id, g.tl.next(g.r))
}

// generateAt writes into g.row the post with this id created at t; the
// seed's stream and the live publisher both go through it.
func (g *postGen) generateAt(id int64, t time.Time) {
	r := g.r
	si := g.srcW.pick(r)
	src := &curatedSources[si]
	// The story is drawn even when an earlier one is retold instead, so
	// that the random stream, and every other row, stays the same.
	s := g.nr.story(r, t, src.mix.pick(r), src.focus)
	if old, retold := g.recent.pick(t); retold {
		s = old
	} else {
		g.recent.add(s, t)
	}

	g.msgID[si] += 1
	if chance(r, 0.03) { // deleted posts and service messages leave gaps
		g.msgID[si] += 1 + int64(r.IntN(3))
	}
	msgID := g.msgID[si]
	permalink := "https://t.me/" + src.handle + "/" + strconv.FormatInt(msgID, 10)
	body, orig, bold := renderPost(r, src, &s, t)

	age := g.until.Sub(t).Hours()
	views := src.subs * between(r, 0.05, 0.2) * logNormal(r, 0, 0.35) * (0.6 + s.weight) * (1 - math.Exp(-age/6))
	msg := tgMessage{
		MessageID: msgID,
		Date:      t.Unix(),
		Chat:      tgChat{ID: src.chatID, Type: "channel", Title: src.title, Username: src.handle},
		Text:      body,
		Entities:  entities(body, bold),
		Views:     int64(views) + 1,
		Forwards:  int64(views * 0.003 * logNormal(r, 0, 0.8)),
	}
	if src.style == styleArticle && chance(r, 0.4) {
		msg.AuthorSignature = person(r)
	}
	if orig != "" && chance(r, 0.5) {
		msg.LinkPreview = &tgLinkOption{URL: orig, PreferLarge: chance(r, 0.3)}
	}
	if chance(r, 0.05) {
		msg.EditDate = t.Unix() + int64(30+r.IntN(1800))
	}
	raw, err := json.Marshal(&msg)
	if err != nil {
		g.err = err
	}

	g.row[0] = id
	g.row[1] = src.label
	g.row[2] = src.handle
	g.row[3] = body
	g.row[4] = permalink
	if orig == "" {
		g.row[5] = nil
	} else {
		g.row[5] = orig
	}
	g.row[6] = raw
	g.row[7] = t
	g.row[8] = tickers(body)
	g.row[9] = nil
	if g.stories != nil {
		g.row[9] = g.stories.assign(id, t, "", body)
	}
	if g.received != nil {
		g.row[10] = g.received.at(src.label, postDelay, t)
	}
	g.weeks.add(t, src.label, &s, permalink, r)
}

// renderPost writes the channel's post for the story and picks the original
// source it links to ("" for none). bold reports whether the first line is
// a bold headline.
func renderPost(r *rand.Rand, src *curatedSource, s *story, t time.Time) (body, orig string, bold bool) {
	outletKey := src.own
	if outletKey == "" {
		outletKey = pick(r, deskOutlets[s.cat])
	}
	switch {
	case s.link != "":
		orig = s.link
	case src.style == styleOnchain:
		orig = tweetURL(r, "lookonchain", t)
	default:
		orig = articleURL(r, outletKey, t, s.title, s.cat)
	}
	if !chance(r, src.link) {
		orig = ""
	}
	var b strings.Builder
	switch src.style {
	case styleWire:
		if s.cat == catOnchain {
			b.WriteString(s.flash)
		} else {
			b.WriteString(strings.ToUpper(outlets[outletKey].name))
			b.WriteString(": ")
			b.WriteString(strings.ToUpper(s.title))
			if chance(r, 0.15) {
				b.WriteString("\n\n")
				b.WriteString(s.lede)
			}
		}
	case styleJustIn:
		b.WriteString("JUST IN: ")
		if s.flag != "" {
			b.WriteString(s.flag + " ")
		}
		if s.sym != "" && (s.kind == kPrice || s.kind == kETFFlow) {
			b.WriteString(s.flash)
		} else {
			b.WriteString(s.title)
		}
		if s.emoji != "" && chance(r, 0.3) {
			b.WriteString(" " + strings.TrimSpace(s.emoji))
		}
	case styleStar:
		f := s.flash
		if !strings.HasPrefix(f, "*") {
			f = "*" + strings.ToUpper(f)
		}
		b.WriteString(f)
		if s.kind == kMacro && chance(r, 0.5) {
			b.WriteString("\n\n" + s.more)
		}
	case styleArticle:
		bold = true
		b.WriteString(s.title)
		b.WriteString("\n\n")
		b.WriteString(s.lede)
		if s.more != "" && chance(r, 0.5) {
			b.WriteString("\n\n")
			b.WriteString(s.more)
		}
		if chance(r, 0.3) && s.sym != "" {
			b.WriteString("\n\n#" + s.sym)
			if s.sym == "BTC" {
				b.WriteString(" #Bitcoin")
			}
		}
	case styleShort:
		b.WriteString(upperFirst(s.summary))
	case styleOnchain, styleWhale:
		b.WriteString(s.flash)
	case styleLatest:
		mark := s.flag
		if mark == "" {
			mark = strings.TrimSpace(s.emoji)
		}
		if mark != "" {
			b.WriteString(mark + " ")
		}
		b.WriteString("LATEST: " + s.title)
	case styleMetric:
		b.WriteString(s.flash)
		if orig != "" {
			b.WriteString("\n\nView metric:\n" + orig)
			return b.String(), orig, false
		}
	}
	if orig != "" && src.style != styleJustIn && src.style != styleStar {
		b.WriteString("\n\n")
		b.WriteString(orig)
	}
	return b.String(), orig, bold
}
