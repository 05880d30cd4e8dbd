package seed

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"
)

// topStories is how many stories a brief leads with.
const topStories = 6

// weekStats accumulates, while posts stream by, what each briefed week's
// brief needs: the exact post count, activity by source and day, and the
// most newsworthy stories.
type weekStats struct {
	first time.Time // Monday 00:00 UTC of the oldest briefed week
	weeks []weekStat
}

type weekStat struct {
	start    time.Time
	count    int
	bySource map[string]int
	byDay    [7]int // Monday first
	top      []topStory
}

type topStory struct {
	kind    kind
	score   float64
	title   string
	summary string
	url     string
	source  string
}

// newWeekStats prepares n weeks ending at the Monday end (exclusive).
func newWeekStats(end time.Time, n int) *weekStats {
	ws := &weekStats{first: end.AddDate(0, 0, -7*n), weeks: make([]weekStat, n)}
	for i := range ws.weeks {
		ws.weeks[i] = weekStat{start: ws.first.AddDate(0, 0, 7*i), bySource: map[string]int{}}
	}
	return ws
}

// add counts a post created at t (already truncated to the millisecond, so
// the count agrees with SQL on the stored value).
func (ws *weekStats) add(t time.Time, source string, s *story, url string, r *rand.Rand) {
	if t.Before(ws.first) {
		return
	}
	i := int(t.Sub(ws.first) / (7 * day))
	if i >= len(ws.weeks) {
		return
	}
	w := &ws.weeks[i]
	w.count++
	w.bySource[source]++
	w.byDay[int(t.Sub(w.start)/day)]++

	// Keep the highest-scoring story per kind, then the best kinds.
	ts := topStory{kind: s.kind, score: s.weight + 0.15*r.Float64(), title: s.title, summary: s.summary, url: url, source: source}
	for j := range w.top {
		if w.top[j].kind == ts.kind {
			if ts.score > w.top[j].score {
				w.top[j] = ts
				sort.SliceStable(w.top, func(a, b int) bool { return w.top[a].score > w.top[b].score })
			}
			return
		}
	}
	if len(w.top) < topStories {
		w.top = append(w.top, ts)
	} else if ts.score > w.top[len(w.top)-1].score {
		w.top[len(w.top)-1] = ts
	} else {
		return
	}
	sort.SliceStable(w.top, func(a, b int) bool { return w.top[a].score > w.top[b].score })
}

// briefRow is a generated brief.
type briefRow struct {
	weekStart, weekEnd time.Time
	postCount          int
	content            string
	createdAt          time.Time
}

// buildBriefs writes one brief per week, published the Monday after.
func buildBriefs(seed uint64, ws *weekStats, m *market, etf []etfSeries, until time.Time) []briefRow {
	r := rand.New(rand.NewPCG(seed, streamBriefs))
	out := make([]briefRow, 0, len(ws.weeks))
	for i := range ws.weeks {
		w := &ws.weeks[i]
		end := w.start.AddDate(0, 0, 6)
		published := w.start.AddDate(0, 0, 7).Add(6*time.Hour + time.Duration(r.IntN(3600_000))*time.Millisecond)
		if published.After(until) {
			published = until
		}
		out = append(out, briefRow{
			weekStart: w.start,
			weekEnd:   end,
			postCount: w.count,
			content:   renderBrief(r, w, m, etf),
			createdAt: published.Truncate(time.Millisecond),
		})
	}
	return out
}

// weekRange formats a week as "November 9–15, 2026" or
// "October 26 – November 1, 2026".
func weekRange(start, end time.Time) string {
	switch {
	case start.Year() != end.Year():
		return start.Format("January 2, 2006") + " – " + end.Format("January 2, 2006")
	case start.Month() != end.Month():
		return start.Format("January 2") + " – " + end.Format("January 2, 2006")
	default:
		return start.Format("January 2") + "–" + end.Format("2, 2006")
	}
}

// renderBrief writes a week's brief in Markdown.
func renderBrief(r *rand.Rand, w *weekStat, m *market, etf []etfSeries) string {
	end := w.start.AddDate(0, 0, 7)
	var b strings.Builder
	b.WriteString("# Weekly brief: " + weekRange(w.start, end.AddDate(0, 0, -1)) + "\n\n")

	type kv struct {
		k string
		v int
	}
	var sources []kv
	for k, v := range w.bySource {
		sources = append(sources, kv{k, v})
	}
	sort.Slice(sources, func(i, j int) bool {
		if sources[i].v != sources[j].v {
			return sources[i].v > sources[j].v
		}
		return sources[i].k < sources[j].k
	})
	busiest := 0
	for d := range w.byDay {
		if w.byDay[d] > w.byDay[busiest] {
			busiest = d
		}
	}
	busyDay := w.start.AddDate(0, 0, busiest)

	btcCh := m.price(0, end)/m.price(0, w.start) - 1
	mood := "a quiet week"
	switch {
	case btcCh > 0.05:
		mood = "a strong week for crypto"
	case btcCh > 0.015:
		mood = "a positive week"
	case btcCh < -0.05:
		mood = "a rough week for crypto"
	case btcCh < -0.015:
		mood = "a soft week"
	}
	if w.count == 0 {
		b.WriteString("_No curated posts this week._\n\n")
	} else {
		b.WriteString("It was " + mood + ": bitcoin " + either(btcCh >= 0, "gained ", "lost ") + pct(btcCh) +
			" to close at " + price(m.price(0, end)) + ". The curated feed carried **" + commas(int64(w.count)) + " posts** from " +
			strconv.Itoa(len(sources)) + " sources.\n\n")
		b.WriteString("## Top stories\n\n")
		for _, t := range w.top {
			b.WriteString("- **" + t.title + ".** " + t.summary + " ([" + t.source + "](" + t.url + "))\n")
		}
		b.WriteString("\n")
	}

	b.WriteString("## Markets\n\n")
	b.WriteString("| Asset | Close | Week |\n|---|---:|---:|\n")
	for _, sym := range []string{"BTC", "ETH", "SOL", "XRP", "HYPE"} {
		for i := range coins {
			if coins[i].sym == sym {
				closePx := m.price(i, end)
				b.WriteString("| " + sym + " | " + price(closePx) + " | " + signedPct(closePx/m.price(i, w.start)-1) + " |\n")
			}
		}
	}
	b.WriteString("\n### Spot ETF flows\n\n")
	hasETF := false
	for i := range etf {
		sum, days, last := etf[i].weekNet(w.start, end)
		if days == 0 {
			continue
		}
		hasETF = true
		net := float64(sum) / 100
		dir := "net inflows"
		if sum < 0 {
			dir = "net outflows"
		}
		b.WriteString("- **" + string(etf[i].params.asset) + ":** " + dir + " of " + usdShort(math.Abs(net)) + " over " +
			strconv.Itoa(days) + " trading " + either(days == 1, "day", "days") + "; cumulative " + usdShort(last.cumUSD) +
			" since launch, net assets " + usdShort(last.assetsUSD) + ".\n")
	}
	if !hasETF {
		b.WriteString("- No US spot ETF trading this week.\n")
	}
	b.WriteString("\n")

	if w.count > 0 {
		b.WriteString("## By the numbers\n\n")
		b.WriteString("- Most active sources: ")
		for i, s := range sources[:min(3, len(sources))] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(s.k + " (" + commas(int64(s.v)) + " posts, " + pct(float64(s.v)/float64(w.count)) + ")")
		}
		b.WriteString("\n")
		b.WriteString("- Busiest day: " + busyDay.Weekday().String() + ", " + busyDay.Format("January 2") + " (" + strconv.Itoa(w.byDay[busiest]) + " posts)\n\n")
	}

	b.WriteString("## What to watch\n\n")
	next := end
	watch := []string{
		"US CPI for " + monthNames[(int(next.Month())+10)%12] + " on " + next.AddDate(0, 0, 2).Weekday().String(),
		"Initial jobless claims on Thursday",
		"Fed speakers through the week, with markets pricing the next rate decision",
		"Monthly options expiry on Deribit on Friday",
		"Token unlocks for " + pick(r, unlockTokens).sym + " and " + pick(r, unlockTokens).sym,
		"Whether spot ETF flows hold up after last week's " + either(btcCh >= 0, "rally", "sell-off"),
		"Stablecoin supply, which has been a reliable lead on exchange inflows",
	}
	r.Shuffle(len(watch), func(i, j int) { watch[i], watch[j] = watch[j], watch[i] })
	for _, item := range watch[:3] {
		b.WriteString("- " + item + "\n")
	}
	return b.String()
}

// briefRows lists the briefs as COPY rows, ids in week order.
func briefRows(rows []briefRow) [][]any {
	out := make([][]any, len(rows))
	for i, br := range rows {
		out[i] = []any{int64(i + 1), br.weekStart, br.weekEnd, int32(br.postCount), br.content, br.createdAt}
	}
	return out
}

// etfRows lists the ETF rows to write: every day since launch, or only the
// last keep trading days per asset when keep > 0.
func etfRows(series []etfSeries, keep int) [][]any {
	var out [][]any
	for i := range series {
		days := series[i].days
		if keep > 0 && len(days) > keep {
			days = days[len(days)-keep:]
		}
		for _, d := range days {
			out = append(out, []any{string(series[i].params.asset), d.date, numeric(d.net), numeric(d.cum),
				numeric(d.assets), numeric(d.traded), d.updated})
		}
	}
	return out
}

var (
	briefColumns = []string{"id", "week_start", "week_end", "post_count", "content", "created_at"}
	etfColumns   = []string{"asset", "flow_date", "net_inflow", "cum_net_inflow", "net_assets", "value_traded", "updated_at"}
)
