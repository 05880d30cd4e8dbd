package importer

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
)

// Kind names the resource a file holds, as the import command spells it.
type Kind string

// The kinds of import file.
const (
	KindPosts    Kind = "posts"
	KindBriefs   Kind = "briefs"
	KindFirehose Kind = "firehose"
	KindEtfFlows Kind = "etf-flows"
	// KindEtfFunds and KindEtfFundFlows are the funds and their daily
	// figures; a figure names a fund imported before it.
	KindEtfFunds     Kind = "etf-funds"
	KindEtfFundFlows Kind = "etf-fund-flows"
)

// ParseKind returns the Kind named s.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case KindPosts, KindBriefs, KindFirehose, KindEtfFlows, KindEtfFunds, KindEtfFundFlows:
		return k, nil
	}
	return "", fmt.Errorf("unknown import kind %q: want posts, briefs, firehose, etf-flows, etf-funds or etf-fund-flows", s)
}

// resource describes how lines of one kind become rows of its table.
type resource[T any, K comparable] struct {
	kind Kind
	// parse validates one line; the error is a *fieldError.
	parse func(*object) (T, error)
	// key is the row's primary key, to keep one row per key in a batch.
	key func(*T) K
	// conflicts, when set, finds the rows of a batch that the database would
	// refuse for a reason other than their key, by index into rows.
	conflicts func(ctx context.Context, tx bun.Tx, rows []T) (map[int]*fieldError, error)
	// sharedKeys, when set, adds the shared keys (shared.go) of the rows
	// the triggers write for a row; registered returns those the database
	// holds.
	sharedKeys func(row *T, add func(string))
	registered func(ctx context.Context, idb bun.IDB) (keySet, error)
	// story, when set, is the row as the story assigner reads it; the
	// assigner sets the row's story through it.
	story func(row *T) db.StoryItem
	// conflict, when set, is the upsert's conflict target (default: the
	// primary key).
	conflict string
	// prepare, when set, runs on the batch's rows before its transaction
	// (prepareTx: in it, before the upsert).
	prepare   func(ctx context.Context, bdb *bun.DB, rows []T) error
	prepareTx func(ctx context.Context, tx bun.Tx, rows []T) error
}

// postStory and firehoseStory give the story assigner a row's text.
func postStory(p *db.Post) db.StoryItem {
	if p.StoryID == nil {
		p.StoryID = new(int64)
	}
	return db.StoryItem{Kind: db.KindPost, ID: p.ID, CreatedAt: p.CreatedAt, Body: p.Body,
		Source: p.Source, Coins: p.Coins, Story: p.StoryID}
}

func firehoseStory(m *db.FirehoseMessage) db.StoryItem {
	if m.StoryID == nil {
		m.StoryID = new(int64)
	}
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	return db.StoryItem{Kind: db.KindFirehose, ID: m.ID, CreatedAt: m.CreatedAt, Title: deref(m.Title),
		Body: deref(m.Body), Source: m.Source, Pane: string(m.Pane), Coins: m.Coins, Story: m.StoryID}
}

// Each validator reads the fields in the order of the resource's REST form,
// so the first problem reported is the first in that order.

func parsePost(o *object) (db.Post, error) {
	p := db.Post{
		ID:                o.id("id"),
		Source:            o.text("source"),
		Username:          o.text("username"),
		Body:              o.text("body"),
		URL:               o.url("url"),
		OriginalSourceURL: o.url("original_source_url"),
		CreatedAt:         o.timestamp("created_at"),
		Raw:               o.jsonObject("raw"),
	}
	p.Coins = o.coins("coins", &p.Body)
	return p, o.err()
}

func parseBrief(o *object) (db.Brief, error) {
	b := db.Brief{
		ID:        o.id("id"),
		WeekStart: o.date("week_start"),
		WeekEnd:   o.date("week_end"),
		PostCount: o.count("post_count"),
		Content:   o.text("content"),
		CreatedAt: o.timestamp("created_at"),
	}
	o.check(!b.WeekEnd.Before(b.WeekStart), "week_end", "must not be before week_start")
	return b, o.err()
}

func parseFirehose(o *object) (db.FirehoseMessage, error) {
	m := db.FirehoseMessage{
		ID:                o.id("id"),
		Pane:              o.pane("pane"),
		Source:            o.text("source"),
		SourceName:        o.optText("source_name"),
		Name:              o.optText("name"),
		Username:          o.optText("username"),
		Title:             o.optText("title"),
		Body:              o.optText("body"),
		SummaryAI:         o.optText("summary_ai"),
		Important:         o.boolean("important"),
		URL:               o.url("url"),
		OriginalSourceURL: o.url("original_source_url"),
		CreatedAt:         o.timestamp("created_at"),
	}
	if m.CreatedAt.Before(o.keptSince) && !m.CreatedAt.IsZero() {
		o.fail("created_at", "before %s, the start of the oldest month the firehose retention keeps", o.keptSince.Format(time.RFC3339))
	}
	m.Coins = o.coins("coins", m.Title, m.Body, m.SummaryAI)
	return m, o.err()
}

func parseEtfFlow(o *object) (db.EtfFlow, error) {
	f := db.EtfFlow{
		Asset:        o.asset("asset"),
		FlowDate:     o.date("flow_date"),
		NetInflow:    o.money("net_inflow"),
		CumNetInflow: o.money("cum_net_inflow"),
		NetAssets:    o.money("net_assets"),
		ValueTraded:  o.money("value_traded"),
		UpdatedAt:    o.timestamp("updated_at"),
	}
	return f, o.err()
}

func parseEtfFund(o *object) (db.EtfFund, error) {
	f := db.EtfFund{
		Ticker:     o.ticker("ticker"),
		Asset:      o.asset("asset"),
		Issuer:     o.text("issuer"),
		Name:       o.text("name"),
		Fee:        o.percent("fee"),
		LaunchDate: o.date("launch_date"),
		Exchange:   o.text("exchange"),
	}
	return f, o.err()
}

// parseEtfFundFlow reads a fund's figures; asset is optional (the REST form
// shows it) and, when given, must be the fund's.
func parseEtfFundFlow(o *object) (db.EtfFundFlow, error) {
	f := db.EtfFundFlow{
		Ticker:      o.ticker("ticker"),
		Asset:       o.optAsset("asset"),
		FlowDate:    o.date("flow_date"),
		NetInflow:   o.money("net_inflow"),
		NetAssets:   o.optMoney("net_assets"),
		ValueTraded: o.optMoney("value_traded"),
		Holdings:    o.coinAmount("holdings"),
		UpdatedAt:   o.timestamp("updated_at"),
	}
	if f.NetAssets != nil {
		o.check(*f.NetAssets >= 0, "net_assets", "must not be negative")
	}
	if f.ValueTraded != nil {
		o.check(*f.ValueTraded >= 0, "value_traded", "must not be negative")
	}
	return f, o.err()
}

// fundKey is the primary key of a fund's figure.
type fundKey struct {
	ticker string
	day    time.Time
}

// heldFunds returns the stored funds with the given tickers, by ticker.
func heldFunds(ctx context.Context, tx bun.Tx, tickers []string) (map[string]db.EtfFund, error) {
	var held []db.EtfFund
	if err := tx.NewSelect().Model(&held).Where("ticker IN (?)", bun.List(tickers)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("look up etf funds: %w", err)
	}
	out := make(map[string]db.EtfFund, len(held))
	for _, f := range held {
		out[f.Ticker] = f
	}
	return out, nil
}

// fundAssetConflicts refuses to move a stored fund to another asset: its
// figures are counted in its asset's daily totals.
func fundAssetConflicts(ctx context.Context, tx bun.Tx, rows []db.EtfFund) (map[int]*fieldError, error) {
	tickers := make([]string, len(rows))
	for i := range rows {
		tickers[i] = rows[i].Ticker
	}
	held, err := heldFunds(ctx, tx, tickers)
	if err != nil {
		return nil, err
	}
	bad := map[int]*fieldError{}
	for i, f := range rows {
		if h, ok := held[f.Ticker]; ok && h.Asset != f.Asset {
			bad[i] = &fieldError{"asset", fmt.Sprintf("%s is a %s fund; a fund's asset cannot change", f.Ticker, h.Asset)}
		}
	}
	return bad, nil
}

// fundFlowConflicts refuses figures of funds that are not imported (the
// etf-funds file comes first), of a day before the fund's launch, or that
// name another asset than the fund's.
func fundFlowConflicts(ctx context.Context, tx bun.Tx, rows []db.EtfFundFlow) (map[int]*fieldError, error) {
	tickers := make([]string, len(rows))
	for i := range rows {
		tickers[i] = rows[i].Ticker
	}
	held, err := heldFunds(ctx, tx, tickers)
	if err != nil {
		return nil, err
	}
	bad := map[int]*fieldError{}
	for i, f := range rows {
		h, ok := held[f.Ticker]
		switch {
		case !ok:
			bad[i] = &fieldError{"ticker", "no fund " + f.Ticker + ": import it with etf-funds first"}
		case f.Asset != "" && f.Asset != h.Asset:
			bad[i] = &fieldError{"asset", fmt.Sprintf("%s is a %s fund, not %s", f.Ticker, h.Asset, f.Asset)}
		case f.FlowDate.Before(h.LaunchDate):
			bad[i] = &fieldError{"flow_date", fmt.Sprintf("%s is before %s's launch on %s", f.FlowDate.Format(time.DateOnly), f.Ticker, h.LaunchDate.Format(time.DateOnly))}
		}
	}
	return bad, nil
}

// etfKey is the primary key of an ETF flow record.
type etfKey struct {
	asset db.Asset
	day   time.Time
}

// weekConflicts enforces what the upsert by id cannot resolve: the weeks
// (week_start to week_end, inclusive) of different briefs never overlap
// (the briefs_weeks_do_not_overlap constraint, which also makes week_start
// unique). A brief is refused when its week overlaps the week of another
// brief as it stands when the brief's row is written: in the database, or
// as moved by an earlier row of the same batch. A brief keeps its own week
// through an upsert, and may move to days that another row of the batch
// has just left, but not to days another brief leaves only later in the
// batch, since the database checks each row as it is written.
func weekConflicts(ctx context.Context, tx bun.Tx, rows []db.Brief) (map[int]*fieldError, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	lo, hi := rows[0].WeekStart, rows[0].WeekEnd
	for _, b := range rows[1:] {
		lo, hi = minTime(lo, b.WeekStart), maxTime(hi, b.WeekEnd)
	}
	var held []week
	if err := tx.NewSelect().Table("briefs").Column("id", "week_start", "week_end").
		Where("week_start <= ? AND week_end >= ?", hi.Format(time.DateOnly), lo.Format(time.DateOnly)).
		OrderExpr("id").Scan(ctx, &held); err != nil {
		return nil, fmt.Errorf("look up brief weeks: %w", err)
	}
	bad := map[int]*fieldError{}
	for i, b := range rows {
		w := week{ID: b.ID, WeekStart: b.WeekStart, WeekEnd: b.WeekEnd}
		if j := slices.IndexFunc(held, func(h week) bool { return h.ID != w.ID && h.overlaps(w) }); j >= 0 {
			bad[i] = overlapError(w, held[j])
			continue
		}
		held = slices.DeleteFunc(held, func(h week) bool { return h.ID == w.ID })
		held = append(held, w)
	}
	return bad, nil
}

// week is the id and the days of a brief.
type week struct {
	ID                 int64
	WeekStart, WeekEnd time.Time
}

func (w week) overlaps(o week) bool {
	return !w.WeekStart.After(o.WeekEnd) && !o.WeekStart.After(w.WeekEnd)
}

func (w week) String() string {
	return w.WeekStart.Format(time.DateOnly) + ".." + w.WeekEnd.Format(time.DateOnly)
}

func overlapError(w, other week) *fieldError {
	id := strconv.FormatInt(other.ID, 10)
	if w.WeekStart.Equal(other.WeekStart) {
		return &fieldError{"week_start", w.WeekStart.Format(time.DateOnly) + " already belongs to brief " + id}
	}
	return &fieldError{"week_start", "the week " + w.String() + " overlaps brief " + id + " (" + other.String() + ")"}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
